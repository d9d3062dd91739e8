"""Tests for official.robustness.attack, candidates and text_words: the greedy attack against toy
classifiers whose decision hangs on known words, and TextAttack's summary by hand."""

import re

import numpy as np
import pytest

from official.robustness import attack as at
from official.robustness import candidates as cd
from official.robustness.text_words import WordText


class Toy:
    """P(positive) = 0.9 while the text holds a positive word and no negation word, else 0.2;
    every other word lowers it by 0.01 per occurrence of "dull" (so deletions differ). Counts
    its calls and texts."""

    def __init__(self, positive=("good", "great"), negation=("not",)):
        self.positive, self.negation = set(positive), set(negation)
        self.texts = []

    def __call__(self, texts):
        self.texts.extend(texts)
        rows = []
        for text in texts:
            words = [w.lower() for w in WordText(text).words]
            p = 0.9 if self.positive & set(words) and not self.negation & set(words) else 0.2
            p -= 0.01 * words.count("dull")
            rows.append([1 - p, p])
        return np.array(rows, np.float32)


def synonyms(*pairs):
    return cd.SynonymCandidates([tuple(p.split()) for p in pairs])


def test_words_keep_everything_between_them_and_take_the_replaced_words_casing():
    text = WordText("Good: the film's end, well-made!")
    assert text.words == ["Good", "the", "film's", "end", "well-made"]
    assert [text.replaceable(i) for i in range(5)] == [True, True, False, True, False]
    assert text.replaced(0, "fine").text == "Fine: the film's end, well-made!"
    assert WordText("A GOOD film").replaced(1, "fine").text == "A FINE film"
    assert text.deleted(3).text == "Good: the film's, well-made!"
    assert text.deleted(0).text == ": the film's end, well-made!"
    accented = WordText("as she was in amélie .")
    assert accented.words[-1] == "amélie" and not accented.replaceable(4)


def test_the_decisive_word_is_ranked_first_and_replaced_by_a_listed_synonym_that_flips():
    toy = Toy()
    attack = at.WordSubstitutionAttack(toy, synonyms("good great", "good fine", "movie film"))
    result = attack.run("a good movie", gold=1)
    assert result.status == at.SUCCEEDED
    # "great" keeps the prediction, "fine" flips it; "movie" was never needed.
    assert result.changes == [(1, "good", "fine")]
    assert result.perturbed == "a fine movie"
    assert result.predicted == 0
    # The calls: the original, the deletions of "good" and "movie" ("a" is a stop word), then
    # the two candidates of "good", in one batch each.
    assert toy.texts == ["a good movie", "a movie", "a good", "a great movie", "a fine movie"]
    assert result.queries == 5
    assert result.gold_probability == pytest.approx((0.9, 0.2))


def test_stop_words_are_never_replaced_even_when_they_decide():
    toy = Toy()
    attack = at.WordSubstitutionAttack(toy, synonyms("not never", "movie film"))
    result = attack.run("not a good movie", gold=0)
    assert result.status == at.FAILED
    assert all("never" not in text for text in toy.texts)
    assert result.changes == []


def test_the_similarity_threshold_drops_candidates_before_they_cost_a_query():
    toy = Toy()

    def embed(texts):  # "fine" makes a text orthogonal to the original
        return np.array([[0.0, 1.0] if "fine" in t else [1.0, 0.0] for t in texts])

    settings = at.AttackSettings(similarity_threshold=0.5, window_size=0)  # the whole text
    attack = at.WordSubstitutionAttack(toy, synonyms("good great", "good fine"), settings,
                                       similarity=embed)
    result = attack.run("a good movie", gold=1)
    assert result.status == at.FAILED
    assert "a fine movie" not in toy.texts
    assert result.queries == len(toy.texts) == 4  # original, 2 deletions, "great"


def test_among_flips_the_most_similar_text_wins():
    toy = Toy()

    def embed(texts):
        return np.array([[1.0, 0.2] if "fine" in t else [1.0, 0.0] if "good" in t
                         else [1.0, 0.1] for t in texts])

    attack = at.WordSubstitutionAttack(toy, synonyms("good fine", "good nice"),
                                       similarity=embed)
    result = attack.run("a good movie", gold=1)
    assert result.changes == [(1, "good", "nice")]  # cosine 0.995 beats "fine"'s 0.981
    assert result.similarity == pytest.approx(1 / np.sqrt(1.01), abs=1e-6)


def test_the_query_budget_cuts_the_last_batch_and_ends_the_attack():
    toy = Toy()
    attack = at.WordSubstitutionAttack(
        toy, synonyms("good great", "good fine", "good grand"),
        at.AttackSettings(max_queries=4))
    result = attack.run("a good movie", gold=1)
    # original, 2 deletions, then only "great" of the 3 candidates, which does not flip.
    assert result.status == at.FAILED and result.queries == 4
    assert toy.texts[-1] == "a great movie"


