"""run_scripts/score_minimal_pairs.py as a user runs it, on the shipped BLiMP sample.

The model's answer is known by construction: every weight zero but the masked-LM head's output
bias, so each position's distribution is softmax(bias) whatever the sentence (tests/
test_sentence_scores.py checks the scoring itself against a numpy BERT). A sentence's score is
then the sum of its pieces' log-softmax(bias), computed here with the project's plain-Python
tokenizer and numpy; the same weights with causal attention in the config are scored left to
right and give the same numbers.
"""

import glob
import gzip
import json
import os

import numpy as np
import pytest

from official.configs import BertConfig
from official.text.python_tokenizer import PythonTokenizer
from tests.checkpoint_helpers import original_weights
from tests.cli import REPO, refused, run_modules, snapshot, succeeded
from tests.numpy_bert import log_softmax

SAMPLE = os.path.join(REPO, "data", "blimp_sample")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
PAIRS = 2  # per paradigm: 134 pairs


def config(causal: bool) -> BertConfig:
    return BertConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=2,
                      num_attention_heads=2, intermediate_size=32, max_position_embeddings=64,
                      causal_attention=causal)


def write_model(folder, bias, causal=False, heads=True):
    from official.checkpoints import tf1

    os.makedirs(folder, exist_ok=True)
    config(causal).to_json_file(os.path.join(folder, "bert_config.json"))
    weights = {name: np.zeros_like(value) for name, value in
               original_weights(config(causal), heads=heads, seed=0).items()}
    if heads:
        weights["cls/predictions/output_bias"] = bias.astype(np.float32)
    tf1.write(weights, os.path.join(folder, "bert_model.ckpt"))
    return str(folder)


def command(checkpoint, output_dir, *extra):
    return ["run_scripts.score_minimal_pairs", f"--init_checkpoint={checkpoint}",
            f"--vocab_file={VOCAB}", f"--input_file={SAMPLE}/data/*.jsonl.gz",
            f"--published_file={SAMPLE}/models_summary.jsonl",
            f"--human_file={SAMPLE}/human_validation_summary.csv",
            f"--pairs_per_paradigm={PAIRS}", f"--output_dir={output_dir}", "--batch_size=64",
            "--max_seq_length=64",
            *extra]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("blimp")
    bias = np.random.default_rng(3).normal(0.0, 2.0, 30522)
    masked = write_model(root / "masked", bias)
    causal = write_model(root / "causal", bias, causal=True)
    encoder = write_model(root / "encoder", bias, heads=False)
    no_good = root / "no_good.jsonl"
    no_good.write_text('{"sentence_good": "A cat sat.", "sentence_bad": "A cat sit."}\n'
                       '{"sentence_bad": "Cats sits."}\n')
    empty = root / "empty.jsonl"
    empty.write_text("\n")
    out = root / "out"
    commands = {
        "masked": command(masked, out / "masked"),
        "causal": command(causal, out / "causal"),
        "encoder": command(encoder, out / "encoder"),
        "no_good": [*command(masked, out / "no_good")[:3], f"--input_file={no_good}",
                    f"--output_dir={out / 'no_good'}"],
        "empty": [*command(masked, out / "empty")[:3], f"--input_file={empty}",
                  f"--output_dir={out / 'empty'}"],
        "too_long": command(masked, out / "too_long", "--max_seq_length=8"),
    }
    results = dict(zip(commands, run_modules(*commands.values())))
    return {"results": results, "out": out, "bias": bias, "masked": masked}


def by_hand(bias) -> tuple[dict[str, float], dict[str, list[int]]]:
    """Each paradigm's accuracy of the unigram head, and [right, pairs] by which sentence has
    fewer pieces, from the files with numpy."""
    tokenizer = PythonTokenizer(VOCAB, do_lower_case=True)
    log_p = log_softmax(bias)
    right, by_length = {}, {}
    for path in sorted(glob.glob(f"{SAMPLE}/data/*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            rows = [json.loads(line) for line in f][:PAIRS]
        for row in rows:
            good_ids, bad_ids = tokenizer.tokenize_batch_ids([row["sentence_good"],
                                                              row["sentence_bad"]])
            good, bad = log_p[good_ids].sum(), log_p[bad_ids].sum()
            right.setdefault(row["UID"], []).append(good > bad)
            group = ("good shorter" if len(good_ids) < len(bad_ids) else "same length"
                     if len(good_ids) == len(bad_ids) else "good longer")
            counts = by_length.setdefault(group, [0, 0])
            counts[0] += int(good > bad)
            counts[1] += 1
    return {uid: 100 * np.mean(r) for uid, r in right.items()}, by_length


def test_every_paradigms_accuracy_is_the_hand_computed_unigram_preference(runs):
    succeeded(runs["results"]["masked"])
    with open(runs["out"] / "masked" / "minimal_pairs.json", encoding="utf-8") as f:
        report = json.load(f)
    want, by_length = by_hand(runs["bias"])
    assert report["scoring"] == "pseudo_log_likelihood"
    assert {name: [row["right"], row["pairs"]] for name, row in report["by_length"].items()
            if row["pairs"]} == by_length
    assert {uid: row["accuracy"] for uid, row in report["paradigms"].items()} == \
        pytest.approx(want)
    assert report["overall"]["accuracy"] == pytest.approx(np.mean(list(want.values())))
    assert report["overall"]["pairs"] == 67 * PAIRS
    assert report["overall"]["published"]["gpt2"] == pytest.approx(83.0238806)
    assert report["paradigms"]["adjunct_island"]["published"]["human"] == pytest.approx(94.0)
    table = (runs["out"] / "masked" / "minimal_pairs.md").read_text(encoding="utf-8")
    assert "## By phenomenon" in table and "| adjunct_island | 2 |" in table
    scores = (runs["out"] / "masked" / "pair_scores.tsv").read_text().splitlines()
    assert scores[0] == "where\tgood_score\tbad_score" and len(scores) == 1 + 67 * PAIRS
    assert scores[1].startswith(f"{SAMPLE}/data/adjunct_island.jsonl.gz:1\t")


def test_a_left_to_right_checkpoint_is_scored_left_to_right(runs):
    succeeded(runs["results"]["causal"])
    reports = {}
    for name in ("masked", "causal"):
        with open(runs["out"] / name / "minimal_pairs.json", encoding="utf-8") as f:
            reports[name] = json.load(f)
    assert reports["causal"]["scoring"] == "left_to_right"
    assert reports["causal"]["overall"]["accuracy"] == \
        pytest.approx(reports["masked"]["overall"]["accuracy"])


def test_bad_input_is_one_line_and_writes_nothing(runs):
    results, out = runs["results"], runs["out"]
    refused(results["encoder"], "encoder: has no masked-LM head")
    refused(results["no_good"], "no_good.jsonl:2: no sentence_good")
    refused(results["empty"], "empty.jsonl: no pairs")
    refused(results["too_long"], "adjunct_island.jsonl.gz:1: sentence_good is",
            "over --max_seq_length=8")
    for name in ("encoder", "no_good", "empty", "too_long"):
        assert snapshot(out / name) in ({}, None)
