"""Tests for data_prep.conll: reading CoNLL-2003 files (IOB1 -> IOB2, documents, layout
variations, errors) and WikiANN's (language prefixes, scripts, errors), first-piece labelling,
windows that predict every word once, the records and their cache, and the prediction file."""

import dataclasses
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep import conll, record_cache
from data_prep.conll import LABELS, Sentence
from official.tasks.ner_metrics import PANX_LABELS, UPOS_LABELS, get_chunks
from official.text.tokenizer import FullTokenizer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNCASED_VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
CASED_VOCAB = os.path.join(REPO, "tests", "data", "cased_vocab.txt")

# Lines as in eng.train / eng.testb: both -DOCSTART- spellings, IOB1 (B- only between two
# adjacent PER entities), runs of blank lines, a whitespace-only line, trailing spaces and tabs,
# a -DOCSTART- right after a sentence, no newline at the end.
SAMPLE = [
    "-DOCSTART- -X- O O",                # 1
    "",
    "EU NNP I-NP I-ORG",                 # 3
    "rejects VBZ I-VP O  ",
    "German JJ I-NP I-MISC\t",
    "call NN I-NP O",
    ". . O O",
    "",
    "",
    "Peter NNP I-NP I-PER",              # 10
    "Blackburn NNP I-NP I-PER",
    "Sam NNP I-NP B-PER",
    "Jones NNP I-NP I-PER",
    " \t ",
    "in IN I-PP O",                      # 15
    "Brussels NNP I-NP I-LOC",
    "-DOCSTART- -X- -X- O",
    "BRUSSELS NNP I-NP I-LOC",           # 18
    "1996-08-22 CD I-NP O",
]


def write(tmp_path, lines, name="sample.txt", end=""):
    path = tmp_path / name
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def uncased():
    return FullTokenizer(UNCASED_VOCAB, do_lower_case=True)


def sentence(words, tags=None, line=1):
    return Sentence(tuple(words), tuple(tags or ["O"] * len(words)), 0, line)


def test_reader_converts_iob1_and_keeps_documents(tmp_path):
    sentences = conll.read_conll(write(tmp_path, SAMPLE))
    assert sentences == [
        Sentence(("EU", "rejects", "German", "call", "."),
                 ("B-ORG", "O", "B-MISC", "O", "O"), document=0, line=3),
        Sentence(("Peter", "Blackburn", "Sam", "Jones"),
                 ("B-PER", "I-PER", "B-PER", "I-PER"), document=0, line=10),
        Sentence(("in", "Brussels"), ("O", "B-LOC"), document=0, line=15),
        Sentence(("BRUSSELS", "1996-08-22"), ("B-LOC", "O"), document=1, line=18),
    ]
    # The same file in IOB2 (each entity's I- at its start made B-) reads the same.
    as_iob2 = list(SAMPLE)
    for number in (3, 5, 10, 16, 18):
        head, _, tail = as_iob2[number - 1].rpartition("I-")
        as_iob2[number - 1] = head + "B-" + tail
    assert conll.read_conll(write(tmp_path, as_iob2, "iob2.txt", end="\n")) == sentences
    # Sentences before any -DOCSTART- are document 0; trailing blank lines change nothing.
    no_header = conll.read_conll(write(tmp_path, SAMPLE[2:], "no_header.txt", end="\n\n\n"))
    assert [(s.document, s.line) for s in no_header] == [(0, 1), (0, 8), (0, 13), (1, 16)]
    # A document without sentences takes no index.
    empty_document = SAMPLE[:16] + ["-DOCSTART- -X- -X- O", ""] + SAMPLE[16:]
    assert conll.read_conll(write(tmp_path, empty_document, "empty.txt"))[-1].document == 1