def test_a_long_texts_deletions_are_made_a_batch_at_a_time_within_the_budget():
    """Each deletion is a copy of the text: never more than a batch of them at once, and none
    past the budget (a 15,000-word line once grew an attack to 14.5 GB)."""
    calls = []

    def classify(texts):
        calls.append(len(texts))
        return np.tile(np.array([[0.1, 0.9]], np.float32), (len(texts), 1))

    text = " ".join(["good"] + ["movie"] * 2999)
    attack = at.WordSubstitutionAttack(classify, synonyms("good fine"),
                                       at.AttackSettings(max_queries=700))
    result = attack.run(text, gold=1)
    assert calls[0] == 1 and max(calls[1:]) <= at.DELETIONS_PER_CALL
    assert sum(calls) == result.queries == 700
    assert WordText("a b, c d").first(2).text == "a b" and WordText("a b").first(5).text == "a b"


def test_a_kept_replacement_lowers_the_gold_probability_and_the_search_goes_on():
    toy = Toy()
    attack = at.WordSubstitutionAttack(toy, synonyms("movie dull", "good great", "good fine"))
    result = attack.run("a good movie", gold=1)
    assert result.status == at.SUCCEEDED
    assert [change[2] for change in result.changes] == ["fine"]
    attack = at.WordSubstitutionAttack(toy, synonyms("movie dull", "good great"))
    result = attack.run("a good movie", gold=1)
    assert result.status == at.FAILED
    assert result.changes == [(2, "movie", "dull")]
    assert result.perturbed == "a good dull"
    assert result.gold_probability == pytest.approx((0.9, 0.89))


def test_a_misclassified_text_is_skipped_after_one_query():
    toy = Toy()
    result = at.WordSubstitutionAttack(toy, synonyms("good fine")).run("a good movie", gold=0)
    assert (result.status, result.queries, result.changes) == (at.SKIPPED, 1, [])


def result(status, changes, words, queries):
    return at.AttackResult(status, "", "", 0, 0, [(0, "a", "b")] * changes, words, queries,
                           None, (1.0, 0.0))


def test_the_summary_is_textattacks_arithmetic():
    results = [result("successful", 1, 10, 30), result("successful", 3, 20, 50),
               result("failed", 4, 8, 100), result("skipped", 0, 6, 1)]
    assert at.summarize(results) == {
        "Number of successful attacks": 2, "Number of failed attacks": 1,
        "Number of skipped attacks": 1,
        "Original accuracy": 75.0,             # 3 of 4 classified right
        "Accuracy under attack": 25.0,         # 1 of 4 still right
        "Attack success rate": 66.67,          # 2 of 3 attacked
        "Average perturbed word %": 12.5,      # (1/10 + 3/20) / 2
        "Average num. words per input": 11.0,  # (10 + 20 + 8 + 6) / 4
        "Avg num queries": 60.0,               # (30 + 50 + 100) / 3
    }


def test_synonyms_drop_antonym_pairs_self_pairs_and_repeats():
    source = cd.SynonymCandidates(
        [("good", "fine"), ("good", "bad"), ("good", "good"), ("fine", "good")],
        antonyms=[("bad", "good")])
    assert source.propose(WordText("Good"), 0, 10) == ["fine"]
    assert source.propose(WordText("fine"), 0, 10) == ["good"]
    assert source.propose(WordText("bad"), 0, 10) == []


def test_read_word_pairs_names_the_line(tmp_path):
    path = tmp_path / "pairs.txt"
    path.write_text("good fine\n\nbad\n")
    with pytest.raises(ValueError, match=rf"^{path}:3: 1 fields, expected two words"):
        cd.read_word_pairs(str(path))
    path.write_text("Good Fine \nbad awful")
    assert cd.read_word_pairs(str(path)) == [("good", "fine"), ("bad", "awful")]


def test_vector_neighbours_are_numpys_cosine_ranking_above_the_floor():
    rng = np.random.default_rng(0)
    words = ["good", "fine", "bad", "nice", "great", "##ly", "x"]
    vectors = {w: rng.normal(size=8).astype(np.float32) for w in words}
    source = cd.VectorCandidates(vectors, min_cos_sim=-0.2, antonyms=[("good", "bad")])
    unit = {w: v / np.linalg.norm(v) for w, v in vectors.items()}
    expected = sorted((w for w in ("fine", "nice", "great")
                       if unit[w] @ unit["good"] >= -0.2),
                      key=lambda w: -(unit[w] @ unit["good"]))
    assert source.propose(WordText("good"), 0, 10) == expected
    assert source.propose(WordText("good"), 0, 1) == expected[:1]
    assert source.propose(WordText("unknown"), 0, 10) == []


