"""Static word vectors from a contextual encoder (Bommasani, Davis & Cardie, ACL 2020).

"Interpreting Pretrained Contextualized Representations via Reductions to Static Embeddings"
(code: rishibommasani/Contextual2Static) turns BERT into a table of one vector per word and
layer, so that the classic word-similarity benchmarks can score each layer:

  aggregated        a word's vector at layer l is its vectors in up to N corpus sentences,
                    pooled twice: over the word's WordPieces in one sentence (`subword_pool`:
                    mean, max, min or last), then over the sentences (`context_pool`: mean,
                    max or min). The paper's best setting is mean / mean.
  decontextualized  the paper's baseline: the word alone, as the row [CLS] pieces [SEP], its
                    WordPieces pooled the same way (one context).

Layers. Layer 0 is the embedding layer's output (word + position + segment embeddings after
their LayerNorm), what the paper calls layer 0; layer i >= 1 is transformer layer i's output, so
a 12-layer model has layers 0..12. Layer 0 of a word in a sentence still carries its position,
which is why aggregated and decontextualized differ even there.

Words. A word is one word of the tokenizer's basic split (`official.text.basic_tokenizer`:
cleaned, lower-cased and accent-stripped for an uncased model, punctuation split off), so
"Tiger" is the word "tiger" of an uncased model; its WordPieces are what `FullTokenizer` makes of
that word alone, the same pieces the whole line gives (WordPiece works word by word). A word
whose pieces include [UNK] has no vector of its own and is left out (`unknown`), and so is a
word met in no sentence (`unmet`; for the baseline, a word longer than a row).

Sentences. The corpus is one sentence or text per line, read as a stream, `batch_size` lines at
a time (bytes that are not UTF-8 dropped, as the tokenizer drops them). A line longer than
max_seq_length - 2 WordPieces keeps its first ones, and an occurrence that limit cuts is not
counted. A word's contexts are its first `max_contexts_per_word` occurrences in corpus order (a
line may hold several), so a run is deterministic, and the reading stops once every word has
its N. Lines holding no occurrence still wanted never reach the encoder. Memory: running
accumulators (the sum and a count, or the element-wise max or min), one float32
[layers, hidden] per target word (words x layers x hidden x 4 bytes: an uncased vocab's 23k
whole words at 13 layers of 768 take 0.9 GB), never the occurrences' vectors nor the corpus.

Output: word2vec's text format, one file per layer (`layer_00.txt` ..., and
`decontextualized_layer_00.txt` ... for the baseline): "<words> <dim>", then "word v1 v2 ..."
per line, words in target order, float32 values written exactly ("%.9g"), each file written
atomically (official/embeddings/word2vec_files.py). gensim's
`KeyedVectors.load_word2vec_format(path)` reads it, and so does `read_word2vec`. A vector that is
not finite (a checkpoint holding nan or inf, an overflow) is an error naming its word and layer,
and no file of the table is written (`check_finite`).

Example (a tiny random encoder; a real one is built from the checkpoint's bert_config.json and
loaded with `official.checkpoints.load_init_checkpoint`; a corpus of two lines, where "cat" is
met twice and "zebra" never):
    >>> import os, shutil, tempfile
    >>> from official.configs import preset
    >>> from official.modeling.encoder import build_encoder
    >>> encoder = build_encoder(preset("tiny"))  # 2 layers of 128, the uncased vocab's size
    >>> tokenizer = FullTokenizer("data/vocab/uncased_vocab.txt")
    >>> targets = target_words(["Tiger", "cat", "zebra"], tokenizer)
    >>> targets.words
    ['tiger', 'cat', 'zebra']
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "corpus.txt"), "w") as f:
    ...     _ = f.write("The tiger chased the cat.\\nA cat sat.\\n")
    >>> table = aggregated_vectors(encoder, tokenizer, os.path.join(folder, "corpus.txt"),
    ...                            targets, Settings(layers=(0, 2)))
    >>> table.words, table.contexts.tolist(), table.unmet, table.vectors.shape
    (['tiger', 'cat'], [1, 2], ['zebra'], (2, 2, 128))
    >>> [os.path.basename(path) for path in write_word2vec(table, folder)]
    ['layer_00.txt', 'layer_02.txt']
    >>> from official.embeddings.word2vec_files import read_word2vec
    >>> vectors = read_word2vec(os.path.join(folder, "layer_02.txt"))
    >>> bool(np.array_equal(vectors["cat"], table.vectors[1, 1]))  # written exactly
    True
    >>> shutil.rmtree(folder)
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Iterable, Iterator

import numpy as np
import tensorflow as tf
from absl import logging

from official.console import PROGRESS
from official.embeddings import word2vec_files
from official.embeddings.static_settings import Settings
from official.modeling.encoder import BertEncoder
from official.text.basic_tokenizer import BasicTokenizer
from official.text.tokenizer import FullTokenizer
from official.text.vocab import UNKNOWN_TOKEN

_REDUCERS = {"mean": np.add, "max": np.maximum, "min": np.minimum}
_PROGRESS_SECONDS = 10.0


@dataclasses.dataclass
class TargetWords:
    """The words to make vectors of, as the tokenizer's basic split writes them, in order."""
    words: list[str]
    pieces: list[np.ndarray]  # each word's WordPiece ids
    unknown: list[str]  # left out: their pieces include [UNK]


