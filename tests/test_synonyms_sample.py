"""Tests for data_prep/synonyms_sample: the pairs of the text's words, antonyms and self-pairs
dropped, sorted and unique (so the shipped sample is reproducible), on a hand case; and the
shipped sample itself has that shape."""

import os

from data_prep.synonyms_sample import sample

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_sample_keeps_pairs_of_the_texts_words_without_antonyms_or_self_pairs():
    synonyms = [("good", "fine"), ("fine", "good"), ("good", "bad"), ("good", "good"),
                ("quick", "fast"), ("good", "fine"), ("fast", "quick")]
    antonyms = {frozenset(("bad", "good"))}
    assert sample(synonyms, antonyms, {"good", "quick"}) == ["good fine", "quick fast"]


def test_the_shipped_sample_is_sorted_unique_lower_case_pairs():
    with open(os.path.join(REPO, "data", "synonyms_sample", "synonyms.txt"),
              encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert len(lines) == 4616 and lines == sorted(set(lines))
    assert all(len(line.split()) == 2 and line.islower() and line.split()[0] != line.split()[1]
               for line in lines)
