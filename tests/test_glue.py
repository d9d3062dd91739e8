"""Tests for data_prep.glue: every task's layout and quirks on small files written here (no header,
byte-order marks, literal quotes, broken QQP rows), the original's processors on the same files,
one-line "file:line" errors, task 20ng's JSON lines, and the TFDS reader on TFDS's mocked data."""

import functools
import gzip
import json
import logging
import os
import types

import numpy as np
import pytest

from data_prep import glue
from data_prep.glue import InputExample
from tests.reference_bert import import_original_script

BOM = "\ufeff"
MRPC_HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
MNLI_PARSES = "(a)\t(b)\t(a)\t(b)"  # the four parse columns before sentence1, sentence2


@functools.cache
@functools.cache
def original_run_classifier() -> types.ModuleType:
    """google-research/bert's run_classifier module (its processors, `convert_single_example`,
    `file_based_convert_examples_to_features`), imported once."""
    return import_original_script("bert.run_classifier")


def write_files(root, files):
    """files: {relative path: text}; written as UTF-8 bytes, exactly (no newline translation)."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return str(root)


def mnli_file(rows, labelled=True):
    """An MNLI file as GLUE ships it: 12 columns in train (label1, gold_label), 10 in test."""
    header = ("index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
              "sentence1_parse\tsentence2_parse\tsentence1\tsentence2")
    lines = [header + ("\tlabel1\tgold_label" if labelled else "")]
    for i, (a, b, label) in enumerate(rows):
        extra = f"\t{label}\t{label}" if labelled else ""
        lines.append(f"{i}\t{i}\t{i}n\tfiction\t{MNLI_PARSES}\t{a}\t{b}{extra}")
    return "\n".join(lines) + "\n"


def xnli_file(rows):
    """xnli.dev.tsv's layout: language, gold_label, four parses, sentence1, sentence2, ids."""
    header = ("language\tgold_label\tsentence1_binary_parse\tsentence2_binary_parse\t"
              "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tpromptID\tpairID")
    return "\n".join([header] + [f"{lang}\t{label}\t{MNLI_PARSES}\t{a}\t{b}\t1\t2"
                                 for lang, a, b, label in rows]) + "\n"


def pawsx_file(rows):
    """A PAWS-X x-final file: a header, then id, sentence1, sentence2, label."""
    return "id\tsentence1\tsentence2\tlabel\n" + "".join(
        f"{i}\t{a}\t{b}\t{label}\n" for i, a, b, label in rows)


