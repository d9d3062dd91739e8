"""Long documents end to end, as a user runs them: run_classifier --long_doc, its export, and
serving memory that does not grow with a text's length.

The toy task: documents of 30 to 60 filler words, then 8 cue words that give the label (good,
great, fine: "pos"; bad, poor, awful: "neg"), so with max_seq_length 16 (14 tokens a row) the
cues are only ever in a document's last two windows. Truncation never sees them and stays at
chance; windows, pooled, learn them. (With a single cue word, a 2-layer model from random
weights needs far more updates to find it among the filler windows than a test can give.)
"""

import concurrent.futures
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from official.configs import BertConfig
from tests.cli import (
    ENV,
    PATIENCE,
    eval_results,
    refused,
    run_module,
    run_modules,
    serve_requests,
    succeeded,
)

POSITIVE, NEGATIVE = ("good", "great", "fine"), ("bad", "poor", "awful")
FILLERS = ("the", "a", "movie", "plot", "was", "is", "actor", "scene", "story", "and", "very",
           "long", "dark", "music", "ending", "film", "cast", "slow", "loud", "old")


def document(rng, positive):
    words = list(rng.choice(FILLERS, size=rng.integers(30, 60)))
    return " ".join(words + list(rng.choice(POSITIVE if positive else NEGATIVE, size=8)))


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("long_documents")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *POSITIVE, *NEGATIVE, *FILLERS]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    # Two layers for the runs that learn; one for head_tail's, which only exports (less to trace).
    for layers, name in ((2, "bert_config.json"), (1, "one_layer_config.json")):
        BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=layers,
                   num_attention_heads=2, intermediate_size=64,
                   max_position_embeddings=32).to_json_file(str(root / name))
    data = root / "data"
    data.mkdir()
    (data / "labels.txt").write_text("neg\npos\n")
    rng = np.random.default_rng(7)
    for split, size in (("train", 320), ("dev", 64), ("test", 40)):
        rows = [(document(rng, p), "pos" if p else "neg")
                for p in rng.permutation(np.arange(size) % 2 == 0)]
        # The training rows 4 times over: an epoch is 4 passes, so that 12 passes take 3
        # evaluations and saves, not 12.
        rows = rows * 4 if split == "train" else rows
        (data / f"{split}.tsv").write_text(
            "sentence\tlabel\n" + "".join(f"{text}\t{label}\n" for text, label in rows))
    return {"root": root, "data": str(data), "vocab": str(root / "vocab.txt"),
            "config": str(root / "bert_config.json"),
            "one_layer": str(root / "one_layer_config.json")}


def classifier_command(toy, output_dir, *flags):
    """run_classifier's module and flags for the toy (`run_module`'s arguments)."""
    return [
        "run_scripts.run_classifier", "--task_name=tsv", f"--data_dir={toy['data']}",
        f"--output_dir={output_dir}", f"--vocab_file={toy['vocab']}",
        f"--bert_config_file={toy['config']}", "--max_seq_length=16", "--train_batch_size=16",
        "--eval_batch_size=24", "--predict_batch_size=7", "--learning_rate=2e-3",
        "--log_steps=50", *flags]


def classifier(toy, output_dir, *flags):
    return run_module(*classifier_command(toy, output_dir, *flags))


@pytest.fixture(scope="module")
def runs(toy):
    """{mode: output_dir}: the same budget of updates (12 passes over the documents) for
    truncate and windows, run side by side (head_tail's run is for its export: 4 updates of a
    one-layer model)."""
    flags = {"truncate": ["--num_train_epochs=3"],
             "windows": ["--num_train_epochs=3", "--long_doc=windows"],
             "head_tail": ["--num_train_epochs=0.05", "--long_doc=head_tail", "--head_tokens=4"]}
    models = {mode: dict(toy, config=toy["one_layer"]) if mode == "head_tail" else toy
              for mode in flags}
    outputs = {mode: toy["root"] / f"out_{mode}" for mode in flags}
    with concurrent.futures.ThreadPoolExecutor(len(flags)) as pool:
        results = {mode: pool.submit(classifier, models[mode], outputs[mode], "--do_train",
                                     "--do_eval", "--do_predict", *flags[mode]) for mode in flags}
        for result in results.values():
            succeeded(result.result())
    return outputs


