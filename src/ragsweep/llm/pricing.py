"""Token prices, to turn usage into dollars and to estimate a sweep's cost before it runs.

Built-in list prices (USD per million tokens) are OpenAI's published standard-tier prices as of
2026-11 for a few common models; the spec's ``prices`` table overrides and extends them. A model
with no price is accounted in tokens only, and ``--budget`` refuses to run with it.
"""

from __future__ import annotations

from ragsweep.config import PriceSpec

DEFAULT_PRICES: dict[str, PriceSpec] = {
    "gpt-4o": PriceSpec(input=2.50, output=10.00),
    "gpt-4o-mini": PriceSpec(input=0.15, output=0.60),
    "gpt-4.1": PriceSpec(input=2.00, output=8.00),
    "gpt-4.1-mini": PriceSpec(input=0.40, output=1.60),
    "gpt-4.1-nano": PriceSpec(input=0.10, output=0.40),
    "text-embedding-3-small": PriceSpec(input=0.02),
    "text-embedding-3-large": PriceSpec(input=0.13),
}


def price_for(model: str, prices: dict[str, PriceSpec] | None = None) -> PriceSpec | None:
    """The spec's price for ``model``, else the built-in one, else None (tokens only)."""
    if prices and model in prices:
        return prices[model]
    return DEFAULT_PRICES.get(model)


def cost_usd(price: PriceSpec | None, prompt_tokens: int, completion_tokens: int) -> float | None:
    if price is None:
        return None
    return (prompt_tokens * price.input + completion_tokens * price.output) / 1e6
