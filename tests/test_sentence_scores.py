"""official/lm_scoring/sentence_scores.py and masked_lm.py's target log-probabilities: a sentence's
log-likelihood under a masked LM (pseudo-log-likelihood) and a left-to-right one.

References: the float64 numpy BERT of tests/numpy_bert.py over tiny random TF1 checkpoints (one
masked copy at a time for the PLL, causal attention for the left-to-right sum), and a model whose
answer is known by construction: every weight zero but the head's output bias, so that each
position's distribution is softmax(bias) whatever the input and a sentence's score is the sum of
its pieces' log-softmax(bias), by hand.
"""

import numpy as np
import pytest

from official.configs import BertConfig
from official.lm_scoring import sentence_scores
from tests.checkpoint_helpers import original_weights
from tests.numpy_bert import head_log_probs, log_softmax

WORDS = ["the", "cat", "cats", "sat", "sits", "on", "a", "mat", "dog", "ran", "##s", "big"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."] + WORDS
MASK = VOCAB.index("[MASK]")


def config(causal: bool = False) -> BertConfig:
    return BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=2,
                      num_attention_heads=2, intermediate_size=32, max_position_embeddings=32,
                      causal_attention=causal)


def write_model(folder, causal: bool = False, weights: dict | None = None) -> dict:
    """A TF1 checkpoint with its masked-LM head, its config and vocab beside it; returns its
    weights under the original names."""
    from official.checkpoints import tf1

    config(causal).to_json_file(str(folder / "bert_config.json"))
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    if weights is None:
        weights = original_weights(config(), seed=7)
        # Logits of a few units, so that each piece's probability is its own.
        weights["bert/embeddings/word_embeddings"] *= 5
        weights["cls/predictions/transform/LayerNorm/gamma"] += 1
    tf1.write(weights, str(folder / "bert_model.ckpt"))
    return weights


def load(folder):
    from official.lm_scoring.masked_lm import MaskedLanguageModel

    return MaskedLanguageModel.load(str(folder))


def ids(*words: str) -> list[int]:
    return [VOCAB.index(w) for w in ("[CLS]", *words, "[SEP]")]


SENTENCES = [ids("the", "cat", "sat", "on", "a", "mat", "."), ids("the", "cats", "sits", "."),
             ids("a", "big", "dog", "ran"), ids("dog", "##s"), ids("the", "cat", "sat", "on",
                                                                      "a", "mat", ".")]


@pytest.fixture(scope="module")
def masked(tmp_path_factory):
    folder = tmp_path_factory.mktemp("masked")
    return write_model(folder), load(folder)


