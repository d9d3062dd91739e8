"""How a training run stops before its end, as exceptions the entry points turn into exit codes.

    Diverged    a loss or gradient turned nan or inf: nothing saved after it; one line, exit 1

(SIGTERM or ctrl-C, the state saved: official/command_line.py's `Preempted`, which every
command ends with, 128 + the signal's number.)

No TensorFlow here: an entry point names these before it has loaded TensorFlow.
"""

from __future__ import annotations


class Diverged(ValueError):
    """An update's loss or gradient was nan or inf; nothing was saved after it."""

    def __init__(self, step: int, newest_checkpoint: str | None, float16: bool):
        kept = (f"the checkpoints before it are kept, the newest {newest_checkpoint}"
                if newest_checkpoint else "no checkpoint had been saved")
        super().__init__(f"the loss or its gradient is not finite (nan or inf) at step {step}: "
                         f"training stopped without saving ({kept}); a lower learning rate"
                         f"{' or float32 instead of float16' if float16 else ''} usually helps")
        self.step = step
