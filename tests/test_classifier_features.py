"""Tests for data_prep.classifier_features: features and records against the original's
`convert_single_example` and `file_based_convert_examples_to_features` (with the original's
tokenizer), regression labels, atomic writing, and the record cache."""

import dataclasses
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep import classifier_features as cf
from data_prep import glue
from data_prep.glue import InputExample
from official.text.tokenizer import FullTokenizer
from tests.reference_bert import import_original
from tests.test_glue import original_run_classifier

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
LABELS = ["0", "1"]
LONG = ("The quick brown fox jumps over the lazy dog while the cat watches from a sunny "
        "windowsill, unimpressed by Johanson's acrobatics.")

EXAMPLES = [
    InputExample("single", "The dog is hairy.", None, "1"),
    InputExample("single-long", LONG, None, "0"),
    InputExample("pair", "Is this jacksonville?", "No, it is not.", "1"),
    InputExample("a-longer", LONG, "A short one.", "0"),
    InputExample("b-longer", "A short one.", LONG, "1"),
    InputExample("both-long", LONG, LONG.upper(), "0"),
    InputExample("b-empty", "Only a.", "", "1"),
    InputExample("b-no-tokens", "Only a, really.", " \t ", "0"),  # text, but no tokens
    InputExample("accents-cjk", "Héllo, wörld! 你好吗", "John Johanson's house", "1"),
    InputExample("quotes", '"Who did John see?" asked "Mary.', "\u2603 \u00bd", "0"),
    InputExample("unlabelled", "A test pair.", "Its second text.", None),
    InputExample("one-token-each", "Yes", "no", "1"),
]


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


@pytest.fixture(scope="module")
def original_tokenizer():
    return import_original("bert.tokenization").FullTokenizer(VOCAB, do_lower_case=True)


def as_original(example):
    """The original's example: its placeholder label "0" where ours is unlabelled."""
    original = original_run_classifier()
    if isinstance(example, cf.PaddingInputExample):
        return original.PaddingInputExample()
    return original.InputExample(example.guid, example.text_a, example.text_b,
                                 "0" if example.label is None else example.label)


@pytest.mark.parametrize("max_seq_length", [5, 16, 128])
def test_features_are_the_originals(tokenizer, original_tokenizer, max_seq_length):
    """A dozen singles and pairs, cut (5, 16) and not (128), plus a padding example."""
    examples = EXAMPLES + [cf.PaddingInputExample()]
    ours = cf.convert_examples(examples, LABELS, max_seq_length, tokenizer)
    for example, features in zip(examples, ours, strict=True):
        # ex_index 5: past the examples the original logs.
        theirs = original_run_classifier().convert_single_example(
            5, as_original(example), LABELS, max_seq_length, original_tokenizer)
        assert features == cf.InputFeatures(theirs.input_ids, theirs.input_mask,
                                            theirs.segment_ids, theirs.label_id,
                                            theirs.is_real_example), getattr(example, "guid", "")
    assert cf.convert_example(EXAMPLES[3], LABELS, max_seq_length, tokenizer) == ours[3]


def test_truncation_cuts_the_longer_text_first(tokenizer):
    features = cf.convert_example(InputExample("g", "a b c d e f", "x y", "0"), LABELS, 9,
                                  tokenizer)
    tokens = tokenizer.convert_ids_to_tokens(features.input_ids)
    assert tokens == ["[CLS]", "a", "b", "c", "d", "[SEP]", "x", "y", "[SEP]"]
    assert features.segment_ids == [0] * 6 + [1] * 3
    tie = cf.convert_example(InputExample("g", "a b c", "x y z", "0"), LABELS, 8, tokenizer)
    assert tokenizer.convert_ids_to_tokens(tie.input_ids) == [  # a tie cuts b
        "[CLS]", "a", "b", "c", "[SEP]", "x", "y", "[SEP]"]


