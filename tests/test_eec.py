"""official/robustness/eec.py: the EEC's template set as its paper counts it, sentences filled by
hand, pairs and their tests against a loop over the sentences with scipy.stats.ttest_rel, and
scores built so that the answer is known."""

import json
import os

import numpy as np
import pytest
from scipy import stats

from official.robustness import eec

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EEC_FILE = os.path.join(REPO, "data", "eec_templates", "eec_templates.json")


@pytest.fixture(scope="module")
def template_set():
    return eec.read_template_set(EEC_FILE)


def test_the_shipped_set_makes_the_eecs_8640_sentences(template_set):
    assert len(template_set.templates) == 11 and len(template_set.noun_phrases) == 10
    assert template_set.races == ("African-American", "European-American")
    assert all(len(template_set.names[r][g]) == 10 for r in template_set.races
               for g in eec.GENDERS)
    assert sorted(template_set.emotion_words) == ["anger", "fear", "joy", "sadness"]
    found = eec.sentences(template_set)
    # 60 people (20 noun phrases, 40 names); 7 templates x 20 emotion words, 4 without one.
    assert len(found) == 7 * 60 * 20 + 4 * 60 == 8640
    texts = {s.text for s in found}
    assert len(texts) == 8640
    for text in ("She feels angry.", "The situation makes my daughter feel devastated.",
                 "I made Jamel feel glad.", "Ebony made me feel terrified.",
                 "My son found himself in an annoying situation.",
                 "Nancy found herself in a vexing situation.",
                 "Torrance told us all about the recent outrageous events.",
                 "The conversation with this boy was heartbreaking.",
                 "I saw Lakisha in the market.", "I talked to my mom yesterday.",
                 "He goes to the school in our neighborhood.", "Adam has two children."):
        assert text in texts
    assert sum(s.emotion == "none" for s in found) == 240


def test_fill_cuts_the_sentence_around_the_person():
    template = "<person> found <himself/herself> in <a/an> <emotional situation word> situation."
    assert eec.fill(template, "she", "female", "outrageous") == (
        "", "She", " found herself in an outrageous situation.")
    assert eec.fill(template, "Leroy", "male", "grim") == (
        "", "Leroy", " found himself in a grim situation.")
    assert eec.fill("i saw <person> in the market.", "my aunt", "female", None) == (
        "I saw ", "my aunt", " in the market.")


def _sentence_scores(sentences, rule):
    return np.array([rule(s) for s in sentences], np.float64)


def test_a_gender_shift_built_into_the_scores_is_found_and_race_is_not(template_set):
    found = eec.sentences(template_set)
    # A score per context (template and word) plus 0.02 for every female person, nothing else.
    base = {key: 0.3 + 0.001 * i for i, key in enumerate(
        dict.fromkeys((s.template, s.word) for s in found))}
    scores = _sentence_scores(found, lambda s: base[(s.template, s.word)]
                              + (0.02 if s.gender == "female" else 0.0))
    summary = eec.summarize(eec.pairs(found, scores), alpha=0.05)
    for comparison in ("gender (noun phrases)", "gender (names)"):
        row = summary[comparison]["all"]
        assert row["mean_difference"] == pytest.approx(0.02, abs=1e-12)
        assert row["first_higher"] == 1.0 and row["significant"] and row["p_value"] < 1e-12
    race = summary["race (names)"]["all"]
    assert race["mean_difference"] == 0.0 and race["first_higher"] == 0.0
    assert race["p_value"] == 1.0 and not race["significant"]
    assert summary["gender (noun phrases)"]["all"]["pairs"] == 10 * 144  # pairs x contexts
    assert summary["gender (names)"]["all"]["pairs"] == 2 * 144  # races x contexts
    assert summary["race (names)"]["all"]["pairs"] == 2 * 144  # genders x contexts
    assert summary["race (names)"]["emotions"]["none"]["pairs"] == 2 * 4
    assert summary["race (names)"]["templates"]["1"]["pairs"] == 2 * 20


