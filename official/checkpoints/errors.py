"""Errors of checkpoint reading and writing; each message is one line naming the path."""


class CheckpointError(ValueError):
    """A checkpoint (or model directory) cannot be read or does not fit the model."""


class CheckpointMismatchError(CheckpointError):
    """Checkpoint variables do not fit the model; the message lists names and shapes."""
