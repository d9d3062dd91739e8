"""How the training entry points end: a preempted job's exit code, a bad input's one line.

    def main(argv):
        entry_point.run_job("run_classifier", lambda: run(...))
"""

import sys
from typing import Callable

from absl import logging

from official.training.trainer import Preempted


def run_job(script: str, job: Callable[[], object]) -> None:
    """Runs `job()`. SIGTERM (the loop saved a checkpoint and stopped) exits with 143, what a
    supervisor expects of a terminated job, and rerunning the command resumes; a ValueError or
    OSError (bad flags, files, data or checkpoints) exits with "<script>: <message>"."""
    try:
        job()
    except Preempted as e:
        logging.warning("%s", e)
        sys.exit(143)  # 128 + SIGTERM
    except (ValueError, OSError) as e:
        sys.exit(f"{script}: {e}")
