"""Runs a command and measures its wall time, the peak RSS summed over its process tree, and the
peak RSS of its largest child process (a worker).

Worker pools make the parent's own max RSS meaningless; sampling /proc every 50 ms sees the
children too (a peak shorter than that can be missed, which only understates). A forked worker's
RSS counts the pages it still shares with its parent, so the tree's sum overstates what the
machine gives it: the figure is an upper bound.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from typing import NamedTuple


class Measured(NamedTuple):
    seconds: float
    peak_rss: int          # bytes, the whole tree's sum at its peak
    peak_child_rss: int    # bytes, the largest child process at its peak (0: none ran)
    result: subprocess.CompletedProcess


def _tree_rss_bytes(root: int) -> dict[int, int]:
    """{pid: RSS bytes} of `root` and every process below it."""
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
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        tree[pid] = rss.get(pid, 0)
        todo += children.get(pid, [])
    return tree


def run_measured(command: list[str], cwd: str) -> Measured:
    """Runs `command` in `cwd`; its time, memory and completed process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    peaks = {"tree": 0, "child": 0}

    def sample():
        while process.poll() is None:
            tree = _tree_rss_bytes(process.pid)
            peaks["tree"] = max(peaks["tree"], sum(tree.values()))
            children = [rss for pid, rss in tree.items() if pid != process.pid]
            peaks["child"] = max([peaks["child"], *children])
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    sampler.join()
    seconds = time.perf_counter() - start
    return Measured(seconds, peaks["tree"], peaks["child"],
                    subprocess.CompletedProcess(command, process.returncode, stdout, stderr))
