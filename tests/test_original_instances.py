"""Tests for data_prep.original_instances: record-for-record identity with Google's original
`create_pretraining_data` (bert-tensorflow 1.0.4, run in-process), the reading quirks it keeps,
and the whole-word-masking rules of the final google-research/bert version."""

import dataclasses
import logging
import os
import random

import pytest
import tensorflow as tf

from data_prep import original_instances as oi
from data_prep.input_errors import InputError
from data_prep.pretraining_options import OptionsError, PretrainingDataOptions
from official.text.tokenizer import FullTokenizer
from tests.reference_bert import import_original

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
SAMPLE = os.path.join(REPO, "tests", "data", "pretraining_sample.txt")

LONG_LINE = " ".join(f"word{i} and more text" for i in range(60))  # ~300 WordPieces.

# Three files exercising what the reader must get right. Neither a.txt (ending with "\n") nor
# b.txt (ending without one) ends with a blank line, so their last documents run on into the next
# file. b.txt has "\r\n" endings and a "\r" inside a line ("Carr\rie" reads as "Carrie" in the
# original).
HAND_FILES = {
    "a.txt": ("The cat sat on the mat.\nIt was a sunny day in the little town.\n"
              "Everyone was outside, enjoying the unbelievable weather!\n"
              "\n"
              "A lonely one-sentence document.\n"
              "\n \n\t\n"  # An empty document: blank lines, one of only whitespace.
              f"Here comes a very long line.\n{LONG_LINE}\nAnd a short one after it.\n"
              "\n"
              "The last document of a.txt has no blank line after it,\n"
              "so it continues in b.txt\n"),
    "b.txt": ("with this sentence.\r\nCarr\rie said nothing at all.\r\n\r\n"
              "Another document starts here.\r\nIt talks about running, walked and talking.\r\n"
              "Numbers like 3.14 and 2019 appear too.\r\nIt ends in c.txt"),
    "c.txt": "with one more sentence.\n\nThe final document.\nIt has two sentences.\n",
}


def options(**overrides) -> PretrainingDataOptions:
    return PretrainingDataOptions(**{"dupe_factor": 2, **overrides})


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


@pytest.fixture(scope="module")
def hand_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("text")
    for name, text in HAND_FILES.items():
        (folder / name).write_bytes(text.encode("utf-8"))
    return [str(folder / name) for name in HAND_FILES]


def run_original(input_files, output_files, opts, do_lower_case=True):
    """Google's original, as its main() runs it: same rng, same tokenizer, same writer."""
    original = import_original("bert.create_pretraining_data")
    tokenization = import_original("bert.tokenization")
    reference_tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=do_lower_case)
    instances = original.create_training_instances(
        input_files, reference_tokenizer, opts.max_seq_length, opts.dupe_factor,
        opts.short_seq_prob, opts.masked_lm_prob, opts.max_predictions_per_seq,
        random.Random(opts.random_seed))
    original.write_instance_to_example_files(instances, reference_tokenizer, opts.max_seq_length,
                                             opts.max_predictions_per_seq, output_files)


def read_records(path):
    return [tf.train.Example.FromString(record.numpy()) for record in tf.data.TFRecordDataset(path)]


def assert_same_records(ours_path, original_path):
    ours, original = read_records(ours_path), read_records(original_path)
    assert len(ours) == len(original)
    for k, (mine, theirs) in enumerate(zip(ours, original)):
        assert mine == theirs, f"record {k} of {len(ours)} differs"


def assert_reproduces_original(input_files, tmp_path, opts, num_outputs=1, do_lower_case=True):
    ours = [str(tmp_path / f"ours{k}.tfrecord") for k in range(num_outputs)]
    theirs = [str(tmp_path / f"original{k}.tfrecord") for k in range(num_outputs)]
    run_original(input_files, theirs, opts, do_lower_case)
    count = oi.generate(input_files, ours, FullTokenizer(VOCAB, do_lower_case), opts)
    assert count == sum(len(read_records(path)) for path in theirs) > 0
    for mine, original in zip(ours, theirs):
        assert_same_records(mine, original)


@pytest.mark.parametrize("opts,do_lower_case", [
    (options(max_seq_length=32, dupe_factor=3, random_seed=1), True),
    (options(max_seq_length=64, random_seed=2, short_seq_prob=0.5, masked_lm_prob=0.3), True),
    (options(max_seq_length=12, max_predictions_per_seq=3, random_seed=3), False),
])
def test_hand_built_documents_reproduce_original(hand_files, tmp_path, opts, do_lower_case):
    assert_reproduces_original(hand_files, tmp_path, opts, do_lower_case=do_lower_case)


