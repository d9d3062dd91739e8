"""run_scripts/bias_report.py, run as a user runs it.

SEAT on a tiny sentence_encoder export made here, over made-up test files in SEAT's format (SEAT's
lists are CC BY-NC and stay out of the repo), checked against the effect size and scipy p-value
of the export's own vectors; CrowS-Pairs on a tiny checkpoint with its masked-LM head, checked
against the numpy BERT of tests/test_crows_pairs.py; bad inputs refused in one line with nothing
written.
"""

import json
import math
import os

import pytest

from tests import cli
from tests.test_crows_pairs import CSV_HEADER, ROWS, reference_scores, write_checkpoint
from tests.test_seat import effect_size_reference, s_reference, scipy_p_value

WORDS = ["apple", "pear", "plum", "fig", "hammer", "saw", "drill", "nail", "sugar", "honey",
         "sweet", "steel", "stone", "iron", "hard", "this", "is", "a", "an", "."]
EXACT_TEST = {"targ1": {"category": "Fruit", "examples": ["this is a pear .", "an apple .",
                                                          "a plum ."]},
              "targ2": {"category": "Tools", "examples": ["this is a hammer .", "a saw .",
                                                          "a drill ."]},
              "attr1": {"category": "Sweet", "examples": ["sugar .", "honey is sweet ."]},
              "attr2": {"category": "Hard", "examples": ["steel .", "stone is hard .", "iron ."]}}
SAMPLED_TEST = {"targ1": {"category": "Fruit", "examples": ["pear", "apple", "plum", "fig"]},
                "targ2": {"category": "Tools", "examples": ["hammer", "saw", "drill", "nail"]},
                "attr1": {"category": "Sweet", "examples": ["sugar", "honey", "sweet"]},
                "attr2": {"category": "Hard", "examples": ["steel", "stone", "iron", "hard"]}}


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """A sentence_encoder export and, of the same encoder, an encoder export (the wrong type)."""
    import keras

    from official.configs import BertConfig
    from official.export import saving
    from official.export.encoder import HubEncoder
    from official.export.sentence_encoder import SentenceEncoderExport
    from official.modeling.encoder import build_encoder
    from official.modeling.models import BertSentenceEncoder
    from official.text.tokenizer import FullTokenizer

    root = tmp_path_factory.mktemp("bias_exports")
    vocab = root / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n",
                     encoding="utf-8")
    keras.utils.set_random_seed(7)
    config = BertConfig(vocab_size=len(WORDS) + 5, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)
    model = BertSentenceEncoder(build_encoder(config), "mean", True)
    tokenizer = FullTokenizer(str(vocab))
    module = SentenceEncoderExport(model, tokenizer, max_seq_length=16)
    saving.save(module, str(root / "sentence_encoder"), module.signatures())
    saving.save(HubEncoder(model.encoder, tokenizer), str(root / "encoder"))
    return root


def _own_vectors(export_dir, texts):
    import tensorflow as tf

    from official.export.versions import newest_version

    serve = tf.saved_model.load(newest_version(str(export_dir))).signatures["serving_default"]
    return dict(zip(texts, serve(text=tf.constant(texts))["embeddings"].numpy()))


def _seat_files(folder):
    folder.mkdir()
    for name, test in (("exact", EXACT_TEST), ("sampled", SAMPLED_TEST)):
        (folder / f"{name}.jsonl").write_text(json.dumps(test, indent=2), encoding="utf-8")
    return folder


