"""The one exception type for mistakes a user can fix (bad config, bad input files)."""


class AicdError(Exception):
    """A user-facing error: the message says what is wrong and what to do.

    Command-line entry points print it without a traceback (see aicd.cli)."""
