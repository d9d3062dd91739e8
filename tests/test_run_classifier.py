"""run_classifier end to end, as a user runs it: a learnable toy GLUE task in the official file
layouts, per-epoch evaluation with the best checkpoint kept, predicting from a finished run,
determinism, zero-shot evaluation in other languages (--eval_languages), and bad input.

Each run is a subprocess (the entry point turns on TensorFlow's op determinism for the whole
process). The toy tasks: SST-2's layout ("sentence<TAB>label" after a header), label 1 exactly
when the sentence holds one of three cue words; STS-B's layout (regression), score 1 or 0 by the
same rule (a tiny model from scratch needs long to stretch its output to STS-B's 0..5); XNLI's
layout, the label by a cue word in the hypothesis (`write_xnli`). A model that learns the rule
beats the majority class (accuracy 0.5, 1/3 for XNLI) by far.
"""

import json
import os
import re

import numpy as np
import pytest
import tensorflow as tf

from official.configs import BertConfig
from tests.cli import eval_results, failed, run_module, run_modules, succeeded

CUES = ("good", "great", "fine")
FILLERS = ("the", "a", "movie", "plot", "was", "is", "actor", "scene", "story", "and", "very",
           "long", "dark", "music", "ending", "film", "cast", "slow", "loud", "old")


def sentence(rng, positive):
    words = list(rng.choice(FILLERS, size=rng.integers(4, 9)))
    if positive:
        words.insert(rng.integers(0, len(words) + 1), str(rng.choice(CUES)))
    return " ".join(words)


def write_sst2(data_dir, rng, sizes=(("train", 320), ("dev", 64), ("test", 40))):
    os.makedirs(data_dir, exist_ok=True)
    for split, size in sizes:
        positives = rng.permutation(np.arange(size) % 2 == 0)
        with open(os.path.join(data_dir, f"{split}.tsv"), "w") as f:
            if split == "test":
                f.write("index\tsentence\n")
                f.writelines(f"{i}\t{sentence(rng, p)}\n" for i, p in enumerate(positives))
            else:
                f.write("sentence\tlabel\n")
                f.writelines(f"{sentence(rng, p)}\t{int(p)}\n" for p in positives)


def write_stsb(data_dir, rng, sizes=(("train", 320), ("dev", 64))):
    os.makedirs(data_dir, exist_ok=True)
    header = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2"
    for split, size in sizes:
        with open(os.path.join(data_dir, f"{split}.tsv"), "w") as f:
            f.write(header + "\tscore\n")
            for i, positive in enumerate(rng.permutation(np.arange(size) % 2 == 0)):
                f.write(f"{i}\tmain\tx\t2012\t{i}\tnone\tnone\t{sentence(rng, positive)}\t"
                        f"{sentence(rng, False)}\t{1.0 if positive else 0.0:.3f}\n")


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("classifier_model")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *CUES, *FILLERS]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    for layers, name in ((2, "bert_config.json"), (1, "one_layer_config.json")):
        BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=layers,
                   num_attention_heads=2, intermediate_size=64,
                   max_position_embeddings=32).to_json_file(str(root / name))
    # The model of the runs that learn (one layer is too few for the toy tasks: SST-2's and
    # XNLI's stay at chance on some draws), and of those that only need a run's parts to work.
    return {"vocab_file": str(root / "vocab.txt"),
            "bert_config_file": str(root / "bert_config.json"),
            "one_layer": str(root / "one_layer_config.json")}


def command(model_files, data_dir, output_dir, *flags, task="SST-2"):
    """run_classifier's module and flags for the toy task (`run_module`'s arguments)."""
    return [
        "run_scripts.run_classifier", f"--task_name={task}", f"--data_dir={data_dir}",
        f"--output_dir={output_dir}", f"--vocab_file={model_files['vocab_file']}",
        f"--bert_config_file={model_files['bert_config_file']}", "--max_seq_length=16",
        "--train_batch_size=16", "--eval_batch_size=24", "--predict_batch_size=7",
        "--learning_rate=2e-3", "--num_train_epochs=3", "--log_steps=10", *flags]