def test_seat_effect_sizes_and_p_values_are_those_of_the_exports_vectors(exports, tmp_path):
    out = tmp_path / "out"
    result = cli.succeeded(cli.run_module(
        "run_scripts.bias_report", "--test=seat", f"--export_dir={exports / 'sentence_encoder'}",
        f"--seat_files={_seat_files(tmp_path / 'seat')}", "--permutations=50", "--seed=3",
        "--batch_size=4", f"--output_dir={out}"))
    report = json.loads((out / "bias_results.json").read_text(encoding="utf-8"))
    assert [r["test"] for r in report["results"]] == ["exact", "sampled"]
    for row, test in zip(report["results"], (EXACT_TEST, SAMPLED_TEST)):
        vectors = _own_vectors(exports / "sentence_encoder",
                               sorted({t for s in test.values() for t in s["examples"]}))
        x, y, a, b = ([vectors[t] for t in test[s]["examples"]]
                      for s in ("targ1", "targ2", "attr1", "attr2"))
        assert row["effect_size"] == pytest.approx(effect_size_reference(x, y, a, b), abs=1e-5)
        exact_p = scipy_p_value([s_reference(w, a, b) for w in x],
                                [s_reference(w, a, b) for w in y])
        if test is EXACT_TEST:  # C(6, 3) = 20 partitions, at most --permutations: all of them
            assert (row["p_value_method"], row["partitions"]) == ("exact", 20)
            assert row["p_value"] == pytest.approx(exact_p, abs=1e-9)
        else:  # C(8, 4) = 70 > 50: 49 drawn with the seed, and the observed one
            assert (row["p_value_method"], row["partitions"]) == ("sampled", 50)
            # k of 50 partitions reach the observed statistic, the observed one among them; 49
            # draws put k / 50 within four binomial standard deviations of the exact p.
            count = row["p_value"] * 50
            assert count == pytest.approx(round(count), abs=1e-9) and 1 <= round(count) <= 50
            spread = 4 * math.sqrt(exact_p * (1 - exact_p) / 49) + 1 / 50
            assert abs(row["p_value"] - exact_p) <= spread
    table = (out / "bias_results.md").read_text(encoding="utf-8")
    assert "| exact | Fruit / Tools | Sweet / Hard | 3/3/2/3 |" in table
    assert "exact, 20 partitions" in table and "sampled, 50 partitions" in table
    assert table.strip() in result.stdout


