"""Runs a command and measures its wall time and the peak RSS summed over its process tree.

Worker pools make the parent's own max RSS meaningless; sampling /proc every 50 ms sees the
children too (a peak shorter than that can be missed, which only understates).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time


def _tree_rss_bytes(root: int) -> int:
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue  # The process ended while we looked.
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


def run_measured(command: list[str], cwd: str) -> tuple[float, int, subprocess.CompletedProcess]:
    """(seconds, peak tree RSS in bytes, completed process) for `command`."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    peak = [0]

    def sample():
        while process.poll() is None:
            peak[0] = max(peak[0], _tree_rss_bytes(process.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    sampler.join()
    seconds = time.perf_counter() - start
    return seconds, peak[0], subprocess.CompletedProcess(command, process.returncode, stdout,
                                                         stderr)
