"""`conformance.echo`, as the Rust fixture pack declares it (CONTRACT §8)."""

from pydantic import BaseModel, ConfigDict, Field

from kindgi import tool


class EchoInput(BaseModel):
    """The message to echo."""

    model_config = ConfigDict(extra="forbid")
    message: str = Field(min_length=1)


class EchoOutput(BaseModel):
    """The echoed message."""

    model_config = ConfigDict(extra="forbid")
    message: str


@tool(id="conformance.echo", version="1.0.0", mutating=False)
async def echo(input: EchoInput) -> EchoOutput:
    """Returns the message it is given."""
    return EchoOutput(message=input.message)