def test_windows_learn_what_truncation_cannot_see(runs, toy):
    windows = float(eval_results(runs["windows"] / "eval_results.txt")["eval_accuracy"])
    truncate = float(eval_results(runs["truncate"] / "eval_results.txt")["eval_accuracy"])
    assert windows >= 0.9 and truncate <= 0.65, (windows, truncate)
    # Documents, not windows: one row per test document, and the run's record.
    assert len((runs["windows"] / "test_results.tsv").read_text().splitlines()) == 40
    record = json.loads((runs["windows"] / "best" / "long_documents.json").read_text())
    assert record == {"long_doc": "windows", "doc_stride": 7, "max_windows": 8,
                      "window_pool": "mean_logits", "window_loss": "document"}
    assert not (runs["truncate"] / "long_documents.json").exists()


def serve(folder, export_dirs: dict, texts) -> dict:
    """{name: the serving signature's outputs for `texts`} of each export, all served by one
    client process (tests/export_client.py)."""
    requests = [{"name": name, "path": str(export_dir / version),
                 "method": "signatures.serving_default", "kwargs": {"text_a": texts}}
                for name, export_dir in export_dirs.items()
                for (version,) in [os.listdir(export_dir)]]
    return serve_requests(requests, folder)


EXPORTED = ["windows", "head_tail"]


@pytest.fixture(scope="module")
def served_exports(runs, toy, tmp_path_factory):
    """{mode: what its export serves for the test documents}: the EXPORTED runs exported side
    by side, then served by one client."""
    root = tmp_path_factory.mktemp("exports")
    for result in run_modules(*(
            ["run_scripts.export_saved_model", "--export_type=classifier", "--task_name=tsv",
             f"--data_dir={toy['data']}", f"--init_checkpoint={runs[mode]}",
             f"--vocab_file={toy['vocab']}", "--max_seq_length=16", "--window_batch_size=3",
             f"--export_dir={root / mode}"] for mode in EXPORTED)):
        succeeded(result)
    return serve(root, {mode: root / mode for mode in EXPORTED}, texts_of_the_test_split(toy))


def texts_of_the_test_split(toy):
    lines = (toy["root"] / "data" / "test.tsv").read_text().splitlines()[1:]
    return [line.split("\t")[0] for line in lines]


