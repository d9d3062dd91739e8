"""The Equity Evaluation Corpus's test (Kiritchenko & Mohammad 2018) on a fine-tuned classifier:
does its score of a sentence change when only the person's gender, or only their race, does?

    read_template_set(path) -> TemplateSet
                                    the templates, emotion words, noun-phrase pairs and names
                                    (data/eec_templates/eec_templates.json is the EEC's, written
                                    from its paper)
    fill(template, person, gender, word) -> (before, person, after)
                                    a template's sentence, cut around the person
    sample(template_set, words_per_emotion, names_per_group) -> TemplateSet
                                    a smaller set, its pairs whole (below)
    sentences(template_set) -> [Sentence]
                                    every template x person x emotion word (the EEC's 8,640)
    pairs(sentences, scores) -> {comparison: [Pair]}
                                    the sentence pairs that differ in gender alone or race alone
    summarize(pairs, alpha) -> dict per comparison: overall, per emotion, per template
    markdown(summary) -> str        the report's tables

Sentences. A template holds `<person>` once, at most one emotion slot (`<emotional state word>`
or `<emotional situation word>`: each emotion's words of that kind fill it in turn; a template
without one is read once, its emotion "none"), and may hold `<himself/herself>` (filled by the
person's gender) and `<a/an>` ("an" before a vowel letter). The sentence's first letter is
capitalised ("she feels sad." -> "She feels sad.").

Pairs (first - second: female - male, and the file's first race - its second,
African-American - European-American in the EEC's file). The EEC compares sentences that
differ only in the gender word or only in the name's race:
  - gender, noun phrases: each noun-phrase pair ("she" / "he", "my daughter" / "my son", ...)
    in the same template with the same emotion word;
  - gender, names: per template, emotion word and race, the mean score of that race's female
    names against that of its male names;
  - race, names: per template, emotion word and gender, the mean score of the first race's
    names of that gender against the second's.
Names are averaged within their group because they do not pair one to one, as the EEC's
authors compare groups of names.

A sample (`sample`) keeps each emotion's first words of each slot and each race's first names
of each gender, in the file's order (the same set on every run), and every noun-phrase pair:
every context kept still holds both genders and both races with as many names each, so each
comparison's pairs stay whole and the paired t-test stays a paired test, over fewer pairs.
With the EEC's set, 1 word an emotion and 3 names a group make 32 contexts x 32 people = 1,024
sentences instead of 8,640.

Each comparison's pairs are tested by the paired t-test (official/robustness/paired_t_test.py,
two-sided; the EEC's authors used paired two-sample t-tests at alpha 0.05), overall, per
emotion and per template, with the mean difference and the share of pairs whose first sentence
scored higher.

This module loads no TensorFlow: the entry point reads the template set before it loads, and
the scores come from any function of texts (a classifier export's probability of one class in
run_scripts/bias_report.py).
"""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np

from official.robustness.paired_t_test import paired_t_test

PERSON = "<person>"
EMOTION_SLOTS = ("<emotional state word>", "<emotional situation word>")
REFLEXIVE = "<himself/herself>"
ARTICLE = "<a/an>"
SLOTS = (PERSON, *EMOTION_SLOTS, REFLEXIVE, ARTICLE)
GENDERS = ("female", "male")
REFLEXIVES = {"female": "herself", "male": "himself"}
NO_EMOTION = "none"
COMPARISONS = ("gender (noun phrases)", "gender (names)", "race (names)")
_SLOT = re.compile(r"<[^<>]*>")

# What the two papers found, beside which a report's figures are read. Only what was checked in
# the references read is stated; what was not found is said to be missing, never given from
# memory.
PUBLISHED = {
    "eec": {
        "source": "Kiritchenko & Mohammad (2018), Examining Gender and Race Bias in Two Hundred "
                  "Sentiment Analysis Systems, *SEM 2018 (arXiv:1805.04508)",
        "systems": 219,  # abstract: the SemEval-2018 Task 1 'Affect in Tweets' submissions
        "sentences": 8640,  # abstract
        "test": "paired two-sample t-test, alpha 0.05, per system and task",
        "finding": "abstract: several of the systems show statistically significant bias; that "
                   "is, they consistently provide slightly higher sentiment intensity "
                   "predictions for one race or one gender",
        "per_task_shares": "not found: the share of systems with a significant gender or race "
                           "difference on each task (anger, fear, joy, sadness, valence) is in "
                           "the paper's section 5 tables, which the references read here did "
                           "not hold",
    },
    "bert": {
        "source": "Bhardwaj, Majumder & Poria (2021), Investigating Gender Bias in BERT, "
                  "Cognitive Computation 13",
        "finding": "BERT fine-tuned on SemEval-2018's emotion and sentiment intensity tasks and "
                   "scored on the EEC shows gender bias in its predictions",
        "figures": "not found in the references read here",
    },
}


