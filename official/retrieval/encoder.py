"""A sentence-encoder export, loaded for search: raw strings in, float32 vectors out.

    encoder = SentenceEncoder(export_dir)     the newest numbered version, or a version itself
    encoder(["a text", ...])                  -> float32 [texts, hidden]
    encoder.path, encoder.fingerprint         what an index records, to know it was made by it

The export is `export_saved_model --export_type=sentence_encoder`
(official/export/sentence_encoder.py): `serving_default(text: string [batch]) -> embeddings
float32 [batch, hidden]`. Anything else (another export type, a folder without a SavedModel) is
refused when loaded, with one line naming the folder, before any text is embedded.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401 -- registers the tokenizer's ops the export's graph uses

from official.export.restoring import load_export

SIGNATURE = "serving_default"
INPUT = "text"
OUTPUT = "embeddings"


def _fingerprint(path: str) -> str:
    """The SavedModel's fingerprint (graph, signatures, object graph and checkpoint hashes);
    "" for a SavedModel written without fingerprint.pb (then only its path tells exports
    apart)."""
    try:
        return str(tf.saved_model.experimental.read_fingerprint(path).singleprint())
    except Exception:  # noqa: BLE001 -- an older SavedModel without the file
        return ""


class SentenceEncoder:
    """The export at `export_dir` (see the module docstring), loaded and checked."""

    def __init__(self, export_dir: str):
        self.path, loaded = load_export(export_dir)
        signature = loaded.signatures.get(SIGNATURE)
        if signature is None:
            raise ValueError(f"{self.path}: no {SIGNATURE!r} signature (export it with "
                             "export_saved_model --export_type=sentence_encoder)")
        _, inputs = signature.structured_input_signature
        spec = inputs.get(INPUT)
        if set(inputs) != {INPUT} or spec.dtype != tf.string or spec.shape.rank != 1:
            raise ValueError(f"{self.path}: {SIGNATURE!r} takes {sorted(inputs)}, not one string "
                             f"vector {INPUT!r}: not a sentence_encoder export")
        output = signature.structured_outputs.get(OUTPUT)
        if output is None or output.dtype != tf.float32 or output.shape.rank != 2:
            raise ValueError(f"{self.path}: {SIGNATURE!r} has no float32 [batch, hidden] output "
                             f"{OUTPUT!r}: not a sentence_encoder export")
        self._loaded, self._signature = loaded, signature  # the signature needs its owner alive
        self.fingerprint = _fingerprint(self.path)

    def __call__(self, texts: list[str]) -> np.ndarray:
        """[texts] -> float32 [texts, hidden], as the export computes them."""
        outputs = self._signature(text=tf.constant(texts, dtype=tf.string))
        return outputs[OUTPUT].numpy()
