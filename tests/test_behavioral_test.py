"""run_scripts/behavioral_test.py end to end on a tiny two-label classifier export.

The reference: the export's own probabilities (its signature called here), mapped to three
classes by the transcription of CheckList's tutorial (tests/test_behavioral.py) and judged by
the rules written out again below in plain numpy.
"""

import json

import numpy as np
import pytest

from tests import cli
from tests.test_behavioral import tutorial_pred_and_conf
from tests.test_robustness_classifier import make_export

CLASSES = ["negative", "neutral", "positive"]
WORDS = ["the flight was good", "i hate this crew", "thank you", "awful", "it is not a great seat",
         "the american crew", "i love this seat", "a bad flight", "great great", "not awful"]
TESTS = [
    {"name": "words", "capability": "Vocabulary", "type": "MFT", "classes": CLASSES,
     "cases": WORDS, "labels": [2, 0, 2, 0, 1, 1, 2, 0, 2, 2], "expectation": {"kind": "label"}},
    {"name": "typos", "capability": "Robustness", "type": "INV", "classes": CLASSES,
     "cases": [["the flight was good", "the flight was god", "teh flight was good"],
               ["i hate this crew", "i hat this crew"], ["thank you", "thank yu", "thnak you"],
               ["awful", "awful ."]],
     "labels": None, "expectation": {"kind": "inv", "tolerance": 0.1}},
]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("behavioral_test")
    suite = root / "suite.jsonl"
    suite.write_text("".join(json.dumps(test) + "\n" for test in TESTS), encoding="utf-8")
    # Weights of a large spread: the untrained model's predictions fall on every class.
    export = make_export(root / "sst2", ["0", "1"], seed=5, initializer_range=1.0)
    return {"root": root, "suite": suite, "export": export,
            "encoder": make_export(root / "encoder", None, "sentence_encoder")}


def _reference_failures(export_dir):
    """Failed case numbers (1-based) of each test, from the export's own probabilities."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    from official.export.versions import newest_version

    serve = tf.saved_model.load(newest_version(export_dir)).signatures["serving_default"]

    def three_class(texts):
        p = serve(text_a=tf.constant(texts))["probabilities"].numpy()[:, 1].astype(np.float64)
        return tutorial_pred_and_conf(p)

    preds, _ = three_class(WORDS)
    failed = {"words": [i + 1 for i, (pred, label) in enumerate(zip(preds, TESTS[0]["labels"]))
                        if pred != label]}
    failed["typos"] = []
    for number, case in enumerate(TESTS[1]["cases"], start=1):
        preds, confs = three_class(case)
        moved = np.abs(confs[1:, preds[0]] - confs[0, preds[0]])
        if np.any((preds[1:] != preds[0]) & (moved > 0.1)):
            failed["typos"].append(number)
    return failed


def test_the_cli_reports_the_rules_failures_on_the_exports_probabilities_the_same_twice(
        setup):
    from official.robustness.behavioral import sample_cases
    from official.robustness.suite import read_suite

    runs = [cli.succeeded(result) for result in cli.run_modules(*[
        ["run_scripts.behavioral_test", f"--export_dir={setup['export']}",
         f"--suite={setup['suite']}", f"--output_dir={setup['root'] / name}", "--sample=3",
         "--seed=4", "--batch_size=2"] for name in ("a", "b")])]
    for name in ("a", "b"):
        assert sorted(cli.snapshot(setup["root"] / name)) == ["behavioral_results.json",
                                                              "behavioral_results.md"]
    assert cli.snapshot(setup["root"] / "a") == cli.snapshot(setup["root"] / "b")

    report = json.loads((setup["root"] / "a" / "behavioral_results.json").read_text())
    assert report["export_labels"] == ["0", "1"]
    assert report["label_map"] == {"0": "negative", "1": "positive"}  # SST-2's default
    failed = _reference_failures(setup["export"])
    assert failed["words"] and failed["typos"]  # the model fails some cases of both tests
    for position, (test, result) in enumerate(zip(read_suite(str(setup["suite"])),
                                                  report["tests"])):
        run = [case + 1 for case in sample_cases(test, position, 3, 4)]
        want = [case for case in run if case in failed[test.name]]
        assert (result["run"], result["filtered"], result["failed"]) == (3, 0, len(want))
        assert result["failure_rate"] == len(want) / 3
        assert [e["case"] for e in result["examples"]] == want
    assert [c["capability"] for c in report["capabilities"]] == ["Vocabulary", "Robustness"]
    assert "| Vocabulary | words | MFT | 10 | 3 | 0 |" in (
        setup["root"] / "a" / "behavioral_results.md").read_text(encoding="utf-8")
    assert runs[0].stdout.splitlines()[1].startswith("Vocabulary  words")


@pytest.mark.parametrize("flags, expected", [
    (["--label_map=0:negative,1:happy"],
     "behavioral_test: --label_map=0:negative,1:happy: the suite has no class 'happy'"),
    (["--sample=0"], "behavioral_test: --sample=0: must be at least 1"),
])
def test_bad_flags_are_one_line_and_nothing_is_written(setup, flags, expected):
    out = setup["root"] / "refused"
    cli.refused(cli.run_module("run_scripts.behavioral_test", f"--export_dir={setup['export']}",
                               f"--suite={setup['suite']}", f"--output_dir={out}", *flags),
                expected)
    assert not out.exists()


def test_a_sentence_encoder_export_or_a_bad_suite_line_is_one_line(setup):
    out = setup["root"] / "refused"
    cli.refused(cli.run_module("run_scripts.behavioral_test", f"--export_dir={setup['encoder']}",
                               f"--suite={setup['suite']}", f"--output_dir={out}"),
                "behavioral_test: --export_dir: ", "not a classifier export")
    bad = setup["root"] / "bad.jsonl"
    bad.write_text(json.dumps(TESTS[0]) + "\n" + json.dumps(dict(TESTS[1], labels=7)) + "\n")
    cli.refused(cli.run_module("run_scripts.behavioral_test", f"--export_dir={setup['export']}",
                               f"--suite={bad}", f"--output_dir={out}"),
                f"behavioral_test: {bad}:2: 'labels' must be a label id (0-2)")
    assert not out.exists()