@pytest.mark.parametrize("lines, message", [
    (["EU"], r"bad\.txt:1: 1 column, expected the word and its tag \(word POS chunk NER, or "
             r"word tag\)"),
    (["a DT I-NP O", "EU NNP I-NP I-ORG extra"],
     r"bad\.txt:2: 5 columns, expected 4 as on line 1"),
    (["a\tO", "", "EU NNP I-ORG"], r"bad\.txt:3: 3 columns, expected 2 as on line 1"),
    (["EU NNP I-NP E-ORG"], r"bad\.txt:1: tag 'E-ORG' is not O, B-TYPE or I-TYPE"),
    (["EU NNP I-NP I-"], r"bad\.txt:1: tag 'I-' is not O, B-TYPE or I-TYPE"),
    (["a DT I-NP O", "", "Monday NNP I-NP I-DATE"],
     r"bad\.txt:3: tag 'I-DATE' \(B-DATE in IOB2\) is not one of O, B-PER, I-PER, B-ORG, "
     r"I-ORG, B-LOC, I-LOC, B-MISC, I-MISC"),
    (["Monday NNP I-NP B-DATE"], r"bad\.txt:1: tag 'B-DATE' is not one of O, B-PER"),
    (["-DOCSTART- -X- -X- O", "", ""], r"bad\.txt: no sentences"),
])
def test_bad_lines_are_named_by_file_and_line(tmp_path, lines, message):
    with pytest.raises(conll.ConllError, match=f"^.*{message}"):
        conll.read_conll(write(tmp_path, lines, "bad.txt"))


def test_unreadable_files(tmp_path):
    with pytest.raises(conll.ConllError, match=r"missing\.txt: no such file$"):
        conll.read_conll(str(tmp_path / "missing.txt"))
    (tmp_path / "latin1.txt").write_bytes(b"a DT I-NP O\n\nK\xf6ln NNP I-NP I-LOC\n")
    with pytest.raises(conll.ConllError, match=r"latin1\.txt:3: not UTF-8 \(byte 1 of the"):
        conll.read_conll(str(tmp_path / "latin1.txt"))
    # Another tag set is read when it is given.
    dated = conll.read_conll(write(tmp_path, ["Monday NNP I-NP I-DATE"], "dated.txt"),
                             labels=["O", "B-DATE", "I-DATE"])
    assert dated[0].tags == ("B-DATE",)


# ---- the tag set: the training file's, by one rule ----------------------------------------------

# BC5CDR as Crichton et al.'s collection gives it: "word<TAB>tag", IOB2, chemicals and diseases;
# Disease before Chemical in the file, and a chemical of one word only.
BC5CDR = [
    "Naloxone\tB-Chemical", "reverses\tO", "the\tO", "antihypertensive\tO", "effect\tO",
    "of\tO", "clonidine\tB-Chemical", ".\tO", "",
    "Severe\tB-Disease", "hypotension\tI-Disease", "followed\tO", "lithium\tB-Chemical", "",
]
# JNLPBA's types in IOB1 (an entity starts with I- unless it follows one of its type).
JNLPBA = [
    "IL-2 NN I-NP I-DNA", "gene NN I-NP I-DNA", "expression NN I-NP O", "", "in IN I-PP O",
    "T NN I-NP I-cell_type", "cells NNS I-NP I-cell_type", "NF-kappa NN I-NP I-protein",
    "B NN I-NP I-protein", "p50 NN I-NP B-protein", "",
]


def test_a_domain_files_tags_are_o_then_b_and_i_of_each_type_sorted(tmp_path):
    sentences = conll.read_conll(write(tmp_path, BC5CDR, "train.tsv"), labels=None)
    assert [s.tags for s in sentences] == [
        ("B-Chemical", "O", "O", "O", "O", "O", "B-Chemical", "O"),
        ("B-Disease", "I-Disease", "O", "B-Chemical")]
    expected = ["O", "B-Chemical", "I-Chemical", "B-Disease", "I-Disease"]
    assert conll.tag_set(sentences, LABELS, "entities") == expected
    # The sentences' order, hence the file's, does not change it.
    assert conll.tag_set(sentences[::-1], LABELS, "entities") == expected
    # IOB1 reads as IOB2 first (I-DNA at a start is B-DNA): the types are sorted as strings.
    iob1 = conll.read_conll(write(tmp_path, JNLPBA, "jnlpba.txt"), labels=None)
    assert iob1[1].tags == ("O", "B-cell_type", "I-cell_type", "B-protein", "I-protein",
                            "B-protein")
    assert conll.tag_set(iob1, LABELS, "entities") == [
        "O", "B-DNA", "I-DNA", "B-cell_type", "I-cell_type", "B-protein", "I-protein"]


