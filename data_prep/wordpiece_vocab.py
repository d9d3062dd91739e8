"""WordPiece vocab learning for BERT with tensorflow-text's learner, on our exact word splits.

Words are made by our exact `BasicTokenizer` (cleaning, lower-casing and accent stripping when
lower_case, punctuation and CJK splitting), so the vocab is learned from exactly the words
`FullTokenizer` will cut into pieces. tensorflow-text's `bert_vocab_from_dataset` would split with
its own `BasicTokenizer`, which differs (NFKC case folding, other punctuation), so its learner
(`wordpiece_tokenizer_learner_lib.learn`, the same code) is called on our word counts instead.

Output: [PAD] [UNK] [CLS] [SEP] [MASK], then every single character, then "##" pieces and words
by falling count; at most vocab_size lines. The same input gives the same bytes.
"""

from __future__ import annotations

import collections
from typing import Iterable, Iterator

import tensorflow as tf
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

from data_prep.input_errors import InputError
from official.atomic_files import open_atomically
from official.text.basic_tokenizer import BasicTokenizer

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_SUFFIX = "##"
_LINES_PER_BATCH = 4096



def read_lines(files: list[str]) -> Iterator[bytes]:
    """The non-blank lines of the files, stripped, as bytes (the tokenizer drops bytes that are
    not UTF-8, as the original's "ignore" decoding does)."""
    for path in files:
        with tf.io.gfile.GFile(path, "rb") as f:
            for line in f:
                line = line.strip()
                if line:
                    yield line


def count_words(lines: Iterable[bytes], lower_case: bool) -> collections.Counter:
    """{word: count} over the words our BasicTokenizer makes of the lines."""
    tokenize = tf.function(BasicTokenizer(lower_case).tokenize,
                           input_signature=[tf.TensorSpec([None], tf.string)])
    counts: collections.Counter = collections.Counter()
    batch = []
    for line in lines:
        batch.append(line)
        if len(batch) == _LINES_PER_BATCH:
            counts.update(tokenize(tf.constant(batch)).flat_values.numpy())
            batch = []
    if batch:
        counts.update(tokenize(tf.constant(batch)).flat_values.numpy())
    return collections.Counter({word.decode("utf-8"): n for word, n in counts.items()})


def learn_vocab(word_counts: dict[str, int], vocab_size: int) -> list[str]:
    """The learner's vocab for these counts, cut to `vocab_size` tokens.

    The learner keeps every character (alone and with "##") so that any word of its alphabet can
    be spelled; its threshold search may still land a little over `vocab_size`, so the rarest of
    the other tokens are cut. Raises InputError if the special tokens and characters alone
    exceed `vocab_size`.
    """
    # Sorted so that the learner, which breaks ties by input order, depends on the counts only.
    ordered = sorted(word_counts.items(), key=lambda item: (-item[1], item[0]))
    vocab = learner.learn(ordered, vocab_size, list(SPECIAL_TOKENS))
    chars = [t for t in vocab[len(SPECIAL_TOKENS):] if len(t) == 1]
    required = set(SPECIAL_TOKENS) | set(chars) | {_SUFFIX + c for c in chars}
    if vocab_size < len(required):
        raise InputError(
            f"--vocab_size={vocab_size}: smaller than the {len(required)} tokens this text needs "
            f"({len(SPECIAL_TOKENS)} special tokens and {len(chars)} characters, each alone and "
            f"after {_SUFFIX})")
    room = vocab_size - len(required)
    kept = []
    for token in vocab:
        if token in required:
            kept.append(token)
        elif room > 0:
            kept.append(token)
            room -= 1
    return kept


def build_vocab(input_files: list[str], output_file: str, vocab_size: int,
                lower_case: bool) -> list[str]:
    """Learns a vocab from the files' lines and writes it to `output_file`; returns it."""
    word_counts = count_words(read_lines(input_files), lower_case)
    if not word_counts:
        raise InputError(f"{', '.join(input_files)}: no words to learn from")
    vocab = learn_vocab(word_counts, vocab_size)
    with open_atomically(output_file, "w") as f:
        f.writelines(token + "\n" for token in vocab)
    return vocab
