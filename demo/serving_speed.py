r"""A demo stage: how fast each exported classifier serves raw sentences, timed side by side.

    python -m demo.serving_speed --export_dirs=teacher=demo_output/export,\
student=demo_output/export_distilled --texts=data/gutenberg/authorship/test.tsv \
      --output_file=demo_output/serving_speed.json

Like demo/classify.py it imports TensorFlow and tensorflow_text only. Each export's newest
version is loaded and called on batches of the texts (the test split's sentences, header
skipped) at each --batch_sizes. The exports take turns, round after round, so a slow spell of a
shared machine lands on all of them; sentences/s is the batch size over the median seconds of a
call. Writes {"batch_sizes": [...], "sentences_per_second": {name: {batch: rate}}}.
"""

import itertools
import json
import os
import statistics
import sys
import time

import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the export's tokenizer uses)
from absl import app, flags

from demo.saved_models import newest_version

flags.DEFINE_list("export_dirs", None, "NAME=EXPORT_DIR pairs, timed side by side.")
flags.DEFINE_string("texts", None, "A TSV whose first column (after a header) is the texts.")
flags.DEFINE_list("batch_sizes", ["1", "32"], "Sentences per call.")
flags.DEFINE_integer("rounds", 5, "Rounds; in each, every export makes --calls timed calls.")
flags.DEFINE_integer("calls", 10, "Timed calls per export and round (after one untimed).")
flags.DEFINE_string("output_file", None, "The JSON results.")
FLAGS = flags.FLAGS


def read_texts(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        texts = [line.split("\t")[0] for line in f.read().splitlines()[1:] if line.strip()]
    if not texts:
        raise ValueError(f"{path}: no texts after the header")
    return texts


def main(argv: list[str]) -> int:
    del argv  # Unused.
    try:
        named = dict(pair.split("=", 1) for pair in FLAGS.export_dirs)
        paths = {name: newest_version(folder) for name, folder in named.items()}
        texts = read_texts(FLAGS.texts)
        batch_sizes = [int(b) for b in FLAGS.batch_sizes]
    except (OSError, ValueError) as e:
        print(f"serving_speed: {e}", file=sys.stderr)
        return 1
    serve = {name: tf.saved_model.load(path).signatures["serving_default"]
             for name, path in paths.items()}
    rates = {name: {} for name in serve}
    for batch in batch_sizes:
        batches = itertools.cycle([tf.constant(texts[i:i + batch])
                                   for i in range(0, max(len(texts) - batch + 1, 1), batch)])
        seconds = {name: [] for name in serve}
        for _ in range(FLAGS.rounds):
            for name, signature in serve.items():
                signature(text_a=next(batches))  # untimed: the switch between models
                for _ in range(FLAGS.calls):
                    chunk = next(batches)
                    start = time.perf_counter()
                    signature(text_a=chunk)["probabilities"].numpy()
                    seconds[name].append(time.perf_counter() - start)
        for name, values in seconds.items():
            rates[name][str(batch)] = batch / statistics.median(values)
            print(f"   {name} batch {batch}: {rates[name][str(batch)]:.0f} sentences/s")
    tmp = FLAGS.output_file + ".tmp"  # whole, then renamed (this client imports no project code)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"batch_sizes": batch_sizes, "sentences_per_second": rates,
                   "exports": paths}, f, indent=1)
    os.replace(tmp, FLAGS.output_file)
    return 0


if __name__ == "__main__":
    flags.mark_flags_as_required(["export_dirs", "texts", "output_file"])
    app.run(main)