def test_single_document_reproduces_original(tmp_path):
    # Every random next sentence then comes from the document itself, after ten failed tries.
    path = tmp_path / "one.txt"
    path.write_text("One sentence here.\nAnother one there.\nA third to finish.\n")
    assert_reproduces_original([str(path)], tmp_path,
                               options(max_seq_length=16, max_predictions_per_seq=5, dupe_factor=3))


@pytest.mark.parametrize("opts,num_outputs", [
    (options(max_seq_length=128, dupe_factor=2), 1),
    (options(max_seq_length=64, dupe_factor=3, random_seed=7, max_predictions_per_seq=10), 1),
    (options(max_seq_length=128, dupe_factor=2, random_seed=2024, short_seq_prob=0.3), 3),
])
def test_real_text_reproduces_original(tmp_path, opts, num_outputs):
    assert_reproduces_original([SAMPLE], tmp_path, opts, num_outputs)


def test_file_without_final_blank_line_continues_its_last_document(hand_files, tokenizer):
    documents, invalid = oi.read_documents(hand_files, tokenizer)
    assert invalid == {}
    assert len(documents) == 6  # The empty documents are dropped.
    assert documents[1] == [tokenizer.tokenize("A lonely one-sentence document.")]
    assert documents[3] == [tokenizer.tokenize(line) for line in [
        "The last document of a.txt has no blank line after it,", "so it continues in b.txt",
        "with this sentence.", "Carrie said nothing at all."]]  # "\r" is dropped, not a space.
    assert documents[4][-2:] == [tokenizer.tokenize("It ends in c.txt"),
                                 tokenizer.tokenize("with one more sentence.")]
    assert len(oi.read_documents(hand_files[:1], tokenizer)[0]) == 4


def test_bytes_not_utf8_are_replaced_and_counted(tmp_path, tokenizer, caplog):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("Un café très célèbre.\nAnother line.\n".encode("latin-1"))
    documents, invalid = oi.read_documents([str(bad)], tokenizer)
    assert invalid == {str(bad): 4}
    assert documents == [[tokenizer.tokenize("Un caf\ufffd tr\ufffds c\ufffdl\ufffdbre."),
                          tokenizer.tokenize("Another line.")]]
    with caplog.at_level(logging.WARNING):
        oi.generate([str(bad)], [str(tmp_path / "out.tfrecord")], tokenizer, options())
    assert f"{bad}: 4 bytes were not UTF-8 and were replaced" in caplog.text


def test_expand_input_files_keeps_glob_order_and_rejects_empty_globs(hand_files):
    folder = os.path.dirname(hand_files[0])
    assert oi.expand_input_files(f"{folder}/b.txt,{folder}/*.txt,") == [
        hand_files[1], *tf.io.gfile.glob(f"{folder}/*.txt")]
    with pytest.raises(InputError, match=r"/nothing\*\.txt: no file matches"):
        oi.expand_input_files(f"{folder}/a.txt,{folder}/nothing*.txt")


def test_generate_rejects_bad_input_and_writes_nothing(tmp_path, tokenizer):
    out = tmp_path / "out" / "data.tfrecord"
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n\n")
    with pytest.raises(InputError, match="no document with any text"):
        oi.generate([str(blank)], [str(out)], tokenizer, options())
    with pytest.raises(OptionsError, match="objective must be nsp"):
        oi.generate([SAMPLE], [str(out)], tokenizer, options(objective="sop"))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n")
    with pytest.raises(InputError, match=f"{vocab}: vocab lacks \\[MASK\\]"):
        oi.generate([SAMPLE], [str(out)], FullTokenizer(str(vocab)), options())
    assert not out.parent.exists() or not os.listdir(out.parent)


