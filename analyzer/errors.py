"""The one exception type the CLI turns into a one-line error and exit status 2."""


class KernelraceError(Exception):
    """Bad input: unreadable, unparsable, unsupported or unbuildable. The message is one line."""
