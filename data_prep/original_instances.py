"""BERT's pretraining instances made exactly as google-research/bert's `create_pretraining_data.py`.

This is the `--reproduce_original` generator: for the same input files, vocab, options and seed it
writes record for record what the original (bert-tensorflow 1.0.4) writes. That holds because all
randomness comes from one `random.Random(random_seed)` and every call on it below (marked "rng:")
is the original's call, with the same arguments, in the same order; a call added, dropped or
moved changes every record after it. Whole-word masking, which the PyPI release predates, follows
the final google-research/bert version; without it, that version draws exactly as this one does.

How BERT's pretraining data is made:
  1. Read the corpus: one sentence per line, a blank line between documents. Tokenise each line.
  2. Shuffle the documents.
  3. `dupe_factor` times over, cut every document into instances "[CLS] A [SEP] B [SEP]", where B
     either continues A (next-sentence label 0) or comes from another document (label 1), and
     choose the tokens each instance masks. Each pass masks differently, so a small corpus yields
     more distinct training data.
  4. Shuffle all instances together and write them round-robin over the output files.

Everything is held in memory and runs in one process, as in the original; the fast generator
(`fast_generation.py`) is the one for corpora that do not fit.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import random
from typing import Sequence

import tensorflow as tf

from data_prep import corpus_shards, pretraining_examples
from data_prep.input_errors import InputError
from data_prep.pretraining_options import PretrainingDataOptions
from official.text.tokenizer import FullTokenizer

# A sentence is its WordPiece tokens; a document is its sentences in order.
Sentence = list[str]
Document = list[Sentence]

# Lines tokenised per op call: large enough to amortise the call, small enough to bound memory.
_TOKENIZE_BATCH = 4096


@dataclasses.dataclass(frozen=True)
class TrainingInstance:
    """One sentence pair with its masked-LM predictions, before conversion to ids.

    `tokens` is "[CLS] A [SEP] B [SEP]" with the masked positions already replaced;
    `masked_lm_labels[k]` is the token that stood at `masked_lm_positions[k]` (ascending).
    """
    tokens: list[str]
    segment_ids: list[int]
    masked_lm_positions: list[int]
    masked_lm_labels: list[str]
    is_random_next: bool


def generate(input_files: Sequence[str], output_files: Sequence[str], tokenizer: FullTokenizer,
             options: PretrainingDataOptions) -> int:
    """Reads `input_files`, writes the instances to `output_files`; returns how many it wrote.

    Raises:
      InputError: the vocab lacks [MASK], or the files hold no document with any text.
      OptionsError: an option the original lacks (`PretrainingDataOptions.check_original`).
    """
    options.check_original()
    if "[MASK]" not in tokenizer.vocab:
        raise InputError(f"{tokenizer.vocab_file}: vocab lacks [MASK]")
    documents, invalid_utf8 = read_documents(input_files, tokenizer)
    for path, count in invalid_utf8.items():
        logging.warning("%s: %d bytes were not UTF-8 and were replaced", path, count)
    if not documents:
        raise InputError(f"{', '.join(input_files)}: no document with any text")
    instances = create_training_instances(documents, list(tokenizer.vocab), options)
    write_instance_files(instances, tokenizer.vocab, output_files, options)
    return len(instances)


def expand_input_files(input_file: str) -> list[str]:
    """The original's --input_file: a comma list of globs, each expanded by tf.io.gfile.glob.

    The order is the glob's own, not sorted, because the original reads in that order and the
    order decides which documents the shuffle puts where. A file matched twice is read twice, as
    in the original. Unlike the original, a pattern matching nothing is an error rather than
    silently no data.

    Raises:
      InputError: a pattern matches no file, or no pattern is given.
    """
    return corpus_shards.expand_input_files(input_file, glob=tf.io.gfile.glob)


def read_documents(input_files: Sequence[str],
                   tokenizer: FullTokenizer) -> tuple[list[Document], dict[str, int]]:
    """Reads and tokenises the corpus: (documents in reading order, {file: bytes not UTF-8}).

    A line that tokenises to nothing is dropped, and so is a document left with no sentence.

    As in the original, documents run on across files: a blank line is what ends a document, so a
    file that does not end with one continues its last document into the next file. (The fast
    generator ends every document at its file's end instead.)

    Bytes that are not UTF-8 are replaced by U+FFFD and counted per file; the original would stop
    with a UnicodeDecodeError. The tokenizer drops U+FFFD, so valid text around them is kept.
    """
    documents: list[Document] = [[]]
    invalid_utf8: dict[str, int] = {}
    for path in input_files:
        lines, invalid = _read_lines(path)
        if invalid:
            invalid_utf8[path] = invalid
        sentences = iter(_tokenize(tokenizer, [line for line in lines if line]))
        for line in lines:
            if not line:
                documents.append([])
                continue
            tokens = next(sentences)
            if tokens:
                documents[-1].append(tokens)
    return [document for document in documents if document], invalid_utf8


def _read_lines(path: str) -> tuple[list[str], int]:
    """A file's lines, stripped of surrounding whitespace, and its count of non-UTF-8 bytes."""
    with tf.io.gfile.GFile(path, "rb") as f:
        data = f.read()
    # The original reads with GFile.readline, whose line reader drops every "\r" wherever it is,
    # not only before "\n": "a\rb" reads as "ab", one word, where a tokenizer would see two.
    data = data.replace(b"\r", b"")
    try:
        text, invalid = data.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        invalid = len(data) - len(data.decode("utf-8", errors="ignore").encode("utf-8"))
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # The text after the final "\n" is not a line (and an empty file has none).
    # str.strip() removes Unicode whitespace (U+00A0, U+3000, ...), as the original's does, so a
    # line of only such characters is a document boundary too.
    return [line.strip() for line in lines], invalid


def _tokenize(tokenizer: FullTokenizer, lines: list[str]) -> list[Sentence]:
    sentences: list[Sentence] = []
    for start in range(0, len(lines), _TOKENIZE_BATCH):
        sentences.extend(tokenizer.tokenize_batch(lines[start:start + _TOKENIZE_BATCH]))
    return sentences


def create_training_instances(documents: list[Document], vocab_words: Sequence[str],
                              options: PretrainingDataOptions) -> list[TrainingInstance]:
    """Steps 2-4 of the module docstring: shuffle, `dupe_factor` passes, shuffle.

    Args:
      documents: from `read_documents`, in reading order (not modified).
      vocab_words: the vocab's tokens in file order (`list(tokenizer.vocab)`), from which the
        random replacement words are drawn by index.
      options: only the original's (`PretrainingDataOptions.check_original`).
    """
    options.check_original()
    rng = random.Random(options.random_seed)
    documents = list(documents)
    rng.shuffle(documents)  # rng
    instances = []
    for _ in range(options.dupe_factor):
        for document_index in range(len(documents)):
            instances.extend(create_instances_from_document(
                documents, document_index, vocab_words, options, rng))
    rng.shuffle(instances)  # rng
    return instances


def create_instances_from_document(documents: list[Document], document_index: int,
                                   vocab_words: Sequence[str], options: PretrainingDataOptions,
                                   rng: random.Random) -> list[TrainingInstance]:
    """Cuts one document into instances, walking its sentences in order."""
    document = documents[document_index]
    max_num_tokens = options.max_seq_length - 3  # Room for [CLS], [SEP], [SEP].

    # Padding to max_seq_length costs the same compute as real tokens, so instances are normally
    # filled up. But fine-tuning inputs are often short, so with probability short_seq_prob one
    # document's instances aim at a random shorter length, to narrow that gap. The target is soft:
    # an instance may pass it by up to a sentence and is truncated only at max_num_tokens.
    target_seq_length = max_num_tokens
    if rng.random() < options.short_seq_prob:  # rng
        target_seq_length = rng.randint(2, max_num_tokens)  # rng

    # A and B are made of whole sentences, never of an arbitrary cut through a token stream:
    # with a cut, next-sentence prediction could be solved by checking that the text runs on.
    instances = []
    chunk: list[Sentence] = []  # Consecutive sentences gathered for the next instance.
    chunk_length = 0
    i = 0
    while i < len(document):
        chunk.append(document[i])
        chunk_length += len(document[i])
        if i == len(document) - 1 or chunk_length >= target_seq_length:
            # A is the chunk's first a_end sentences (at least one, and one fewer than the chunk,
            # so that B can continue it).
            a_end = 1
            if len(chunk) >= 2:
                a_end = rng.randint(1, len(chunk) - 1)  # rng
            tokens_a = [token for sentence in chunk[:a_end] for token in sentence]

            # Half the time (always, for a one-sentence chunk: nothing could follow A) B is a
            # random stretch of another document. The chunk's sentences after A are then unused,
            # so the walk steps back to start the next chunk with them.
            # rng: random() is drawn only for a chunk of two or more sentences.
            is_random_next = len(chunk) == 1 or rng.random() < 0.5
            if is_random_next:
                tokens_b = _random_continuation(documents, document_index,
                                                target_seq_length - len(tokens_a), rng)
                i -= len(chunk) - a_end
            else:
                tokens_b = [token for sentence in chunk[a_end:] for token in sentence]
            tokens_a, tokens_b = truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)

            tokens = ["[CLS]", *tokens_a, "[SEP]", *tokens_b, "[SEP]"]
            segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
            tokens, positions, labels = create_masked_lm_predictions(
                tokens, vocab_words, options, rng)
            instances.append(TrainingInstance(tokens, segment_ids, positions, labels,
                                              is_random_next))
            chunk, chunk_length = [], 0
        i += 1
    return instances


