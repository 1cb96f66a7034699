"""`bench.bulk`: the 1 MiB validation scenario — the same schema as the
Rust bench pack's `bench.bulk` (bench/rust-pack/src/main.rs)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kindgi import tool


class Line(BaseModel):
    """One line of an order."""

    model_config = ConfigDict(extra="forbid")
    sku: str = Field(min_length=1, max_length=32)
    quantity: int = Field(ge=1, le=10_000)
    unit_price: float = Field(alias="unitPrice", ge=0)


class Order(BaseModel):
    """One order."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=64)
    customer: str = Field(min_length=1)
    status: Literal["open", "paid", "shipped", "cancelled"]
    priority: int = Field(ge=0, le=9)
    paid: bool
    total: float = Field(ge=0)
    tags: list[str] = Field(max_length=16)
    lines: list[Line] = Field(min_length=1, max_length=64)
    note: str


class BulkInput(BaseModel):
    """A batch of orders."""

    model_config = ConfigDict(extra="forbid")
    orders: list[Order] = Field(min_length=1)


class BulkOutput(BaseModel):
    """What the batch held."""

    model_config = ConfigDict(extra="forbid")
    orders: int
    lines: int
    quantity: int


@tool(id="bench.bulk", version="1.0.0", mutating=False)
async def bulk(input: BulkInput) -> BulkOutput:
    """Counts the orders, lines and items of a batch."""
    lines = sum(len(order.lines) for order in input.orders)
    quantity = sum(line.quantity for order in input.orders for line in order.lines)
    return BulkOutput(orders=len(input.orders), lines=lines, quantity=quantity)
