"""`InputError`: input data the generators cannot use; the one-line message names the file."""


class InputError(ValueError):
    """Bad input data (a glob matching nothing, an empty corpus, an unusable file)."""