def run(model_files, data_dir, output_dir, *flags, task="SST-2"):
    return run_module(*command(model_files, data_dir, output_dir, *flags, task=task))


def logged_evals(log, metric):
    """{step: value} of the per-epoch evaluation lines."""
    return {int(step): float(value) for step, value in
            re.findall(rf"eval at step (\d+): .*?{metric} ([0-9.]+)", log)}


@pytest.fixture(scope="module")
def sst2_run(model_files, tmp_path_factory):
    root = tmp_path_factory.mktemp("sst2")
    write_sst2(str(root / "data"), np.random.default_rng(0))
    log = succeeded(run(model_files, root / "data", root / "out", "--do_train", "--do_eval",
                        "--do_predict")).stderr
    return {"data": root / "data", "out": root / "out", "log": log}


def test_fine_tuning_learns_the_task_and_evaluates_every_epoch(sst2_run):
    out, log = sst2_run["out"], sst2_run["log"]
    # 320 examples / 16 = 20 steps an epoch: evaluated at 20, 40 and 60.
    accuracy = logged_evals(log, "eval_accuracy")
    assert sorted(accuracy) == [20, 40, 60]
    results = eval_results(out / "eval_results.txt")
    assert set(results) == {"eval_accuracy", "eval_loss", "global_step", "loss"}
    assert results["global_step"] == "60"
    assert float(results["eval_accuracy"]) >= 0.9  # the majority class gets 0.5
    assert float(results["eval_loss"]) == float(results["loss"])


def test_the_best_checkpoint_is_kept_with_its_results(sst2_run):
    best = sst2_run["out"] / "best"
    accuracy = logged_evals(sst2_run["log"], "eval_accuracy")
    kept = eval_results(best / "eval_results.txt")
    best_step = int(kept["global_step"])
    assert float(kept["eval_accuracy"]) == pytest.approx(max(accuracy.values()), abs=1e-4)
    # The earliest step of the best value: a tie does not replace the kept one.
    assert best_step == min(s for s, v in accuracy.items() if v == max(accuracy.values()))
    assert (best / f"model.ckpt-{best_step}.index").exists()
    assert (best / "bert_config.json").exists() and (best / "checkpoint").exists()


def test_test_predictions_and_the_submission_file(sst2_run):
    out = sst2_run["out"]
    probabilities = np.loadtxt(out / "test_results.tsv", delimiter="\t")
    assert probabilities.shape == (40, 2)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-6)
    lines = (out / "SST-2.tsv").read_text().splitlines()
    assert lines[0] == "index\tprediction"
    predicted = [line.split("\t") for line in lines[1:]]
    assert [int(i) for i, _ in predicted] == list(range(40))
    assert [int(p) for _, p in predicted] == list(probabilities.argmax(axis=1))
    # Test sentences follow the rule too: the predictions should.
    sentences = [line.split("\t")[1] for line in
                 (sst2_run["data"] / "test.tsv").read_text().splitlines()[1:]]
    truth = [int(any(cue in s.split() for cue in CUES)) for s in sentences]
    assert np.mean(np.array(truth) == probabilities.argmax(axis=1)) >= 0.9


def test_a_finished_run_predicts_again_from_its_checkpoint(model_files, sst2_run, tmp_path):
    out = sst2_run["out"]
    before = (out / "test_results.tsv").read_text()
    checkpoints = sorted(os.listdir(out))
    (out / "test_results.tsv").unlink()
    log = succeeded(run(model_files, sst2_run["data"], out, "--do_predict")).stderr
    assert "cached records reused" in log and "Restored" in log
    assert (out / "test_results.tsv").read_text() == before
    assert sorted(os.listdir(out)) == checkpoints  # nothing trained or written anew