def test_regression_and_label_errors(tokenizer):
    pair = InputExample("sts-1", "A plane takes off.", "An air plane takes off.", "3.800")
    assert cf.convert_example(pair, None, 16, tokenizer).label_id == pytest.approx(3.8)
    unlabelled = InputExample("sts-2", "A.", "B.", None)
    assert cf.convert_example(unlabelled, None, 16, tokenizer).label_id == 0.0
    with pytest.raises(ValueError, match=r"^sts-3: label 'high' is not a number$"):
        cf.convert_example(InputExample("sts-3", "A.", "B.", "high"), None, 16, tokenizer)
    with pytest.raises(ValueError, match=r"^m-1: label 'maybe' is not one of 0, 1$"):
        cf.convert_example(InputExample("m-1", "A.", "B.", "maybe"), LABELS, 16, tokenizer)
    with pytest.raises(ValueError, match="max_seq_length must be at least 3"):
        cf.convert_example(pair, None, 2, tokenizer)


def read_records(path):
    return [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(path)]


def test_records_are_the_originals(tmp_path, tokenizer, original_tokenizer):
    examples = EXAMPLES + [cf.PaddingInputExample()] * 2
    ours, theirs = str(tmp_path / "ours.tf_record"), str(tmp_path / "theirs.tf_record")
    assert cf.write_tfrecord(examples, LABELS, 16, tokenizer, ours) == len(examples)
    original_run_classifier().file_based_convert_examples_to_features(
        [as_original(e) for e in examples], LABELS, 16, original_tokenizer, theirs)
    assert read_records(ours) == read_records(theirs)
    assert sorted(os.listdir(tmp_path)) == ["ours.tf_record", "theirs.tf_record"]


def test_regression_records_hold_float_labels(tmp_path, tokenizer):
    path = str(tmp_path / "sts.tf_record")
    examples = [InputExample("1", "A man is dancing.", "A man dances.", "3.800"),
                InputExample("2", "A cat.", "A dog.", "0.250"), cf.PaddingInputExample()]
    cf.write_tfrecord(examples, None, 12, tokenizer, path)
    spec = {"input_ids": tf.io.FixedLenFeature([12], tf.int64),
            "input_mask": tf.io.FixedLenFeature([12], tf.int64),
            "segment_ids": tf.io.FixedLenFeature([12], tf.int64),
            "label_ids": tf.io.FixedLenFeature([], tf.float32),
            "is_real_example": tf.io.FixedLenFeature([], tf.int64)}
    batch = next(iter(tf.data.TFRecordDataset(path).batch(3).map(
        lambda records: tf.io.parse_example(records, spec))))
    np.testing.assert_allclose(batch["label_ids"], [3.8, 0.25, 0.0], rtol=1e-6)
    np.testing.assert_array_equal(batch["is_real_example"], [1, 1, 0])
    # [CLS] a man is dancing . [SEP] a man dances . [SEP] fills all 12; then 3 + 3 + 3.
    np.testing.assert_array_equal(batch["input_mask"].numpy().sum(axis=1), [12, 9, 0])


def test_a_failed_write_leaves_no_file(tmp_path, tokenizer):
    bad = [EXAMPLES[0], InputExample("bad", "A.", None, "maybe")]
    with pytest.raises(ValueError, match="bad: label 'maybe'"):
        cf.write_tfrecord(bad, LABELS, 16, tokenizer, str(tmp_path / "out.tf_record"))
    assert os.listdir(tmp_path) == []


def write_mrpc(data_dir, rows):
    data_dir.mkdir(exist_ok=True)
    (data_dir / "dev.tsv").write_text(
        "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
        + "".join(f"{label}\t1\t2\t{a}\t{b}\n" for label, a, b in rows), encoding="utf-8")


