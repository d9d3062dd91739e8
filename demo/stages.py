"""How the demo shows its stages (run_scripts/stages.py runs them): each stage a block on
stdout, in the stages' order, as a run of one stage at a time reads.

    == [6/17] Fine-tune the pretrained model on authorship (run_scripts.run_classifier)
       $ python -m run_scripts.run_classifier --task_name=tsv ...
    <the command's output: stdout and stderr, as its log holds them>
       finished in 1 min 05 s

or, for a stage done before, its title and "reused". The block being shown is the first not
yet shown whole: its command's output appears as it comes. With stages side by side (--jobs),
the output of a later one is held until every block before it has been shown, then shown whole
(or, while it still runs, caught up and then followed).
"""

from __future__ import annotations

import dataclasses
import shlex
import sys

from official.console import format_seconds
from run_scripts.stages import Place

REUSED = "   done before, with the same flags and inputs: reused"


@dataclasses.dataclass
class _Block:
    place: Place
    held: list[str]  # header and output lines not shown yet
    over: bool = False  # nothing more will come


class Blocks:
    """A run_scripts/stages.py View: the blocks of the module docstring."""

    def __init__(self):
        self._next = 1  # the number of the block being shown
        self._blocks: dict[int, _Block] = {}

    def reused(self, place: Place) -> None:
        self._blocks[place.number] = _Block(place, [_title(place), REUSED + "\n"], over=True)
        self._advance()

    def started(self, place: Place, log: str, resumed: bool) -> None:
        command = "   $ python " + shlex.join(place.stage.command) + "\n"
        self._blocks[place.number] = _Block(place, [_title(place), command])
        self._advance()

    def note(self, place: Place, text: str) -> None:
        print(f"   {place.stage.title}: {text}", file=sys.stderr, flush=True)

    def line(self, place: Place, text: str) -> None:
        self._blocks[place.number].held.append(text)
        self._advance()

    def ended(self, place: Place, seconds: float | None) -> None:
        block = self._blocks[place.number]
        if seconds is not None:
            block.held.append(f"   finished in {format_seconds(seconds)}\n")
        block.over = True
        self._advance()

    def close(self) -> None:
        """Every block left (a failed or stopped run's), in order."""
        for number in sorted(self._blocks):
            self._flush(self._blocks.pop(number))

    def _advance(self) -> None:
        """Shows what the block being shown holds; once it is over, the next."""
        while self._next in self._blocks:
            block = self._blocks[self._next]
            self._flush(block)
            if not block.over:
                return
            del self._blocks[self._next]
            self._next += 1

    @staticmethod
    def _flush(block: _Block) -> None:
        sys.stdout.write("".join(block.held))
        sys.stdout.flush()
        block.held.clear()


def _title(place: Place) -> str:
    return f"\n== [{place.number}/{place.count}] {place.stage.title}\n"
