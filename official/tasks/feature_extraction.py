"""Feature extraction: the encoder's per-token activations for lines of text, as JSON lines.

This is the library half of the original `extract_features.py`, with the same input and output:
one example per input line (`text_a` or `text_a ||| text_b`), one JSON object per line out:

    {"linex_index": 0,                      # the original's typo, kept: readers depend on it
     "features": [{"token": "[CLS]",
                   "layers": [{"index": -1, "values": [0.1, ...]},   # hidden_size floats
                              ...]},                                 # one per requested layer
                  ...]}                                              # one per real token

Texts longer than max_seq_length (`doc_stride`). By default a text keeps its first
max_seq_length - 2 tokens, as in the original. With `doc_stride` (single texts only: a pair line
is an error), a text is cut into windows as SQuAD's contexts are
(`official.features.doc_windows.text_windows`: rows [CLS] window [SEP], windows of
max_seq_length - 2 tokens starting every min(max_seq_length - 2, doc_stride) tokens), the
encoder reads each window alone, and each token's vectors come from the window where it has the
most context (`max_context`, the original run_squad's `_check_is_max_context`). A line is still
one object, its "features" every token of the whole text once and in order:
[CLS] from the first window, each WordPiece token from its max-context window, [SEP] from the
last window: in those two windows they stand where a row holding the whole text would have
them, [CLS] just before its first token and [SEP] just after its last. The other windows' [CLS]
and [SEP] are not written (an average over windows would be a vector no row computed).
The 10 tokens t0..t9, max_seq_length 6 (windows of 4), doc_stride 2:

    window 0: [CLS] t0 t1 t2 t3 [SEP]   -> [CLS] t0 t1 t2
    window 1: [CLS] t2 t3 t4 t5 [SEP]   -> t3 t4
    window 2: [CLS] t4 t5 t6 t7 [SEP]   -> t5 t6
    window 3: [CLS] t6 t7 t8 t9 [SEP]   -> t7 t8 t9 [SEP]

A text that fits in one window gives the same bytes as without `doc_stride`. The encoder runs
over `batch_size` windows at a time, so its memory does not grow with a text's length (the
vectors kept are the line's own).

Example (a tiny random encoder; a real one is built from the checkpoint's bert_config.json and
loaded with `official.checkpoints.load_init_checkpoint`):
    >>> import os, shutil, tempfile
    >>> from official.configs import preset
    >>> from official.modeling.encoder import build_encoder
    >>> encoder = build_encoder(preset("tiny"))  # 2 layers of 128, the uncased vocab's size
    >>> tokenizer = FullTokenizer("data/vocab/uncased_vocab.txt")
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "in.txt"), "w") as f:
    ...     _ = f.write("Who was Jim Henson? ||| Jim Henson was a puppeteer\\n")
    >>> out = os.path.join(folder, "out.jsonl")
    >>> extract_features(read_examples(os.path.join(folder, "in.txt")), out, encoder, tokenizer,
    ...                  layer_indexes=[-1, -2], max_seq_length=32)
    >>> line = json.loads(open(out).readline())
    >>> " ".join(feature["token"] for feature in line["features"])
    '[CLS] who was jim henson ? [SEP] jim henson was a puppet ##eer [SEP]'
    >>> [(layer["index"], len(layer["values"])) for layer in line["features"][0]["layers"]]
    [(-1, 128), (-2, 128)]

    Long texts in windows of max_seq_length - 2 = 6 tokens, one every 3 (still one line out):
    >>> with open(os.path.join(folder, "in.txt"), "w") as f:
    ...     _ = f.write("the quick brown fox jumps over the lazy dog\\n")
    >>> extract_features(read_examples(os.path.join(folder, "in.txt"), single_texts=True), out,
    ...                  encoder, tokenizer, [-1], max_seq_length=8, doc_stride=3)
    >>> len(json.loads(open(out).readline())["features"])  # [CLS], 9 words, [SEP]
    11
    >>> shutil.rmtree(folder)
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Callable, Iterator

import numpy as np
import tensorflow as tf

from official.atomic_files import open_atomically
from official.features.doc_windows import max_context
from official.features.long_text import window_rows
from official.features.pair_truncation import truncated_pair_lengths
from official.modeling.encoder import BertEncoder
from official.modeling.sentence_pooling import pool_tokens
from official.sentence_settings import POOLINGS
from official.text import vocab
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


def read_examples(input_file: str, single_texts: bool = False) -> list[InputExample]:
    """Reads one example per line, as the original `read_examples` does.

    Lines end at "\\n" only, are stripped, and become examples even when empty, so that
    `linex_index` is always the line number (0-based). Unlike the original, which silently
    drops undecodable bytes, a line that is not UTF-8 is an error, and so is an empty file
    (every other entry point refuses empty input; an empty output would look like success).
    With `single_texts` (what `doc_stride` windows), a pair line is an error naming it.
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
        elif single_texts:
            raise ValueError(f"{input_file}: line {unique_id + 1}: a pair (`a ||| b`), but "
                             "doc_stride windows single texts only")
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
                 layer_indexes: list[int], pooling: str | None = None) -> dict:
    """One output line: `layer_values` is [len(layer_indexes), seq_len, hidden] for this example.

    Values are `round(float(x), 6)`, as in the original, so the JSON text matches its output.
    """
    return tokens_json(feature.unique_id, feature.tokens, layer_values, layer_indexes, pooling)


