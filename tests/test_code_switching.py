"""Code-switching augmentation (data_prep/code_switching.py): the dictionaries read with one-line
errors, and the sampler's rates against the binomial bounds of its definition."""

import math

import pytest

from data_prep.code_switching import CodeSwitching, DictionaryError, read_dictionary
from data_prep.conll import Sentence


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_dictionary_is_read_lower_cased_with_every_translation_once(tmp_path):
    path = write(tmp_path / "en-de.txt", "dog\tHund\nDog\tHund\ndog\tRüde\n\nrun\tlaufen\n")
    assert read_dictionary(path) == {"dog": ("Hund", "Rüde"), "run": ("laufen",)}


@pytest.mark.parametrize("text, problem", [
    ("dog Hund\n", "dog-de.txt:1: 0 tabs, expected one (word<TAB>translation)"),
    ("dog\tHund\tRüde\n", "dog-de.txt:1: 2 tabs, expected one"),
    ("ok\tgut\ndog\t\n", "dog-de.txt:2: an empty word or translation"),
    ("dog\tder Hund\n", "dog-de.txt:1: translation 'der Hund' is several words"),
    ("\n\n", "dog-de.txt: no word pairs"),
])
def test_a_bad_dictionary_is_one_line_naming_the_file_and_line(tmp_path, text, problem):
    path = write(tmp_path / "dog-de.txt", text)
    with pytest.raises(DictionaryError) as raised:
        read_dictionary(path)
    assert str(raised.value).startswith(str(tmp_path / problem.split(":")[0])) and \
        problem.split(":", 1)[1] in str(raised.value)


def binomial_bounds(n, p, sigmas=5):
    spread = sigmas * math.sqrt(n * p * (1 - p))
    return n * p - spread, n * p + spread


def test_words_a_dictionary_has_are_switched_at_the_rate_and_others_never():
    """2,000 sentences of 'The dog sees a cat': dog in both dictionaries (so German or Spanish
    evenly), cat in German only, The and sees in neither, a in Spanish as an identity pair
    (switched, but to itself). Counts within 5 standard deviations of the binomial's mean."""
    dictionaries = {"de": {"dog": ("Hund",), "cat": ("Katze", "Kater")},
                    "es": {"dog": ("perro",), "a": ("a",)}}
    sentence = Sentence(("The", "dog", "sees", "a", "cat"), ("DET", "NOUN", "VERB", "DET",
                                                              "NOUN"), 0, 1)
    n, rate = 2000, 0.3
    switched = CodeSwitching(dictionaries, rate, seed=7).switch([sentence] * n, copy=0)
    assert all(s.tags == sentence.tags for s in switched)
    assert {s.words[0] for s in switched} == {"The"} and {s.words[2] for s in switched} == \
        {"sees"} and {s.words[3] for s in switched} == {"a"}
    dogs = [s.words[1] for s in switched]
    low, high = binomial_bounds(n, rate)
    assert low < n - dogs.count("dog") < high
    german = dogs.count("Hund")
    replaced = n - dogs.count("dog")
    assert set(dogs) == {"dog", "Hund", "perro"}
    assert binomial_bounds(replaced, 0.5)[0] < german < binomial_bounds(replaced, 0.5)[1]
    cats = [s.words[4] for s in switched]
    assert low < n - cats.count("cat") < high
    assert binomial_bounds(n - cats.count("cat"), 0.5)[0] < cats.count("Kater") < \
        binomial_bounds(n - cats.count("cat"), 0.5)[1]


def test_a_capitalised_word_gets_a_capitalised_translation_and_the_draws_are_seeded():
    switching = CodeSwitching({"es": {"dog": ("perro",)}}, 1.0, seed=3, epochs=2.5)
    sentence = Sentence(("Dog", "dog"), ("NOUN", "NOUN"), 0, 1)
    assert switching.switch([sentence], copy=0)[0].words == ("Perro", "perro")
    many = [Sentence(("dog",) * 20, ("NOUN",) * 20, 0, 1)] * 10
    half = CodeSwitching({"es": {"dog": ("perro",)}}, 0.5, seed=3, epochs=2.5)
    copies = half.apply(many)
    assert len(copies) == 3 * len(many) and half.copies == 3
    assert copies == CodeSwitching({"es": {"dog": ("perro",)}}, 0.5, seed=3,
                                   epochs=2.5).apply(many)
    assert copies[:10] != copies[10:20]  # every epoch's copy is drawn anew
    assert half.key() != CodeSwitching({"es": {"dog": ("perro",)}}, 0.5, seed=4,
                                       epochs=2.5).key()


@pytest.mark.parametrize("rate", [0.0, 1.5])
def test_a_rate_outside_0_to_1_is_refused(rate):
    with pytest.raises(ValueError, match="--code_switch_rate"):
        CodeSwitching({"es": {"dog": ("perro",)}}, rate, seed=0)
