r"""The unigram baseline of held-out pretraining records: the masked-LM loss and accuracy of a model
that ignores the context and predicts every masked token from its frequency alone.

    python -m data_prep.unigram_baseline --train_file='records/*-0000[1-9]-of-00010*' \
      --eval_file='records/*-00000-of-00010*' --output_file=unigram.json

A pretrained masked LM is worth something only once it beats this: early in pretraining every
BERT predicts the unigram distribution (its masked-LM accuracy is then the most frequent
token's share), and a run still there has learned nothing of context. run_pretraining --do_eval
on the same --eval_file gives the model's figures to set beside these.

The frequencies are counted over the training records' masked positions (the tokens the masked
LM is asked for: never [CLS], [SEP] or padding), each count plus one (Laplace's rule, so a token
the training records never asked for still has a probability), over a vocabulary of the largest
token id asked for on either side plus one, or --vocab_size. Then over the eval records'
predictions, weighted by masked_lm_weights as the masked-LM loss is (official/tasks/
pretraining.py):

    masked_lm_loss      = -sum(w * log p(token)) / sum(w)       (natural log, as the model's)
    masked_lm_accuracy  = sum(w * [token == the most frequent]) / sum(w)

Writes --output_file (JSON, atomically): those two, perplexity = exp(loss), the predictions on
each side, the most frequent token's id and the vocabulary size. Records of any
max_seq_length and max_predictions_per_seq are read (the lengths are the records' own).
Bad input (a glob matching nothing, records that are not pretraining records, an output that
cannot be written) is one line on stderr, exit status 1, nothing written.
"""

import json
import math
import sys
from typing import Iterator

import numpy as np
from absl import flags

from official import command_line
from official.atomic_files import open_atomically
from official.output_paths import check_output_file
from official.pretraining_shards import expand_input_files

SCRIPT = "unigram_baseline"

FLAGS = flags.FLAGS


def define_flags() -> None:
    """The entry point's flags; defined when it runs, not on import, so that a process that
    imports `baseline` and another data maker (the tests) meets no flag twice."""
    flags.DEFINE_string("train_file", None, "Pretraining records whose masked tokens are "
                        "counted (a glob or comma-separated list, as run_pretraining's "
                        "--input_file).")
    flags.DEFINE_string("eval_file", None, "Held-out pretraining records the baseline is scored "
                        "on.")
    flags.DEFINE_string("output_file", None, "Where the JSON goes.")
    flags.DEFINE_integer("vocab_size", None, "The vocabulary the frequencies are smoothed over "
                         "(default: the largest token id seen, plus one).")


def _predictions(files: list[str], flag: str) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(masked_lm_ids, masked_lm_weights) of each batch of the records, as numpy arrays."""
    import tensorflow as tf

    spec = {"masked_lm_ids": tf.io.RaggedFeature(tf.int64),
            "masked_lm_weights": tf.io.RaggedFeature(tf.float32)}
    dataset = tf.data.TFRecordDataset(files).batch(4096).map(
        lambda records: tf.io.parse_example(records, spec))
    try:
        for batch in dataset:
            ids, weights = batch["masked_lm_ids"], batch["masked_lm_weights"]
            if not np.array_equal(ids.row_lengths().numpy(), weights.row_lengths().numpy()):
                raise ValueError(f"{flag}: masked_lm_ids and masked_lm_weights differ in length")
            yield ids.flat_values.numpy(), weights.flat_values.numpy()
    except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as e:
        raise ValueError(f"{flag}: not pretraining records ({str(e).splitlines()[0]})") \
            from None


def baseline(train_files: list[str], eval_files: list[str],
             vocab_size: int | None = None) -> dict:
    """The module docstring's figures, as a dict.

    Raises:
      ValueError: records without predictions, or ids beyond `vocab_size`.
    """
    counts = np.zeros(0, np.int64)
    for ids, weights in _predictions(train_files, "--train_file"):
        kept = ids[weights > 0]
        if kept.size:
            counts = np.pad(counts, (0, max(0, int(kept.max()) + 1 - counts.size)))
            counts += np.bincount(kept, minlength=counts.size)
    if not counts.sum():
        raise ValueError("--train_file: the records hold no masked-LM predictions")
    held_out = [(ids[weights > 0], weights[weights > 0])
                for ids, weights in _predictions(eval_files, "--eval_file")]
    largest = max([counts.size - 1, *(int(ids.max()) for ids, _ in held_out if ids.size)])
    size = vocab_size if vocab_size is not None else largest + 1
    if largest >= size:
        raise ValueError(f"--vocab_size={size}: the records hold token id {largest}")
    counts = np.pad(counts, (0, size - counts.size))
    log_p = np.log(counts + 1.0) - math.log(counts.sum() + size)
    top = int(np.argmax(counts))
    loss = correct = weight = 0.0
    for ids, weights in held_out:
        loss -= float(np.dot(weights, log_p[ids]))
        correct += float(np.dot(weights, ids == top))
        weight += float(weights.sum())
    if not weight:
        raise ValueError("--eval_file: the records hold no masked-LM predictions")
    return {"masked_lm_loss": loss / weight, "masked_lm_accuracy": correct / weight,
            "perplexity": math.exp(loss / weight), "eval_predictions": int(weight),
            "train_predictions": int(counts.sum()), "most_frequent_id": top,
            "vocab_size": size, "smoothing": "add-one"}


def prepare() -> tuple[list[str], list[str]]:
    """The flags, the record files and the output place checked; (training, held-out) files."""
    for name in ("train_file", "eval_file", "output_file"):
        if not FLAGS[name].value:
            raise ValueError(f"--{name}: required")
    if FLAGS.vocab_size is not None and FLAGS.vocab_size < 1:
        raise ValueError(f"--vocab_size={FLAGS.vocab_size}: must be at least 1")
    train = expand_input_files(FLAGS.train_file, "--train_file")
    held_out = expand_input_files(FLAGS.eval_file, "--eval_file")
    check_output_file(FLAGS.output_file, "output_file")
    return train, held_out


def job(files: tuple[list[str], list[str]]) -> None:
    figures = baseline(*files, FLAGS.vocab_size)
    with open_atomically(FLAGS.output_file) as f:
        json.dump({"train_file": FLAGS.train_file, "eval_file": FLAGS.eval_file, **figures},
                  f, indent=2)
        f.write("\n")
    print(f"unigram baseline on {FLAGS.eval_file}: masked_lm_loss "
          f"{figures['masked_lm_loss']:.4f}, masked_lm_accuracy "
          f"{figures['masked_lm_accuracy']:.4f}", file=sys.stderr)


if __name__ == "__main__":
    define_flags()
    command_line.main(SCRIPT, prepare, job)