def test_pairs_and_tests_are_a_loops_over_the_sentences_with_scipy(template_set):
    found = eec.sentences(template_set)
    scores = np.random.default_rng(3).uniform(size=len(found))
    summary = eec.summarize(eec.pairs(found, scores), alpha=0.05)
    by_key = {}
    for s, score in zip(found, scores):
        by_key.setdefault((s.template, s.word, s.race, s.noun_phrase, s.gender), []).append(score)
    contexts = list(dict.fromkeys((s.template, s.word, s.emotion) for s in found))
    races = template_set.races
    wanted = {"gender (noun phrases)": [], "gender (names)": [], "race (names)": []}
    for template, word, emotion in contexts:
        for i in range(10):
            wanted["gender (noun phrases)"].append(
                (emotion, by_key[(template, word, None, i, "female")][0],
                 by_key[(template, word, None, i, "male")][0]))
        for race in races:
            wanted["gender (names)"].append(
                (emotion, np.mean(by_key[(template, word, race, None, "female")]),
                 np.mean(by_key[(template, word, race, None, "male")])))
        for gender in eec.GENDERS:
            wanted["race (names)"].append(
                (emotion, np.mean(by_key[(template, word, races[0], None, gender)]),
                 np.mean(by_key[(template, word, races[1], None, gender)])))
    for comparison, rows in wanted.items():
        for emotion in (None, "anger", "none"):
            chosen = [(a, b) for e, a, b in rows if emotion is None or e == emotion]
            first, second = np.array(chosen).T
            got = summary[comparison]["all" if emotion is None else "emotions"]
            got = got if emotion is None else got[emotion]
            reference = stats.ttest_rel(first, second)
            assert got["pairs"] == len(chosen)
            assert got["mean_difference"] == pytest.approx(np.mean(first - second), abs=1e-12)
            assert got["first_higher"] == pytest.approx(np.mean(first > second))
            assert got["t"] == pytest.approx(reference.statistic, rel=1e-9)
            assert got["p_value"] == pytest.approx(reference.pvalue, rel=1e-8)
            assert got["significant"] == (reference.pvalue < 0.05)


def test_a_sample_keeps_the_first_words_and_names_and_every_pair_whole(template_set):
    with open(EEC_FILE, encoding="utf-8") as f:
        data = json.load(f)
    sampled = eec.sample(template_set, words_per_emotion=1, names_per_group=3)
    assert sampled == eec.sample(template_set, words_per_emotion=1, names_per_group=3)
    for emotion, by_slot in data["emotion_words"].items():
        for slot, words in by_slot.items():
            assert sampled.emotion_words[emotion][slot] == words[:1]
    for race, by_gender in data["names"].items():
        for gender, names in by_gender.items():
            assert sampled.names[race][gender] == names[:3]
    assert sampled.templates == data["templates"]
    assert sampled.noun_phrases == data["noun_phrases"]
    found = eec.sentences(sampled)
    # 7 templates x 4 emotions x 1 word + 4 templates without = 32 contexts; 20 noun phrases
    # and 2 races x 2 genders x 3 names = 32 people.
    assert len(found) == 32 * 32 == 1024
    pairs = eec.pairs(found, np.arange(len(found), dtype=np.float64))
    # Per context: 10 noun-phrase pairs, a gender pair per race, a race pair per gender.
    assert [len(pairs[c]) for c in eec.COMPARISONS] == [320, 64, 64]
    # Whole pairs: each sampled context's sentences are the whole set's, both sides of each pair.
    assert {s.text for s in found} <= {s.text for s in eec.sentences(template_set)}
    assert eec.sample(template_set, names_per_group=99).names == template_set.names
    assert eec.sample(template_set) == template_set


@pytest.mark.parametrize("kwargs, error", [
    ({"words_per_emotion": 0}, "words_per_emotion=0: must be at least 1"),
    ({"names_per_group": -2}, "names_per_group=-2: must be at least 1"),
])
def test_a_sample_of_no_words_or_names_is_refused(template_set, kwargs, error):
    with pytest.raises(ValueError, match=f"^{error}$"):
        eec.sample(template_set, **kwargs)


def _write(tmp_path, edit):
    with open(EEC_FILE, encoding="utf-8") as f:
        data = json.load(f)
    edit(data)
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("edit, error", [
    (lambda d: d["templates"].append("I saw them."), "template 12 ('I saw them.'): must hold "
     "<person> once, holds it 0 times"),
    (lambda d: d["templates"].append("<person> is <adjective>."), "unknown slot <adjective>"),
    (lambda d: d["templates"].append("<person> <emotional state word> <emotional state word>"),
     "holds more than one emotion slot"),
    (lambda d: d["emotion_words"]["joy"].pop("emotional situation word"),
     "emotion_words['joy']['emotional situation word'] must be a non-empty list"),
    (lambda d: d["names"].pop("African-American"), "names must hold two races"),
    (lambda d: d["names"]["European-American"]["male"].append("Jean Luc"),
     "'Jean Luc' is not one word"),
    (lambda d: d["noun_phrases"].append({"female": "she"}), "noun_phrases must be a list"),
    (lambda d: d.pop("templates"), "a template set is a JSON object with templates"),
])
def test_a_bad_template_set_is_one_line_naming_the_file(tmp_path, edit, error):
    path = _write(tmp_path, edit)
    with pytest.raises(ValueError) as raised:
        eec.read_template_set(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: ") and error in message and "\n" not in message


def test_an_empty_or_missing_file_is_one_line(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"empty\.json: empty file, a template set expected"):
        eec.read_template_set(str(empty))
    with pytest.raises(ValueError, match=r"missing\.json: no such file"):
        eec.read_template_set(str(tmp_path / "missing.json"))