def test_cached_records_are_reused_until_a_setting_changes(tmp_path, tokenizer):
    data_dir, out = tmp_path / "MRPC", str(tmp_path / "out")
    write_mrpc(data_dir, [("1", "He came .", "He arrived ."), ("0", "It rains .", "It is dry ."),
                          ("1", "Yes .", "Indeed .")])
    mrpc = glue.get_processor("mrpc")

    def cached(max_seq_length=16, pad_to_multiple=1):
        return cf.cached_tfrecord(mrpc, str(data_dir), "dev", max_seq_length, tokenizer, out,
                                  pad_to_multiple=pad_to_multiple)

    first = cached()
    assert (first.facts["num_examples"], first.facts["num_records"], first.reused) == (3, 3, False)
    assert first.path == os.path.join(out, "mrpc-dev.tf_record")
    made = os.stat(first.path).st_mtime_ns
    assert cached() == dataclasses.replace(first, reused=True)
    assert os.stat(first.path).st_mtime_ns == made
    with open(first.path + ".json", encoding="utf-8") as f:
        key = json.load(f)["key"]
    assert key["task"] == "mrpc" and key["split"] == "dev" and key["max_seq_length"] == 16
    assert key["do_lower_case"] is True and len(key["vocab_sha256"]) == 64

    assert not cached(max_seq_length=32).reused
    assert len(read_records(first.path)[0].features.feature["input_ids"].int64_list.value) == 32
    assert cached(max_seq_length=32).reused

    padded = cached(max_seq_length=32, pad_to_multiple=4)
    assert (padded.facts["num_examples"], padded.facts["num_records"], padded.reused) == (
        3, 4, False)
    is_real = [r.features.feature["is_real_example"].int64_list.value[0]
               for r in read_records(padded.path)]
    assert is_real == [1, 1, 1, 0]

    write_mrpc(data_dir, [("1", "He came .", "He arrived .")])  # the data changes
    changed = cached(max_seq_length=32, pad_to_multiple=4)
    assert (changed.facts["num_examples"], changed.reused) == (1, False)
    assert sorted(os.listdir(out)) == ["mrpc-dev.tf_record", "mrpc-dev.tf_record.json"]

    with pytest.raises(glue.TsvError, match="test.tsv: no such file"):
        cf.cached_tfrecord(mrpc, str(data_dir), "test", 16, tokenizer, out)


def test_an_attacks_successful_examples_are_added_to_the_training_rows(tmp_path, tokenizer):
    data_dir, out = tmp_path / "tsv", str(tmp_path / "out")
    data_dir.mkdir()
    (data_dir / "labels.txt").write_text("neg\npos\n")
    (data_dir / "train.tsv").write_text("sentence\tlabel\nA good film .\tpos\nDull .\tneg\n")
    attack = tmp_path / "attack.jsonl"
    attack.write_text("".join(json.dumps(row) + "\n" for row in [
        {"status": "successful", "label": "pos", "perturbed": "A fine film ."},
        {"status": "failed", "label": "neg", "perturbed": "Dull ."}]))
    data = cf.ClassifierData(glue.tsv_processor(str(data_dir)), str(data_dir), None, 16, VOCAB,
                             True, out, augment_file=str(attack))
    assert data.read(["train"]) == 3
    records = data.records("train")
    assert records.path == os.path.join(out, "tsv-train+augmented.tf_record")
    assert records.num_examples == 3 and str(attack) in records.source
    rows = read_records(records.path)
    ids = [list(r.features.feature["input_ids"].int64_list.value) for r in rows]
    labels = [r.features.feature["label_ids"].int64_list.value[0] for r in rows]
    fine = cf.convert_example(InputExample("x", "A fine film .", None, "pos"), ["neg", "pos"],
                              16, tokenizer)
    assert ids[2] == fine.input_ids and labels == [1, 0, 1]


def test_tensorflow_datasets_records_hold_the_examples_read_from_there(tmp_path, tokenizer):
    tfds = pytest.importorskip("tensorflow_datasets")
    sst2, out = glue.get_processor("sst-2"), str(tmp_path / "out")
    with tfds.testing.mock_data(num_examples=5):
        examples = glue.read_tfds("sst-2", "train", data_dir=None)
        made = cf.cached_tfrecord(sst2, None, "train", 16, tokenizer, out,
                                  tfds_data_dir=str(tmp_path))
        again = cf.cached_tfrecord(sst2, None, "train", 16, tokenizer, out,
                                   tfds_data_dir=str(tmp_path))
    assert (made.facts["num_examples"], made.reused, again.reused) == (5, False, True)
    expected = cf.convert_examples(examples, sst2.get_labels(), 16, tokenizer)
    records = read_records(made.path)
    assert [list(r.features.feature["input_ids"].int64_list.value) for r in records] == [
        f.input_ids for f in expected]
    assert [r.features.feature["label_ids"].int64_list.value[0] for r in records] == [
        f.label_id for f in expected]