@dataclasses.dataclass
class VectorTable:
    """One vector per word and layer: vectors[i, j] is words[i]'s at layers[j]."""
    words: list[str]
    layers: tuple[int, ...]
    vectors: np.ndarray  # float32 [words, layers, hidden]
    contexts: np.ndarray  # int64 [words]: occurrences pooled (1 for the baseline)
    unmet: list[str]  # target words left out: in no sentence (baseline: longer than a row)
    unknown: list[str]  # target words left out: their pieces include [UNK]


class _WordSplitter:
    """Lines -> per line, its words (the basic split) with their WordPiece ids."""

    def __init__(self, tokenizer: FullTokenizer):
        self._tokenizer = tokenizer
        self._basic = tf.function(
            BasicTokenizer(lower_case=tokenizer.do_lower_case).tokenize,
            input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)

    def words(self, texts: list[bytes]) -> list[list[str]]:
        if not texts:
            return []
        words = self._basic(tf.constant(texts))
        flat = [w.decode("utf-8") for w in words.flat_values.numpy().tolist()]
        splits = words.row_splits.numpy().tolist()
        return [flat[a:b] for a, b in zip(splits[:-1], splits[1:])]

    def split(self, texts: list[bytes]) -> list[list[tuple[str, np.ndarray]]]:
        lines = self.words(texts)
        pieces = iter(self._tokenizer.tokenize_batch_ids([w for line in lines for w in line]))
        return [[(w, next(pieces)) for w in line] for line in lines]


def _targets(words: list[str], splitter: _WordSplitter, tokenizer: FullTokenizer) -> TargetWords:
    unknown_id = tokenizer.vocab[UNKNOWN_TOKEN]
    kept, kept_pieces, unknown = [], [], []
    for word, pieces in zip(words, tokenizer.tokenize_batch_ids(words)):
        if unknown_id in pieces:
            unknown.append(word)
        else:
            kept.append(word)
            kept_pieces.append(pieces)
    return TargetWords(kept, kept_pieces, unknown)


def target_words(candidates: Iterable[str], tokenizer: FullTokenizer,
                 places: list[str] | None = None) -> TargetWords:
    """Words as given (one each; "Tiger" becomes "tiger" for an uncased tokenizer), duplicates
    after that normalisation kept once. A candidate that the basic split makes 0 or 2+ words
    ("New York", "x-ray") is an error naming its place (`places[i]`, default "word i+1")."""
    candidates = list(candidates)
    places = places or [f"word {n}" for n in range(1, len(candidates) + 1)]
    splitter = _WordSplitter(tokenizer)
    words, seen = [], set()
    for place, text, split in zip(places, candidates,
                                  splitter.words([c.encode("utf-8") for c in candidates])):
        if len(split) != 1:
            raise ValueError(f"{place}: {text!r} is {len(split)} words for the tokenizer "
                             f"({' '.join(split)}), not one")
        if split[0] not in seen:
            seen.add(split[0])
            words.append(split[0])
    return _targets(words, splitter, tokenizer)