def test_failed_write_leaves_no_file(tmp_path, tokenizer):
    instance = oi.TrainingInstance(["[CLS]", "a", "[SEP]", "not-a-vocab-word", "[SEP]"],
                                   [0, 0, 0, 1, 1], [1], ["a"], False)
    with pytest.raises(KeyError):
        oi.write_instance_files([instance, instance], tokenizer.vocab,
                                [str(tmp_path / "x.tfrecord"), str(tmp_path / "y.tfrecord")],
                                options())
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("seed", range(20))
def test_masking_and_truncation_draw_as_the_original(seed, tokenizer):
    original = import_original("bert.create_pretraining_data")
    vocab_words = list(tokenizer.vocab)
    words = random.Random(seed).choices(["the", "un", "##able", "cat", "##s", "sat"], k=40)
    tokens = ["[CLS]", *words[:15], "[SEP]", *words[15:], "[SEP]"]
    opts = options(max_predictions_per_seq=5 + seed % 3, masked_lm_prob=0.1 + seed / 40)
    assert oi.create_masked_lm_predictions(tokens, vocab_words, opts, random.Random(seed)) == \
        original.create_masked_lm_predictions(tokens, opts.masked_lm_prob,
                                              opts.max_predictions_per_seq, vocab_words,
                                              random.Random(seed))
    a, b = words[:seed + 3], words[seed + 3:]
    ours = oi.truncate_seq_pair(a, b, 20, random.Random(seed))
    theirs_a, theirs_b = list(a), list(b)
    original.truncate_seq_pair(theirs_a, theirs_b, 20, random.Random(seed))
    assert ours == (theirs_a, theirs_b)


# Whole-word masking: the rules of the final google-research/bert version, on hand-built tokens.

WWM = options(do_whole_word_mask=True, masked_lm_prob=1.0)
VOCAB_WORDS = ["[MASK]", "x", "y"]


def mask(tokens, seed, **overrides):
    return oi.create_masked_lm_predictions(tokens, VOCAB_WORDS,
                                           dataclasses.replace(WWM, **overrides),
                                           random.Random(seed))


def test_whole_words_are_never_split():
    tokens = ["[CLS]", "un", "##believ", "##able", "cat", "##s", "sat", "[SEP]", "on", "##ward",
              "[SEP]"]
    words = [[1, 2, 3], [4, 5], [6], [8, 9]]
    for seed in range(50):
        output, positions, labels = mask(tokens, seed, max_predictions_per_seq=4)
        assert len(positions) in range(1, 5) and positions == sorted(positions)
        assert labels == [tokens[p] for p in positions]
        for word in words:
            assert set(word) <= set(positions) or not set(word) & set(positions)
        assert all(output[i] == tokens[i] for i in range(len(tokens)) if i not in positions)


def test_a_word_that_would_overflow_is_skipped_and_smaller_ones_still_fit():
    # Budget 2: the three-piece word never fits, whatever the shuffle puts first; the two single
    # words after or before it are always taken.
    tokens = ["[CLS]", "a", "##b", "##c", "d", "e", "[SEP]"]
    for seed in range(20):
        assert mask(tokens, seed, max_predictions_per_seq=2)[1] == [4, 5]
    # Budget 3 with words of 2, 1 and 1 pieces: once both single words are in, the two-piece word
    # overflows and is skipped, leaving the count below the budget.
    tokens = ["[CLS]", "a", "##b", "d", "e", "[SEP]"]
    outcomes = {tuple(mask(tokens, seed, max_predictions_per_seq=3)[1]) for seed in range(40)}
    assert outcomes == {(1, 2, 3), (1, 2, 4), (3, 4)}


def test_a_piece_opening_segment_b_joins_the_last_word_of_a():
    # [SEP] is not a candidate, so it does not end a word (as in the original).
    tokens = ["[CLS]", "a", "b", "[SEP]", "##c", "d", "[SEP]"]
    for seed in range(30):
        positions = mask(tokens, seed, max_predictions_per_seq=2)[1]
        assert (2 in positions) == (4 in positions)


class AlwaysLow:
    """An rng whose shuffle keeps the order and whose random() is always 0.0 (so every chosen
    token becomes [MASK]); it counts the random() calls."""

    calls = 0

    def shuffle(self, items):
        pass

    def random(self):
        self.calls += 1
        return 0.0


def test_each_token_of_a_chosen_word_gets_its_own_draw():
    tokens = ["[CLS]", "un", "##believ", "##able", "cat", "##s", "[SEP]"]
    rng = AlwaysLow()
    output, positions, _ = oi.create_masked_lm_predictions(tokens, VOCAB_WORDS, WWM, rng)
    assert positions == [1, 2, 3, 4, 5] and rng.calls == 5
    assert output == ["[CLS]"] + ["[MASK]"] * 5 + ["[SEP]"]
