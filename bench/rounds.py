"""Timing peers together, in rounds, so that a slow phase of a shared machine lands on every peer.

This machine's speed drifts by 2-3x within minutes. Peers timed one after another can then be
compared across a fast and a slow phase; in rounds, every ratio is taken between calls made
seconds apart, and the median of the rounds' ratios discards the rounds a phase change split.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Callable, Hashable, TypeVar

Key = TypeVar("Key", bound=Hashable)


def load_average() -> str:
    """The machine's load, printed beside timings: other processes on these cores slow them."""
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def seconds_of(call: Callable[[], object]) -> float:
    """Wall seconds of one call (which must block until its work is done)."""
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def time_in_rounds(calls: dict[Key, Callable[[], object]], warmup: int, rounds: int,
                   timed: int, settle: int = 1) -> dict[Key, list[list[float]]]:
    """{key: [seconds of each timed call] for each round}.

    After `warmup` untimed calls of each peer, every round gives each peer in turn `settle`
    untimed calls, then `timed` timed ones. The untimed calls absorb the switch between
    runtimes: torch's OpenMP threads spin for a while after its calls, and TensorFlow's thread
    pool has gone to sleep meanwhile (milliseconds, which matter to a call of a few ms).
    """
    for call in calls.values():
        for _ in range(warmup):
            call()
    seconds = {key: [] for key in calls}
    for _ in range(rounds):
        for key, call in calls.items():
            for _ in range(settle):
                call()
            seconds[key].append([seconds_of(call) for _ in range(timed)])
    return seconds


def round_medians(per_round: list[list[float]]) -> list[float]:
    """The median seconds of each round's timed calls."""
    return [statistics.median(calls) for calls in per_round]


def ratios(rates: list[float], other_rates: list[float]) -> list[float]:
    """rates[i] / other_rates[i] for each round i (both measured in that round)."""
    return [rate / other for rate, other in zip(rates, other_rates)]