# task: (files, {split: expected examples}). Each file has a quirk of the real one.
TASKS = {
    "cola": (
        {"train.tsv": "gj04\t1\t\tOur friends won't buy this analysis.\n"
                      'bc01\t0\t*\t"Who did John see?" asked "Mary.\n',  # quotes are text
         "dev.tsv": "clc95\t1\t\tThe sailors rode the breeze clear of the rocks.\n",
         "test.tsv": "index\tsentence\n0\tBill whistled past the house.\n"},
        {"train": [InputExample("train-0", "Our friends won't buy this analysis.", None, "1"),
                   InputExample("train-1", '"Who did John see?" asked "Mary.', None, "0")],
         "dev": [InputExample("dev-0", "The sailors rode the breeze clear of the rocks.", None,
                              "1")],
         "test": [InputExample("test-1", "Bill whistled past the house.")]}),
    "sst-2": (
        {"train.tsv": "sentence\tlabel\nhide new secretions from the parental units \t0\n",
         "dev.tsv": "sentence\tlabel\nit 's a \"charming\" journey . \t1\n",
         "test.tsv": "index\tsentence\n0\tuneasy mishmash of styles and genres .\n"},
        {"train": [InputExample("train-1", "hide new secretions from the parental units ", None,
                                "0")],
         "dev": [InputExample("dev-1", 'it \'s a "charming" journey . ', None, "1")],
         "test": [InputExample("test-1", "uneasy mishmash of styles and genres .")]}),
    "mrpc": (
        {"train.tsv": BOM + MRPC_HEADER + '1\t702876\t702977\tAmrozi called him " the witness " .'
                      '\tReferring to him as only " the witness " .\n',
         "dev.tsv": BOM + MRPC_HEADER + "0\t1\t2\tHe said so .\tHe did not .\r\n",  # CRLF
         "test.tsv": "index\t#1 ID\t#2 ID\t#1 String\t#2 String\n0\t1\t2\tPCCW 's chief .\tIts "
                     "chief .\n"},
        {"train": [InputExample("train-1", 'Amrozi called him " the witness " .',
                                'Referring to him as only " the witness " .', "1")],
         "dev": [InputExample("dev-1", "He said so .", "He did not .", "0")],
         "test": [InputExample("test-1", "PCCW 's chief .", "Its chief .")]}),
    "sts-b": (
        {"train.tsv": "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\t"
                      "sentence2\tscore\n0\tmain-captions\tMSRvid\t2012test\t0001\tnone\tnone\t"
                      "A plane is taking off.\tAn air plane is taking off.\t5.000\n",
         "dev.tsv": "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\t"
                    "sentence2\tscore\n0\tmain-captions\tMSRvid\t2012test\t0000\tnone\tnone\t"
                    "A man with a hard hat is dancing.\tA man is dancing.\t3.800\n",
         "test.tsv": "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\t"
                     "sentence2\n0\tmain-captions\tMSRvid\t2012test\t0024\tnone\tnone\t"
                     "A girl is styling her hair.\tA girl is brushing her hair.\n"},
        {"train": [InputExample("train-1", "A plane is taking off.",
                                "An air plane is taking off.", "5.000")],
         "dev": [InputExample("dev-1", "A man with a hard hat is dancing.", "A man is dancing.",
                              "3.800")],
         "test": [InputExample("test-1", "A girl is styling her hair.",
                               "A girl is brushing her hair.")]}),
    "qqp": (
        # Row 1's first question holds a newline: its halves (lines 3 and 4) are skipped.
        {"train.tsv": "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
                      '0\t1\t2\tWhat is "this"?\tWhat\'s this?\t0\n'
                      "1\t3\t4\tHow do I\nlearn?\tHow to learn?\t1\n"
                      "2\t5\t6\tWhy?\tWhy not?\t1\n",
         "dev.tsv": "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n7\t8\t9\tA?\tB?\t1\n",
         "test.tsv": "id\tquestion1\tquestion2\n0\tC?\tD?\n"},
        {"train": [InputExample("train-1", 'What is "this"?', "What's this?", "0"),
                   InputExample("train-4", "Why?", "Why not?", "1")],
         "dev": [InputExample("dev-1", "A?", "B?", "1")],
         "test": [InputExample("test-1", "C?", "D?")]}),
    "mnli": (
        {"train.tsv": mnli_file([("A man eats.", "A person eats.", "entailment")]),
         "dev_matched.tsv": mnli_file([("It rains.", "It is dry.", "contradiction")]),
         "dev_mismatched.tsv": mnli_file([("Mismatched.", "Other.", "neutral")]),
         "test_matched.tsv": mnli_file([("Test m.", "Hyp m.", None)], labelled=False),
         "test_mismatched.tsv": mnli_file([("Test mm.", "Hyp mm.", None)], labelled=False)},
        {"train": [InputExample("train-1", "A man eats.", "A person eats.", "entailment")],
         "dev": [InputExample("dev-1", "It rains.", "It is dry.", "contradiction")],
         "test": [InputExample("test-1", "Test m.", "Hyp m.")]}),
    "qnli": (
        {"train.tsv": "index\tquestion\tsentence\tlabel\n0\tWhat came?\tThe \"new\" law came.\t"
                      "entailment\n",
         "dev.tsv": "index\tquestion\tsentence\tlabel\n0\tWho?\tNobody.\tnot_entailment\n",
         "test.tsv": "index\tquestion\tsentence\n0\tWhere?\tHere.\n"},
        {"train": [InputExample("train-1", "What came?", 'The "new" law came.', "entailment")],
         "dev": [InputExample("dev-1", "Who?", "Nobody.", "not_entailment")],
         "test": [InputExample("test-1", "Where?", "Here.")]}),
    "rte": (
        {"train.tsv": "index\tsentence1\tsentence2\tlabel\n0\tNo weapons.\tWeapons found.\t"
                      "not_entailment\n",
         "dev.tsv": "index\tsentence1\tsentence2\tlabel\n0\tA.\tB.\tentailment\n",
         "test.tsv": "index\tsentence1\tsentence2\n0\tC.\tD.\n"},
        {"train": [InputExample("train-1", "No weapons.", "Weapons found.", "not_entailment")],
         "dev": [InputExample("dev-1", "A.", "B.", "entailment")],
         "test": [InputExample("test-1", "C.", "D.")]}),
    "wnli": (
        {"train.tsv": "index\tsentence1\tsentence2\tlabel\n0\tThe drain is clogged.\tIt is.\t1\n",
         "dev.tsv": "index\tsentence1\tsentence2\tlabel\n0\tA.\tB.\t0\n",
         "test.tsv": "index\tsentence1\tsentence2\n0\tC.\tD.\n"},
        {"train": [InputExample("train-1", "The drain is clogged.", "It is.", "1")],
         "dev": [InputExample("dev-1", "A.", "B.", "0")],
         "test": [InputExample("test-1", "C.", "D.")]}),
    "ax": (
        {"diagnostic.tsv": "index\tsentence1\tsentence2\n0\tThe cat sat.\tThe cat did not sit.\n"},
        {"test": [InputExample("test-1", "The cat sat.", "The cat did not sit.")]}),
    "xnli": (
        {"multinli/multinli.train.zh.tsv": "premise\thypo\tlabel\n"
                                           "他来了。\t他没来。\tcontradictory\n"
                                           "我饿了。\t我想吃饭。\tneutral\n",
         "xnli.dev.tsv": xnli_file([("en", "Hi.", "Hello.", "entailment"),
                                    ("zh", "你好。", "您好。", "entailment")]),
         "xnli.test.tsv": xnli_file([("zh", "下雨了。", "天很干。", "contradiction"),
                                     ("de", "Es regnet.", "Es ist nass.", "entailment")])},
        {"train": [InputExample("train-1", "他来了。", "他没来。", "contradiction"),
                   InputExample("train-2", "我饿了。", "我想吃饭。", "neutral")],
         "dev": [InputExample("dev-2", "你好。", "您好。", "entailment")],
         "test": [InputExample("test-1", "下雨了。", "天很干。", "contradiction")]}),
    "pawsx": (
        # Quotes are text (the released files are read with quoting off); other languages'
        # folders are not read by task pawsx (English).
        {"en/train.tsv": pawsx_file([(1, 'In 1965 he "retired" .', 'He "retired" in 1965 .',
                                      1)]),
         "en/dev_2k.tsv": pawsx_file([(7, "A is B .", "B is A .", 0)]),
         "en/test_2k.tsv": pawsx_file([(9, "Up .", "Down .", 0), (10, "X .", "X .", 1)]),
         "de/dev_2k.tsv": pawsx_file([(7, "A ist B .", "B ist A .", 0)])},
        {"train": [InputExample("train-1", 'In 1965 he "retired" .', 'He "retired" in 1965 .',
                                "1")],
         "dev": [InputExample("dev-1", "A is B .", "B is A .", "0")],
         "test": [InputExample("test-1", "Up .", "Down .", "0"),
                  InputExample("test-2", "X .", "X .", "1")]}),
}


