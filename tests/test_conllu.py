"""Tests for data_prep.conllu: UD treebanks read as probing needs them."""

import pytest

from data_prep.conllu import ConlluError, read_conllu

SAMPLE = "data/ud_ewt_sample"


def _write(tmp_path, rows):
    path = tmp_path / "t.conllu"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(path)


def _word(i, form, head, relation="dep", upos="X"):
    return f"{i}\t{form}\t{form}\t{upos}\t{upos}\t_\t{head}\t{relation}\t_\t_"


def test_the_shipped_sample_reads_every_syntactic_word():
    # Counted independently: blank-line blocks, and lines whose first field is an integer.
    for split, expected in (("train", 300), ("dev", 100), ("test", 100)):
        path = f"{SAMPLE}/{split}.conllu"
        text = open(path, encoding="utf-8").read()
        words = sum(1 for line in text.splitlines()
                    if line and not line.startswith("#") and line.split("\t")[0].isdigit())
        sentences = read_conllu(path)
        assert len(sentences) == expected
        assert sum(len(s.words) for s in sentences) == words
        for s in sentences:
            assert len(s.words) == len(s.upos) == len(s.xpos) == len(s.heads) == len(s.relations)
            assert s.heads.count(0) == 1
            assert all(":" not in r for r in s.relations)


def test_multiword_tokens_and_empty_nodes_are_skipped_and_subtypes_dropped(tmp_path):
    path = _write(tmp_path, ["# sent_id = 1", "1-2\tcannot\t_\t_\t_\t_\t_\t_\t_\t_",
                             _word(1, "can", 3, "aux"), _word(2, "not", 3, "advmod"),
                             _word(3, "go", 0, "root"), "3.1\tgo\t_\t_\t_\t_\t_\t_\t_\t_",
                             _word(4, "today", 3, "obl:tmod"), ""])
    [sentence] = read_conllu(path)
    assert sentence.words == ("can", "not", "go", "today")
    assert sentence.heads == (3, 3, 0, 3)
    assert sentence.relations == ("aux", "advmod", "root", "obl")
    assert sentence.line == 3


@pytest.mark.parametrize("rows, message", [
    ([_word(1, "a", 0, "root"), "2\tb\tb\tX\tX\t_\t1\tdep\t_"],
     r"t.conllu:2: 9 tab-separated columns, expected 10"),
    ([_word(1, "a", 0, "root"), _word(3, "b", 1)], r"t.conllu:2: word ID '3', expected 2"),
    ([_word(1, "a", 0, "root"), _word(2, "b", 7)], r"t.conllu:2: HEAD '7' is not 0 or a word"),
    ([_word(1, "a", 0, "root"), _word(2, "b", 0)], r"t.conllu:1: the sentence has 2 roots"),
    ([_word(1, "a", 2), _word(2, "b", 1), _word(3, "c", 0, "root")],
     r"t.conllu:1: the heads of word 1 go round in a cycle"),
    (["# only a comment"], r"t.conllu: no sentences"),
    ([_word(1, "a", 0, "root"), _word(2, "b", 1, upos="NOTAPOS")],
     r"t.conllu:2: UPOS 'NOTAPOS' is not one of UD's 17 universal parts of speech"),
    ([_word(1, "a", 0, "root", upos="noun")], r"t.conllu:1: UPOS 'noun' is not one of UD's 17"),
    ([_word(1, "a", 0, "root"), _word(2, "b", 1, "notarelation:sub")],
     r"t.conllu:2: DEPREL 'notarelation:sub' is not one of UD's 37 universal relations"),
])
def test_bad_files_are_one_line_naming_file_and_line(tmp_path, rows, message):
    with pytest.raises(ConlluError, match=message):
        read_conllu(_write(tmp_path, rows))


def test_missing_file(tmp_path):
    with pytest.raises(ConlluError, match=r"missing.conllu: no such file"):
        read_conllu(str(tmp_path / "missing.conllu"))
