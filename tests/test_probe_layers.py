"""Tests for run_scripts.probe_layers, run as a user runs it: a tiny random BERT probed on the
shipped UD sample, its files, its cache, and bad inputs refused in one line with nothing
written."""

import json
import shutil

import keras
import numpy as np
import pytest

from data_prep.conllu import read_conllu
from official.checkpoints import tf2
from official.configs import BertConfig
from official.export import saving
from official.export.encoder import HubEncoder
from official.modeling.encoder import build_encoder
from official.text.tokenizer import FullTokenizer
from tests.cli import failed, refused, run_module, succeeded

SAMPLE = "data/ud_ewt_sample"
VOCAB = "data/vocab/uncased_vocab.txt"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model")
    config = BertConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    config.to_json_file(str(folder / "bert_config.json"))
    shutil.copy(VOCAB, folder / "vocab.txt")
    keras.utils.set_random_seed(0)
    encoder = build_encoder(config)
    tf2.save(encoder, str(folder / "bert_model.ckpt"))
    # The same weights as an encoder export (export_saved_model --export_type=encoder).
    saving.save(HubEncoder(encoder, FullTokenizer(VOCAB, do_lower_case=True)),
                str(folder / "export"))
    return str(folder)


@pytest.fixture(scope="module")
def treebank(tmp_path_factory):
    """The sample's first 40 / 15 / 15 sentences."""
    folder = tmp_path_factory.mktemp("treebank")
    for split, count in (("train", 40), ("dev", 15), ("test", 15)):
        blocks = open(f"{SAMPLE}/{split}.conllu", encoding="utf-8").read().split("\n\n")
        (folder / f"{split}.conllu").write_text("\n\n".join(blocks[:count]) + "\n\n",
                                                encoding="utf-8")
    return folder


def _args(checkpoint, treebank, out, *extra):
    return ["run_scripts.probe_layers", f"--init_checkpoint={checkpoint}",
            f"--train_file={treebank / 'train.conllu'}", f"--dev_file={treebank / 'dev.conllu'}",
            f"--test_file={treebank / 'test.conllu'}", f"--output_dir={out}",
            "--max_seq_length=64", "--probe_epochs=2", *extra]


def test_a_study_writes_its_results_table_and_plot_and_reuses_its_cache(checkpoint, treebank,
                                                                         tmp_path):
    out = tmp_path / "out"
    result = succeeded(run_module(*_args(checkpoint, treebank, out, "--task=deprel",
                                         "--control_task", "--mix=scalar")))
    results = json.loads((out / "probe_results.json").read_text())
    assert [e["layer"] for e in results["layers"]] == [0, 1, 2]
    assert results["task"] == "deprel" and len(results["mix"]["weights"]) == 3
    for e in results["layers"]:
        assert e["selectivity"]["test"] == pytest.approx(
            e["test"]["accuracy"] - e["control"]["test"]["accuracy"])
    assert (out / "probe_results.txt").read_text().strip() in result.stdout
    assert (out / "probe_curves.png").read_bytes().startswith(b"\x89PNG")
    cached = sorted(p.name for p in (out / "vector_cache").iterdir())
    assert len(cached) == 3 and all(name.endswith(".npy") for name in cached)
    assert sorted(p.name for p in (out / "probes").iterdir()) == sorted(
        [f"{kind}layer_{n:02d}.npz" for kind in ("", "control_") for n in range(3)] + ["mix.npz"])
    # The saved layer-1 probe, applied with numpy to the cached vectors of each dev word beside
    # its head's (zeros for the root's), scores the dev accuracy the study reported.
    dev = read_conllu(str(treebank / "dev.conllu"))
    words = sum(len(s.words) for s in dev)
    [vectors] = [v for v in (np.load(p) for p in (out / "vector_cache").iterdir())
                 if v.shape[1] == words]
    rows, gold, first = [], [], 0
    for sentence in dev:
        for i, (head, relation) in enumerate(zip(sentence.heads, sentence.relations)):
            head_vector = vectors[1, first + head - 1] if head else np.zeros(16, np.float32)
            rows.append(np.concatenate([vectors[1, first + i], head_vector]))
            gold.append(results["labels"].index(relation))
        first += len(sentence.words)
    probe = np.load(out / "probes" / "layer_01.npz")
    kernel, bias = (probe[next(k for k in probe.files if k.endswith(name))]
                    for name in ("/kernel", "/bias"))
    accuracy = np.mean(np.argmax(np.stack(rows) @ kernel + bias, axis=-1) == gold)
    assert accuracy == pytest.approx(results["layers"][1]["dev"]["accuracy"], abs=1.5 / words)
    # Another task on the same words reads the vectors back, here through the encoder export of
    # the same weights (the cache's key holds the weights' fingerprint, the vocab's bytes and
    # the casing, which the export brings); the tree distance probe runs.
    export = f"{checkpoint}/export"
    again = succeeded(run_module(*_args(export, treebank, out, "--task=distance", "--layers=1",
                                        f"--bert_config_file={checkpoint}/bert_config.json")))
    assert again.stderr.count("read from the cache") == 3
    assert sorted(p.name for p in (out / "vector_cache").iterdir()) == cached
    distance = json.loads((out / "probe_results.json").read_text())
    assert [e["layer"] for e in distance["layers"]] == [1]
    assert 0 <= distance["layers"][0]["test"]["uuas"] <= 1


def test_bad_inputs_are_one_line_and_nothing_is_written(checkpoint, treebank, tmp_path):
    out = tmp_path / "out"
    broken = tmp_path / "broken.conllu"
    lines = (treebank / "dev.conllu").read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if line and not line.startswith("#"))
    fields = lines[number - 1].split("\t")
    lines[number - 1] = "\t".join(fields[:8])
    broken.write_text("\n".join(lines) + "\n")
    refused(run_module(*_args(checkpoint, treebank, out, "--task=upos",
                              f"--dev_file={broken}")),
            f"probe_layers: {broken}:{number}: 8 tab-separated columns, expected 10")
    # A label outside UD's sets is refused at its line, not learnt as one more class.
    lines[number - 1] = "\t".join(fields[:7] + ["subj:pass", *fields[8:]])
    broken.write_text("\n".join(lines) + "\n")
    refused(run_module(*_args(checkpoint, treebank, out, "--task=deprel",
                              f"--train_file={broken}")),
            f"probe_layers: {broken}:{number}: DEPREL 'subj:pass' is not one of UD's 37")
    refused(run_module(*_args(checkpoint, treebank, out, "--task=upos", "--layers=0,3")),
            "probe_layers: --layers: layer 3 is beyond the model", "0..2")
    empty = tmp_path / "empty.conllu"
    empty.write_text("# nothing here\n")
    refused(run_module(*_args(checkpoint, treebank, out, "--task=upos",
                              f"--test_file={empty}")), f"{empty}: no sentences")
    line = failed(run_module(*_args(checkpoint, treebank, out, "--task=depth",
                                    "--control_task")))
    assert line.startswith("probe_layers: --control_task:")
    refused(run_module(*_args(f"{checkpoint}/export", treebank, out, "--task=upos")),
            "is an encoder export, which keeps no config: pass its --bert_config_file")
    assert not out.exists()