@pytest.mark.parametrize("task", TASKS)
def test_every_split_reads_with_its_quirks(tmp_path, task):
    files, expected = TASKS[task]
    data_dir = write_files(tmp_path, files)
    processor = glue.get_processor(task)
    assert {split: processor.get_examples(data_dir, split) for split in expected} == expected


def test_mnli_mm_reads_the_mismatched_sets(tmp_path):
    data_dir = write_files(tmp_path, TASKS["mnli"][0])
    processor = glue.get_processor("mnli-mm")
    assert processor.get_dev_examples(data_dir) == [
        InputExample("dev-1", "Mismatched.", "Other.", "neutral")]
    assert processor.get_test_examples(data_dir) == [InputExample("test-1", "Test mm.", "Hyp mm.")]
    assert processor.get_train_examples(data_dir) == TASKS["mnli"][1]["train"]


def test_qqp_counts_the_rows_it_skips(tmp_path, caplog):
    data_dir = write_files(tmp_path, TASKS["qqp"][0])
    with caplog.at_level(logging.WARNING):
        glue.get_processor("qqp").get_train_examples(data_dir)
    assert "skipped 2 rows without the header's 6 columns (lines 3, 4)" in caplog.text


@pytest.mark.parametrize("task,original_class", [
    ("cola", "ColaProcessor"), ("mrpc", "MrpcProcessor"), ("mnli", "MnliProcessor"),
    ("xnli", "XnliProcessor")])
