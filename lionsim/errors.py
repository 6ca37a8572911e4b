"""The one exception type that means "the user gave bad input".

The CLI turns a LionsimError into a single line on stderr and exit code 2; anything else
is a bug and keeps its traceback.
"""


class LionsimError(ValueError):
    """Bad usage or bad input: the message names the bad value and what is accepted."""
