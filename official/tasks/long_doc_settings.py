"""How a classifier reads a document longer than max_seq_length: `LongDocSettings`, checked once.

    --long_doc=truncate    the original's: the first max_seq_length - 2 tokens, the rest dropped
    --long_doc=head_tail   the first --head_tokens and the last max_seq_length - 2 - head_tokens
                           tokens (Sun et al. 2019, "How to Fine-Tune BERT for Text
                           Classification?": 128 + 382 of 510 was their best)
    --long_doc=windows     every window of max_seq_length - 2 tokens, one every --doc_stride
                           tokens (official/features/doc_windows.text_windows, SQuAD's rule),
                           pooled into one prediction per document by --window_pool:
                             mean_logits  the mean of the windows' logits
                             max_logits   each class's largest logit over the windows
                             mean_cls     the mean of the windows' last-layer [CLS] vectors, then
                                          the pooler and the classifier
                           Training reads at most --max_windows windows of a document, spread
                           evenly from its first to its last; evaluation, prediction and serving
                           read them all. --window_loss=document (default) takes the loss on the
                           pooled prediction, so the windows of one document train together;
                           `window` takes it on every window, each with its document's label.

Shared by run_classifier (flags), data_prep.classifier_features (records), the classification
task (model, loss) and its export (windows made in the graph). A run that reads documents
otherwise than truncate writes `long_documents.json` (`RECORD_FILE`) beside its checkpoints, so
its export serves documents as it was trained and a rerun with other settings is refused.
"""

from __future__ import annotations

import dataclasses

RECORD_FILE = "long_documents.json"
MODES = ("truncate", "head_tail", "windows")
WINDOW_POOLS = ("mean_logits", "max_logits", "mean_cls")
WINDOW_LOSSES = ("document", "window")
DEFAULT_MAX_WINDOWS = 8


@dataclasses.dataclass(frozen=True)
class LongDocSettings:
    """One run's reading of long documents (the module docstring); None fields take their
    defaults from max_seq_length in `resolved`.

    Attributes:
      long_doc: one of MODES.
      doc_stride: windows: tokens between two windows' starts; default half a window.
      max_windows: windows: the most windows of one document a training step reads.
      head_tokens: head_tail: the tokens kept from the start; default a quarter of
        max_seq_length - 2 (Sun et al.'s 128 of 510).
      window_pool: windows: one of WINDOW_POOLS.
      window_loss: windows: one of WINDOW_LOSSES.
    """
    long_doc: str = "truncate"
    doc_stride: int | None = None
    max_windows: int | None = None
    head_tokens: int | None = None
    window_pool: str | None = None
    window_loss: str | None = None

    def __post_init__(self):
        """The choices, however the settings were made (flags, or a long_documents.json read
        back: official/records.py names the file)."""
        for field, choices in (("long_doc", MODES), ("window_pool", WINDOW_POOLS),
                               ("window_loss", WINDOW_LOSSES)):
            value = getattr(self, field)
            if value is not None and value not in choices:
                raise ValueError(f"{field} must be one of {', '.join(choices)}, got {value!r}")
        for field, least in (("doc_stride", 1), ("max_windows", 1), ("head_tokens", 0)):
            value = getattr(self, field)
            if value is not None and value < least:
                raise ValueError(f"{field} must be at least {least}, got {value}")

    @property
    def windows(self) -> bool:
        return self.long_doc == "windows"

    @classmethod
    def from_flags(cls, long_doc: str = "truncate", doc_stride: int | None = None,
                   max_windows: int | None = None, head_tokens: int | None = None,
                   window_pool: str | None = None, window_loss: str | None = None, *,
                   max_seq_length: int, pair: bool = False,
                   gradient_accumulation_steps: int = 1) -> LongDocSettings:
        """The flags' settings, `resolved` for the run's max_seq_length and task (`pair`).

        Raises:
          ValueError: what `resolved` raises; windows with gradient accumulation (micro-batches
            are slices of a batch's rows: they would cut documents' windows apart).
        """
        settings = cls(long_doc, doc_stride, max_windows, head_tokens, window_pool,
                       window_loss).resolved(max_seq_length, pair)
        if settings.windows and gradient_accumulation_steps > 1:
            raise ValueError("--gradient_accumulation_steps must be 1 with --long_doc=windows "
                             "(a batch is documents; raise --train_batch_size instead)")
        return settings

    def resolved(self, max_seq_length: int, pair: bool = False) -> LongDocSettings:
        """The settings with every default filled in for max_seq_length.

        Raises:
          ValueError: a setting out of range or one the mode does not use, naming its flag.
        """
        used = {"truncate": (), "head_tail": ("head_tokens",),
                "windows": ("doc_stride", "max_windows", "window_pool", "window_loss")}
        for field in ("doc_stride", "max_windows", "head_tokens", "window_pool", "window_loss"):
            if getattr(self, field) is not None and field not in used[self.long_doc]:
                wanted = next(mode for mode, fields in used.items() if field in fields)
                raise ValueError(f"--{field} is for --long_doc={wanted}, not "
                                 f"--long_doc={self.long_doc}")
        if self.long_doc == "truncate":
            return self
        if pair:
            raise ValueError(f"--long_doc={self.long_doc} reads single texts; this task's "
                             "examples are pairs (use --long_doc=truncate)")
        window = max_seq_length - 2
        if self.long_doc == "head_tail":
            head = window // 4 if self.head_tokens is None else self.head_tokens
            if head > window:
                raise ValueError(f"--head_tokens must be in [0, max_seq_length - 2 = {window}], "
                                 f"got {head}")
            return dataclasses.replace(self, head_tokens=head)
        stride = max(window // 2, 1) if self.doc_stride is None else self.doc_stride
        max_windows = DEFAULT_MAX_WINDOWS if self.max_windows is None else self.max_windows
        pool = self.window_pool or WINDOW_POOLS[0]
        loss = self.window_loss or WINDOW_LOSSES[0]
        return dataclasses.replace(self, doc_stride=stride, max_windows=max_windows,
                                   window_pool=pool, window_loss=loss)
