"""`PretrainingDataOptions`: what shapes the pretraining instances, with the original's defaults.

Shared by both generators (`--reproduce_original` and the fast default) so that the same flags mean
the same thing in each, and checked once, here, before any input is read.
"""

from __future__ import annotations

import dataclasses

from official.pretraining_records import ORIGINAL_MASKING_MIX
from official.pretraining_shards import OBJECTIVES
from official.settings_parsing import check_shares


class OptionsError(ValueError):
    """A generation option is out of range; the message names the flag."""


@dataclasses.dataclass(frozen=True)
class PretrainingDataOptions:
    """Instance-building options; names and defaults are the original's flags.

    masking_mix is (MASK, SAME, RANDOM): the shares of the predictions shown as [MASK], as the
    same token, or as a random id (official/pretraining_records.py). Only the fast generator
    (and Beam, which shares its code) takes another than the original's; `check_original`.
    """

    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    dupe_factor: int = 10
    random_seed: int = 12345
    do_whole_word_mask: bool = False
    objective: str = "nsp"
    masking_mix: tuple[float, float, float] = ORIGINAL_MASKING_MIX

    def __post_init__(self):
        # [CLS] A [SEP] B [SEP] needs three special tokens and at least one token of each segment.
        if self.max_seq_length < 5:
            raise OptionsError(f"max_seq_length must be at least 5, got {self.max_seq_length}")
        # The most tokens that can ever be masked: every non-special token of the longest input.
        most_maskable = self.max_seq_length - (2 if self.objective == "none" else 3)
        if not 1 <= self.max_predictions_per_seq <= most_maskable:
            raise OptionsError(
                f"max_predictions_per_seq must be in 1..{most_maskable} (the non-special tokens of "
                f"a {self.max_seq_length}-token sequence), got {self.max_predictions_per_seq}")
        if not 0.0 < self.masked_lm_prob <= 1.0:
            raise OptionsError(f"masked_lm_prob must be in (0, 1], got {self.masked_lm_prob}")
        if not 0.0 <= self.short_seq_prob <= 1.0:
            raise OptionsError(f"short_seq_prob must be in [0, 1], got {self.short_seq_prob}")
        if self.dupe_factor < 1:
            raise OptionsError(f"dupe_factor must be at least 1, got {self.dupe_factor}")
        if self.objective not in OBJECTIVES:
            raise OptionsError(f"objective must be one of {', '.join(OBJECTIVES)}, "
                               f"got {self.objective!r}")
        if len(self.masking_mix) != 3:
            raise OptionsError(f"masking_mix must be 3 shares (MASK, SAME, RANDOM), got "
                               f"{self.masking_mix!r}")
        try:
            check_shares(self.masking_mix, "masking_mix")
        except ValueError as e:
            raise OptionsError(str(e)) from None

    def check_original(self) -> None:
        """Raises OptionsError for an option the original's algorithm lacks, which
        `--reproduce_original` (data_prep/original_instances.py) therefore cannot make: an
        objective other than nsp, a masking mix other than its 80/10/10."""
        if self.objective != "nsp":
            raise OptionsError(f"objective must be nsp to reproduce the original, "
                               f"got {self.objective!r}")
        if tuple(self.masking_mix) != ORIGINAL_MASKING_MIX:
            raise OptionsError(
                f"masking_mix must be the original's {','.join(map(str, ORIGINAL_MASKING_MIX))} "
                f"to reproduce the original, got {','.join(map(str, self.masking_mix))}")
