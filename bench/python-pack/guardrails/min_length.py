"""`conformance.min-length`, as the Rust fixture pack declares it (CONTRACT §8).

`async def`, like the tools here: the Python service then runs it on its event
loop rather than handing it to a worker thread — its fastest path.
"""

from pydantic import BaseModel, ConfigDict, Field

from kindgi import CheckResult, RunTrace, guardrail


class MinLengthConfig(BaseModel):
    """The check's config."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    min_length: int = Field(default=1, alias="minLength", ge=0)


@guardrail(
    id="conformance.min-length",
    check_id="conformance.checks.min-length",
    name="Minimum length",
    on_violation="halt",
    severity="error",
    config={"minLength": 1},
)
async def min_length(config: MinLengthConfig, trace: RunTrace) -> CheckResult:
    output = trace.output
    text = "" if output is None else output if isinstance(output, str) else str(output)
    if len(text.strip()) >= config.min_length:
        return CheckResult(passed=True)
    return CheckResult(passed=False, reason="too short")
