"""Feature extraction: the encoder's per-token activations for lines of text, as JSON lines.

This is the library half of the original `extract_features.py`, with the same input and output:
one example per input line (`text_a` or `text_a ||| text_b`), one JSON object per line out:

    {"linex_index": 0,                      # the original's typo, kept: readers depend on it
     "features": [{"token": "[CLS]",
                   "layers": [{"index": -1, "values": [0.1, ...]},   # hidden_size floats
                              ...]},                                 # one per requested layer
                  ...]}                                              # one per real token

Example:
    encoder = build_encoder(BertConfig.from_json_file("bert_config.json"))
    load_init_checkpoint("bert_model.ckpt", encoder)
    extract_features(read_examples("in.txt"), "out.jsonl", encoder, FullTokenizer("vocab.txt"),
                     layer_indexes=[-1, -2, -3, -4], max_seq_length=128)
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Callable

import numpy as np
import tensorflow as tf

from official.atomic_files import open_atomically
from official.features.pair_truncation import truncated_pair_lengths
from official.modeling.encoder import BertEncoder
from official.text.tokenizer import FullTokenizer


@dataclasses.dataclass
class InputExample:
    """One input line: a single text, or a pair written `text_a ||| text_b`."""
    unique_id: int
    text_a: str
    text_b: str | None = None


@dataclasses.dataclass
class InputFeatures:
    """An example as model inputs; the lists are max_seq_length long except `tokens`.

    `tokens` holds the real tokens only ([CLS] a [SEP] (b [SEP])), so features[i] of the output
    is `tokens[i]` and padding positions are never written.
    """
    unique_id: int
    tokens: list[str]
    input_ids: list[int]
    input_mask: list[int]
    input_type_ids: list[int]


def read_examples(input_file: str) -> list[InputExample]:
    """Reads one example per line, as the original `read_examples` does.

    Lines end at "\\n" only, are stripped, and become examples even when empty, so that
    `linex_index` is always the line number (0-based). Unlike the original, which silently
    drops undecodable bytes, a line that is not UTF-8 is an error, and so is an empty file
    (every other entry point refuses empty input; an empty output would look like success).
    """
    try:
        with open(input_file, "rb") as f:
            raw_lines = f.read().split(b"\n")
    except FileNotFoundError:
        raise ValueError(f"{input_file}: no such input file") from None
    if raw_lines[-1] == b"":
        raw_lines.pop()  # What follows the last newline is not a line.
    examples = []
    for unique_id, raw in enumerate(raw_lines):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as e:
            raise ValueError(
                f"{input_file}: line {unique_id + 1}: not valid UTF-8 (byte {e.start})") from None
        # Greedy, as in the original: "a ||| b ||| c" is the pair ("a ||| b", "c").
        match = re.match(r"^(.*) \|\|\| (.*)$", line)
        if match is None:
            examples.append(InputExample(unique_id, line))
        else:
            examples.append(InputExample(unique_id, match.group(1), match.group(2)))
    if not examples:
        raise ValueError(f"{input_file}: empty, no line to extract features of")
    return examples


def convert_examples_to_features(examples: list[InputExample], seq_length: int,
                                 tokenizer: FullTokenizer) -> list[InputFeatures]:
    """Tokenizes examples (one tokenizer call for all text_a, one for all text_b) and lays them
    out for BERT:

        tokens:         [CLS] is this jack ##son ##ville ? [SEP] no it is not . [SEP] (pad...)
        input_type_ids: 0     0  0    0    0     0       0 0     1  1  1  1   1 1     0
        input_mask:     1     1  1    1    1     1       1 1     1  1  1  1   1 1     0

    A pair longer than seq_length is cut as the fine-tuning data is
    (`official.features.pair_truncation`); a single text keeps its first seq_length - 2 tokens.
    """
    texts_b = [e.text_b for e in examples if e.text_b]
    tokens_a_all = tokenizer.tokenize_batch([e.text_a for e in examples])
    tokens_b_iter = iter(tokenizer.tokenize_batch(texts_b))
    tokens_b_all = [next(tokens_b_iter) if e.text_b else [] for e in examples]
    # [CLS], [SEP], [SEP]; a row without b tokens (below) does not use its pair lengths.
    pair_lengths = zip(*(length.numpy().tolist() for length in truncated_pair_lengths(
        [len(t) for t in tokens_a_all], [len(t) for t in tokens_b_all], seq_length - 3)))
    features = []
    for example, tokens_a, tokens_b, (len_a, len_b) in zip(examples, tokens_a_all,
                                                           tokens_b_all, pair_lengths):
        # A text_b with no tokens (e.g. only control characters) makes a single-text example,
        # as in the original.
        if tokens_b:
            tokens_a, tokens_b = tokens_a[:len_a], tokens_b[:len_b]
        else:
            tokens_a = tokens_a[:seq_length - 2]  # [CLS], [SEP]
        tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
        input_type_ids = [0] * len(tokens)
        if tokens_b:
            tokens += tokens_b + ["[SEP]"]
            input_type_ids += [1] * (len(tokens_b) + 1)
        padding = [0] * (seq_length - len(tokens))
        features.append(InputFeatures(
            unique_id=example.unique_id,
            tokens=tokens,
            input_ids=tokenizer.convert_tokens_to_ids(tokens) + padding,
            input_mask=[1] * len(tokens) + padding,
            input_type_ids=input_type_ids + padding))
    return features


def _check_layer_indexes(layer_indexes: list[int], num_layers: int) -> None:
    """Layer indexes count like Python's: 0 is the first layer, -1 the last."""
    for index in layer_indexes:
        if not -num_layers <= index < num_layers:
            raise ValueError(f"layers: index {index} is out of range for an encoder of "
                             f"{num_layers} layers (valid: {-num_layers}..{num_layers - 1})")