def test_same_examples_as_the_original_processors(tmp_path, task, original_class):
    """Same texts and labels as google-research/bert's processors on the same files. The
    original gives test examples a placeholder label, its list's first; here they have None."""
    files, expected = TASKS[task]
    data_dir = write_files(tmp_path, files)
    original = getattr(original_run_classifier(), original_class)()
    placeholder = original.get_labels()[0]
    for split in ("train", "dev") + (("test",) if task != "xnli" else ()):
        theirs = getattr(original, f"get_{split}_examples")(data_dir)
        ours = glue.get_processor(task).get_examples(data_dir, split)
        assert [(e.text_a, e.text_b, e.label) for e in ours] == [
            (e.text_a, e.text_b, None if split == "test" else e.label) for e in theirs]
        assert split != "test" or {e.label for e in theirs} == {placeholder}
        if task != "mnli":  # The original's MNLI ids are the file's index column.
            assert [e.guid for e in ours] == [e.guid for e in theirs]
    assert glue.get_processor(task).get_labels() == original.get_labels()


def test_labels_registry_and_submission_files():
    assert glue.get_processor("MRPC") is glue.PROCESSORS["mrpc"]
    assert glue.get_processor("sst2") is glue.get_processor("SST-2")
    assert glue.get_processor("stsb") is glue.get_processor("sts-b")
    assert glue.get_processor("cola").get_labels() == ["0", "1"]
    assert glue.get_processor("mnli").get_labels() == ["contradiction", "entailment", "neutral"]
    assert glue.get_processor("qnli").get_labels() == ["entailment", "not_entailment"]
    sts_b = glue.get_processor("sts-b")
    assert sts_b.is_regression and sts_b.get_labels() is None
    assert not glue.get_processor("qqp").is_regression
    names = {task: glue.submission_file(task) for task in glue.PROCESSORS
             if task not in glue.LANGUAGE_TASKS}
    assert sorted(set(names.values())) == sorted(
        ["CoLA.tsv", "SST-2.tsv", "MRPC.tsv", "STS-B.tsv", "QQP.tsv", "MNLI-m.tsv", "MNLI-mm.tsv",
         "QNLI.tsv", "RTE.tsv", "WNLI.tsv", "AX.tsv"])
    assert names["mnli-mm"] == "MNLI-mm.tsv"
    with pytest.raises(ValueError, match="not part of GLUE"):
        glue.submission_file("xnli")
    with pytest.raises(ValueError, match="unknown task 'imdb'; known: cola, sst-2"):
        glue.get_processor("imdb")
    with pytest.raises(ValueError, match="task ax has no split 'train'; it has test"):
        glue.get_processor("ax").get_train_examples("/nowhere")


def test_xnli_reads_another_language(tmp_path):
    data_dir = write_files(tmp_path, TASKS["xnli"][0])
    assert glue.xnli_processor("en").get_dev_examples(data_dir) == [
        InputExample("dev-1", "Hi.", "Hello.", "entailment")]


