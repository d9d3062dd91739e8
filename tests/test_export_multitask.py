"""official/export/multitask.py (export_type=multitask) and parameter-efficient runs exported
alone: a classifier trained with adapters and a NER tagger trained with LoRA on one base.

Each export is loaded by tests/export_client.py in a fresh process that imports only tensorflow
and tensorflow_text. The multi-task SavedModel's signature for each task gives that task's own
export's outputs, the single exports give the in-process adapted models' outputs, and the
multi-task SavedModel stores the base once: base + 5% per task at most.
"""

import os

import numpy as np
import pytest

from data_prep.classifier_features import convert_examples
from data_prep.conll import LABELS as NER_LABELS
from data_prep.glue import InputExample
from official.configs import BertConfig
from official.export import jobs
from official.peft import methods
from official.tasks.classification import ClassificationTask
from official.tasks.ner import NerTask
from official.text.tokenizer import FullTokenizer
from tests.cli import run_module, serve_requests
from tests.peft_helpers import write_base, write_run
from tests.test_export_saved_model import VOCAB

SEQ = 16
TEXTS = ["The cat sat on the mat.", "Zoë lives in Zürich.", "", "a long text " * 20]
CONFIG = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)


def variables_bytes(export_path):
    folder = os.path.join(export_path, "variables")
    return sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("peft_export")
    base = write_base(CONFIG, root / "base")
    models = {
        "sst": write_run(base, methods.from_flags(adapter_size=4), root / "sst",
                         ClassificationTask("SST-2", ["0", "1"])),
        "ner": write_run(base, methods.from_flags(lora_rank=2), root / "ner",
                         NerTask(NER_LABELS)),
    }
    common = dict(vocab_file=VOCAB, max_seq_length=SEQ)
    paths = {
        # The run alone (its record names the base), and the base with the run beside it.
        "sst": jobs.export(jobs.ExportOptions(
            export_type="classifier", export_dir=str(root / "serving" / "sst"),
            init_checkpoint=str(root / "sst"), labels=["0", "1"], **common)),
        "ner": jobs.export(jobs.ExportOptions(
            export_type="ner", export_dir=str(root / "serving" / "ner"), init_checkpoint=base,
            peft_checkpoint=str(root / "ner"), labels=NER_LABELS, **common)),
    }
    done = run_module(
        "run_scripts.export_saved_model", "--export_type=multitask",
        f"--peft_checkpoints={root / 'sst'},tagger={root / 'ner'}", f"--vocab_file={VOCAB}",
        f"--export_dir={root / 'serving' / 'multi'}")
    assert done.returncode == 0, done.stderr[-3000:]
    paths["multi"] = done.stdout.strip().splitlines()[-1]

    requests = [{"name": "signatures", "path": paths["multi"], "method": "signatures.keys",
                 "args": [], "kwargs": {}}]
    for name, path, signature in (("sst", paths["sst"], "serving_default"),
                                  ("multi_sst", paths["multi"], "sst_2"),
                                  ("ner", paths["ner"], "serving_default"),
                                  ("multi_ner", paths["multi"], "tagger")):
        requests.append({"name": name, "path": path, "method": f"signatures.{signature}",
                         "args": [], "kwargs": {("text" if "ner" in name else "text_a"): TEXTS}})
    return {"paths": paths, "models": models, "base": base,
            "results": serve_requests(requests, root)}


def test_each_signature_serves_what_its_task_exported_alone_does(served):
    results = served["results"]
    assert sorted(results["signatures"]) == ["sst_2", "tagger"]
    np.testing.assert_allclose(results["multi_sst"]["probabilities"],
                               results["sst"]["probabilities"], atol=1e-6)
    assert results["multi_sst"]["label"] == results["sst"]["label"]
    assert results["multi_ner"] == results["ner"]  # the same entities, offsets and tags


def test_a_single_export_serves_the_adapted_model(served):
    """The classifier export's probabilities are the adapted model's on the original's
    features (run_classifier's records) of the same texts."""
    made = convert_examples([InputExample(str(i), t, None, None) for i, t in enumerate(TEXTS)],
                            None, SEQ, FullTokenizer(VOCAB, do_lower_case=True))
    inputs = {"input_word_ids": np.array([f.input_ids for f in made], np.int32),
              "input_mask": np.array([f.input_mask for f in made], np.int32),
              "input_type_ids": np.array([f.segment_ids for f in made], np.int32)}
    logits = np.asarray(served["models"]["sst"](inputs), np.float64)
    expected = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(served["results"]["sst"]["probabilities"], expected, atol=1e-5)


def test_the_multitask_savedmodel_stores_the_base_once(served):
    base_bytes = sum(os.path.getsize(os.path.join(served["base"], name))
                     for name in os.listdir(served["base"]) if "bert_model.ckpt" in name)
    multi = variables_bytes(served["paths"]["multi"])
    assert multi <= base_bytes * (1 + 0.05 * 2), (multi, base_bytes)
    # Each single export holds the base too (a LoRA run folded into it): two of them hold it
    # twice.
    singles = variables_bytes(served["paths"]["sst"]) + variables_bytes(served["paths"]["ner"])
    assert singles > 1.9 * base_bytes