def make_layer_fn(encoder: BertEncoder,
                  layer_indexes: list[int]) -> Callable[..., tf.Tensor]:
    """A tf.function of (word_ids, mask, type_ids), int32 [batch, seq_len] each, to the
    requested layers' outputs, float32 [len(layer_indexes), batch, seq_len, hidden]."""
    spec = tf.TensorSpec([None, None], tf.int32)

    @tf.function(input_signature=[spec, spec, spec])
    def layer_fn(word_ids, mask, type_ids):
        outputs = encoder({"input_word_ids": word_ids, "input_mask": mask,
                           "input_type_ids": type_ids}, training=False)
        layers = outputs["encoder_outputs"]
        return tf.cast(tf.stack([layers[i] for i in layer_indexes]), tf.float32)

    return layer_fn


def feature_json(feature: InputFeatures, layer_values: np.ndarray,
                 layer_indexes: list[int]) -> dict:
    """One output line: `layer_values` is [len(layer_indexes), seq_len, hidden] for this example.

    Values are `round(float(x), 6)`, as in the original, so the JSON text matches its output.
    """
    return {
        "linex_index": feature.unique_id,
        "features": [
            {"token": token,
             "layers": [{"index": layer_index,
                         # tolist() gives the same Python floats as float(x), much faster.
                         "values": [round(x, 6) for x in layer_values[j, i].tolist()]}
                        for j, layer_index in enumerate(layer_indexes)]}
            for i, token in enumerate(feature.tokens)],
    }


def extract_features(examples: list[InputExample], output_file: str, encoder: BertEncoder,
                     tokenizer: FullTokenizer, layer_indexes: list[int],
                     max_seq_length: int = 128, batch_size: int = 32) -> None:
    """Writes the JSON lines of `examples` (from `read_examples`) to `output_file`.

    The arguments are checked before anything is written, and the output appears only when
    complete (written to a temp file, then renamed), so a failure leaves no half-written file.
    """
    config = encoder.config
    _check_layer_indexes(layer_indexes, config.num_hidden_layers)
    if not 3 <= max_seq_length <= config.max_position_embeddings:
        raise ValueError(
            f"max_seq_length: {max_seq_length} must be at least 3 ([CLS] a [SEP]) and at most "
            f"the config's max_position_embeddings ({config.max_position_embeddings})")
    if len(tokenizer.vocab) > config.vocab_size:
        raise ValueError(
            f"{tokenizer.vocab_file}: {len(tokenizer.vocab)} tokens, more than the config's "
            f"vocab_size ({config.vocab_size})")
    if batch_size < 1:
        raise ValueError(f"batch_size: must be positive, got {batch_size}")

    layer_fn = make_layer_fn(encoder, layer_indexes)
    with open_atomically(output_file) as writer:
        for start in range(0, len(examples), batch_size):
            features = convert_examples_to_features(
                examples[start:start + batch_size], max_seq_length, tokenizer)
            values = layer_fn(*(tf.constant([getattr(f, name) for f in features], tf.int32)
                                for name in ("input_ids", "input_mask", "input_type_ids")))
            values = values.numpy()  # [layers, batch, seq_len, hidden]
            for i, feature in enumerate(features):
                line = feature_json(feature, values[:, i], layer_indexes)
                writer.write(json.dumps(line) + "\n")