def test_regression_and_determinism(model_files, tmp_path):
    write_stsb(str(tmp_path / "data"), np.random.default_rng(1))
    # The two runs side by side, each a process of its own.
    first = [succeeded(result).stderr for result in run_modules(*(
        command(model_files, tmp_path / "data", tmp_path / name, "--do_train", "--do_eval",
                "--num_train_epochs=6", task="STS-B") for name in ("a", "b")))]
    results = [eval_results(tmp_path / name / "eval_results.txt") for name in ("a", "b")]
    assert set(results[0]) >= {"eval_pearson", "eval_spearman", "eval_combined", "eval_loss"}
    assert float(results[0]["eval_pearson"]) > 0.9
    # The same flags and seed: the same numbers to the last digit, and the same checkpoint.
    assert results[0] == results[1]
    assert logged_evals(first[0], "eval_pearson") == logged_evals(first[1], "eval_pearson")
    readers = [tf.train.load_checkpoint(str(tmp_path / name / "model.ckpt-120"))
               for name in ("a", "b")]
    names = [n for n in readers[0].get_variable_to_shape_map() if not n.startswith("iterator")]
    assert any(n.startswith("encoder/") for n in names)
    for name in names:  # (the iterator's state names its file, which differs)
        np.testing.assert_array_equal(readers[0].get_tensor(name), readers[1].get_tensor(name))


@pytest.mark.parametrize("problem, expected", [
    ("bad_label", r"train\.tsv:3: label '7' is not one of 0, 1"),
    ("short_row", r"train\.tsv:2: .*column"),
    ("missing", r"dev\.tsv: no such file"),
])
def test_bad_input_is_one_line_naming_the_file(model_files, tmp_path, problem, expected):
    data = tmp_path / "data"
    write_sst2(str(data), np.random.default_rng(2), sizes=(("train", 8), ("dev", 4)))
    lines = (data / "train.tsv").read_text().splitlines()
    if problem == "bad_label":
        lines[2] = lines[2].rsplit("\t", 1)[0] + "\t7"
    elif problem == "short_row":
        lines[1] = "no label column here"
    else:
        (data / "dev.tsv").unlink()
    (data / "train.tsv").write_text("\n".join(lines) + "\n")
    message = failed(run(model_files, data, tmp_path / "out", "--do_train", "--do_eval",
                         "--train_batch_size=4"))
    assert message.startswith("run_classifier: ")
    assert re.search(expected, message), message
    assert not (tmp_path / "out").exists()  # every split is read before anything is written


def test_mirrored_strategy_mixed_precision_and_xla(model_files, tmp_path):
    """The same job under MirroredStrategy (one CPU replica here: the distributed input and the
    gathered predictions), bfloat16 and XLA: it trains, evaluates and predicts every row (a
    one-layer model: less to trace and compile, and nothing here asks it to learn)."""
    write_sst2(str(tmp_path / "data"), np.random.default_rng(3),
               sizes=(("train", 64), ("dev", 30), ("test", 11)))
    one_layer = {"vocab_file": model_files["vocab_file"],
                 "bert_config_file": model_files["one_layer"]}
    succeeded(run(one_layer, tmp_path / "data", tmp_path / "out", "--do_train", "--do_eval",
                  "--do_predict", "--num_train_epochs=1", "--distribution_strategy=mirrored",
                  "--dtype=bfloat16", "--jit_compile"))
    results = eval_results(tmp_path / "out" / "eval_results.txt")
    assert results["global_step"] == "4" and 0 <= float(results["eval_accuracy"]) <= 1
    assert np.loadtxt(tmp_path / "out" / "test_results.tsv", delimiter="\t").shape == (11, 2)


# ---- zero-shot cross-lingual evaluation (--eval_languages) -----------------------------------

# The toy NLI rule: the hypothesis holds its label's cue word.
NLI_CUES = {"contradiction": "great", "entailment": "good", "neutral": "fine"}
XNLI_HEADER = ("language\tgold_label\tsentence1_binary_parse\tsentence2_binary_parse\t"
               "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tpromptID\tpairID\n")


