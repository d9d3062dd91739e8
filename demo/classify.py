r"""The demo's last stage: a serving client labels raw sentences with the exported classifier.

    python -m demo.classify --export_dir=demo_output/export --sentences=demo/sentences.txt \
      --output_file=demo_output/classified.jsonl

It imports TensorFlow and tensorflow_text only (whose ops the export's in-graph tokenizer
uses), as a TF Serving user's process would, loads the newest version in export_dir and calls
its serving_default signature on every sentence at once. Prints text, label and probability;
writes one JSON object per sentence ({"text", "source", "label", "probability"}).
Sentences file: "text<TAB>where it is from" per line; lines starting with # are comments.
"""

import json
import os
import sys

from absl import app
from absl import flags
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the export's tokenizer uses)

from demo.saved_models import newest_version

flags.DEFINE_string("export_dir", None, "export_saved_model's --export_dir.")
flags.DEFINE_string("sentences", None, "text<TAB>source per line.")
flags.DEFINE_string("output_file", None, "The JSON-lines results.")
FLAGS = flags.FLAGS


def read_sentences(path: str) -> list[tuple[str, str]]:
    """(text, source) of each line that is not blank or a # comment."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            text, tab, source = line.partition("\t")
            if not tab:
                raise ValueError(f"{path}:{number}: expected text<TAB>source")
            rows.append((text, source))
    if not rows:
        raise ValueError(f"{path}: no sentences")
    return rows


def main(argv: list[str]) -> int:
    del argv  # Unused.
    try:
        rows = read_sentences(FLAGS.sentences)
        path = newest_version(FLAGS.export_dir)
    except (OSError, ValueError) as e:
        print(f"classify: {e}", file=sys.stderr)
        return 1
    serve = tf.saved_model.load(path).signatures["serving_default"]
    outputs = serve(text_a=tf.constant([text for text, _ in rows]))
    labels = [label.decode("utf-8") for label in outputs["label"].numpy()]
    best = outputs["probabilities"].numpy().max(axis=-1)
    print(f"   {path}, serving_default(text_a=[{len(rows)} sentences]):")
    results = []
    for (text, source), label, probability in zip(rows, labels, best):
        shown = text if len(text) <= 70 else text[:67] + "..."
        print(f"   {label:>12} {probability:5.2f}  {shown}  ({source})")
        results.append({"text": text, "source": source, "label": label,
                        "probability": float(probability)})
    tmp = FLAGS.output_file + ".tmp"  # whole, then renamed (this client imports no project code)
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(result) + "\n" for result in results)
    os.replace(tmp, FLAGS.output_file)
    return 0


if __name__ == "__main__":
    flags.mark_flags_as_required(["export_dir", "sentences", "output_file"])
    app.run(main)