def test_multilingual_tasks_are_named_with_their_language(tmp_path):
    """"xnli-<language>" and "pawsx-<language>" read that language's rows (XNLI: its rows of the
    shared dev and test files; PAWS-X: its own folder, translated_train.tsv outside English);
    `in_language` turns one into another; bare names keep their language (the original's
    Chinese XNLI, English PAWS-X)."""
    data_dir = write_files(tmp_path, {
        "xnli.dev.tsv": xnli_file([("ar", "إنه يمطر.", "الجو جاف.", "contradiction"),
                                   ("en", "It rains.", "It is dry.", "contradiction"),
                                   ("ru", "Идёт дождь.", "Сухо.", "contradiction"),
                                   ("hi", "बारिश हो रही है।", "मौसम सूखा है।", "contradiction"),
                                   ("ar", "أنا جائع.", "أريد أن آكل.", "neutral")]),
        "multinli/multinli.train.ru.tsv": "premise\thypo\tlabel\nОн пришёл.\tОн здесь.\t"
                                          "entailment\n",
        # A failed machine translation is an empty sentence (PAWS' issue 4): read as released.
        "ko/translated_train.tsv": pawsx_file([(1, "그는 1965년에 은퇴했다 .", "", 1)]),
        "ja/dev_2k.tsv": pawsx_file([(3, "彼は東京に住んでいる。", "NS", 0)]),
        "ja/test_2k.tsv": pawsx_file([(4, "東京に住んでいる。", "彼は東京に住む。", 1)])})
    arabic = glue.get_processor("XNLI-ar")
    assert (arabic.name, arabic.language) == ("xnli-ar", "ar")
    assert arabic.get_dev_examples(data_dir) == [
        InputExample("dev-1", "إنه يمطر.", "الجو جاف.", "contradiction"),
        InputExample("dev-5", "أنا جائع.", "أريد أن آكل.", "neutral")]
    hindi = glue.in_language(arabic, "hi")
    assert hindi.get_dev_examples(data_dir) == [
        InputExample("dev-4", "बारिश हो रही है।", "मौसम सूखा है।", "contradiction")]
    assert glue.in_language(hindi, "ru").get_train_examples(data_dir) == [
        InputExample("train-1", "Он пришёл.", "Он здесь.", "entailment")]
    assert glue.get_processor("xnli").language == "zh"
    english = glue.get_processor("pawsx")
    assert (english.name, english.language, english.get_labels()) == ("pawsx-en", "en",
                                                                      ["0", "1"])
    assert glue.in_language(english, "ko").get_train_examples(data_dir) == [
        InputExample("train-1", "그는 1965년에 은퇴했다 .", "", "1")]
    japanese = glue.get_processor("pawsx-ja")
    assert japanese.get_dev_examples(data_dir) == [
        InputExample("dev-1", "彼は東京に住んでいる。", "NS", "0")]
    assert japanese.get_test_examples(data_dir) == [
        InputExample("test-1", "東京に住んでいる。", "彼は東京に住む。", "1")]


def test_a_language_the_data_lacks_is_one_line_naming_file_and_language(tmp_path):
    data_dir = write_files(tmp_path, TASKS["xnli"][0])
    with pytest.raises(glue.TsvError) as raised:
        glue.get_processor("xnli-sw").get_dev_examples(data_dir)
    assert str(raised.value) == (f"{tmp_path}/xnli.dev.tsv: no rows with language 'sw'; it has "
                                 "en, zh")
    with pytest.raises(glue.TsvError, match=f"^{tmp_path}/sw/dev_2k.tsv: no such file$"):
        glue.get_processor("pawsx-sw").get_dev_examples(data_dir)


def test_only_multilingual_tasks_have_languages():
    with pytest.raises(ValueError, match="^task mrpc has no languages; the multilingual tasks "
                                         "are xnli, pawsx$"):
        glue.in_language(glue.get_processor("mrpc"), "de")
    with pytest.raises(ValueError, match="a language is letters, digits"):
        glue.in_language(glue.get_processor("pawsx"), "../en")
    with pytest.raises(ValueError, match="unknown task 'mrpc-de'; known: .*xnli-<language>, "
                                         "pawsx-<language>$"):
        glue.get_processor("mrpc-de")


@pytest.mark.parametrize("task,name,text,line,message", [
    ("cola", "dev.tsv", "a\t1\t\tFine.\nb\t0\tNo sentence\n", 2, "3 columns, expected at least 4"),
    ("mrpc", "dev.tsv", BOM + MRPC_HEADER + "1\t1\t2\tA\tB\nmaybe\t3\t4\tC\tD\n", 3,
     "label 'maybe' is not one of 0, 1"),
    ("mnli", "train.tsv", mnli_file([("A.", "B.", "contradictory")]), 2,
     "label 'contradictory' is not one of contradiction, entailment, neutral"),
    ("sts-b", "train.tsv", "sentence1\tsentence2\tscore\nA.\tB.\thigh\n", 2,
     "label 'high' is not a number"),
    ("sts-b", "dev.tsv", "sentence1\tsentence2\tscore\nA.\tB.\t3.2\nC.\tD.\tnan\n", 3,
     "label 'nan' is not a finite number"),
    ("sts-b", "train.tsv", "sentence1\tsentence2\tscore\nA.\tB.\t-inf\n", 2,
     "label '-inf' is not a finite number"),
    ("qnli", "dev.tsv", "index\tquestion\tsentence\tgold\n0\tQ\tS\tentailment\n", 1,
     "no column 'label' in the header (index, question, sentence, gold)"),
    ("sst-2", "train.tsv", b"sentence\tlabel\nok \t1\nbad \xff\t0\n", 3,
     "not UTF-8 (byte 4 of the line)"),
    ("rte", "dev.tsv", "", 1, "empty file, expected a header"),
])
def test_errors_name_the_file_and_line(tmp_path, task, name, text, line, message):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    with pytest.raises(glue.TsvError) as raised:
        glue.get_processor(task).get_examples(str(tmp_path), name.split(".")[0])
    assert str(raised.value) == f"{path}:{line}: {message}"
    assert isinstance(raised.value, ValueError)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(glue.TsvError, match=f"^{tmp_path}/dev.tsv: no such file$"):
        glue.get_processor("rte").get_dev_examples(str(tmp_path))