def test_a_published_set_is_kept_in_its_order_when_it_holds_the_files_tags(tmp_path):
    """CoNLL-2003's files keep Hugging Face's ids whichever types a file has; a treebank keeps
    UD's 17 though its file lacks some; one tag outside the set derives the set instead."""
    conll_file = conll.read_conll(write(tmp_path, SAMPLE), labels=None)
    assert conll.tag_set(conll_file, LABELS, "entities") == list(LABELS)
    assert conll.tag_set(conll_file[1:2], LABELS, "entities") == list(LABELS)  # PER alone
    assert conll.tag_set(conll_file, PANX_LABELS, "entities") == [  # MISC: not PAN-X's
        "O", "B-LOC", "I-LOC", "B-MISC", "I-MISC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
    treebank = [sentence(["the", "cat"], ["DET", "NOUN"])]
    assert conll.tag_set(treebank, UPOS_LABELS, "tags") == list(UPOS_LABELS)
    assert conll.tag_set([sentence(["x", "y"], ["VERB", "ADJ-X"])], UPOS_LABELS, "tags") == [
        "ADJ-X", "VERB"]
    with pytest.raises(ValueError, match="scheme must be entities or tags"):
        conll.tag_set(treebank, UPOS_LABELS, "spans")


def test_a_dev_tag_of_a_type_the_training_file_lacks_is_refused_at_its_line(tmp_path):
    train = write(tmp_path, BC5CDR, "train.tsv")
    dev = write(tmp_path, ["Aspirin\tB-Chemical", "", "BRCA1\tB-Gene", "gene\tO"], "dev.tsv")
    data = conll.ConllData({"train": train, "dev": dev}, None, 16, CASED_VOCAB, False,
                           str(tmp_path / "out"))
    with pytest.raises(ValueError, match="choose_tags reads them first"):
        data.read(["train"])
    assert data.choose_tags(LABELS, "entities") == [
        "O", "B-Chemical", "I-Chemical", "B-Disease", "I-Disease"]
    with pytest.raises(conll.ConllError) as refused:
        data.read(["train", "dev"])
    assert str(refused.value) == (f"{dev}:3: tag 'B-Gene' is not one of O, B-Chemical, "
                                  "I-Chemical, B-Disease, I-Disease")
    assert not os.path.exists(tmp_path / "out")


def expected_features(tokenizer, words, tags, max_seq_length):
    """One window built word by word with `tokenize`, the straightforward way."""
    tokens, label_ids, word_ids = ["[CLS]"], [0], [-1]
    for index, (word, tag) in enumerate(zip(words, tags)):
        pieces = tokenizer.tokenize(word)
        tokens += pieces
        label_ids += [LABELS.index(tag)] + [0] * (len(pieces) - 1)
        word_ids += [index] + [-1] * (len(pieces) - 1)
    tokens.append("[SEP]")
    pad = max_seq_length - len(tokens)
    return tokens, label_ids + [0] * (pad + 1), word_ids + [-1] * (pad + 1), pad


def test_the_first_piece_of_each_word_carries_its_tag(uncased):
    words = ["John", "Johanson", "lives", "in", "Brussels", "since", "1996-08-22", "."]
    tags = ["B-PER", "I-PER", "O", "O", "B-LOC", "O", "O", "O"]
    [features] = conll.convert_sentence(sentence(words, tags), LABELS, 24, uncased)
    tokens = uncased.convert_ids_to_tokens(features.input_ids)
    assert tokens[:15] == ["[CLS]", "john", "johan", "##son", "lives", "in", "brussels", "since",
                           "1996", "-", "08", "-", "22", ".", "[SEP]"]
    assert tokens[15:] == ["[PAD]"] * 9
    tag = {label: i for i, label in enumerate(LABELS)}
    assert features.label_ids == [0, tag["B-PER"], tag["I-PER"], 0, 0, 0, tag["B-LOC"], 0, 0,
                                  0, 0, 0, 0, 0] + [0] * 10
    assert features.word_ids == [-1, 0, 1, -1, 2, 3, 4, 5, 6, -1, -1, -1, -1, 7] + [-1] * 10
    assert features.label_weights == [float(w >= 0) for w in features.word_ids]
    assert features.input_mask == [1] * 15 + [0] * 9
    assert features.segment_ids == [0] * 24
    assert (features.sentence_index, features.window_index, features.first_word) == (0, 0, 0)


@pytest.mark.parametrize("vocab, do_lower_case", [
    (UNCASED_VOCAB, True), (UNCASED_VOCAB, False), (CASED_VOCAB, False)])
def test_batched_features_match_word_by_word_tokenization(tmp_path, vocab, do_lower_case):
    tokenizer = FullTokenizer(vocab, do_lower_case=do_lower_case)
    sentences = conll.read_conll(write(tmp_path, SAMPLE))
    features = conll.convert_sentences(sentences, LABELS, 16, tokenizer)
    assert [f.sentence_index for f in features] == [0, 1, 2, 3]
    for s, f in zip(sentences, features):
        tokens, label_ids, word_ids, pad = expected_features(tokenizer, s.words, s.tags, 16)
        assert tokenizer.convert_ids_to_tokens(f.input_ids[:len(tokens)]) == tokens
        assert (f.label_ids, f.word_ids) == (label_ids, word_ids)
    first_pieces = tokenizer.convert_ids_to_tokens(
        [i for i, w in zip(features[0].input_ids, features[0].word_ids) if w >= 0])
    # The case setting must be the vocab's: an uncased vocab has no capitals, so reading it
    # cased makes every capitalised word [UNK].
    assert first_pieces == {
        (UNCASED_VOCAB, True): ["eu", "rejects", "german", "call", "."],
        (UNCASED_VOCAB, False): ["[UNK]", "rejects", "[UNK]", "call", "."],
        (CASED_VOCAB, False): ["E", "re", "German", "call", "."],  # E ##U, re ##j ##ect ##s
    }[vocab, do_lower_case]


def test_long_sentences_are_split_between_words(uncased):
    # 50 words of 1 to 5 pieces ("johan ##son"; "1996 - 08 - 22"); 7 pieces fit in a window.
    words = ["John", "Johanson", "in", "1996-08-22", "Brussels", ",", "lives"] * 4 + ["a", "."]
    tags = ["B-PER", "I-PER", "O", "O", "B-LOC", "O", "O"] * 4 + ["O", "O"]
    pieces = [len(uncased.tokenize(w)) for w in words]
    features = conll.convert_sentence(sentence(words, tags), LABELS, 9, uncased)
    predicted = []
    for window, f in enumerate(features):
        assert f.window_index == window and f.sentence_index == 0
        covered = [w for w in f.word_ids if w >= 0]
        predicted += covered
        used = sum(pieces[w] for w in covered)
        assert sum(f.input_mask) == used + 2 <= 9  # whole words only
        if covered[-1] + 1 < len(words):  # greedy: the next word would not have fit
            assert used + pieces[covered[-1] + 1] > 7
        tokens, label_ids, _, _ = expected_features(
            uncased, words[covered[0]:covered[-1] + 1], tags[covered[0]:covered[-1] + 1], 9)
        assert uncased.convert_ids_to_tokens(f.input_ids[:len(tokens)]) == tokens
        assert [label_ids[t] for t in range(9) if f.word_ids[t] >= 0] == [
            LABELS.index(tags[w]) for w in covered]
        assert f.first_word == covered[0]
    assert predicted == list(range(len(words)))  # each word exactly once, in order
    assert len(features) == 9


def test_words_too_long_or_without_pieces_are_still_predicted(uncased):
    # "Johanson" is 2 pieces; a window of max_seq_length 3 holds 1. "\ufeff" has no pieces.
    features = conll.convert_sentence(sentence(["Johanson", "\ufeff", "in"]), LABELS, 3, uncased)
    assert [uncased.convert_ids_to_tokens(f.input_ids) for f in features] == [
        ["[CLS]", "johan", "[SEP]"], ["[CLS]", "[UNK]", "[SEP]"], ["[CLS]", "in", "[SEP]"]]
    assert [f.word_ids for f in features] == [[-1, 0, -1], [-1, 1, -1], [-1, 2, -1]]
    with pytest.raises(ValueError, match="max_seq_length must be at least 3"):
        conll.convert_sentence(sentence(["in"]), LABELS, 2, uncased)
    with pytest.raises(ValueError, match=r"^line 8: tag 'B-DATE' is not one of O, B-PER"):
        conll.convert_sentence(sentence(["in", "May"], ["O", "B-DATE"], line=7), LABELS, 8,
                               uncased)
    assert conll.convert_sentence(sentence([]), LABELS, 8, uncased) == []


SPEC = {"input_ids": tf.io.FixedLenFeature([12], tf.int64),
        "input_mask": tf.io.FixedLenFeature([12], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([12], tf.int64),
        "label_ids": tf.io.FixedLenFeature([12], tf.int64),
        "label_weights": tf.io.FixedLenFeature([12], tf.float32),
        "sentence_index": tf.io.FixedLenFeature([], tf.int64),
        "first_word": tf.io.FixedLenFeature([], tf.int64)}


def read_records(path):
    records = list(tf.data.TFRecordDataset(path).batch(1000).map(
        lambda r: tf.io.parse_example(r, SPEC)))
    return {key: value.numpy() for key, value in records[0].items()} if records else {}


def test_records_map_back_to_every_word(tmp_path, uncased, monkeypatch):
    """A reader's view: tags taken from label_ids at weighted positions give each sentence's
    gold tags back, across windows and across the writer's chunks."""
    monkeypatch.setattr(conll, "_CHUNK", 2)  # sentence_index must count across chunks
    sentences = conll.read_conll(write(tmp_path, SAMPLE))
    sentences.append(sentence(["John", "Johanson", "in", "1996-08-22"] * 2,
                              ["B-PER", "I-PER", "O", "O"] * 2))
    path = str(tmp_path / "out" / "sample.tf_record")
    assert conll.write_tfrecord(sentences, LABELS, 12, uncased, path, pad_to_multiple=4) == 6
    records = read_records(path)
    assert len(records["input_ids"]) == 8
    features = conll.convert_sentences(sentences, LABELS, 12, uncased)
    for key in ("input_ids", "input_mask", "segment_ids", "label_ids", "label_weights"):
        np.testing.assert_array_equal(records[key][:6], [getattr(f, key) for f in features])
    for key in ("input_ids", "input_mask", "label_weights", "sentence_index", "first_word"):
        assert not records[key][6:].any()  # padding records weigh nothing
    np.testing.assert_array_equal(records["sentence_index"][:6], [0, 1, 2, 3, 4, 4])
    np.testing.assert_array_equal(records["first_word"][:6], [0, 0, 0, 0, 0, 5])

    decoded = [[None] * len(s.words) for s in sentences]
    for labels, weights, index, first in zip(records["label_ids"], records["label_weights"],
                                             records["sentence_index"], records["first_word"]):
        for k, position in enumerate(np.flatnonzero(weights)):
            assert decoded[index][first + k] is None
            decoded[index][first + k] = LABELS[labels[position]]
    assert decoded == [list(s.tags) for s in sentences]


def test_a_failed_write_leaves_no_file(tmp_path, uncased):
    bad = [sentence(["in"]), sentence(["May"], ["B-DATE"])]
    with pytest.raises(ValueError, match="tag 'B-DATE'"):
        conll.write_tfrecord(bad, LABELS, 8, uncased, str(tmp_path / "out.tf_record"))
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="pad_to_multiple must be at least 1"):
        conll.write_tfrecord(bad, LABELS, 8, uncased, str(tmp_path / "out.tf_record"), 0)


def test_cached_records_are_reused_until_a_setting_changes(tmp_path, uncased):
    data_file, out = write(tmp_path, SAMPLE, "eng.testa"), str(tmp_path / "out")

    def cached(max_seq_length=16, pad_to_multiple=1):
        return conll.cached_tfrecord(data_file, max_seq_length, uncased, out,
                                     pad_to_multiple=pad_to_multiple)

    first = cached()
    assert first == record_cache.CachedRecords(
        os.path.join(out, "eng.testa.tf_record"),
        {"data_file": data_file, "num_sentences": 4, "num_features": 4, "num_records": 4},
        reused=False)
    made = os.stat(first.path).st_mtime_ns
    assert cached() == dataclasses.replace(first, reused=True)
    assert os.stat(first.path).st_mtime_ns == made
    with open(first.path + ".json", encoding="utf-8") as f:
        key = json.load(f)["key"]
    assert key["labels"] == list(LABELS) and key["max_seq_length"] == 16
    assert key["do_lower_case"] is True and len(key["data_sha256"]) == 64

    short = cached(max_seq_length=5)  # 3 pieces a window: 2 + 2 + 1 + 2 windows
    assert (short.facts["num_features"], short.facts["num_records"], short.reused) == (
        7, 7, False)
    padded = cached(max_seq_length=5, pad_to_multiple=4)
    assert (padded.facts["num_features"], padded.facts["num_records"], padded.reused) == (
        7, 8, False)

    write(tmp_path, SAMPLE[:8], "eng.testa")  # the data changes
    changed = cached(max_seq_length=5, pad_to_multiple=4)
    assert (changed.facts["num_sentences"], changed.facts["num_features"], changed.reused) == (
        1, 2, False)
    assert sorted(os.listdir(out)) == ["eng.testa.tf_record", "eng.testa.tf_record.json"]
    with pytest.raises(conll.ConllError, match="eng.testb: no such file"):
        conll.cached_tfrecord(str(tmp_path / "eng.testb"), 16, uncased, out)



# ---- WikiANN (XTREME's PAN-X): "<language>:<word><TAB><tag>" lines ------------------------------

# Six sentences in several scripts: runs of blank lines, a whitespace-only line, trailing spaces,
# a sentence that switches language, a ":" inside a word, a code with subtags, "simple", an
# entity starting with I- (read as B-).
WIKIANN = [
    "en:Barack\tB-PER",          # 1
    "en:Obama\tI-PER",
    "en:visited\tO",
    "en:New\tB-LOC",
    "en:York\tI-LOC",
    "en:.\tO",
    "",
    "zh:北京大学\tB-ORG",         # 8
    "zh:位于\tO",
    "zh:北京\tB-LOC",
    "",
    "",
    "ar:جامعة\tB-ORG",           # 13
    "ar:القاهرة\tI-ORG",
    "ar:في\tO",
    "ar:مصر\tB-LOC",
    " \t",
    "hi:नरेन्द्र\tB-PER",          # 18
    "hi:मोदी\tI-PER",
    "",
    "ja:東京\tB-LOC",            # 21
    "ru:Москва\tB-LOC",
    "ru:и\tO",
    "el:Αθήνα\tB-LOC  ",
    "",
    "en:Re:Zero\tO",             # 26
    "zh-min-nan:Tâi-oân\tI-LOC",
    "simple:Paris\tB-LOC",
]


def test_wikiann_words_lose_their_language_prefix_in_every_script(tmp_path):
    path = tmp_path / "train"
    # Windows line ends and a byte-order mark, as a file saved elsewhere may have; no final
    # newline.
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(WIKIANN).encode("utf-8"))
    sentences = conll.read_wikiann(str(path))
    assert [(s.words, s.tags, s.document, s.line) for s in sentences] == [
        (("Barack", "Obama", "visited", "New", "York", "."),
         ("B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O"), 0, 1),
        (("北京大学", "位于", "北京"), ("B-ORG", "O", "B-LOC"), 0, 8),
        (("جامعة", "القاهرة", "في", "مصر"), ("B-ORG", "I-ORG", "O", "B-LOC"), 0, 13),
        (("नरेन्द्र", "मोदी"), ("B-PER", "I-PER"), 0, 18),
        (("東京", "Москва", "и", "Αθήνα"), ("B-LOC", "B-LOC", "O", "B-LOC"), 0, 21),
        (("Re:Zero", "Tâi-oân", "Paris"), ("O", "B-LOC", "B-LOC"), 0, 26),
    ]
    entities = [[(chunk.type, " ".join(s.words[chunk.start:chunk.end]))
                 for chunk in get_chunks(s.tags)] for s in sentences]
    assert entities == [
        [("PER", "Barack Obama"), ("LOC", "New York")],
        [("ORG", "北京大学"), ("LOC", "北京")],
        [("ORG", "جامعة القاهرة"), ("LOC", "مصر")],
        [("PER", "नरेन्द्र मोदी")],
        [("LOC", "東京"), ("LOC", "Москва"), ("LOC", "Αθήνα")],
        [("LOC", "Tâi-oân"), ("LOC", "Paris")],
    ]
    assert conll.READERS["panx"] is conll.read_wikiann