def nli_pair(rng, label):
    """An English premise and a hypothesis holding `label`'s cue."""
    words = list(rng.choice(FILLERS, size=rng.integers(2, 5)))
    words.insert(rng.integers(0, len(words) + 1), NLI_CUES[label])
    return " ".join(rng.choice(FILLERS, size=rng.integers(3, 6))), " ".join(words)


def xnli_rows(rows):
    """xnli.dev.tsv's lines of (language, premise, hypothesis, label) rows."""
    return "".join(f"{language}\t{label}\t(a)\t(b)\t(a)\t(b)\t{a}\t{b}\t1\t2\n"
                   for language, a, b, label in rows)


def write_xnli(data_dir, rng):
    """A toy XNLI download: English training pairs, and dev and test files mixing English,
    "de" and Chinese rows. Returns {(language, split): [(premise, hypothesis, label)]}.

    de's rows are English test pairs relabelled at random (de's dev: them shuffled; de's test:
    them reversed), so their predictions are those of the English test set (test_results.tsv).
    zh's rows are unknown characters only, 4 and 4: every row is the same [UNK] ids, so the
    model predicts one class for all of them, and with each label on a third of the rows its
    accuracy is 1/3 whatever it learnt.
    """
    labels = list(NLI_CUES)
    pairs = {}
    for language, split, size in (("en", "train", 192), ("en", "dev", 24), ("en", "test", 30)):
        pairs[language, split] = [(*nli_pair(rng, labels[i]), labels[i])
                                  for i in rng.permutation(np.arange(size) % 3)]
    english = [(a, b) for a, b, _ in pairs["en", "test"]]
    order = rng.permutation(len(english))
    pairs["de", "dev"] = [(*english[i], str(rng.choice(labels))) for i in order]
    pairs["de", "test"] = [(*pair, str(rng.choice(labels))) for pair in english[::-1]]
    characters = "天地人日月山水火木金土雨风云花草鸟鱼"
    for split, size in (("dev", 6), ("test", 9)):
        pairs["zh", split] = [("".join(rng.choice(list(characters), 3)) + "。",
                               "".join(rng.choice(list(characters), 3)) + "。", labels[i % 3])
                              for i in range(size)]
    os.makedirs(os.path.join(data_dir, "multinli"), exist_ok=True)
    with open(os.path.join(data_dir, "multinli", "multinli.train.en.tsv"), "w") as f:
        f.write("premise\thypo\tlabel\n")
        f.writelines(f"{a}\t{b}\t{label}\n" for a, b, label in pairs["en", "train"])
    for split in ("dev", "test"):
        # The languages interleaved at random, each language's rows in their order.
        rows = {language: iter(pairs[language, split]) for language in ("en", "de", "zh")}
        turns = rng.permutation([language for language in rows
                                 for _ in pairs[language, split]])
        with open(os.path.join(data_dir, f"xnli.{split}.tsv"), "w", encoding="utf-8") as f:
            f.write(XNLI_HEADER + xnli_rows((language, *next(rows[language]))
                                            for language in turns))
    return pairs


