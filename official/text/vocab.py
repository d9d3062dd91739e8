"""Vocab files: one WordPiece token per line, its id the line index. No TensorFlow here, so
processes that only need the vocab (a data generator's coordinator) stay light."""

from __future__ import annotations

# Tokens every BERT input needs: the WordPiece fallback and the two markers every example carries.
UNKNOWN_TOKEN = "[UNK]"
REQUIRED_TOKENS = (UNKNOWN_TOKEN, "[CLS]", "[SEP]")


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


def check_fits(vocab_file: str, vocab_size: int, config_file: str) -> None:
    """Raises VocabError when `vocab_file` has more tokens than the model's `vocab_size`.

    A token id at or beyond vocab_size indexes past the word-embedding table: on a CPU that is an
    error deep inside the first step, on a GPU the gather silently returns zeros. A vocab with
    fewer lines than vocab_size is fine (some checkpoints leave unused rows).
    """
    size = len(load_vocab(vocab_file))
    if size > vocab_size:
        raise VocabError(f"{vocab_file} has {size} tokens but {config_file} says "
                         f"vocab_size={vocab_size}: ids from {vocab_size} on would index past "
                         f"the embedding table (is it the checkpoint's vocab?)")
