"""`FullTokenizer`: BERT's text -> WordPiece tokenizer, run as TensorFlow / tensorflow-text ops.

The API is that of google-research/bert `tokenization.FullTokenizer` (`tokenize`,
`convert_tokens_to_ids`, `convert_ids_to_tokens`, `vocab`), so code written against the original
ports unchanged, and so is its output: token for token the original's, cased and uncased, Unicode
edge cases included (`basic_tokenizer` says how). Added: `tokenize_batch` and
`tokenize_batch_ids`, one op call for many lines, and `tokenize_tf`, the same work as a pure TF
function for tf.data pipelines and exported SavedModels. Not carried over: the original's
`--preserve_unused_tokens` flag (off by default there), so "[unused0]" in a text is split like
any other word.

Example (with the vocab of a released uncased checkpoint, data/vocab/uncased_vocab.txt; the
tokens are the original README's example):
    >>> tokenizer = FullTokenizer("data/vocab/uncased_vocab.txt", do_lower_case=True)
    >>> tokens = tokenizer.tokenize("John Johanson's house")
    >>> tokens
    ['john', 'johan', '##son', "'", 's', 'house']
    >>> tokenizer.convert_tokens_to_ids(["[CLS]"] + tokens + ["[SEP]"])
    [101, 2198, 13093, 3385, 1005, 1055, 2160, 102]
    >>> tokenizer.tokenize_batch(["Héllo, WORLD!", ""])
    [['hello', ',', 'world', '!'], []]
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from official.text.basic_tokenizer import BasicTokenizer
from official.text.vocab import UNKNOWN_TOKEN, VocabError, load_vocab  # noqa: F401 (API)

# The original's WordpieceTokenizer.max_input_chars_per_word: a longer word becomes [UNK] whole.
MAX_CHARS_PER_WORD = 200


class FullTokenizer:
    """Basic tokenization (clean, lower-case and strip accents, split on whitespace, punctuation
    and CJK characters) then greedy longest-match-first WordPiece, with "##" marking a piece
    that continues a word and "[UNK]" for a word that cannot be covered or is over 200 characters.

    Args:
      vocab_file: The checkpoint's vocab.txt; a token's id is its line index.
      do_lower_case: True for "uncased" checkpoints (lower-case and strip accents).
    """

    def __init__(self, vocab_file: str, do_lower_case: bool = True):
        self.vocab_file = vocab_file
        self.do_lower_case = do_lower_case
        self.vocab = load_vocab(vocab_file)
        self.inv_vocab = {i: t for t, i in self.vocab.items()}
        self._inv_vocab_list = list(self.vocab)  # id -> token; ids are 0..n-1 (no duplicates)
        self._basic = BasicTokenizer(lower_case=do_lower_case)
        # FastWordpieceTokenizer (linear-time MaxMatch) gives the same pieces as the original's
        # greedy longest-match-first loop (no difference on the corpora of
        # bench/tokenizer_parity.py) and the same ids as the classic WordpieceTokenizer, which
        # is not linear-time (bench/pretraining_data.py measures this tokenizer's throughput
        # against Hugging Face's and the original's). Its model is a constant, not a
        # lookup-table resource, so a SavedModel needs nothing tracked.
        # Its word limit counts bytes: `tokenize_tf` applies the original's character limit
        # first, so the op only sees words of at most 4 * 200 bytes.
        self._wordpiece = tf_text.FastWordpieceTokenizer(
            vocab=self._inv_vocab_list, suffix_indicator="##",
            max_bytes_per_word=4 * MAX_CHARS_PER_WORD, token_out_type=tf.int32,
            unknown_token=UNKNOWN_TOKEN, no_pretokenization=True)
        self._tokenize_fn = tf.function(
            self.tokenize_tf, input_signature=[tf.TensorSpec([None], tf.string)],
            autograph=False)  # Plain TF ops: converting Python control flow would only cost time.

    def tokenize_tf(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """[batch] UTF-8 strings -> [batch, (tokens)] int32 vocab ids, in TF ops only.

        Usable inside a tf.function, a tf.data map or an exported SavedModel: the vocab and the
        character tables become constants of the graph. (Loading such a SavedModel needs
        `import tensorflow_text`, which registers its ops.) Bytes that are not UTF-8 are dropped,
        as the original's "ignore" decoding drops them.
        """
        words = self._basic.tokenize(texts)
        # The original makes a word of over 200 characters one [UNK]. "[UNK]" is in the vocab,
        # so WordPiece turns the word "[UNK]" into exactly that token.
        too_long = tf.strings.length(words.flat_values, unit="UTF8_CHAR") > MAX_CHARS_PER_WORD
        words = words.with_flat_values(tf.where(too_long, UNKNOWN_TOKEN, words.flat_values))
        return self._wordpiece.tokenize(words).merge_dims(1, 2)

    def tokenize(self, text: str) -> list[str]:
        """One text -> its WordPiece tokens, e.g. "Hello, world" -> ["hello", ",", "world"]."""
        return self.tokenize_batch([text])[0]

    def tokenize_batch(self, texts: list[str]) -> list[list[str]]:
        """Many texts -> their WordPiece tokens, in one op call (much faster than a loop)."""
        inv_vocab = self._inv_vocab_list
        return [[inv_vocab[i] for i in ids.tolist()] for ids in self.tokenize_batch_ids(texts)]

    def tokenize_batch_ids(self, texts: list[str]) -> list[np.ndarray]:
        """Many texts -> one int32 array of vocab ids per text, in one op call.

        The fast path for data generators: the same tokens as `tokenize_batch`, never turned into
        Python strings.
        """
        if not texts:
            return []
        ids = self.tokenize_batch_ragged(texts)
        return np.split(ids.flat_values.numpy(), ids.row_splits.numpy()[1:-1])

    def tokenize_batch_ragged(self, texts: list[str]) -> tf.RaggedTensor:
        """Many texts -> int32 [texts, (ids)], in one op call: `tokenize_batch_ids` as the ragged
        tensor the batched feature ops (official/features/) take."""
        return self._tokenize_fn(tf.constant([t.encode("utf-8") for t in texts]))

    def convert_tokens_to_ids(self, tokens: list[str]) -> list[int]:
        """Tokens -> vocab ids; a token not in the vocab raises KeyError, as in the original."""
        return [self.vocab[t] for t in tokens]

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        """Vocab ids -> tokens; an id outside the vocab raises KeyError, as in the original."""
        return [self.inv_vocab[i] for i in ids]