def _random_continuation(documents: list[Document], document_index: int, target_length: int,
                         rng: random.Random) -> Sentence:
    """B for a random next: sentences from a random start in a random other document, until they
    reach `target_length` tokens (at least one sentence; the caller truncates)."""
    # Ten tries at a document other than this one: plenty for a real corpus. If all ten fail (a
    # one-document corpus always does), the last draw stands even though it is this document.
    for _ in range(10):
        random_index = rng.randint(0, len(documents) - 1)  # rng
        if random_index != document_index:
            break
    random_document = documents[random_index]
    start = rng.randint(0, len(random_document) - 1)  # rng
    tokens_b: Sentence = []
    for sentence in random_document[start:]:
        tokens_b.extend(sentence)
        if len(tokens_b) >= target_length:
            break
    return tokens_b


def truncate_seq_pair(tokens_a: Sentence, tokens_b: Sentence, max_num_tokens: int,
                      rng: random.Random) -> tuple[Sentence, Sentence]:
    """Shortens the pair to at most `max_num_tokens`, one token at a time from the longer side
    (B on a tie), from its front or its back at random."""
    # Cutting only from the back would always keep the start of a sentence, and only from the
    # front its end; taking either at random avoids teaching the model such a bias. Deques make
    # each removal O(1), so even a line far longer than max_seq_length costs linear time.
    a, b = collections.deque(tokens_a), collections.deque(tokens_b)
    while len(a) + len(b) > max_num_tokens:
        longer = a if len(a) > len(b) else b
        if rng.random() < 0.5:  # rng
            longer.popleft()
        else:
            longer.pop()
    return list(a), list(b)