def test_read_tfds_gives_the_tsv_readers_labels():
    """On TFDS's mocked `glue/*` data (random rows of the real features, nothing prepared):
    texts and labels land where the TSV reader puts them, in `idx` order."""
    tfds = pytest.importorskip("tensorflow_datasets")
    with tfds.testing.mock_data(num_examples=6):
        for task, config, tfds_split, keys in [
                ("mrpc", "mrpc", "validation", ("sentence1", "sentence2")),
                ("mnli-mm", "mnli", "validation_mismatched", ("premise", "hypothesis")),
                ("cola", "cola", "train", ("sentence",)),
                ("sts-b", "stsb", "train", ("sentence1", "sentence2"))]:
            split = "train" if tfds_split == "train" else "dev"
            rows = sorted(tfds.as_numpy(tfds.load(f"glue/{config}", split=tfds_split)),
                          key=lambda row: row["idx"])
            examples = glue.read_tfds(task, split, data_dir=None)
            assert [e.guid for e in examples] == [f"{split}-{row['idx']}" for row in rows]
            assert [(e.text_a, e.text_b) for e in examples] == [
                (row[keys[0]].decode(), row[keys[1]].decode() if len(keys) > 1 else None)
                for row in rows]
            expected = {"mrpc": lambda i: "01"[i], "cola": lambda i: "01"[i],
                        "mnli-mm": lambda i: ["entailment", "neutral", "contradiction"][i],
                        "sts-b": lambda x: str(np.float32(x))}[task]
            assert [e.label for e in examples] == [expected(row["label"]) for row in rows]
        assert {e.label for e in glue.read_tfds("mrpc", "test", data_dir=None)} == {None}


def test_tsv_task_reads_its_labels_and_columns_from_data_dir(tmp_path):
    """Task "tsv": labels.txt gives the labels in id order; the header says single or pair."""
    single = write_files(tmp_path / "single", {
        "labels.txt": "milton\nausten\n",
        "train.tsv": "sentence\tlabel\nOf Mans First Disobedience\tmilton\nEmma wept.\tausten\n",
        "dev.tsv": "label\tsentence\nausten\tShe smiled.\n",
        "test.tsv": "sentence\nAnd fruit\n"})
    labelled_test = write_files(tmp_path / "labelled", {
        "labels.txt": "a\nb\n", "test.tsv": "sentence\tlabel\nx\tb\n"})
    assert glue.get_processor("tsv", labelled_test).get_test_examples(labelled_test) == [
        InputExample("test-1", "x", None, "b")]
    processor = glue.get_processor("TSV", single)
    assert processor.get_labels() == ["milton", "austen"]
    assert processor.get_train_examples(single) == [
        InputExample("train-1", "Of Mans First Disobedience", None, "milton"),
        InputExample("train-2", "Emma wept.", None, "austen")]
    assert processor.get_dev_examples(single) == [InputExample("dev-1", "She smiled.", None,
                                                               "austen")]
    assert processor.get_test_examples(single) == [InputExample("test-1", "And fruit")]
    pair = write_files(tmp_path / "pair", {
        "labels.txt": "no\nyes\n",
        "dev.tsv": "sentence1\tsentence2\tlabel\nA cat.\tA pet.\tyes\n"})
    assert glue.get_processor("tsv", pair).get_dev_examples(pair) == [
        InputExample("dev-1", "A cat.", "A pet.", "yes")]