def test_zero_shot_languages_are_scored_by_the_checkpoint_english_dev_chose(model_files,
                                                                             tmp_path):
    data, out = tmp_path / "data", tmp_path / "out"
    pairs = write_xnli(str(data), np.random.default_rng(4))
    succeeded(run(model_files, data, out, "--do_train", "--do_eval", "--do_predict",
                  "--train_batch_size=8", "--num_train_epochs=2", "--eval_languages=en,de,zh",
                  task="xnli-en"))
    labels = list(NLI_CUES)
    # test_results.tsv: the English test set's predictions by the kept checkpoint (best/).
    predicted = np.loadtxt(out / "test_results.tsv", delimiter="\t").argmax(axis=1)
    english = {pair[:2]: p for pair, p in zip(pairs["en", "test"], predicted)}

    def accuracy(rows):
        return np.mean([english[a, b] == labels.index(label) for a, b, label in rows])

    kept = float(eval_results(out / "best" / "eval_results.txt")["eval_accuracy"])
    # The rule learnt: the predictions vary, so de's figures depend on each row's.
    assert kept >= 0.9 and len(set(predicted)) == 3
    expected = {
        "en": {"dev_accuracy": kept, "test_accuracy": accuracy(pairs["en", "test"])},
        "de": {"dev_accuracy": accuracy(pairs["de", "dev"]),
               "test_accuracy": accuracy(pairs["de", "test"])},
        "zh": {"dev_accuracy": 1 / 3, "test_accuracy": 1 / 3}}
    results = json.loads((out / "eval_results_by_language.json").read_text())
    assert list(results) == ["en", "de", "zh"]
    for language, scores in expected.items():
        assert results[language]["dev_examples"] == len(pairs[language, "dev"])
        assert results[language]["test_examples"] == len(pairs[language, "test"])
        for figure, value in scores.items():
            assert results[language][figure] == pytest.approx(value, abs=1e-6), (language,
                                                                                  figure)
    # The table: a column per language, accuracies in percent.
    rows = [line.strip("|").split("|") for line in
            (out / "eval_results_by_language.md").read_text().splitlines()
            if line.startswith("| ")]
    table = {row[0].strip(): [cell.strip() for cell in row[1:]] for row in rows}
    assert table[""] == ["en", "de", "zh"]
    assert table["test accuracy"] == [f"{100 * expected[language]['test_accuracy']:.1f}"
                                      for language in ("en", "de", "zh")]
    assert table["dev examples"] == ["24", "30", "6"]
    # Each language's sets are cached records, as every split's.
    for language in ("de", "zh"):
        for split in ("dev", "test"):
            assert (out / f"xnli-{language}-{split}.tf_record.json").exists()


@pytest.mark.parametrize("task, languages, expected", [
    ("xnli-en", "de,sw", r"xnli\.dev\.tsv: no rows with language 'sw'; it has de, en, zh$"),
    ("pawsx-en", "de,fr", r"/fr/dev_2k\.tsv: no such file$"),
])
def test_a_language_without_data_stops_the_run_before_training(model_files, tmp_path, task,
                                                                 languages, expected):
    data = tmp_path / "data"
    if task.startswith("xnli"):
        write_xnli(str(data), np.random.default_rng(5))
    else:
        rng = np.random.default_rng(5)
        for language, split, size in (("en", "train", 8), ("en", "dev", 4), ("de", "dev", 4)):
            os.makedirs(data / language, exist_ok=True)
            rows = "".join(f"{i}\t{sentence(rng, i % 2)}\t{sentence(rng, False)}\t{i % 2}\n"
                           for i in range(size))
            (data / language / f"{split}{'.tsv' if split == 'train' else '_2k.tsv'}"
             ).write_text("id\tsentence1\tsentence2\tlabel\n" + rows)
    message = failed(run(model_files, data, tmp_path / "out", "--do_train", "--do_eval",
                         f"--eval_languages={languages}", task=task))
    assert message.startswith("run_classifier: ") and re.search(expected, message), message
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("task, flags, expected", [
    ("SST-2", ("--do_eval", "--eval_languages=de"),
     "--eval_languages: task sst-2 has no languages; the multilingual tasks are xnli, pawsx"),
    ("xnli-en", ("--do_train", "--eval_languages=de"),
     "--eval_languages are scored with --do_eval (by the checkpoint the training language's "
     "dev set picks)"),
    ("xnli-en", ("--do_eval", "--eval_languages=de,fr,de"), "--eval_languages: de listed twice"),
    ("xnli-en", ("--do_eval", "--eval_languages=de,,fr"),
     "--eval_languages=de,,fr: an empty language"),
    ("pawsx-en", ("--do_eval", "--eval_languages=de,../en"),
     "--eval_languages: task 'pawsx-../en': a language is letters, digits, '-' and '_', as the "
     "data names it (de, zh)"),
])
def test_eval_languages_refused_before_any_work(model_files, tmp_path, task, flags, expected):
    (tmp_path / "data").mkdir()
    message = failed(run(model_files, tmp_path / "data", tmp_path / "out", *flags, task=task))
    assert message == f"run_classifier: {expected}"
