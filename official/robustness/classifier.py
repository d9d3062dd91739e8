"""A classifier export, loaded for testing: raw texts in, class probabilities out, batched.

    model = ExportedClassifier(export_dir)    the newest numbered version, or a version itself
    model = single_text_classifier(export_dir, "--export_dir")   one refused if it takes pairs,
                                              every error naming the flag
    model.labels                              the export's labels, in the probabilities' order
    model.pair, model.path                    whether it takes text pairs; the version loaded
    model.probabilities(texts, batch_size=32, texts_b=None)
                                              -> float32 [texts, num_labels], in input order

The export is `export_saved_model` of a classification run (official/export/classifier.py):
`serving_default(text_a [, text_b]: string [batch]) -> probabilities float32 [batch,
num_labels], label string [batch]`, and `class_labels() -> string [num_labels]`. A windows
export (long documents) serves the same signature and is read the same way. Anything else is
refused when loaded, with one line naming the folder: another export type, a regression export
(a score, no labels), and an export made before classifier exports kept their labels (it has
no `class_labels`: export it again).

The texts are run `batch_size` at a time (the last batch smaller), so memory is bounded by the
batch, not by how many texts a behavioural suite or an attack asks about.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401 -- registers the tokenizer's ops the export's graph uses

from official.export.restoring import load_export

SIGNATURE = "serving_default"
OUTPUT = "probabilities"


def _is_strings(spec) -> bool:
    return spec is not None and spec.dtype == tf.string and spec.shape.rank == 1


class ExportedClassifier:
    """The export at `export_dir` (see the module docstring), loaded and checked."""

    def __init__(self, export_dir: str):
        self.path, loaded = load_export(export_dir)
        signature = loaded.signatures.get(SIGNATURE)
        if signature is None:
            raise ValueError(f"{self.path}: no {SIGNATURE!r} signature: not a classifier export")
        _, inputs = signature.structured_input_signature
        if set(inputs) not in ({"text_a"}, {"text_a", "text_b"}) or not all(
                _is_strings(spec) for spec in inputs.values()):
            raise ValueError(f"{self.path}: {SIGNATURE!r} takes {sorted(inputs)}, not text_a "
                             "(and text_b) string vectors: not a classifier export")
        outputs = signature.structured_outputs
        if "score" in outputs and OUTPUT not in outputs:
            raise ValueError(f"{self.path}: a regression export (a score, no labels): "
                             "behavioural tests and attacks need a classifier's probabilities")
        output = outputs.get(OUTPUT)
        if output is None or output.dtype != tf.float32 or output.shape.rank != 2:
            raise ValueError(f"{self.path}: {SIGNATURE!r} has no float32 [batch, num_labels] "
                             f"output {OUTPUT!r}: not a classifier export")
        if not hasattr(loaded, "class_labels"):
            raise ValueError(f"{self.path}: the export does not say its labels (made before "
                             "classifier exports kept them): export it again with "
                             "export_saved_model")
        self.labels = [label.decode("utf-8") for label in loaded.class_labels().numpy()]
        width = output.shape[-1]
        if width is not None and width != len(self.labels):
            raise ValueError(f"{self.path}: {len(self.labels)} labels for {width} probabilities")
        self.pair = "text_b" in inputs
        self._loaded, self._signature = loaded, signature  # the signature needs its owner alive

    def probabilities(self, texts: list[str], batch_size: int = 32,
                      texts_b: list[str] | None = None) -> np.ndarray:
        """[texts] (and as many `texts_b` for a pair export) -> float32 [texts, num_labels],
        as the export computes them, `batch_size` texts at a time."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if self.pair != (texts_b is not None):
            raise ValueError(f"{self.path}: " + ("a pair export needs texts_b" if self.pair else
                                                 "a single-text export takes no texts_b"))
        if texts_b is not None and len(texts_b) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(texts_b)} texts_b")
        batches = [np.zeros([0, len(self.labels)], np.float32)]
        for start in range(0, len(texts), batch_size):
            inputs = {"text_a": tf.constant(texts[start:start + batch_size], tf.string)}
            if texts_b is not None:
                inputs["text_b"] = tf.constant(texts_b[start:start + batch_size], tf.string)
            batches.append(self._signature(**inputs)[OUTPUT].numpy())
        return np.concatenate(batches)


def single_text_classifier(export_dir: str, flag: str) -> ExportedClassifier:
    """The export at `export_dir`, which must classify single texts (what behavioural suites
    and attacks give it); ValueErrors are one line starting with `flag`."""
    try:
        model = ExportedClassifier(export_dir)
    except ValueError as e:
        raise ValueError(f"{flag}: {e}") from None
    if model.pair:
        raise ValueError(f"{flag}: {model.path}: a text-pair export; it is given single texts "
                         "here")
    return model