# ---- documents longer than a row (--long_doc) --------------------------------------------------

DOC = " ".join(f"w{i}" for i in range(23))  # w0 .. w22: each a [UNK]-free run of pieces


def test_head_tail_features_keep_the_head_and_the_tail(tokenizer):
    ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(DOC))
    example = InputExample("doc", DOC, None, "1")
    features = cf.convert_examples([example], LABELS, 12, tokenizer, head_tokens=3)[0]
    cls, sep = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    assert features.input_ids == [cls, *ids[:3], *ids[-7:], sep]  # 3 + 7 = 12 - 2
    short = InputExample("short", "w1 w2", None, "0")
    assert cf.convert_examples([short], LABELS, 12, tokenizer, head_tokens=3)[0] == \
        cf.convert_examples([short], LABELS, 12, tokenizer)[0]


def test_spread_windows():
    assert cf.spread_windows(3, 4).tolist() == [0, 1, 2]
    assert cf.spread_windows(10, 4).tolist() == [0, 3, 6, 9]
    assert cf.spread_windows(5, 1).tolist() == [0]
    assert cf.spread_windows(7, None).tolist() == list(range(7))


def test_document_records_hold_every_window_and_training_a_spread_few(tmp_path, tokenizer):
    ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(DOC))
    cls, sep = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    examples = [InputExample("doc", DOC, None, "1"), InputExample("empty", "", None, "0")]
    path = str(tmp_path / "docs.tf_record")
    # Rows of 8 hold windows of 6; stride 4 over len(ids) pieces.
    assert cf.write_document_tfrecord(examples, LABELS, 8, tokenizer, path, 4) == \
        (2, (len(ids) - 6 + 3) // 4 + 1 + 1)
    parsed = [tf.io.parse_single_example(r, cf.document_parse_spec(8))
              for r in tf.data.TFRecordDataset(path)]
    windows = parsed[0]["input_ids"].numpy()
    starts = range(0, len(ids) - 6 + 4, 4)
    expected = [[cls, *ids[s:s + 6], sep] + [0] * (6 - len(ids[s:s + 6])) for s in starts]
    np.testing.assert_array_equal(windows, expected)
    assert int(parsed[0]["label_ids"]) == 1 and int(parsed[0]["is_real_example"]) == 1
    np.testing.assert_array_equal(parsed[1]["input_ids"].numpy(), [[cls, sep, 0, 0, 0, 0, 0, 0]])

    capped = str(tmp_path / "train.tf_record")
    cf.write_document_tfrecord(examples, LABELS, 8, tokenizer, capped, 4, max_windows=2)
    first = tf.io.parse_single_example(next(iter(tf.data.TFRecordDataset(capped))),
                                       cf.document_parse_spec(8))
    np.testing.assert_array_equal(first["input_ids"].numpy(),
                                  [expected[0], expected[-1]])  # the first and the last


def test_document_records_batch_into_window_rows(tmp_path, tokenizer):
    from official.training.finetuning_input import record_dataset
    examples = [InputExample(str(i), " ".join(["dog"] * n), None, "1") for i, n in
                enumerate([1, 9, 20])]
    path = str(tmp_path / "docs.tf_record")
    cf.write_document_tfrecord(examples, LABELS, 8, tokenizer, path, 3)
    batch = next(iter(record_dataset(path, cf.document_parse_spec(8), 3, is_training=False)))
    # 1 token: 1 window; 9: windows at 0, 3 (3 + 6 reaches 9); 20: at 0, 3, ..., 15 (15 + 6
    # > 20).
    np.testing.assert_array_equal(batch["window_document"].numpy(),
                                  [0, 1, 1, 2, 2, 2, 2, 2, 2])
    assert batch["input_word_ids"].shape == (9, 8) and batch["label_ids"].shape == (3,)