class FakeTokenizer:
    def __init__(self, vocab):
        self.vocab = {t: i for i, t in enumerate(vocab)}
        self.inv_vocab = dict(enumerate(vocab))

    def tokenize(self, text):
        return [w for w in text.lower().split() if w in self.vocab]

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab[t] for t in tokens]


class FakeMaskedLM:
    """Log-probabilities that rank the vocab in a fixed order; records its inputs."""

    def __init__(self, vocab, ranking):
        self.tokenizer = FakeTokenizer(vocab)
        self.scores = np.full(len(vocab), -50.0, np.float32)
        for rank, token in enumerate(ranking):
            self.scores[self.tokenizer.vocab[token]] = -float(rank)
        self.calls = []

    def log_probs(self, ids, mask, positions):
        self.calls.append((ids.tolist(), mask.tolist(), positions.tolist()))
        return np.tile(self.scores, (ids.shape[0], positions.shape[1], 1))


def test_masked_lm_candidates_are_whole_words_best_first_with_the_word_masked_once():
    vocab = ["[PAD]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "movie", "##s", "the", "fine",
             "great", "7"]
    mlm = FakeMaskedLM(vocab, ["##s", "good", "the", "fine", "7", "great", "a"])
    source = cd.MaskedLMCandidates(mlm, max_seq_length=16)
    assert source.propose(WordText("a good movie"), 1, 2) == ["fine", "great"]
    assert source.propose(WordText("a good movie"), 1, 5) == ["fine", "great", "movie"]
    ids, mask, positions = mlm.calls[0]
    assert ids == [[1, 4, 3, 6, 2]] and mask == [[1] * 5] and positions == [[2]]


def test_masked_lm_context_keeps_the_pieces_nearest_the_mask():
    vocab = ["[PAD]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "good"]
    mlm = FakeMaskedLM(vocab, ["good"])
    source = cd.MaskedLMCandidates(mlm, max_seq_length=7)  # room for 4 context pieces
    source.propose(WordText("a b c a good b c a"), 4, 5)
    ids, _, positions = mlm.calls[0]
    assert ids == [[1, 6, 4, 3, 5, 6, 2]] and positions == [[3]]


def test_bae_candidates_are_a_numpy_berts_top_whole_words_at_the_masked_word(tmp_path):
    """BAE-R's candidates through a real masked-LM checkpoint, against the original BERT in
    numpy (tests/test_crows_pairs.py's float64 forward pass over the same tiny checkpoint)."""
    from official.lm_scoring.masked_lm import MaskedLanguageModel
    from tests.test_crows_pairs import VOCAB, masked_lm_log_probs, write_checkpoint

    weights = write_checkpoint(tmp_path)
    source = cd.MaskedLMCandidates(MaskedLanguageModel.load(str(tmp_path)), max_seq_length=32)
    text = WordText("The poor are ignorant about money.")
    ids = [VOCAB.index(t) for t in
           ["[CLS]", "the", "poor", "are", "[MASK]", "about", "money", ".", "[SEP]"]]
    log_probs = masked_lm_log_probs(weights, ids)[4]
    expected = [VOCAB[i] for i in np.argsort(-log_probs, kind="stable")
                if re.fullmatch("[a-z]{2,}", VOCAB[i]) and VOCAB[i] not in cd.STOP_WORDS
                and VOCAB[i] != "ignorant"]
    assert source.propose(text, 3, 5) == expected[:5]


def test_bae_ranks_words_by_the_gold_drop_alone_textfooler_adds_the_new_class_rise():
    """Deleting "alpha" lowers gold (class 0) by 0.3 and makes class 2 win (+0.5); deleting
    "beta" lowers it by 0.4 and changes nothing: TextFooler's eq. 2 tries "alpha" first (0.8),
    BAE's rule "beta" (0.4)."""
    rows = {"alpha beta": [0.6, 0.2, 0.2], "beta": [0.3, 0.0, 0.7], "alpha": [0.2, 0.5, 0.3]}

    def classify(texts):
        seen.extend(texts)
        return np.array([rows.get(t, [0.9, 0.05, 0.05]) for t in texts], np.float32)

    source = synonyms("alpha gamma", "beta delta")
    for importance, first in (("textfooler", "gamma beta"), ("drop", "alpha delta")):
        seen = []
        at.WordSubstitutionAttack(classify, source, at.AttackSettings(importance=importance)
                                  ).run("alpha beta", gold=0)
        assert seen[3] == first  # after the original and the two deletions


def test_synonym_lists_propose_single_words_only():
    source = cd.SynonymCandidates([("good", "24/7"), ("good", "naïve"), ("good", "fine"),
                                   ("good", "x")])
    assert source.propose(WordText("good"), 0, 10) == ["fine"]
