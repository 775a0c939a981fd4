"""What every spec section shares: strict models (unknown keys refused, frozen) and field checks."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """A spec section: unknown keys are refused (a typo fails at start-up) and values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def env_var_name(v: str | None) -> str | None:
    """``api_key_env`` must name a variable; the value is never echoed (it may be a pasted key)."""
    if v is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
        raise ValueError(
            "must be the NAME of an environment variable (letters, digits, _), not a key; "
            "export the key and give its variable's name, e.g. OPENAI_API_KEY"
        )
    return v


def check_weights(v: tuple[float, ...] | None) -> tuple[float, ...] | None:
    if v is not None and (min(v) < 0 or sum(v) <= 0):
        raise ValueError("weights must be non-negative with a positive sum, e.g. [0.5, 0.5]")
    return v


def absent(component) -> bool:
    """A reranker, query transform or postprocessor of kind ``none``: the axis's "without it" value."""
    return getattr(component, "kind", None) == "none"
