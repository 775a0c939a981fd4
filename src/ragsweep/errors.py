"""The one exception type a user sees: a single line naming the file/field and the fix."""


class RagsweepError(Exception):
    """A user-facing error. Its message is one line: what is wrong, where, and how to fix it."""


class ClusterLost(RagsweepError):
    """The Ray cluster stopped answering mid-sweep; what finished is journaled and a rerun goes on from there."""


def shorten(text, limit: int = 100) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis marks the cut): an example reason in a
    printed line."""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


def short_reason(exc: BaseException) -> str:
    """``Type: first line`` of an exception, at most 500 characters: what a failed row records."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:500]
