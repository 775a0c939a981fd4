"""The one exception type a user sees: a single line naming the file/field and the fix."""


class RagsweepError(Exception):
    """A user-facing error. Its message is one line: what is wrong, where, and how to fix it."""
