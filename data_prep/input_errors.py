"""`InputError`: input data the generators cannot use; the one-line message names the file."""


class InputError(ValueError):
    """Bad input data (a glob matching nothing, an empty corpus, an unusable file)."""


class TsvError(InputError):
    """A task file (TSV or JSON lines) that does not have its task's layout; the message is
    "path:line: problem"."""
