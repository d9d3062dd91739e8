"""Errors of checkpoint reading and writing; each message is one line naming the path."""


class CheckpointError(ValueError):
    """A checkpoint (or model directory) cannot be read or does not fit the model."""


class CheckpointMismatchError(CheckpointError):
    """Checkpoint variables do not fit the model; the message lists names and shapes."""


def unreadable(prefix: str, error: Exception) -> CheckpointError:
    """The one line for a file TensorFlow's checkpoint reader refused (garbage bytes, a
    truncated shard): the prefix and the first line of the reader's own message."""
    return CheckpointError(f"{prefix}: unreadable checkpoint ({str(error).splitlines()[0]})")