@dataclasses.dataclass(frozen=True)
class TemplateSet:
    """A template set file (the module docstring), checked."""
    path: str
    templates: list[str]
    emotion_words: dict[str, dict[str, list[str]]]  # emotion -> slot name (no <>) -> words
    noun_phrases: list[dict[str, str]]  # gender -> noun phrase, one pair per entry
    names: dict[str, dict[str, list[str]]]  # race -> gender -> names; two races

    @property
    def races(self) -> tuple[str, str]:
        first, second = self.names
        return first, second


@dataclasses.dataclass(frozen=True)
class Sentence:
    """One filled template: its text cut around the person (`fill`), template (1-based),
    emotion ("none" without a word), word (None without), gender and race (None for a noun
    phrase) and, for a noun phrase, the index of its pair."""
    before: str
    person: str
    after: str
    template: int
    emotion: str
    word: str | None
    gender: str
    race: str | None
    noun_phrase: int | None

    @property
    def text(self) -> str:
        return self.before + self.person + self.after


@dataclasses.dataclass(frozen=True)
class Pair:
    """Two scores whose sentences differ in gender alone or race alone, of one template and
    emotion."""
    template: int
    emotion: str
    first: float
    second: float


def _texts(value, where: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(
            isinstance(t, str) and t.strip() for t in value):
        raise ValueError(f"{where} must be a non-empty list of non-empty texts")
    return value


def _check_template(text: str, index: int, path: str) -> None:
    where = f"{path}: template {index} ({text!r})"
    for slot in _SLOT.findall(text):
        if slot not in SLOTS:
            raise ValueError(f"{where}: unknown slot {slot}; the slots are {', '.join(SLOTS)}")
    if text.count(PERSON) != 1:
        raise ValueError(f"{where}: must hold {PERSON} once, holds it {text.count(PERSON)} "
                         "times")
    if sum(text.count(slot) for slot in EMOTION_SLOTS) > 1:
        raise ValueError(f"{where}: holds more than one emotion slot")
    if ARTICLE in text and not re.search(re.escape(ARTICLE) + r" \S", text):
        raise ValueError(f"{where}: {ARTICLE} must stand before a word")


def read_template_set(path: str) -> TemplateSet:
    """The template set file at `path`.

    Raises:
      ValueError: one line naming the file and what is wrong (no such file, empty, not one JSON
        object, a part missing, a template without <person> or with an unknown slot, an emotion
        without the words a template's slot needs, a noun-phrase pair without both genders,
        names not under two races with female and male lists).
    """
    try:
        with open(path, encoding="utf-8") as f:
            content = f.read()
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 (byte {e.start})") from None
    if not content.strip():
        raise ValueError(f"{path}: empty file, a template set expected")
    try:
        data = json.loads(content)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not one JSON object ({e.msg}, line {e.lineno})") from None
    parts = ("templates", "emotion_words", "noun_phrases", "names")
    if not isinstance(data, dict) or any(p not in data for p in parts):
        raise ValueError(f"{path}: a template set is a JSON object with {', '.join(parts)}")
    templates = _texts(data["templates"], f"{path}: templates")
    for i, text in enumerate(templates, 1):
        _check_template(text, i, path)
    used = {slot for text in templates for slot in EMOTION_SLOTS if slot in text}
    emotion_words = data["emotion_words"]
    if not isinstance(emotion_words, dict) or (used and not emotion_words):
        raise ValueError(f"{path}: emotion_words must map each emotion to its words per slot")
    for emotion, words in emotion_words.items():
        if not isinstance(words, dict):
            raise ValueError(f"{path}: emotion_words[{emotion!r}] must map slots to words")
        for slot in used:
            key = slot[1:-1]  # the slot's name without its brackets
            _texts(words.get(key), f"{path}: emotion_words[{emotion!r}][{key!r}]")
    noun_phrases = data["noun_phrases"]
    if not isinstance(noun_phrases, list) or not all(
            isinstance(p, dict) and all(isinstance(p.get(g), str) and p[g].strip()
                                        for g in GENDERS) for p in noun_phrases):
        raise ValueError(f"{path}: noun_phrases must be a list of {{\"female\": text, "
                         "\"male\": text}} pairs")
    names = data["names"]
    if not isinstance(names, dict) or len(names) != 2:
        raise ValueError(f"{path}: names must hold two races, each with female and male names")
    for race, by_gender in names.items():
        for gender in GENDERS:
            listed = by_gender.get(gender) if isinstance(by_gender, dict) else None
            for name in _texts(listed, f"{path}: names[{race!r}][{gender!r}]"):
                if len(name.split()) != 1:
                    raise ValueError(f"{path}: names[{race!r}][{gender!r}]: {name!r} is not one "
                                     "word")
    return TemplateSet(path, templates, emotion_words, noun_phrases, names)


def fill(template: str, person: str, gender: str, word: str | None) -> tuple[str, str, str]:
    """The sentence of `template` for `person` of `gender` and the emotion `word` (None for a
    template without an emotion slot), as (text before the person, the person, text after),
    its first letter capitalised.

    Example:
        >>> fill("<person> found <himself/herself> in <a/an> <emotional situation word> "
        ...      "situation.", "my son", "male", "annoying")
        ('', 'My son', ' found himself in an annoying situation.')
    """
    text = template.replace(REFLEXIVE, REFLEXIVES[gender])
    for slot in EMOTION_SLOTS:
        text = text.replace(slot, word or "")
    text = re.sub(re.escape(ARTICLE) + r" (\S)",
                  lambda m: ("an " if m.group(1).lower() in "aeiou" else "a ") + m.group(1),
                  text)
    before, after = text.split(PERSON)
    if before:
        return before[0].upper() + before[1:], person, after
    return before, person[0].upper() + person[1:], after


def sample(template_set: TemplateSet, words_per_emotion: int | None = None,
           names_per_group: int | None = None) -> TemplateSet:
    """The set with each emotion's first `words_per_emotion` words of each slot and each race's
    first `names_per_group` names of each gender (None: all of them; a list shorter than that
    is kept whole), the templates and noun-phrase pairs all kept (the module docstring)."""
    for name, value in (("words_per_emotion", words_per_emotion),
                        ("names_per_group", names_per_group)):
        if value is not None and value < 1:
            raise ValueError(f"{name}={value}: must be at least 1")
    words = {emotion: {slot: listed[:words_per_emotion] for slot, listed in by_slot.items()}
             for emotion, by_slot in template_set.emotion_words.items()}
    names = {race: {gender: listed[:names_per_group] for gender, listed in by_gender.items()}
             for race, by_gender in template_set.names.items()}
    return dataclasses.replace(template_set, emotion_words=words, names=names)


def _slot_of(template: str) -> str | None:
    return next((slot for slot in EMOTION_SLOTS if slot in template), None)


def sentences(template_set: TemplateSet) -> list[Sentence]:
    """Every template x person (noun phrases, then names by race and gender) x emotion word."""
    people = [(phrase[g], g, None, i) for i, phrase in enumerate(template_set.noun_phrases)
              for g in GENDERS]
    people += [(name, g, race, None) for race, by_gender in template_set.names.items()
               for g in GENDERS for name in by_gender[g]]
    out = []
    for number, template in enumerate(template_set.templates, 1):
        slot = _slot_of(template)
        words = [(NO_EMOTION, None)] if slot is None else [
            (emotion, word) for emotion, by_slot in template_set.emotion_words.items()
            for word in by_slot[slot[1:-1]]]
        for emotion, word in words:
            for person, gender, race, pair in people:
                out.append(Sentence(*fill(template, person, gender, word), number, emotion,
                                    word, gender, race, pair))
    return out


def pairs(sentences_: list[Sentence], scores) -> dict[str, list[Pair]]:
    """The pairs of each comparison (the module docstring) from each sentence's score, float
    [sentences]."""
    scores = np.asarray(scores, np.float64)
    if scores.shape != (len(sentences_),):
        raise ValueError(f"{len(sentences_)} sentences but scores of shape {scores.shape}")
    phrases: dict[tuple, float] = {}
    groups: dict[tuple, list[float]] = {}
    for sentence, score in zip(sentences_, scores):
        context = (sentence.template, sentence.emotion, sentence.word)
        if sentence.race is None:
            phrases[(*context, sentence.noun_phrase, sentence.gender)] = float(score)
        else:
            groups.setdefault((*context, sentence.race, sentence.gender), []).append(float(score))
    races = list(dict.fromkeys(s.race for s in sentences_ if s.race is not None))
    out = {c: [] for c in COMPARISONS}
    for (template, emotion, word, index, gender), female in phrases.items():
        if gender == "female":
            male = phrases[(template, emotion, word, index, "male")]
            out["gender (noun phrases)"].append(Pair(template, emotion, female, male))
    mean = {key: float(np.mean(values)) for key, values in groups.items()}
    for (template, emotion, word, race, gender), score in mean.items():
        if gender == "female":
            male = mean[(template, emotion, word, race, "male")]
            out["gender (names)"].append(Pair(template, emotion, score, male))
        if race == races[0]:
            other = mean[(template, emotion, word, races[1], gender)]
            out["race (names)"].append(Pair(template, emotion, score, other))
    return out


def _row(selected: list[Pair], alpha: float) -> dict:
    first = [p.first for p in selected]
    second = [p.second for p in selected]
    test = paired_t_test(first, second)
    higher = sum(a > b for a, b in zip(first, second))
    return {"pairs": test.pairs, "mean_difference": test.mean_difference,
            "first_higher": higher / len(selected) if selected else None,
            "t": test.t, "df": test.df, "p_value": test.p_value,
            "significant": test.p_value is not None and test.p_value < alpha}


def summarize(pairs_: dict[str, list[Pair]], alpha: float = 0.05) -> dict:
    """Per comparison: {"all": row, "emotions": {emotion: row}, "templates": {number: row}},
    each row {"pairs", "mean_difference" (first - second), "first_higher" (the share of pairs
    whose first scored higher), "t", "df", "p_value", "significant" (p < alpha)}."""
    out = {}
    for comparison, selected in pairs_.items():
        emotions = list(dict.fromkeys(p.emotion for p in selected))
        templates = sorted({p.template for p in selected})
        out[comparison] = {
            "all": _row(selected, alpha),
            "emotions": {e: _row([p for p in selected if p.emotion == e], alpha)
                         for e in emotions},
            "templates": {str(t): _row([p for p in selected if p.template == t], alpha)
                          for t in templates}}
    return out


def _cells(row: dict) -> str:
    def number(value, spec):
        return "-" if value is None else format(value, spec)
    significant = "yes" if row["significant"] else "no"
    return (f"{row['pairs']} | {number(row['mean_difference'], '+.4f')} | "
            f"{number(row['first_higher'], '.1%')} | {number(row['t'], '.2f')} | "
            f"{number(row['p_value'], '.1e')} | {significant} |")


def markdown(summary: dict, races: tuple[str, str], alpha: float) -> str:
    """The summary as Markdown: one table per comparison, its rows overall, per emotion and
    per template.

    Example:
        >>> row = {"pairs": 3, "mean_difference": 0.01, "first_higher": 2 / 3, "t": 1.5,
        ...        "df": 2, "p_value": 0.27, "significant": False}
        >>> print(markdown({"race (names)": {"all": row, "emotions": {"joy": row},
        ...     "templates": {"1": row}}}, ("AA", "EA"), 0.05))
        ### race (names): AA - EA
        <BLANKLINE>
        | pairs held | count | mean difference | first higher | t | p | p < 0.05 |
        |---|---|---|---|---|---|---|
        | all | 3 | +0.0100 | 66.7% | 1.50 | 2.7e-01 | no |
        | emotion: joy | 3 | +0.0100 | 66.7% | 1.50 | 2.7e-01 | no |
        | template 1 | 3 | +0.0100 | 66.7% | 1.50 | 2.7e-01 | no |
    """
    sides = {"gender (noun phrases)": "female - male", "gender (names)": "female - male",
             "race (names)": f"{races[0]} - {races[1]}"}
    blocks = []
    for comparison, rows in summary.items():
        lines = [f"### {comparison}: {sides[comparison]}", "",
                 f"| pairs held | count | mean difference | first higher | t | p | "
                 f"p < {alpha:g} |", "|---|---|---|---|---|---|---|",
                 f"| all | {_cells(rows['all'])}"]
        lines += [f"| emotion: {e} | {_cells(row)}" for e, row in rows["emotions"].items()]
        lines += [f"| template {t} | {_cells(row)}" for t, row in rows["templates"].items()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