@pytest.mark.parametrize("lines, message", [
    (["en:Paris B-LOC"], r"/bad:1: 0 tabs, expected one: <language>:<word><TAB><tag>$"),
    (["en:a\tO", "en:Paris\tB-LOC\tPER"], r"/bad:2: 2 tabs, expected one"),
    (["Paris\tB-LOC"], r"/bad:1: 'Paris' does not start with a language code and ':' "
                       r"\(as in en:Paris\)$"),
    (["EN:Paris\tB-LOC"], r"/bad:1: 'EN:Paris' does not start with a language code"),
    (["en:a\tO", "", "12:30\tO"], r"/bad:3: '12:30' does not start with a language code"),
    (["http://example.com\tO"], r"/bad:1: 'http://example.com' does not start with a language"),
    (["en:\tO"], r"/bad:1: no word after en:$"),
    (["en:a\tO", "", "en:Reuters\tB-MISC"],
     r"/bad:3: tag 'B-MISC' is not one of O, B-PER, I-PER, B-ORG, I-ORG, B-LOC, I-LOC$"),
    (["de:Köln\tB-Loc"], r"/bad:1: tag 'B-Loc' is not one of"),
    (["", " ", ""], r"/bad: no sentences$"),
])
def test_bad_wikiann_lines_are_named_by_file_and_line(tmp_path, lines, message):
    with pytest.raises(conll.ConllError, match=message):
        conll.read_wikiann(write(tmp_path, lines, "bad", end="\n"))