def read_words_file(path: str, tokenizer: FullTokenizer) -> TargetWords:
    """A file of one word a line (blank lines skipped) -> `target_words`."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.strip() for line in f]
    except FileNotFoundError:
        raise ValueError(f"--words_file: {path}: no such file") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"--words_file: {path}: not valid UTF-8 (byte {e.start})") from None
    numbered = [(n, w) for n, w in enumerate(lines, 1) if w]
    if not numbered:
        raise ValueError(f"--words_file: {path}: no word in it")
    return target_words([w for _, w in numbered], tokenizer,
                        [f"--words_file: {path}: line {n}" for n, _ in numbered])


def vocab_words(tokenizer: FullTokenizer) -> TargetWords:
    """Every whole word of the vocab: entries that are neither "##" continuations nor specials
    such as [CLS] or [unused0], and that the basic split leaves one word (unchanged)."""
    entries = [t for t in tokenizer.vocab
               if not t.startswith("##") and not (t.startswith("[") and t.endswith("]"))]
    splitter = _WordSplitter(tokenizer)
    words = [t for t, split in zip(entries, splitter.words([t.encode("utf-8") for t in entries]))
             if split == [t]]
    return _targets(words, splitter, tokenizer)


class _LayerRunner:
    """Rows of WordPiece ids -> the chosen layers' vectors, float32 [layers, rows, seq, hidden]
    (rows padded to the longest; padding is masked, so it changes no real token's vector)."""

    def __init__(self, encoder: BertEncoder, tokenizer: FullTokenizer, layers: tuple[int, ...]):
        self._cls = tokenizer.vocab["[CLS]"]
        self._sep = tokenizer.vocab["[SEP]"]

        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)] * 2)
        def run(ids, mask):
            type_ids = tf.zeros_like(ids)
            inputs = {"input_word_ids": ids, "input_mask": mask, "input_type_ids": type_ids}
            outputs = encoder.forward(inputs, per_layer_outputs=True, training=False)
            every = [encoder.embed(ids, type_ids, training=False)]
            every += outputs["encoder_outputs"]
            return tf.cast(tf.stack([every[i] for i in layers]), tf.float32)

        self._run = run

    def __call__(self, rows: list[np.ndarray]) -> np.ndarray:
        """`rows`: each row's pieces without [CLS] and [SEP], which are added here."""
        length = max(len(r) for r in rows) + 2
        ids = np.zeros((len(rows), length), np.int32)
        mask = np.zeros((len(rows), length), np.int32)
        for i, row in enumerate(rows):
            ids[i, :len(row) + 2] = [self._cls, *row.tolist(), self._sep]
            mask[i, :len(row) + 2] = 1
        return self._run(tf.constant(ids), tf.constant(mask)).numpy()


def pool_pieces(vectors: np.ndarray, rows: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                pool: str) -> np.ndarray:
    """Each occurrence's WordPieces pooled: vectors [layers, batch, seq, hidden], occurrence k
    at positions starts[k]..ends[k]-1 of row rows[k] -> [occurrences, layers, hidden]."""
    if pool == "last":
        return vectors[:, rows, ends - 1].transpose(1, 0, 2)
    lengths = ends - starts
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    positions = np.arange(lengths.sum()) + np.repeat(starts - offsets, lengths)
    pieces = vectors[:, np.repeat(rows, lengths), positions]  # [layers, pieces, hidden]
    pooled = _REDUCERS[pool].reduceat(pieces, offsets, axis=1)
    if pool == "mean":
        pooled /= lengths[None, :, None]
    return pooled.transpose(1, 0, 2)


class _ContextPool:
    """Running per-word accumulators over contexts: a sum and a count, or a max, or a min."""

    def __init__(self, num_words: int, num_layers: int, hidden: int, pool: str):
        start = {"mean": 0.0, "max": -np.inf, "min": np.inf}[pool]
        self.pool = pool
        self.values = np.full((num_words, num_layers, hidden), start, np.float32)
        self.counts = np.zeros(num_words, np.int64)

    def add(self, words: np.ndarray, vectors: np.ndarray) -> None:
        """vectors [occurrences, layers, hidden] of words [occurrences] (repeats allowed)."""
        _REDUCERS[self.pool].at(self.values, words, vectors)
        np.add.at(self.counts, words, 1)

    def table(self, targets: TargetWords, layers: tuple[int, ...]) -> VectorTable:
        met = self.counts > 0
        vectors = self.values[met]
        if self.pool == "mean":
            vectors /= self.counts[met][:, None, None]
        return VectorTable(
            words=[w for w, m in zip(targets.words, met) if m], layers=tuple(layers),
            vectors=vectors, contexts=self.counts[met],
            unmet=[w for w, m in zip(targets.words, met) if not m],
            unknown=list(targets.unknown))


def _line_batches(corpus_file: str, batch_size: int) -> Iterator[tuple[int, list[bytes]]]:
    """(lines read so far, the next batch of non-blank lines as bytes), streamed."""
    batch, read = [], 0
    with open(corpus_file, "rb") as f:
        for line in f:
            read += 1
            line = line.strip()
            if line:
                batch.append(line)
            if len(batch) == batch_size:
                yield read, batch
                batch = []
    if batch:
        yield read, batch