def create_masked_lm_predictions(
        tokens: list[str], vocab_words: Sequence[str], options: PretrainingDataOptions,
        rng: random.Random) -> tuple[list[str], list[int], list[str]]:
    """Chooses the tokens to predict: (tokens with them replaced, their positions ascending, the
    tokens that were there).

    About masked_lm_prob of the tokens (at least one, at most max_predictions_per_seq) are
    chosen. With whole-word masking, a word's WordPieces are chosen or left together.
    """
    # Candidates are groups of positions that are masked together: each token alone, or, with
    # whole-word masking, a word's pieces (a "##" piece joins the group before it). [CLS] and
    # [SEP] are never masked, but neither do they close a group: a "##" piece that opens B (left
    # by truncating B's front) joins the last word of A, as in the original.
    groups: list[list[int]] = []
    for index, token in enumerate(tokens):
        if token in ("[CLS]", "[SEP]"):
            continue
        if options.do_whole_word_mask and groups and token.startswith("##"):
            groups[-1].append(index)
        else:
            groups.append([index])
    rng.shuffle(groups)  # rng: its draws depend only on the number of groups.

    # round() is Python's: halves go to the even integer (0.15 * 30 = 4.5 -> 4), as in the original.
    # The count includes [CLS] and [SEP] in len(tokens), as in the original.
    num_to_predict = min(options.max_predictions_per_seq,
                         max(1, int(round(len(tokens) * options.masked_lm_prob))))

    output_tokens = list(tokens)
    positions: list[int] = []
    for group in groups:
        if len(positions) >= num_to_predict:
            break
        # A word that would overflow the budget is skipped whole; a later, shorter one may still
        # fit. (A single token always fits here, so without whole-word masking nothing is skipped.)
        # The groups are disjoint, so the original's check for already-covered positions never
        # fires and is left out.
        if len(positions) + len(group) > num_to_predict:
            continue
        for index in group:
            output_tokens[index] = _masked_token(tokens[index], vocab_words, rng)
            positions.append(index)
    positions.sort()
    return output_tokens, positions, [tokens[index] for index in positions]


def _masked_token(token: str, vocab_words: Sequence[str], rng: random.Random) -> str:
    """What a chosen token becomes: [MASK] 80% of the time, itself 10%, a random word 10%."""
    # [MASK] never occurs in fine-tuning; if chosen tokens always became [MASK], the model would
    # only learn to represent [MASK]ed positions. Keeping the token 10% of the time biases the
    # representation towards the word actually observed. Since the model cannot tell which inputs
    # were kept or replaced by a random word, it must keep a contextual representation of every
    # token; random words are only 1.5% of all tokens, too few to harm its language understanding.
    if rng.random() < 0.8:  # rng
        return "[MASK]"
    if rng.random() < 0.5:  # rng
        return token
    return vocab_words[rng.randint(0, len(vocab_words) - 1)]  # rng


def write_instance_files(instances: Sequence[TrainingInstance], vocab: dict[str, int],
                         output_files: Sequence[str], options: PretrainingDataOptions) -> None:
    """Writes the instances round-robin over `output_files` (instance k to file k mod n), as the
    original does. All files appear only once every one is complete; on failure none does."""
    if not output_files:
        raise ValueError("no output file given")
    with contextlib.ExitStack() as stack:
        shards = [stack.enter_context(pretraining_examples.open_shard(path))
                  for path in output_files]
        for k, instance in enumerate(instances):
            shards[k % len(shards)].write(pretraining_examples.make_example(
                [vocab[token] for token in instance.tokens], instance.segment_ids,
                instance.masked_lm_positions,
                [vocab[token] for token in instance.masked_lm_labels],
                # The original's label: 1 = B is random, 0 = B is A's next sentence.
                int(instance.is_random_next),
                max_seq_length=options.max_seq_length,
                max_predictions_per_seq=options.max_predictions_per_seq))
