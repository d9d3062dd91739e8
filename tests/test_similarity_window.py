"""Tests for official.robustness.similarity_window: TextFooler's window worked out by hand, and
its cosines against numpy on hand-made word vectors; then the window in the attack."""

import numpy as np
import pytest

from official.robustness import attack as at
from official.robustness import candidates as cd
from official.robustness import similarity_window as sw
from official.robustness.text_words import WordText

WORDS = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(30)]  # waa, wab, ...


def test_the_window_is_seven_words_each_side_shifted_at_the_ends():
    # 20 words, 15 a window: centred from index 7 to 12, shifted to [0, 15) or [5, 20) nearer
    # an end; a text of 14 words is not checked.
    assert [sw.window(20, i, 15) for i in (0, 6, 7, 8, 12, 13, 19)] == [
        (0, 15), (0, 15), (0, 15), (1, 16), (5, 20), (5, 20), (5, 20)]
    assert sw.window(15, 14, 15) == (0, 15) and sw.window(14, 3, 15) is None
    assert sw.window(40, 20, 15) == (13, 28) and sw.window(40, 20, 4) == (19, 23)


def bag_of_words(vectors):
    """An encoder: a text's vector is the sum of its words' hand-made vectors."""
    def encode(texts):
        return np.array([sum(vectors[w] for w in WordText(t).words) for t in texts])
    return encode


def test_window_cosines_are_numpys_on_the_windows_text():
    rng = np.random.default_rng(0)
    vectors = {w: rng.normal(size=6) for w in WORDS + ["xx", "yy"]}
    text = WordText(" ".join(WORDS[:20]) + " .")
    candidates = [text.replaced(3, "xx"), text.replaced(3, "yy")]
    check = sw.WindowedSimilarity(bag_of_words(vectors), size=15, threshold=0.9)
    values, kept = check(text.text, text, 3, candidates)

    def cos(a, b):
        return a @ b / np.linalg.norm(a) / np.linalg.norm(b)

    base = sum(vectors[w] for w in WORDS[:15])  # words 0..14: index 3 is near the start
    expected = [cos(base, base - vectors[WORDS[3]] + vectors[new]) for new in ("xx", "yy")]
    np.testing.assert_allclose(values, expected, rtol=1e-5)
    assert kept.tolist() == [v >= 0.9 for v in expected]
    # The window's text runs from its first word to its last: punctuation after it is out.
    assert sw.window_text(text, 0, 15) == " ".join(WORDS[:15])
    assert sw.window_text(WordText("a, b c."), 0, 2) == "a, b"


def test_a_text_shorter_than_the_window_passes_whole_ranked_by_its_whole_cosines():
    vectors = {"good": np.array([1.0, 0.0]), "fine": np.array([0.0, 1.0]),
               "nice": np.array([1.0, 0.1]), "movie": np.array([0.0, 0.0])}
    text = WordText("good movie")
    values, kept = sw.WindowedSimilarity(bag_of_words(vectors), 15, 0.99)(
        text.text, text, 0, [text.replaced(0, "fine"), text.replaced(0, "nice")])
    np.testing.assert_allclose(values, [0.0, 1 / np.sqrt(1.01)], atol=1e-6)
    assert kept.tolist() == [True, True]


class Classifier:
    """P(gold) = 0.9 unless "bad" is in the text (0.2): a swap to "bad" flips it."""

    def __init__(self):
        self.texts = []

    def __call__(self, texts):
        self.texts += texts
        return np.array([[0.1, 0.9] if "bad" not in t.split() else [0.8, 0.2] for t in texts])


def test_the_attack_drops_a_swap_that_changes_its_window_though_the_whole_text_stays_close():
    """30 words, the swap at word 0: its window is words 0..14. "bad" moves those words' sum
    far, but not the whole text's, which words 15..29 dominate."""
    vectors = {w: np.array([1.0, 0.0]) for w in WORDS}
    vectors.update({w: np.array([30.0, 0.0]) for w in WORDS[15:]})
    vectors["bad"] = np.array([-14.0, 14.0])
    text = " ".join(WORDS)
    encode = bag_of_words(vectors)
    after = text.replace(WORDS[0], "bad", 1)
    whole = encode([text, after])
    assert whole[0] @ whole[1] / np.linalg.norm(whole, axis=1).prod() > 0.99
    source = cd.SynonymCandidates([(WORDS[0], "bad")])
    for size, status in ((0, at.SUCCEEDED), (15, at.FAILED)):
        victim = Classifier()
        result = at.WordSubstitutionAttack(
            victim, source, at.AttackSettings(window_size=size), similarity=encode).run(text, 1)
        assert result.status == status
        assert (after in victim.texts) == (size == 0)  # dropped before it cost a query


def test_each_swap_is_measured_against_the_text_before_it_not_the_original():
    """Two swaps each turn the window's vector by 0.35 rad, 0.7 rad in all: past 0.5 rad from
    the original, yet each within 0.5 rad of the text it was made in (TextFooler's reference),
    so both are made; the result's similarity is the whole texts'. Without a window
    (`window_size=0`) the whole text is measured against the original: 0.33 rad after the first
    swap, 0.62 after the second, which is dropped."""
    vectors = {w: np.array([1.0, 0.0]) for w in WORDS}
    first = 15 * np.array([np.cos(0.35), np.sin(0.35)])   # the window's sum after swap 1
    second = 15 * np.array([np.cos(0.7), np.sin(0.7)])    # and after swap 2
    vectors["xa"] = first - [14.0, 0.0]
    vectors["xb"] = second - first + [1.0, 0.0]

    def classify(texts):  # P(gold) 0.9; 0.6 once "xa" is in; 0.2 with "xb" too
        return np.array([[0.8, 0.2] if {"xa", "xb"} <= set(t.split()) else
                         [0.4, 0.6] if "xa" in t.split() else [0.1, 0.9] for t in texts])

    text = " ".join(WORDS[:16])
    source = cd.SynonymCandidates([(WORDS[0], "xa"), (WORDS[1], "xb")])
    encode = bag_of_words(vectors)
    result = at.WordSubstitutionAttack(classify, source, similarity=encode).run(text, 1)
    assert result.status == at.SUCCEEDED
    assert result.changes == [(0, WORDS[0], "xa"), (1, WORDS[1], "xb")]
    before, after = encode([text, result.perturbed])
    assert result.similarity == pytest.approx(
        before @ after / np.linalg.norm(before) / np.linalg.norm(after), abs=1e-6)
    assert np.cos(0.7) < sw.SIMILARITY_THRESHOLD < np.cos(0.35)
    result = at.WordSubstitutionAttack(classify, source, at.AttackSettings(window_size=0),
                                       similarity=encode).run(text, 1)
    assert result.status == at.FAILED and result.changes == [(0, WORDS[0], "xa")]