@pytest.mark.parametrize("files,message", [
    ({}, "labels.txt: no such file"),
    ({"labels.txt": "\n"}, "labels.txt: no labels"),
    ({"labels.txt": "a\nb\na\n"}, "labels.txt: labels listed twice: a"),
])
def test_tsv_task_refuses_a_bad_label_list(tmp_path, files, message):
    data_dir = write_files(tmp_path, files)
    with pytest.raises(glue.TsvError, match=f"^{tmp_path}/{message}$"):
        glue.get_processor("tsv", data_dir)


def test_tsv_task_names_the_line_of_an_unknown_label(tmp_path):
    data_dir = write_files(tmp_path, {"labels.txt": "a\nb\n",
                                      "train.tsv": "sentence\tlabel\nx\ta\ny\tc\n"})
    with pytest.raises(glue.TsvError, match=f"^{tmp_path}/train.tsv:3: label 'c' is not one "
                                            "of a, b$"):
        glue.get_processor("tsv", data_dir).get_train_examples(data_dir)
    with pytest.raises(ValueError, match="needs the data_dir"):
        glue.get_processor("tsv")


def post(label, text, id_):
    """One line of 20 Newsgroups' JSON-lines files, written as they are."""
    return json.dumps({"label": label, "text": text, "id": id_}, ensure_ascii=False) + "\n"


