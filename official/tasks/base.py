"""What a fine-tuning task is: the two small interfaces the generic run
(`official.training.finetuning.run`) takes, one from the library and one from data_prep.

    FinetuningTask  (official/tasks/)  the model it builds on an encoder and the checkpoint roots
                                       of its head (the model's `checkpoint_items`), its loss (the
                                       Trainer's additive-stats Task protocol), the metrics of
                                       predicted outputs with the one that picks best/, its
                                       prediction files, its records, what a distillation matches
                                       (`soft_targets`) and what an export rebuilds it from
                                       (`serving_spec`, read by official/export/)
    TaskData        (data_prep/)       reads and checks the splits it is asked for, then writes
                                       (or reuses) their records
    Records                            one split's records as the run reads them

Everything else is the same for every task and lives in the run: the checks made before any data
is read, every split read before any record is written, training with an evaluation at each
epoch's end and best/ kept, restoring for a run that only evaluates or predicts, prediction, and
the chief-only writes under a multi-worker strategy.

Splits are named "train" (--do_train), "dev" (--do_eval) and "test" (--do_predict); a task whose
evaluation and test data are one file (SQuAD's --predict_file) returns the same records for both.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Protocol, Sequence

if TYPE_CHECKING:  # the data side imports this module without loading Keras
    import keras
    import numpy as np
    import tensorflow as tf

    from official.modeling.encoder import BertEncoder

SPLITS = ("train", "dev", "test")


@dataclasses.dataclass(frozen=True)
class Records:
    """One split's TFRecord file, as the data side wrote it.

    Attributes:
      path: the TFRecord file.
      spec: its parse spec, {feature name: tf.io.FixedLenFeature}.
      num_examples: what the original counts for the number of updates (sentences or pairs for a
        classifier, questions for SQuAD, windows for NER); the run uses the train split's.
      num_records: the records in the file (windows, padding records included).
      source: the data the records were made from, named in errors and logs.
      reused: True when the records were already cached for the same settings.
      examples: what the task needs besides the model's outputs to score or write the split's
        predictions (SQuAD's examples, features and gold answers; NER's sentences); None when
        the records carry all of it.
      documents: a record is a document holding all its windows (a classifier's
        --long_doc=windows): a batch's rows are whole documents' windows, which a replica's
        slice of the batch would cut apart, so the split is evaluated and predicted on one
        replica.
    """
    path: str
    spec: Mapping[str, tf.io.FixedLenFeature]
    num_examples: int
    num_records: int
    source: str
    reused: bool = False
    examples: Any = None
    documents: bool = False


class SoftTarget(NamedTuple):
    """One output a distillation matches to the teacher's (official/distillation/).

    Attributes:
      logits: what is matched: float [..., classes] logits (a softmax over the last axis) for
        "distribution", [...] scores for "score", [..., dims] vectors for "vector".
      weights: float32 [...], which rows count (0 for padding, for a word's later pieces).
      normalizer: the key of the task's `normalizers` that sums `weights` over the global
        batch (the soft loss is a mean, as the task's own).
      kind: how it is matched: "distribution", soft cross-entropy at the temperature (Hinton
        et al.); "score", squared error (a regression's score); "vector", mean squared error
        over the last axis (sentence-transformers' MSELoss, distilling an embedding).
    """
    logits: Any
    weights: Any
    normalizer: str
    kind: str = "distribution"


class TaskData(Protocol):
    """The data side of a task, written in data_prep/ (the library never imports it)."""

    def read(self, splits: Sequence[str]) -> int | None:
        """Reads and checks every split of `splits` (a subset of SPLITS), writing nothing, so a
        bad test file stops the run before training rather than after it.

        Returns the training count (`Records.num_examples` of "train") when "train" is asked for
        and the count is known before the records are made, else None.
        Raises ValueError naming the file (and line or question) that is wrong.
        """

    def records(self, split: str) -> Records:
        """The split's records, written to (or reused from) the output_dir's cache; called only
        after `read` has passed."""

    def source(self, split: str) -> str:
        """The split's data as a user names it (a file, or a TensorFlow Datasets name)."""


# A TaskData may also name further labelled sets (an attribute `evaluation_sets`, a tuple of
# names that are not SPLITS: "de", "es"): each is read and checked with the splits, and
# evaluated like dev by the model the run keeps (best/, chosen on dev alone) when --do_eval
# runs, its scores in EVALUATION_SET_RESULTS and a row of EVALUATION_SETS_TABLE beside dev's
# (zero-shot transfer: a task trained on one language, scored on others). Without the
# attribute there are none.
EVALUATION_SET_RESULTS = "eval_results_{name}.txt"
EVALUATION_SETS_TABLE = "eval_results_by_set.md"


def evaluation_sets(data: TaskData) -> tuple[str, ...]:
    """The further labelled sets `data` names (none unless it has `evaluation_sets`)."""
    names = tuple(getattr(data, "evaluation_sets", ()))
    clashing = [name for name in names if name in SPLITS]
    if clashing:
        raise ValueError(f"evaluation set {clashing[0]!r}: the name of a split "
                         f"({', '.join(SPLITS)})")
    return names


class FinetuningTask(Protocol):
    """A fine-tuning task: its model, loss, metrics and prediction files.

    The loss is the Trainer's Task protocol (`official.training.trainer.Task`: normalizers,
    loss_and_stats, metrics as additive sums), so one object is both.

    Attributes:
      best_metric: the key of `evaluate`'s metrics that picks output_dir/best/ (higher is better).
      keep: the record features `predict` keeps beside the model's outputs (ids that tie a row
        back to its example, gold labels) for `evaluate` and `write_predictions`.
      results_file: where the run writes the test split's scores (eval_results.txt's format)
        when `write_predictions` returns any; None: the task has none.
    """

    best_metric: str
    keep: tuple[str, ...]
    results_file: str | None

    def build_model(self, encoder: BertEncoder) -> keras.Model:
        """The task's model on `encoder`; its `checkpoint_items` name every root it trains.

        Called inside the distribution strategy's scope, before --init_checkpoint is loaded into
        the encoder: another model the task needs (a distillation teacher) is built here too, so
        its variables are placed as the strategy places the student's.
        """

    def normalizers(self, features: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]: ...

    def loss_and_stats(self, outputs, features: Mapping[str, tf.Tensor],
                       normalizers: Mapping[str, tf.Tensor]) -> tuple[tf.Tensor, dict]: ...

    def metrics(self, stats: Mapping[str, float]) -> dict[str, float]: ...

    def soft_targets(self, outputs, features: Mapping[str, tf.Tensor]) -> dict[str, SoftTarget]:
        """The model's outputs a distillation matches, by name (logits, or SQuAD's start and
        end): computed alike on the student's and the teacher's outputs."""

    def evaluate(self, outputs: Mapping[str, np.ndarray], records: Records) -> dict[str, float]:
        """The dev metrics of the model's outputs on `records` (rows in the records' order, with
        the `keep` features)."""

    def write_predictions(self, outputs: Mapping[str, np.ndarray], records: Records,
                          output_dir: str | None) -> dict[str, float]:
        """The test split's predictions: written into `output_dir` (None on the workers that
        write nothing: only the chief writes), and returned scored when the split has gold
        answers ({} when it has none; the run writes them into `results_file`)."""

    def files(self) -> dict[str, str | None]:
        """{file name: text} of what the checkpoints' model reads besides its weights (a
        classifier's long_documents.json, a sentence encoder's sentence_encoder.json), written
        beside them and into best/ and compared with an earlier run's before any work; a name
        with None: a record of this task that this run does not write. {} for none."""

    def serving_spec(self) -> dict:
        """What an export needs to rebuild this task, as JSON values: {"export_type": a key of
        official/export/jobs.EXPORT_TYPES, "task_name": its name, and its labels or settings};
        a parameter-efficient run keeps it in its record (official/peft/artifact.py)."""