@pytest.fixture(scope="module")
def left_to_right(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ltr")
    return write_model(folder, causal=True), load(folder)


def numpy_pll(weights, sequence, positions=None):
    """Salazar et al.'s eq. 2, one masked copy per position, by the numpy BERT."""
    total = 0.0
    for position in positions if positions is not None else range(1, len(sequence) - 1):
        copy = list(sequence)
        copy[position] = MASK
        total += head_log_probs(weights, config(), copy)[position, sequence[position]]
    return total


def numpy_left_to_right(weights, sequence):
    """sum_i log P(t_i | [CLS] t_1 .. t_{i-1}): one causal pass, [SEP] not scored."""
    log_probs = head_log_probs(weights, config(), sequence, causal=True)
    return sum(log_probs[i - 1, sequence[i]] for i in range(1, len(sequence) - 1))


def test_target_log_probs_are_the_numpy_heads_at_the_positions_asked(masked):
    weights, model = masked
    row = ids("the", "cat", "sat", ".")
    batch = np.array([row, row[:4] + [0, 0]], np.int32)
    mask = (batch != 0).astype(np.int32)
    got = model.target_log_probs(batch, mask, np.array([[1, 3], [2, 2]], np.int32),
                                 np.array([[6, 9], [7, 8]], np.int32))
    assert got.shape == (2, 2) and got.dtype == np.float32
    full = head_log_probs(weights, config(), row)
    short = head_log_probs(weights, config(), row[:4])
    np.testing.assert_allclose(got, [[full[1, 6], full[3, 9]], [short[2, 7], short[2, 8]]],
                               atol=2e-5)


def test_pseudo_log_likelihoods_equal_numpy_masking_each_piece_in_turn(masked):
    weights, model = masked
    scores = sentence_scores.pseudo_log_likelihoods(model, SENTENCES, batch_size=3)
    want = [numpy_pll(weights, s) for s in SENTENCES]
    np.testing.assert_allclose(scores, want, atol=1e-4)
    assert scores.dtype == np.float64 and scores[0] == scores[4]  # a repeat is scored once
    # Batching changes float32 rounding only; the chosen positions are summed alone.
    np.testing.assert_allclose(
        sentence_scores.pseudo_log_likelihoods(model, SENTENCES, batch_size=64), scores,
        atol=1e-4)
    chosen = [[2, 3], [1], [4], [1, 2], [7]]
    np.testing.assert_allclose(
        sentence_scores.pseudo_log_likelihoods(model, SENTENCES, 2, scored=chosen),
        [numpy_pll(weights, s, p) for s, p in zip(SENTENCES, chosen)], atol=1e-4)
    with pytest.raises(ValueError, match="outside its sequence"):
        sentence_scores.pseudo_log_likelihoods(model, SENTENCES[:1], 2, scored=[[9]])


def test_left_to_right_scores_equal_numpys_causal_chain_rule(left_to_right):
    weights, model = left_to_right
    assert model.left_to_right
    scores = sentence_scores.sentence_log_likelihoods(model, SENTENCES, batch_size=2)
    np.testing.assert_allclose(scores, [numpy_left_to_right(weights, s) for s in SENTENCES],
                               atol=1e-4)
    # Without the causal mask the numbers would differ: the reference is not trivially met.
    bidirectional = head_log_probs(weights, config(), SENTENCES[0])
    assert abs(sum(bidirectional[i - 1, SENTENCES[0][i]] for i in range(1, 8))
               - scores[0]) > 1e-2


def test_sentence_log_likelihoods_picks_the_masked_scoring_for_a_masked_lm(masked):
    weights, model = masked
    assert not model.left_to_right
    np.testing.assert_allclose(
        sentence_scores.sentence_log_likelihoods(model, SENTENCES[:2], batch_size=4),
        [numpy_pll(weights, s) for s in SENTENCES[:2]], atol=1e-4)


def unigram_weights(bias: np.ndarray) -> dict:
    """Every weight zero but LayerNorm's gamma (zero inputs normalise to zero anyway) and the
    output bias: each position's distribution is softmax(bias), whatever the row."""
    weights = {name: np.zeros_like(value)
               for name, value in original_weights(config(), seed=1).items()}
    weights["cls/predictions/output_bias"] = bias.astype(np.float32)
    return weights


@pytest.mark.parametrize("causal", [False, True])
def test_a_unigram_head_scores_each_sentence_by_its_pieces_log_softmax(tmp_path, causal):
    bias = np.linspace(-3.0, 3.0, len(VOCAB))
    model = load_unigram(tmp_path, bias, causal)
    log_p = log_softmax(bias)
    scores = sentence_scores.sentence_log_likelihoods(model, SENTENCES, batch_size=4)
    by_hand = [sum(log_p[t] for t in s[1:-1]) for s in SENTENCES]
    np.testing.assert_allclose(scores, by_hand, atol=1e-4)


def load_unigram(folder, bias, causal=False):
    write_model(folder, causal, unigram_weights(bias))
    return load(folder)


def test_encode_adds_cls_and_sep(masked):
    _, model = masked
    assert sentence_scores.encode(model.tokenizer, ["The dogs sat.", "Cats"]) == [
        ids("the", "dog", "##s", "sat", "."), ids("cats")]