def aggregated_vectors(encoder: BertEncoder, tokenizer: FullTokenizer, corpus_file: str,
                       targets: TargetWords, settings: Settings) -> VectorTable:
    """The paper's aggregated vectors: each target word's first max_contexts_per_word
    occurrences in the corpus, WordPieces pooled by subword_pool, contexts by context_pool."""
    index = {w: i for i, w in enumerate(targets.words)}
    hidden = encoder.config.hidden_size
    accumulator = _ContextPool(len(index), len(settings.layers), hidden, settings.context_pool)
    taken = [0] * len(index)  # occurrences taken so far, per word (added or about to be)
    run = _LayerRunner(encoder, tokenizer, settings.layers)
    splitter = _WordSplitter(tokenizer)
    limit, wanted = settings.max_seq_length - 2, settings.max_contexts_per_word
    unsatisfied = len(index)
    occurrences = lines_read = 0
    last_report = time.monotonic()
    for lines_read, batch in _line_batches(corpus_file, settings.batch_size):
        rows, found = [], []  # found: (row, start, end, word), positions counting [CLS]
        for line in splitter.split(batch):
            pieces, position, line_found = [], 1, []
            for word, word_pieces in line:
                end = position + len(word_pieces)
                if end - 1 > limit:  # the row keeps the first `limit` pieces, this one cut
                    pieces.append(word_pieces)
                    break
                w = index.get(word)
                if w is not None and taken[w] < wanted:
                    taken[w] += 1
                    if taken[w] == wanted:
                        unsatisfied -= 1
                    line_found.append((len(rows), position, end, w))
                pieces.append(word_pieces)
                position = end
            if line_found:
                found += line_found
                rows.append(np.concatenate(pieces)[:limit])
        if rows:
            row, start, end, word = (np.array(column) for column in zip(*found))
            accumulator.add(word, pool_pieces(run(rows), row, start, end, settings.subword_pool))
            occurrences += len(found)
        if time.monotonic() - last_report > _PROGRESS_SECONDS:
            last_report = time.monotonic()
            logging.info("%d lines read, %d occurrences pooled, %d of %d words met",
                         lines_read, occurrences, int(np.sum(accumulator.counts > 0)), len(index),
                         extra=PROGRESS)
        if unsatisfied == 0:
            break
    table = accumulator.table(targets, settings.layers)
    logging.info("%d lines read, %d occurrences pooled: %d words with vectors, %d never met, "
                 "%d unknown to the vocab", lines_read, occurrences, len(table.words),
                 len(table.unmet), len(table.unknown))
    return table


def decontextualized_vectors(encoder: BertEncoder, tokenizer: FullTokenizer,
                             targets: TargetWords, settings: Settings) -> VectorTable:
    """The baseline: each target word alone as [CLS] pieces [SEP], its pieces pooled by
    subword_pool (a word of over max_seq_length - 2 pieces is left out, as `unmet`)."""
    fits = [len(p) <= settings.max_seq_length - 2 for p in targets.pieces]
    words = [w for w, f in zip(targets.words, fits) if f]
    pieces = [p for p, f in zip(targets.pieces, fits) if f]
    run = _LayerRunner(encoder, tokenizer, settings.layers)
    out = np.zeros((len(words), len(settings.layers), encoder.config.hidden_size), np.float32)
    for first in range(0, len(words), settings.batch_size):
        rows = pieces[first:first + settings.batch_size]
        count = len(rows)
        ends = np.array([len(r) + 1 for r in rows])
        out[first:first + count] = pool_pieces(run(rows), np.arange(count), np.ones(count, int),
                                               ends, settings.subword_pool)
    return VectorTable(words, tuple(settings.layers), out, np.ones(len(words), np.int64),
                       unmet=[w for w, f in zip(targets.words, fits) if not f],
                       unknown=list(targets.unknown))


def layer_file_name(layer: int, prefix: str = "") -> str:
    """"layer_00.txt", or with prefix "decontextualized_": "decontextualized_layer_00.txt"."""
    return f"{prefix}layer_{layer:02d}.txt"


def check_finite(table: VectorTable, what: str = "the vectors") -> None:
    """Raises ValueError "<what> at layer <l>: the vector of '<word>' holds nan, ..." for the
    first word and layer whose vector holds a nan or an inf."""
    for j, layer in enumerate(table.layers):
        word2vec_files.check_finite(table.words, table.vectors[:, j], f"{what} at layer {layer}")


def write_word2vec(table: VectorTable, output_dir: str, prefix: str = "") -> list[str]:
    """One word2vec text file per layer of `table` in output_dir, each atomic; their paths.
    None is written if a vector is not finite (`check_finite`)."""
    check_finite(table)
    paths = []
    for j, layer in enumerate(table.layers):
        path = os.path.join(output_dir, layer_file_name(layer, prefix))
        word2vec_files.write_word2vec_file(path, table.words, table.vectors[:, j])
        paths.append(path)
    return paths