def tokens_json(unique_id: int, tokens: list[str], layer_values: np.ndarray,
                layer_indexes: list[int], pooling: str | None = None) -> dict:
    """`feature_json` for any token list: `layer_values` is [len(layer_indexes), >= len(tokens),
    hidden], row i the vectors of tokens[i]. With `pooling`, the line also gets "pooled": its
    tokens' vectors pooled into one per layer (official/modeling/sentence_pooling.py, [CLS] and
    [SEP] included, as sentence-transformers pools), {"pooling", "layers": [{"index",
    "values"}]}."""
    line = {
        "linex_index": unique_id,
        "features": [
            {"token": token,
             "layers": [{"index": layer_index,
                         # tolist() gives the same Python floats as float(x), much faster.
                         "values": [round(x, 6) for x in layer_values[j, i].tolist()]}
                        for j, layer_index in enumerate(layer_indexes)]}
            for i, token in enumerate(tokens)],
    }
    if pooling is not None:
        real = layer_values[:, :len(tokens)]
        pooled = pool_tokens(real, np.ones(real.shape[:2], np.int32), pooling).numpy()
        line["pooled"] = {"pooling": pooling, "layers": [
            {"index": layer_index, "values": [round(x, 6) for x in pooled[j].tolist()]}
            for j, layer_index in enumerate(layer_indexes)]}
    return line


def check_doc_stride(doc_stride: int | None) -> None:
    """None (texts cut to fit) or at least 1."""
    if doc_stride is not None and doc_stride < 1:
        raise ValueError(f"doc_stride: must be at least 1, got {doc_stride}")


def windowed_vectors(token_ids: list[np.ndarray], layer_fn: Callable[..., tf.Tensor],
                     max_seq_length: int, doc_stride: int, batch_size: int, cls_id: int,
                     sep_id: int) -> Iterator[tuple[int, np.ndarray]]:
    """(i, vectors) for each text of `token_ids` (WordPiece ids, without [CLS] and [SEP]), in
    order, read in windows (the module docstring): vectors [layers, len(token_ids[i]) + 2,
    hidden] hold [CLS] from the first window, each token from its max-context window, [SEP]
    from the last. `layer_fn` maps (word_ids, mask, type_ids), int32 [batch, seq_len] each, to
    float32 [layers, batch, seq_len, hidden] (`make_layer_fn`'s, or probing's, which adds the
    embedding layer).

    The windows, in order, go through the encoder `batch_size` at a time; a text's vectors are
    filled window by window and yielded after its last window, so what is held beyond one
    batch's activations is the texts still being filled.
    """
    rows = window_rows(tf.RaggedTensor.from_row_lengths(
        np.concatenate(token_ids).astype(np.int32), [len(t) for t in token_ids]),
        max_seq_length, doc_stride, cls_id, sep_id)
    windows = rows.windows
    input_ids, input_mask = rows.input_word_ids.numpy(), rows.input_mask.numpy()
    is_max = max_context(windows)
    owner_splits, owner_flags = is_max.row_splits.numpy(), is_max.flat_values.numpy()
    example_of, index, start, length = (
        x.numpy() for x in (windows.example, windows.index, windows.start, windows.length))
    count = windows.count.numpy()
    vectors: dict[int, np.ndarray] = {}  # the texts being filled
    for batch_start in range(0, len(example_of), batch_size):
        batch = range(batch_start, min(batch_start + batch_size, len(example_of)))
        values = layer_fn(input_ids[batch.start:batch.stop], input_mask[batch.start:batch.stop],
                          np.zeros([len(batch), max_seq_length], np.int32)).numpy()
        for row, w in enumerate(batch):  # values[:, row]: [layers, seq_len, hidden]
            e = example_of[w]
            if index[w] == 0:
                vectors[e] = np.empty([values.shape[0], len(token_ids[e]) + 2, values.shape[-1]],
                                      np.float32)
                vectors[e][:, 0] = values[:, row, 0]  # [CLS], from the first window
            line = vectors[e]
            owned = np.flatnonzero(owner_flags[owner_splits[w]:owner_splits[w + 1]])
            line[:, 1 + start[w] + owned] = values[:, row, 1 + owned]
            if index[w] == count[e] - 1:
                line[:, -1] = values[:, row, 1 + length[w]]  # [SEP], from the last window
                yield int(e), vectors.pop(e)