def test_a_wikiann_words_tag_is_on_its_first_piece_whatever_its_script(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "Barack", "be",
                                "##such", "##te", "北", "京", "大", "学", "Москва", "हि",
                                "##न्दी"]) + "\n", encoding="utf-8")
    tokenizer = FullTokenizer(str(vocab), do_lower_case=False)
    sentences = conll.read_wikiann(write(tmp_path, [
        "en:Barack\tB-PER", "en:Obama\tI-PER", "de:besuchte\tO", "zh:北京大学\tB-ORG",
        "ru:Москва\tB-LOC", "hi:हिन्दी\tO"], "dev"))
    [features] = conll.convert_sentences(sentences, PANX_LABELS, 16, tokenizer)
    # Each CJK ideograph is a piece: the four of 北京大学 are one word, tagged on the first.
    assert tokenizer.convert_ids_to_tokens(features.input_ids[:13]) == [
        "[CLS]", "Barack", "[UNK]", "be", "##such", "##te", "北", "京", "大", "学", "Москва",
        "हि", "##न्दी"]
    assert features.word_ids[:14] == [-1, 0, 1, 2, -1, -1, 3, -1, -1, -1, 4, 5, -1, -1]
    assert [PANX_LABELS[features.label_ids[t]] for t in (1, 2, 3, 6, 10, 11)] == [
        "B-PER", "I-PER", "O", "B-ORG", "B-LOC", "O"]