def write_newsgroups(root, train, test, compress=True):
    """A task "20ng" data_dir: labels.txt and the posts' files (gzip unless `compress` is
    False)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "labels.txt").write_text("sci.space\nrec.autos\n")
    for split, lines in (("train", train), ("test", test)):
        data = "".join(lines).encode("utf-8")
        if compress:
            (root / f"{split}.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))
        else:
            (root / f"{split}.jsonl").write_bytes(data)
    return str(root)


def test_20ng_reads_whole_posts_with_their_ids_and_labels(tmp_path):
    """The text is the post unchanged (headers, newlines, tabs, a "Newsgroups:"-like line that
    names another group: the label is the record's); dev and test are both the test file."""
    text = ("From: a@b.edu\nSubject: Re: orbits\n\nNewsgroups: rec.autos\n\tLaunch \u00e9t\u00e9"
            " windows\n")
    data_dir = write_newsgroups(tmp_path / "gz", [post("sci.space", text, "train/sci.space/1"),
                                                  "\n",  # a blank line is skipped
                                                  post("rec.autos", "", "train/rec.autos/7")],
                                [post("rec.autos", "Cars.", "test/rec.autos/9")])
    processor = glue.get_processor("20NG", data_dir)
    assert processor.name == "20ng" and not processor.is_pair
    assert processor.get_labels() == ["sci.space", "rec.autos"]
    assert processor.get_train_examples(data_dir) == [
        InputExample("train/sci.space/1", text, None, "sci.space"),
        InputExample("train/rec.autos/7", "", None, "rec.autos")]
    test = [InputExample("test/rec.autos/9", "Cars.", None, "rec.autos")]
    assert processor.get_dev_examples(data_dir) == processor.get_test_examples(data_dir) == test
    assert processor.path(data_dir, "train") == os.path.join(data_dir, "train.jsonl.gz")
    assert processor.path(data_dir, "dev") == processor.path(data_dir, "test") == os.path.join(
        data_dir, "test.jsonl.gz")

    plain = write_newsgroups(tmp_path / "plain", [post("sci.space", text, "train/sci.space/1")],
                             [], compress=False)
    processor = glue.get_processor("20ng", plain)
    assert processor.path(plain, "train") == os.path.join(plain, "train.jsonl")
    assert [e.text_a for e in processor.get_train_examples(plain)] == [text]
    with pytest.raises(glue.TsvError, match=f"^{plain}/test.jsonl: no examples$"):
        processor.get_test_examples(plain)
    with pytest.raises(ValueError, match="task '20ng' needs the data_dir that holds labels.txt"):
        glue.get_processor("20ng")


@pytest.mark.parametrize("line,message", [
    ('{"label": "sci.space", "text": "Hi", "id": "t/2"\n', "not JSON: Expecting ',' delimiter "
                                                          "(column 49)"),
    ('["sci.space", "Hi", "t/2"]\n', "a JSON array, expected an object"),
    ('{"label": "sci.space", "id": "t/2"}\n', "no key 'text' (keys: label, id)"),
    ('{"label": "sci.space", "text": 7, "id": "t/2"}\n', "'text' is a JSON number, expected a "
                                                        "string"),
    ('{"label": "sci.space", "text": "Hi", "id": null}\n', "'id' is a JSON null, expected a "
                                                          "string"),
    (post("misc.forsale", "Hi", "t/2"), "label 'misc.forsale' is not one of sci.space, "
                                        "rec.autos"),
    (post("sci.space", "Hi", "t/1"), "id 't/1' already on line 1"),
    (b'{"label": "sci.space", "text": "\xe9", "id": "t/2"}\n',
     "not UTF-8 (byte 32 of the line)"),
])
def test_20ng_errors_name_the_file_and_line(tmp_path, line, message):
    good = post("sci.space", "Fine.", "t/1").encode("utf-8")
    data_dir = write_newsgroups(tmp_path, [], [])
    path = tmp_path / "train.jsonl.gz"
    path.write_bytes(gzip.compress(good + (line if isinstance(line, bytes) else line.encode())))
    with pytest.raises(glue.TsvError) as raised:
        glue.get_processor("20ng", data_dir).get_train_examples(data_dir)
    assert str(raised.value) == f"{path}:2: {message}"


def test_20ng_refuses_damaged_gzip_files_and_an_ambiguous_folder(tmp_path):
    lines = "".join(post("sci.space", f"Post {i}.", f"t/{i}") for i in range(50)).encode()
    data_dir = write_newsgroups(tmp_path, [], [])
    path = tmp_path / "train.jsonl.gz"
    path.write_bytes(gzip.compress(lines, mtime=0)[:-30])  # cut short
    with pytest.raises(glue.TsvError, match=f"^{path}: damaged gzip data after line \\d+: "):
        glue.get_processor("20ng", data_dir).get_train_examples(data_dir)
    path.write_bytes(lines)  # not gzip at all
    with pytest.raises(glue.TsvError, match=f"^{path}: damaged gzip data after line 0: "
                                            "Not a gzipped file"):
        glue.get_processor("20ng", data_dir).get_train_examples(data_dir)
    (tmp_path / "test.jsonl").write_bytes(lines)
    with pytest.raises(glue.TsvError, match=f"^{tmp_path}: holds both test.jsonl.gz and "
                                            "test.jsonl; keep one$"):
        glue.get_processor("20ng", data_dir)
    (tmp_path / "train.jsonl.gz").unlink()
    (tmp_path / "test.jsonl").unlink()
    with pytest.raises(glue.TsvError, match=f"^{tmp_path}/train.jsonl.gz: no such file$"):
        glue.get_processor("20ng", data_dir).get_train_examples(data_dir)


SCIBERT_SAMPLE = os.path.join(os.path.dirname(__file__), "..", "data", "chemprot_sample")


def test_scibert_files_are_a_task_as_released(tmp_path):
    processor = glue.get_processor("scibert_jsonl", SCIBERT_SAMPLE)
    train = [json.loads(line) for line in open(os.path.join(SCIBERT_SAMPLE, "train.txt"))]
    assert processor.get_labels() == sorted({r["label"] for r in train})
    examples = processor.get_examples(SCIBERT_SAMPLE, "test")
    first = json.loads(open(os.path.join(SCIBERT_SAMPLE, "test.txt")).readline())
    assert examples[0] == InputExample("test-0", first["text"], None, first["label"])
    (tmp_path / "labels.txt").write_text("B\nA\n")
    (tmp_path / "train.txt").write_text('{"text": "x", "label": "A"}\n')
    (tmp_path / "dev.txt").write_text('{"text": "y", "label": "A"}\n{"text": "z", "label": "C"}\n')
    processor = glue.get_processor("scibert_jsonl", str(tmp_path))
    assert processor.get_labels() == ["B", "A"]  # labels.txt's order wins
    with pytest.raises(glue.TsvError,
                       match=f"^{tmp_path}/dev.txt:2: label 'C' is not one of B, A$"):
        processor.get_examples(str(tmp_path), "dev")