def windowed_lines(examples: list[InputExample], tokenizer: FullTokenizer,
                   layer_fn: Callable[..., tf.Tensor], layer_indexes: list[int],
                   max_seq_length: int, doc_stride: int,
                   batch_size: int, pooling: str | None = None) -> Iterator[dict]:
    """The output line of each example (single texts; `extract_features` checks), in order, its
    text in windows (`windowed_vectors`); `layer_fn` is `make_layer_fn`'s. Examples are
    tokenized `batch_size` at a time."""
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    for chunk_start in range(0, len(examples), batch_size):
        chunk = examples[chunk_start:chunk_start + batch_size]
        token_ids = tokenizer.tokenize_batch_ids([e.text_a for e in chunk])
        for e, vectors in windowed_vectors(token_ids, layer_fn, max_seq_length, doc_stride,
                                           batch_size, cls_id, sep_id):
            tokens = tokenizer.convert_ids_to_tokens(token_ids[e].tolist())
            yield tokens_json(chunk[e].unique_id, ["[CLS]", *tokens, "[SEP]"], vectors,
                              layer_indexes, pooling)


def extract_features(examples: list[InputExample], output_file: str, encoder: BertEncoder,
                     tokenizer: FullTokenizer, layer_indexes: list[int],
                     max_seq_length: int = 128, batch_size: int = 32,
                     doc_stride: int | None = None, pooling: str | None = None) -> None:
    """Writes the JSON lines of `examples` (from `read_examples`) to `output_file`.

    `batch_size` examples go through the encoder at a time, or with `doc_stride` (single texts
    in windows, the module docstring) `batch_size` windows. `pooling` (mean, cls, max) adds
    each line's pooled vector per layer (`tokens_json`). The arguments are checked before
    anything is written, and the output appears only when complete (written to a temp file,
    then renamed), so a failure leaves no half-written file.
    """
    config = encoder.config
    _check_layer_indexes(layer_indexes, config.num_hidden_layers)
    config.check_seq_length(max_seq_length, "the config")
    vocab.check_fits(tokenizer.vocab_file, config.vocab_size, "the config")
    if batch_size < 1:
        raise ValueError(f"batch_size: must be positive, got {batch_size}")
    check_doc_stride(doc_stride)
    if pooling is not None and pooling not in POOLINGS:
        raise ValueError(f"pooling: must be one of {', '.join(POOLINGS)}, got {pooling!r}")
    if doc_stride is not None:
        for example in examples:
            if example.text_b is not None:
                raise ValueError(f"doc_stride: line {example.unique_id + 1} is a pair "
                                 "(`a ||| b`); windows are for single texts only")

    layer_fn = make_layer_fn(encoder, layer_indexes)
    if doc_stride is not None:
        with open_atomically(output_file) as writer:
            for line in windowed_lines(examples, tokenizer, layer_fn, layer_indexes,
                                       max_seq_length, doc_stride, batch_size, pooling):
                writer.write(json.dumps(line) + "\n")
        return
    with open_atomically(output_file) as writer:
        for start in range(0, len(examples), batch_size):
            features = convert_examples_to_features(
                examples[start:start + batch_size], max_seq_length, tokenizer)
            values = layer_fn(*(tf.constant([getattr(f, name) for f in features], tf.int32)
                                for name in ("input_ids", "input_mask", "input_type_ids")))
            values = values.numpy()  # [layers, batch, seq_len, hidden]
            for i, feature in enumerate(features):
                line = feature_json(feature, values[:, i], layer_indexes, pooling)
                writer.write(json.dumps(line) + "\n")