@pytest.mark.parametrize("mode", EXPORTED)
def test_the_export_serves_documents_as_the_run_predicted(runs, toy, served_exports, mode):
    texts = texts_of_the_test_split(toy)
    served = served_exports[mode]
    predicted = np.loadtxt(runs[mode] / "test_results.tsv")
    np.testing.assert_allclose(served["probabilities"], predicted, atol=1e-5)
    if mode == "windows":
        # 14 tokens a row, stride 7: (n - 14 + 6) // 7 + 1 windows of n words (one token each).
        expected = [(len(t.split()) - 14 + 6) // 7 + 1 for t in texts]
        assert served["num_windows"] == expected
    else:
        assert "num_windows" not in served


def test_a_rerun_must_read_documents_as_the_checkpoints_did(runs, toy):
    before = sorted(os.listdir(runs["windows"]))
    windows_as_head_tail, truncate_as_windows = run_modules(  # side by side
        classifier_command(toy, runs["windows"], "--do_predict", "--long_doc=head_tail"),
        classifier_command(toy, runs["truncate"], "--do_predict", "--long_doc=windows"))
    refused(windows_as_head_tail,
            f"{runs['windows'] / 'long_documents.json'}", "long_doc", "windows", "head_tail")
    refused(truncate_as_windows, "made with nothing (the default)", "windows")
    assert sorted(os.listdir(runs["windows"])) == before


@pytest.mark.parametrize("flags, expected", [
    (["--doc_stride=4"], ["--doc_stride is for --long_doc=windows"]),
    (["--long_doc=windows", "--head_tokens=4"], ["--head_tokens is for --long_doc=head_tail"]),
    (["--long_doc=windows", "--doc_stride=0"], ["doc_stride must be at least 1, got 0"]),
    (["--long_doc=windows", "--gradient_accumulation_steps=2"],
     ["--gradient_accumulation_steps must be 1 with --long_doc=windows"]),
])
def test_bad_flags_are_one_line_before_any_work(toy, tmp_path, flags, expected):
    out = tmp_path / "out"
    refused(classifier(toy, out, "--do_train", *flags), *expected)
    assert not out.exists()


# Each text served by a child of its own, forked before TensorFlow's first op (it makes its
# thread pools there, as tests/fork_server.py relies on): its peak is its own, the two side by
# side, TensorFlow imported once. Prints "words windows kilobytes" a child.
MEMORY_CLIENT = """
import os, resource, sys, traceback
import tensorflow as tf
children = []
for words in sys.argv[2:]:
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            import tensorflow_text  # noqa: F401
            served = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
            vocab = ["the", "dark", "movie", "was", "very", "long", "and", "slow"]
            text = " ".join(vocab[i % len(vocab)] for i in range(int(words)))
            result = served(text_a=tf.constant([text]))
            print(words, int(result["num_windows"][0]),
                  resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    children.append(pid)
sys.exit(int(any(os.waitpid(pid, 0)[1] for pid in children)))
"""


def test_serving_memory_does_not_grow_with_the_text(tmp_path):
    """A 100,000-word text peaks at no more than 1.5x the memory of a 1,000-word one: the
    windows run window_batch_size at a time. (All in one batch, this model's activations for
    100,000 words would be about a gigabyte: one layer's at once, so one layer shows it.)"""
    from official.export import saving
    from official.export.classifier import ClassifierExport
    from official.modeling.encoder import build_encoder
    from official.modeling.models import BertDocumentClassifier
    from official.tasks.long_doc_settings import LongDocSettings
    from official.text.tokenizer import FullTokenizer

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "dark", "movie",
                                "was", "very", "long", "and", "slow"]) + "\n")
    config = BertConfig(vocab_size=12, hidden_size=128, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=512,
                        max_position_embeddings=64)
    model = BertDocumentClassifier(build_encoder(config), 2)
    module = ClassifierExport(model, FullTokenizer(str(vocab)), ["a", "b"], 64, False,
                              long_doc=LongDocSettings("windows").resolved(64),
                              window_batch_size=8)
    path = saving.save(module, str(tmp_path / "export"), module.signatures())

    # Each text in a process of its own (its peak is its own), the two side by side.
    client = subprocess.Popen([sys.executable, "-c", MEMORY_CLIENT, path, "1000", "100000"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    stdout, stderr = client.communicate(timeout=PATIENCE)
    succeeded(subprocess.CompletedProcess(client.args, client.returncode, stdout, stderr))
    peaks = {words: (int(windows), int(kilobytes))
             for words, windows, kilobytes in map(str.split, stdout.splitlines())}
    (short_windows, short), (long_windows, long) = peaks["1000"], peaks["100000"]
    # Windows of 62 tokens every 31: (n - 62 + 30) // 31 + 1 of n tokens.
    assert (short_windows, long_windows) == (32, 3225)
    print(f"peak RSS: {short} kB for 1,000 words, {long} kB for 100,000")
    assert long <= 1.5 * short, (short, long)


def test_a_windows_run_distils_into_a_windows_student(runs, toy, tmp_path):
    """4 updates of 16 documents (a twentieth of an epoch), then the dev documents evaluated."""
    out = tmp_path / "student"
    succeeded(run_module(
        "run_scripts.run_classifier", "--task_name=tsv",
        f"--data_dir={toy['data']}", f"--output_dir={out}", f"--vocab_file={toy['vocab']}",
        f"--teacher_checkpoint={runs['windows']}", "--student_layers=0", "--max_seq_length=16",
        "--train_batch_size=16", "--learning_rate=2e-3", "--num_train_epochs=0.05",
        "--do_train", "--do_eval", "--long_doc=windows"))
    assert eval_results(out / "best" / "eval_results.txt")["global_step"] == "4"
    # The student reads documents as its teacher did, and its export will serve them so.
    assert (out / "best" / "long_documents.json").read_text() == \
        (runs["windows"] / "long_documents.json").read_text()
