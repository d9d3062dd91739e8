"""`FullTokenizer`: BERT's text -> WordPiece tokenizer, run as tensorflow-text ops.

The API is that of google-research/bert `tokenization.FullTokenizer` (`tokenize`,
`convert_tokens_to_ids`, `convert_ids_to_tokens`, `vocab`), so code written against the original
ports unchanged; `tokenize_batch` adds the fast path, one op call for many lines.

This first version may differ from the original on Unicode edge cases: tensorflow-text lower-cases
with NFKC case folding ("ß" -> "ss", "…" -> "..."), splits at control characters the original
deletes, and, when cased, does not split at non-ASCII spaces such as U+00A0.

Example (with the vocab of a released uncased checkpoint):
    tokenizer = FullTokenizer("vocab.txt", do_lower_case=True)
    tokens = tokenizer.tokenize("John Johanson's house")
    # ["john", "johan", "##son", "'", "s", "house"]  (the original README's example)
    ids = tokenizer.convert_tokens_to_ids(["[CLS]"] + tokens + ["[SEP]"])
"""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

# Tokens every BERT input needs: the WordPiece fallback and the two markers every example carries.
REQUIRED_TOKENS = ("[UNK]", "[CLS]", "[SEP]")

# The original's WordpieceTokenizer.max_input_chars_per_word: a longer word becomes [UNK] whole.
MAX_CHARS_PER_WORD = 200


class VocabError(ValueError):
    """A vocab file is unusable; the one-line message names the file (and line)."""


def load_vocab(vocab_file: str) -> dict[str, int]:
    """Reads a vocab file, one token per line, into {token: line index (0-based)}.

    Tokens are stripped of surrounding whitespace, as the original `load_vocab` does. Unlike the
    original, which silently keeps the first of two equal lines, a duplicate is an error: it
    shifts every later id away from the checkpoint's embedding rows.
    """
    try:
        with open(vocab_file, "rb") as f:
            raw_lines = f.read().split(b"\n")
    except FileNotFoundError:
        raise VocabError(f"{vocab_file}: no such vocab file") from None
    if raw_lines and not raw_lines[-1].strip():
        raw_lines.pop()  # The newline that ends the last line opens no token.
    vocab: dict[str, int] = {}
    for index, raw in enumerate(raw_lines):
        try:
            token = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise VocabError(f"{vocab_file}: line {index + 1}: not valid UTF-8") from None
        if token in vocab:
            raise VocabError(f"{vocab_file}: line {index + 1}: duplicate token {token!r} "
                             f"(first on line {vocab[token] + 1})")
        vocab[token] = index
    if not vocab:
        raise VocabError(f"{vocab_file}: empty vocab")
    missing = [t for t in REQUIRED_TOKENS if t not in vocab]
    if missing:
        raise VocabError(f"{vocab_file}: vocab lacks {', '.join(missing)}")
    return vocab


class FullTokenizer:
    """Basic tokenization (clean, lower-case and strip accents, split on whitespace, punctuation
    and CJK characters) then greedy longest-match-first WordPiece, with "##" marking a piece
    that continues a word and "[UNK]" for a word that cannot be covered.

    Args:
      vocab_file: The checkpoint's vocab.txt; a token's id is its line index.
      do_lower_case: True for "uncased" checkpoints (lower-case and strip accents).
    """

    def __init__(self, vocab_file: str, do_lower_case: bool = True):
        self.vocab_file = vocab_file
        self.do_lower_case = do_lower_case
        self.vocab = load_vocab(vocab_file)
        self.inv_vocab = {i: t for t, i in self.vocab.items()}

        # The table only answers "is this piece in the vocab": pieces come back as strings and
        # ids are looked up in `self.vocab`, so the table's values are never read.
        table = tf.lookup.StaticVocabularyTable(
            tf.lookup.KeyValueTensorInitializer(
                list(self.vocab), tf.constant(list(self.vocab.values()), tf.int64)),
            num_oov_buckets=1)
        self._bert = tf_text.BertTokenizer(
            table, token_out_type=tf.string, unknown_token="[UNK]", lower_case=do_lower_case,
            # tf-text's max_chars_per_token bounds a *piece*, and its word limit counts *bytes*;
            # the original's limit counts a word's characters, so the op gets room for any
            # 200-character word (4 UTF-8 bytes each) and `_word_pieces` applies the limit.
            max_chars_per_token=MAX_CHARS_PER_WORD, max_bytes_per_word=4 * MAX_CHARS_PER_WORD)
        # [batch] UTF-8 strings -> [batch, (words), (pieces)] WordPiece strings.
        self._tokenize_fn = tf.function(
            self._bert.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])

    def tokenize(self, text: str) -> list[str]:
        """One text -> its WordPiece tokens, e.g. "Hello, world" -> ["hello", ",", "world"]."""
        return self.tokenize_batch([text])[0]

    def tokenize_batch(self, texts: list[str]) -> list[list[str]]:
        """Many texts -> their WordPiece tokens, in one op call (much faster than a loop)."""
        if not texts:
            return []
        pieces = self._tokenize_fn(tf.constant([t.encode("utf-8") for t in texts]))
        return [[p for word in row for p in _word_pieces(word)] for row in pieces.to_list()]

    def convert_tokens_to_ids(self, tokens: list[str]) -> list[int]:
        """Tokens -> vocab ids; a token not in the vocab raises KeyError, as in the original."""
        return [self.vocab[t] for t in tokens]

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        """Vocab ids -> tokens; an id outside the vocab raises KeyError, as in the original."""
        return [self.inv_vocab[i] for i in ids]


def _word_pieces(pieces: list[bytes]) -> list[str]:
    """One word's pieces from the op, or ["[UNK]"] if the word is over the character limit."""
    pieces = [p.decode("utf-8") for p in pieces]
    # The word's length: its pieces' lengths less the "##" of every piece after the first.
    # (A word the op made [UNK] is short, so it stays [UNK].)
    if sum(map(len, pieces)) - 2 * (len(pieces) - 1) > MAX_CHARS_PER_WORD:
        return ["[UNK]"]
    return pieces
