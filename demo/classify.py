r"""The demo's serving stage: a client labels raw sentences, and whole passages, with the exports.

    python -m demo.classify --export_dir=demo_output/export --sentences=demo/sentences.txt \
      --output_file=demo_output/classified.jsonl \
      [--passages_export_dir=demo_output/export_passages \
       --passages=data/gutenberg/authorship_passages/test.tsv \
       --passages_output_file=demo_output/classified_passages.json]

It imports TensorFlow and tensorflow_text only (whose ops the exports' in-graph tokenizer
uses), as a TF Serving user's process would, loads the newest version in export_dir and calls
its serving_default signature on every sentence at once. Prints text, label and probability;
writes one JSON object per sentence ({"text", "source", "label", "probability"}).
Sentences file: "text<TAB>where it is from" per line; lines starting with # are comments.

With --passages, the export of a --long_doc=windows run labels each passage of a task TSV
(header, then "text<TAB>gold label"), the whole text at once: the export cuts it into windows
in the graph and pools them as in training. Writes one JSON object: {"export", "passages":
[{"opening", "words", "gold", "label", "probability", "num_windows"}, ...], "accuracy",
"mean_windows"}.
"""

import json
import os
import sys

import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the export's tokenizer uses)
from absl import app, flags

from demo.saved_models import newest_version

flags.DEFINE_string("export_dir", None, "export_saved_model's --export_dir.")
flags.DEFINE_string("sentences", None, "text<TAB>source per line.")
flags.DEFINE_string("output_file", None, "The JSON-lines results.")
flags.DEFINE_string("passages_export_dir", None,
                    "The export of a --long_doc=windows run: it labels --passages.")
flags.DEFINE_string("passages", None, "A task TSV: a header, then text<TAB>gold label per line.")
flags.DEFINE_string("passages_output_file", None, "The passages' JSON results.")
FLAGS = flags.FLAGS

PASSAGE_FLAGS = ("passages_export_dir", "passages", "passages_output_file")
OPENING_WORDS = 12  # of a passage, in the results: enough to recognise it


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


def read_passages(path: str) -> list[tuple[str, str]]:
    """(text, gold label) of each line after the header, split on tabs only, as run_classifier
    --task_name=tsv reads it (a `"` is text, never quoting)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise ValueError(f"{path}:{number}: expected text<TAB>label, got {len(fields)} "
                             "fields")
        rows.append((fields[0], fields[1]))
    if not rows:
        raise ValueError(f"{path}: no passages after the header")
    return rows


def _write_atomically(path: str, text: str) -> None:
    tmp = path + ".tmp"  # whole, then renamed (this client imports no project code)
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def classify_sentences(path: str, rows: list[tuple[str, str]]) -> list[dict]:
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
    return results


def classify_passages(path: str, rows: list[tuple[str, str]]) -> dict:
    """The export at `path` (a windows run's) on each passage whole; the results' JSON object
    (see the module docstring)."""
    serve = tf.saved_model.load(path).signatures["serving_default"]
    if "num_windows" not in serve.structured_outputs:
        raise ValueError(f"{path}: not the export of a --long_doc=windows run (no num_windows "
                         "output)")
    outputs = serve(text_a=tf.constant([text for text, _ in rows]))
    labels = [label.decode("utf-8") for label in outputs["label"].numpy()]
    best = outputs["probabilities"].numpy().max(axis=-1)
    windows = outputs["num_windows"].numpy()
    print(f"   {path}, serving_default(text_a=[{len(rows)} passages]):")
    passages = []
    for (text, gold), label, probability, count in zip(rows, labels, best, windows):
        words = text.split()
        print(f"   {label:>12} {probability:5.2f}  {len(words):5d} words in {int(count):3d} "
              f"windows  (gold {gold})")
        passages.append({"opening": " ".join(words[:OPENING_WORDS]), "words": len(words),
                         "gold": gold, "label": label, "probability": float(probability),
                         "num_windows": int(count)})
    accuracy = sum(p["label"] == p["gold"] for p in passages) / len(passages)
    mean_windows = sum(p["num_windows"] for p in passages) / len(passages)
    print(f"   passage accuracy {accuracy:.3f} over {len(passages)} passages, "
          f"{mean_windows:.1f} windows each on average")
    return {"export": path, "passages": passages, "accuracy": accuracy,
            "mean_windows": mean_windows}


def main(argv: list[str]) -> int:
    del argv  # Unused.
    given = [name for name in PASSAGE_FLAGS if FLAGS[name].value]
    try:
        if given and len(given) < len(PASSAGE_FLAGS):
            raise ValueError("--" + ", --".join(PASSAGE_FLAGS) + " go together; got only --"
                             + ", --".join(given))
        rows = read_sentences(FLAGS.sentences)
        path = newest_version(FLAGS.export_dir)
        if given:
            passage_rows = read_passages(FLAGS.passages)
            passages_path = newest_version(FLAGS.passages_export_dir)
    except (OSError, ValueError) as e:
        print(f"classify: {e}", file=sys.stderr)
        return 1
    results = classify_sentences(path, rows)
    _write_atomically(FLAGS.output_file, "".join(json.dumps(r) + "\n" for r in results))
    if given:
        try:
            passages = classify_passages(passages_path, passage_rows)
        except ValueError as e:
            print(f"classify: {e}", file=sys.stderr)
            return 1
        _write_atomically(FLAGS.passages_output_file, json.dumps(passages, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    flags.mark_flags_as_required(["export_dir", "sentences", "output_file"])
    app.run(main)