def test_crows_pairs_scores_are_a_numpy_berts_pseudo_log_likelihoods(tmp_path):
    write_checkpoint(tmp_path)
    csv_file = tmp_path / "pairs.csv"
    csv_file.write_text(CSV_HEADER + "\n".join(ROWS) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    result = cli.succeeded(cli.run_module(
        "run_scripts.bias_report", "--test=crows_pairs", f"--init_checkpoint={tmp_path}",
        f"--input_file={csv_file}", "--max_seq_length=32", "--batch_size=7",
        f"--output_dir={out}"))
    report = json.loads((out / "bias_results.json").read_text(encoding="utf-8"))
    assert report["pairs"] == 4 and len(report["scored"]) == 4

    from official.checkpoints import tf1
    from official.robustness import crows_pairs
    from official.text.tokenizer import FullTokenizer

    weights = tf1.read(str(tmp_path / "bert_model.ckpt"))
    tokenizer = FullTokenizer(str(tmp_path / "vocab.txt"))
    counted = 0
    for pair, scored in zip(crows_pairs.read_pairs(str(csv_file)), report["scored"]):
        more = ["[CLS]", *tokenizer.tokenize(pair.sent_more), "[SEP]"]
        less = ["[CLS]", *tokenizer.tokenize(pair.sent_less), "[SEP]"]
        first, second = (more, less) if pair.direction == "stereo" else (less, more)
        ids = [tokenizer.convert_tokens_to_ids(t) for t in (first, second)]
        scores = reference_scores(weights, *ids, *crows_pairs.shared_positions(*ids))
        want_more, want_less = scores if pair.direction == "stereo" else scores[::-1]
        assert scored["sent_more_score"] == pytest.approx(want_more, abs=1.5e-3)
        assert scored["sent_less_score"] == pytest.approx(want_less, abs=1.5e-3)
        counted += scored["preferred"] == "sent_more"
    assert report["score"] == pytest.approx(100 * counted / 4)
    table = (out / "bias_results.md").read_text(encoding="utf-8")
    assert f"| all | 4 | {report['ties']} | {report['score']:.2f} |" in table
    assert "Blodgett et al. (2021)" in table and table.strip() in result.stdout


def test_bad_inputs_are_one_line_and_nothing_is_written(exports, tmp_path):
    out = tmp_path / "out"
    seat = _seat_files(tmp_path / "seat")
    broken = dict(EXACT_TEST)
    broken.pop("attr2")
    (seat / "broken.jsonl").write_text(json.dumps(broken, indent=2), encoding="utf-8")
    model = tmp_path / "encoder_only"
    model.mkdir()
    write_checkpoint(model, heads=False)
    bad_csv, csv_file = tmp_path / "bad.csv", tmp_path / "pairs.csv"
    bad_csv.write_text(CSV_HEADER + ROWS[0] + "\n0,a,b,stereo\n", encoding="utf-8")
    csv_file.write_text(CSV_HEADER + ROWS[0] + "\n", encoding="utf-8")
    crows = ["run_scripts.bias_report", "--test=crows_pairs", f"--init_checkpoint={model}",
             "--max_seq_length=32", f"--output_dir={out}"]
    seat_flags = [f"--seat_files={seat}", f"--output_dir={out}"]
    good_seat = tmp_path / "good_seat"
    good_seat.mkdir()
    for name in os.listdir(seat):
        if name != "broken.jsonl":
            os.link(seat / name, good_seat / name)
    results = cli.run_modules(  # each a process of its own, side by side
        ["run_scripts.bias_report", "--test=seat",
         f"--export_dir={exports / 'sentence_encoder'}", *seat_flags],
        ["run_scripts.bias_report", "--test=seat", f"--seat_files={good_seat}",
         f"--output_dir={out}"],
        ["run_scripts.bias_report", "--test=seat", f"--export_dir={exports / 'encoder'}",
         f"--seat_files={good_seat}", f"--output_dir={out}"],
        [*crows, f"--input_file={bad_csv}"],
        [*crows, f"--input_file={csv_file}"])
    cli.refused(results[0], f"bias_report: {seat / 'broken.jsonl'}: no attr2 set")
    cli.refused(results[1], "bias_report: --export_dir: required with --test=seat")
    cli.refused(results[2], "bias_report: --export_dir: ", "no 'serving_default' signature "
                "(export it with export_saved_model --export_type=sentence_encoder)")
    cli.refused(results[3], f"bias_report: {bad_csv}:3: the row has 4 fields where the header "
                "has 6")
    cli.refused(results[4], f"bias_report: {model}: has no masked-LM head (cls/predictions/*)")
    assert not out.exists()


def test_a_flag_of_the_other_test_is_refused_before_any_work(tmp_path):
    # Nothing these flags name exists: the refusal comes before any of it is looked at.
    out = tmp_path / "out"
    seat = ["run_scripts.bias_report", "--test=seat", f"--export_dir={tmp_path / 'export'}",
            f"--seat_files={tmp_path / 'seat'}", f"--output_dir={out}"]
    crows = ["run_scripts.bias_report", "--test=crows_pairs",
             f"--init_checkpoint={tmp_path / 'model'}", f"--input_file={tmp_path / 'p.csv'}",
             f"--output_dir={out}"]
    results = cli.run_modules([*crows, f"--export_dir={tmp_path / 'export'}"],
                              [*crows, "--permutations=10"],
                              [*seat, f"--vocab_file={tmp_path / 'vocab.txt'}"],
                              [*seat, "--max_seq_length=64"])
    crows_scores = ("it has no effect with --test=crows_pairs, which scores the masked LM of "
                    "--init_checkpoint on the CSV --input_file")
    seat_scores = ("it has no effect with --test=seat, which scores the sentence_encoder export "
                   "--export_dir on --seat_files")
    cli.refused(results[0], "bias_report: --export_dir is a flag of --test=seat: " + crows_scores)
    cli.refused(results[1], "bias_report: --permutations is a flag of --test=seat: "
                + crows_scores)
    cli.refused(results[2], "bias_report: --vocab_file is a flag of --test=crows_pairs: "
                + seat_scores)
    cli.refused(results[3], "bias_report: --max_seq_length is a flag of --test=crows_pairs: "
                + seat_scores)
    assert not out.exists()
