"""Tests for official.robustness.part_of_speech: the rule by hand, and the filter in the attack
with a tagger whose tags are known by construction (a word's tag is looked up in a table, and
"show" is a noun in a text with an article, a verb in one without)."""

import numpy as np

from official.robustness import attack as at
from official.robustness import candidates as cd
from official.robustness import part_of_speech as ps
from official.robustness.text_words import WordText


def test_a_replacement_keeps_the_tag_a_noun_and_a_verb_interchangeable_by_choice():
    assert ps.same_part_of_speech("ADJ", "ADJ")
    assert not ps.same_part_of_speech("ADJ", "ADV")
    assert ps.same_part_of_speech("NOUN", "VERB") and ps.same_part_of_speech("VERB", "NOUN")
    assert not ps.same_part_of_speech("NOUN", "VERB", noun_verb_swap=False)
    assert not ps.same_part_of_speech("NOUN", "PROPN")
    assert not ps.same_part_of_speech(None, "NOUN") and not ps.same_part_of_speech("X", None)


TAGS = {"a": "DET", "good": "ADJ", "fine": "ADJ", "well": "ADV", "movie": "NOUN"}


class Tagger:
    """Each word's tag from TAGS, "show" a NOUN in a text holding "a" and a VERB in another;
    records the texts it tags."""

    def __init__(self):
        self.texts = []

    def __call__(self, texts):
        self.texts += texts
        tagged = []
        for text in texts:
            words = [w.lower() for w in WordText(text).words]
            show = "NOUN" if "a" in words else "VERB"
            tagged.append([show if w == "show" else TAGS.get(w) for w in words])
        return tagged


def victim(texts):
    """Positive (0.9) only while "good" and a noun-like "movie" stay."""
    return np.array([[0.1, 0.9] if "good" in t and "movie" in t else [0.8, 0.2]
                     for t in texts], np.float32)


def test_a_candidate_of_another_tag_is_dropped_before_it_costs_a_query():
    queried = []

    def classify(texts):
        queried.extend(texts)
        return victim(texts)

    tagger = Tagger()
    source = cd.SynonymCandidates([("good", "well"), ("good", "fine")])
    result = at.WordSubstitutionAttack(classify, source, pos_tagger=tagger).run(
        "a good movie", gold=1)
    # "well" is an ADV where "good" was an ADJ: never classified; "fine" (ADJ) flips it.
    assert result.changes == [(1, "good", "fine")]
    assert "a well movie" not in queried and "a fine movie" in queried
    assert tagger.texts[0] == "a good movie"  # the original, tagged once
    assert sorted(tagger.texts[1:]) == ["a fine movie", "a well movie"]


def test_the_tag_is_read_in_the_new_text_and_a_noun_verb_swap_follows_the_setting():
    source = cd.SynonymCandidates([("movie", "show")])
    for swap, status in ((True, at.SUCCEEDED), (False, at.FAILED)):
        # "show" is a NOUN in "a good show": kept whatever the setting.
        result = at.WordSubstitutionAttack(victim, source, at.AttackSettings(
            noun_verb_swap=swap), pos_tagger=Tagger()).run("a good movie", gold=1)
        assert result.status == at.SUCCEEDED and result.perturbed == "a good show"
        # It is a VERB in "good show": kept only with the noun-verb swap.
        result = at.WordSubstitutionAttack(victim, source, at.AttackSettings(
            noun_verb_swap=swap), pos_tagger=Tagger()).run("good movie", gold=1)
        assert result.status == status
