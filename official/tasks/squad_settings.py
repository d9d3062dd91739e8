"""`SquadSettings`: the settings that shape SQuAD's features and decoding, checked once.

run_squad's flags of the same names fill it for fine-tuning, export_saved_model's for the SQuAD
export: both define them from `FLAGS` (every setting but max_seq_length, which each entry point
defines its own way), with the original run_squad's names, help and defaults; data_prep.squad
checks its feature settings by it.
"""

from __future__ import annotations

import dataclasses

from official.flag_rows import Flag


@dataclasses.dataclass(frozen=True)
class SquadSettings:
    """Attributes:
      max_seq_length: tokens per feature: [CLS] question [SEP] window [SEP], 0-padded.
      doc_stride: tokens between two windows' starts over a long context.
      max_query_length: the question's tokens kept (its first ones).
      n_best_size: the best starts and ends considered per window (and the n-best file's
        length).
      max_answer_length: the longest answer, in tokens (start and end are predicted apart).
      version_2_with_negative: SQuAD 2.0: a question may have no answer.
      null_score_diff_threshold: SQuAD 2.0: answer "" when the no-answer score minus the best
        answer's exceeds this.

    A bad value is refused when the settings are made (`validate`).
    """
    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64
    n_best_size: int = 20
    max_answer_length: int = 30
    version_2_with_negative: bool = False
    null_score_diff_threshold: float = 0.0

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """One-line ValueErrors naming the flag: the context must have room in a feature, and
        the stride and sizes must be positive (a stride of 0 would never reach the end)."""
        if self.max_seq_length <= self.max_query_length + 3:
            raise ValueError(f"max_seq_length ({self.max_seq_length}) must be greater than "
                             f"max_query_length ({self.max_query_length}) + 3")
        for name in ("doc_stride", "n_best_size", "max_answer_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")


FLAGS = (
    Flag("doc_stride", int, SquadSettings.doc_stride,
         "When splitting up a long document into chunks, how much stride to take between "
         "chunks."),
    Flag("max_query_length", int, SquadSettings.max_query_length,
         "The maximum number of tokens for the question. Questions longer than this will be "
         "truncated to this length."),
    Flag("n_best_size", int, SquadSettings.n_best_size,
         "The total number of n-best predictions to generate in the nbest_predictions.json "
         "output file (the best starts and ends considered per window)."),
    Flag("max_answer_length", int, SquadSettings.max_answer_length,
         "The maximum length of an answer that can be generated. This is needed because the "
         "start and end predictions are not conditioned on one another."),
    Flag("version_2_with_negative", bool, SquadSettings.version_2_with_negative,
         "If true, the SQuAD examples contain some that do not have an answer."),
    Flag("null_score_diff_threshold", float, SquadSettings.null_score_diff_threshold,
         "If null_score - best_non_null is greater than the threshold predict null."),
)
