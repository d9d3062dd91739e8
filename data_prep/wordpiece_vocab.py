"""WordPiece vocab learning for BERT with tensorflow-text's learner, on our exact word splits.

Words are made by our exact `BasicTokenizer` (cleaning, lower-casing and accent stripping when
lower_case, punctuation and CJK splitting), so the vocab is learned from exactly the words
`FullTokenizer` will cut into pieces. tensorflow-text's `bert_vocab_from_dataset` would split with
its own `BasicTokenizer`, which differs (NFKC case folding, other punctuation), so its learner
(`wordpiece_tokenizer_learner_lib.learn`, the same code) is called on our word counts instead.

Output: [PAD] [UNK] [CLS] [SEP] [MASK], then every single character, then "##" pieces and words
by falling count; at most vocab_size lines. The same input gives the same bytes.

Why a vocab can come out smaller than vocab_size: the learner looks for a count threshold (a
piece is in when counted at least that often) by bisection, between the largest word count and a
lowest threshold (its lower_thresh, 10 by default: `min_piece_count` here), and accepts a vocab
within 5% below vocab_size. A small corpus has too few pieces counted that often: the search
stops at its lowest threshold (or one below it) with a short vocab. `LearnedVocab.shortfall`
says which reason applies, for the user.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Callable, Iterable, Iterator

import tensorflow as tf
from absl import logging
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

from data_prep.input_errors import InputError
from official import console
from official.atomic_files import open_atomically
from official.text.basic_tokenizer import BasicTokenizer

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_SUFFIX = "##"
_LINES_PER_BATCH = 4096
# The learner's lowest count threshold, `learner.learn`'s lower_thresh by default.
DEFAULT_MIN_PIECE_COUNT = 10
# learner.learn's other defaults, spelled out because _learn runs its steps itself.
_LEARNER_SETTINGS = dict(upper_thresh=int(1e7), num_iterations=4, max_input_tokens=int(5e6),
                         max_token_length=50, max_unique_chars=1000, slack_ratio=0.05,
                         include_joiner_token=True, joiner=_SUFFIX)


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


@dataclasses.dataclass(frozen=True)
class LearnedVocab:
    """A learned vocab and how the learner's threshold search ended.

    tokens:     the vocab, at most vocab_size tokens
    threshold:  the count threshold of the learner's last vocab (every piece counted at least
                this often is in)
    sizes:      {threshold tried: size of its vocab}, in the order tried
    lowest:     the lowest threshold the search could try (min_piece_count, or the rarest
                word's count when that is larger)
    """
    tokens: list[str]
    threshold: int
    sizes: dict[int, int]
    lowest: int

    def shortfall(self, vocab_size: int, min_piece_count: int) -> str | None:
        """Why there are fewer than vocab_size tokens, as a sentence to show; None if there are
        not fewer."""
        if len(self.tokens) >= vocab_size:
            return None
        t = self.threshold
        if t <= 1:
            return "every piece of this text is already in; only more text gives more"
        if t <= self.lowest:
            if self.lowest > min_piece_count:  # The search starts at the rarest word's count.
                return (f"every piece seen at least {t} times is already in, and no word of "
                        f"this text is rarer; more text gives more tokens")
            return (f"every piece seen at least {t} times is already in, and the learner's "
                    f"threshold goes no lower (--min_piece_count={min_piece_count}); more text "
                    f"or a lower --min_piece_count gives more tokens")
        if self.sizes.get(t - 1, 0) > vocab_size:
            return (f"a threshold of {t - 1} instead of {t} gives {self.sizes[t - 1]} tokens, "
                    f"more than that")
        return (f"the learner stops within {_LEARNER_SETTINGS['slack_ratio']:.0%} below it "
                f"(pieces seen at least {t} times)")


def learn_vocab(word_counts: dict[str, int], vocab_size: int,
                min_piece_count: int = DEFAULT_MIN_PIECE_COUNT) -> list[str]:
    """The learner's vocab for these counts, cut to `vocab_size` tokens (see learn)."""
    return learn(word_counts, vocab_size, min_piece_count).tokens


def learn(word_counts: dict[str, int], vocab_size: int,
          min_piece_count: int = DEFAULT_MIN_PIECE_COUNT) -> LearnedVocab:
    """The learner's vocab for these counts, cut to `vocab_size` tokens, and how it was found.

    The learner keeps every character (alone and with "##") so that any word of its alphabet can
    be spelled; its threshold search may still land a little over `vocab_size`, so the rarest of
    the other tokens are cut. Raises InputError if the special tokens and characters alone
    exceed `vocab_size`, or `min_piece_count` is below 1.
    """
    if min_piece_count < 1:
        raise InputError(f"--min_piece_count={min_piece_count}: must be at least 1")
    # Sorted so that the learner, which breaks ties by input order, depends on the counts only.
    ordered = sorted(word_counts.items(), key=lambda item: (-item[1], item[0]))
    learned = _learn(ordered, vocab_size, min_piece_count, _log_threshold)
    vocab = learned.tokens
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
    return dataclasses.replace(learned, tokens=kept)


def _learn(ordered: list[tuple[str, int]], vocab_size: int, min_piece_count: int,
           progress: Callable[[int, int], None]) -> LearnedVocab:
    """`learner.learn(ordered, vocab_size, SPECIAL_TOKENS, lower_thresh=min_piece_count)`: its
    steps, calls and bisection (a test compares the two), run here to know where it ended and
    to report each threshold tried through `progress(threshold, vocab size)`."""
    params = learner.Params(lower_thresh=min_piece_count, vocab_size=vocab_size,
                            reserved_tokens=list(SPECIAL_TOKENS), **_LEARNER_SETTINGS)
    upper, lower = learner.get_search_threshs(ordered, params.upper_thresh, params.lower_thresh)
    words = learner.get_input_words(ordered, params.reserved_tokens, params.max_token_length)
    words = learner.filter_input_words(
        words, learner.get_allowed_chars(words, params.max_unique_chars), params.max_input_tokens)
    lowest, slack, sizes = lower, max(params.slack_ratio * vocab_size, 0), {}
    while True:
        threshold = (upper + lower) // 2
        tokens = learner.learn_with_thresh(words, threshold, params)
        sizes[threshold] = len(tokens)
        progress(threshold, len(tokens))
        close_below = len(tokens) <= vocab_size and vocab_size - len(tokens) <= slack
        if close_below or lower >= upper or threshold <= 1:
            return LearnedVocab(tokens, threshold, sizes, lowest)
        if len(tokens) > vocab_size:
            lower = threshold + 1
        else:
            upper = threshold - 1


def _log_threshold(threshold: int, size: int) -> None:
    logging.info("learning: pieces seen at least %d times make %d tokens", threshold, size,
                 extra=console.PROGRESS)


def build_vocab(input_files: list[str], output_file: str, vocab_size: int, lower_case: bool,
                min_piece_count: int = DEFAULT_MIN_PIECE_COUNT) -> LearnedVocab:
    """Learns a vocab from the files' lines and writes it to `output_file`; returns it."""
    word_counts = count_words(read_lines(input_files), lower_case)
    if not word_counts:
        raise InputError(f"{', '.join(input_files)}: no words to learn from")
    logging.info("%d distinct words in %s", len(word_counts), ", ".join(input_files))
    learned = learn(word_counts, vocab_size, min_piece_count)
    with open_atomically(output_file, "w") as f:
        f.writelines(token + "\n" for token in learned.tokens)
    return learned
