"""run_scripts/export_saved_model.py and official/export/jobs.py: every export type, served.

The proof the issue asks for: each export is loaded by tests/export_client.py in a fresh process
that imports only tensorflow and tensorflow_text, and its outputs equal (1e-5) the in-process
model's on the original's features; bad requests there give errors or defined outputs and the
process keeps serving; saved_model_cli lists the signatures and runs one on raw strings.
"""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_prep.classifier_features import convert_examples
from data_prep.conll import LABELS as NER_LABELS
from data_prep.glue import InputExample
from official.checkpoints import CONFIG_FILE, tf1, training
from official.configs import BertConfig
from official.export import jobs, saving
from official.modeling.encoder import build_encoder
from official.modeling.models import (
    BertClassifier,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from official.tasks.squad_settings import SquadSettings
from official.text.tokenizer import FullTokenizer
from tests.cli import ENV, PATIENCE, run_module, serve_requests

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
SEQ = 32
TEXTS_A = ["The cat sat on the mat.", "Héllo, WÖRLD! naïve café", "", "a long text " * 20]
TEXTS_B = ["A cat is sitting.", "", "only b", "short"]
NER_TEXTS = ["EU rejects German call to boycott British lamb.", "Zoë lives in Zürich.", ""]
QUESTIONS = ["Who sat on the mat?", "Where does Zoë live?"]
CONTEXTS = ["The cat (a tabby) sat on the mat, said Steve Smith's neighbour in 1999.",
            "Zoë lives in Zürich, near the lake, since 2001."]
SQUAD = SquadSettings(max_seq_length=SEQ, doc_stride=8, max_query_length=8)


def _features(tokenizer, pairs):
    features = convert_examples([InputExample(str(i), a, b or None, None)
                                 for i, (a, b) in enumerate(pairs)], None, SEQ, tokenizer)
    return {"input_word_ids": np.array([f.input_ids for f in features], np.int32),
            "input_mask": np.array([f.input_mask for f in features], np.int32),
            "input_type_ids": np.array([f.segment_ids for f in features], np.int32)}


def _write_finetuned(model, output_dir, config):
    os.makedirs(output_dir)
    tf.train.Checkpoint(**training.model_roots(model)).write(
        os.path.join(output_dir, "model.ckpt-7"))
    with open(os.path.join(output_dir, "checkpoint"), "w") as f:
        f.write('model_checkpoint_path: "model.ckpt-7"\n')
    config.to_json_file(os.path.join(output_dir, CONFIG_FILE))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Exports of each type, the client's results on them, and the in-process references."""
    root = str(tmp_path_factory.mktemp("export"))
    keras.utils.set_random_seed(3)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    config_file = os.path.join(root, CONFIG_FILE)
    config.to_json_file(config_file)
    tokenizer = FullTokenizer(VOCAB, do_lower_case=True)
    pretrainer = BertPretrainer(build_encoder(config))
    tf1.write(tf1.weights_of(pretrainer), os.path.join(root, "pretrained", "bert_model.ckpt"))
    classifier = BertClassifier(build_encoder(config), 2)
    tagger = BertTokenClassifier(build_encoder(config), len(NER_LABELS))
    span = BertSpanLabeler(build_encoder(config))
    for name, model in (("mrpc", classifier), ("ner", tagger), ("squad", span)):
        _write_finetuned(model, os.path.join(root, name), config)

    paths = {}
    # The entry point, in its own process (it defines flags), for the classifier ...
    done = run_module("run_scripts.export_saved_model",
                      "--export_type=classifier", "--task_name=MRPC", f"--vocab_file={VOCAB}",
                      f"--init_checkpoint={os.path.join(root, 'mrpc')}", f"--max_seq_length={SEQ}",
                      f"--export_dir={os.path.join(root, 'serving', 'classifier')}")
    assert done.returncode == 0, done.stderr[-3000:]
    paths["classifier"] = done.stdout.strip().splitlines()[-1]
    # ... and its library half for the others.
    common = dict(vocab_file=VOCAB, max_seq_length=SEQ)
    for kind, extra in (
            ("preprocessor", {}),
            ("encoder", dict(init_checkpoint=os.path.join(root, "pretrained"),
                             bert_config_file=config_file))):
        paths[kind] = jobs.export(jobs.ExportOptions(
            export_type=kind, export_dir=os.path.join(root, "serving", kind), **common, **extra))
    # NER and SQuAD in two steps, keeping the in-process module as the reference.
    modules = {}
    for kind, extra in (
            ("ner", dict(init_checkpoint=os.path.join(root, "ner"), labels=NER_LABELS)),
            ("squad", dict(init_checkpoint=os.path.join(root, "squad"), squad=SQUAD))):
        modules[kind] = jobs.serving_module(
            jobs.ExportOptions(export_type=kind, export_dir="", **common, **extra), tokenizer)
        paths[kind] = saving.save(modules[kind], os.path.join(root, "serving", kind),
                                  modules[kind].signatures())

    pairs = list(zip(TEXTS_A, TEXTS_B))
    single = _features(tokenizer, [(a, "") for a in TEXTS_A])
    positions = [[1, 2], [3, 1], [1, 1], [5, 9]]

    def request(name, kind, method, *args, **kwargs):
        return {"name": name, "path": paths[kind], "method": method, "args": list(args),
                "kwargs": kwargs}

    requests = [
        request("pre_call", "preprocessor", "", TEXTS_A),
        request("tok_a", "preprocessor", "tokenize", TEXTS_A),
        request("tok_b", "preprocessor", "tokenize", TEXTS_B),
        request("packed", "preprocessor", "bert_pack_inputs",
                {"list": [{"ref": "tok_a"}, {"ref": "tok_b"}]}, seq_length={"python": SEQ}),
        request("special", "preprocessor", "tokenize.get_special_tokens_dict"),
        request("do_lower_case", "preprocessor", "do_lower_case"),
        request("vocab", "preprocessor", "vocab_file.asset_path"),
        request("encoded", "encoder", "", {"ref": "pre_call"}),
        request("encoded_training", "encoder", "", {"ref": "pre_call"},
                training={"python": True}),
        request("mlm", "encoder", "mlm", {**{k: v.tolist() for k, v in single.items()},
                                          "masked_lm_positions": positions}),
        request("encoder_signature", "encoder", "signatures.serving_default",
                **{k: v.tolist() for k, v in single.items()}),
        request("classified", "classifier", "signatures.serving_default",
                text_a=TEXTS_A, text_b=TEXTS_B),
        request("bad_dtype", "classifier", "signatures.serving_default",
                text_a=[1, 2], text_b=[3, 4]),
        request("bad_sizes", "classifier", "signatures.serving_default",
                text_a=["a", "b"], text_b=["c"]),
        request("empty_batch", "classifier", "signatures.serving_default", text_a=[], text_b=[]),
        request("odd_text", "classifier", "signatures.serving_default",
                text_a={"bytes": ["caf\xc3\xa9 \xff\xfe", "", "very long " * 50000]},
                text_b={"bytes": ["\xc3", "", ""]}),
        request("ner", "ner", "signatures.serving_default", text=NER_TEXTS),
        request("squad", "squad", "signatures.serving_default", question=QUESTIONS,
                context=CONTEXTS),
        request("squad_bad", "squad", "signatures.serving_default", question=["a"],
                context=["b", "c"]),
        request("classified_again", "classifier", "signatures.serving_default",
                text_a=TEXTS_A, text_b=TEXTS_B),
    ]
    results = serve_requests(requests, root)
    return {"paths": paths, "results": results, "tokenizer": tokenizer, "pairs": pairs,
            "single": single, "positions": positions, "pretrainer": pretrainer,
            "classifier": classifier, "modules": modules}


def test_versioned_export_dirs(served):
    for path in served["paths"].values():
        assert os.path.basename(path).isdigit(), path
        assert os.path.exists(os.path.join(path, "saved_model.pb"))
        assert os.listdir(os.path.dirname(path)) == [os.path.basename(path)]  # no leftovers
    assert served["results"]["modules"] == [] or "official" not in served["results"]["modules"]
    assert "data_prep" not in served["results"]["modules"]


def test_preprocessor_in_a_fresh_process(served):
    results, tokenizer = served["results"], served["tokenizer"]
    for name, value in served["single"].items():
        np.testing.assert_array_equal(results["pre_call"][name], value)
    pairs = _features(tokenizer, served["pairs"])
    for name, value in pairs.items():
        np.testing.assert_array_equal(results["packed"][name], value)
    assert len(results["tok_a"]["ragged"][0]) == 7  # words: the cat sat on the mat .
    assert results["special"]["mask_id"] == 103 and results["do_lower_case"] is True
    assert results["vocab"].endswith(os.path.join("assets", "uncased_vocab.txt"))


def test_encoder_composes_with_the_preprocessor(served):
    results, pretrainer = served["results"], served["pretrainer"]
    expected = pretrainer.encoder(served["single"])
    encoded = results["encoded"]
    np.testing.assert_allclose(encoded["pooled_output"], expected["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(encoded["default"], expected["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(encoded["sequence_output"], expected["sequence_output"],
                               atol=1e-5)
    for got, layer in zip(encoded["encoder_outputs"], expected["encoder_outputs"]):
        np.testing.assert_allclose(got, layer, atol=1e-5)
    signature = results["encoder_signature"]
    np.testing.assert_allclose(signature["encoder_outputs_1"], expected["encoder_outputs"][1],
                               atol=1e-5)
    assert not np.allclose(results["encoded_training"]["pooled_output"],
                           expected["pooled_output"], atol=1e-5)  # dropout
    mlm = pretrainer(dict(served["single"],
                          masked_lm_positions=np.array(served["positions"], np.int32)))
    np.testing.assert_allclose(results["mlm"]["mlm_logits"], mlm["masked_lm_logits"], atol=1e-5)


def test_classifier_in_a_fresh_process(served):
    results, model, tokenizer = served["results"], served["classifier"], served["tokenizer"]
    logits = model(_features(tokenizer, served["pairs"]), training=False)
    for name in ("classified", "classified_again"):
        np.testing.assert_allclose(results[name]["probabilities"], tf.nn.softmax(logits),
                                   atol=1e-5)
        assert results[name]["label"] == [["0", "1"][i] for i in np.argmax(logits, -1)]


def test_bad_requests_are_errors_or_defined_outputs(served):
    results, model, tokenizer = served["results"], served["classifier"], served["tokenizer"]
    assert results["bad_dtype"]["error"] in ("InvalidArgumentError", "TypeError", "ValueError")
    assert results["bad_sizes"]["error"] == "InvalidArgumentError"
    assert "same number of texts" in results["bad_sizes"]["message"]
    assert results["squad_bad"]["error"] == "InvalidArgumentError"
    assert results["empty_batch"] == {"probabilities": [], "label": []}
    # Bytes that are not UTF-8 are dropped (as the tokenizer drops them); long text truncated.
    logits = model(_features(tokenizer, [("café ", ""), ("", ""), ("very long " * 50000, "")]))
    np.testing.assert_allclose(results["odd_text"]["probabilities"], tf.nn.softmax(logits),
                               atol=1e-5)


def test_ner_and_squad_in_a_fresh_process(served):
    results = served["results"]
    # The in-process modules (test_export_ner and test_export_squad check them against the
    # original's features and decoding).
    ner = served["modules"]["ner"](tf.constant(NER_TEXTS))
    squad = served["modules"]["squad"](tf.constant(QUESTIONS), tf.constant(CONTEXTS))
    for got, expected in ((results["ner"], ner), (results["squad"], squad)):
        assert set(got) == set(expected)
        for name, value in expected.items():
            if value.dtype == tf.string:
                assert got[name] == [[x.decode() for x in row] for row in value.numpy()] \
                    if value.shape.rank == 2 else [x.decode() for x in value.numpy()], name
            else:
                np.testing.assert_allclose(got[name], value, atol=1e-5, err_msg=name)
    assert results["ner"]["words"][1][:4] == ["Zoë", "lives", "in", "Zürich"]


def test_saved_model_cli_lists_and_runs_the_signature(served):
    path = served["paths"]["classifier"]
    env = dict(ENV, TF_CPP_MIN_LOG_LEVEL="2")
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    shown = subprocess.run([cli, "show", "--dir", path, "--all"], capture_output=True,
                           text=True, timeout=PATIENCE, env=env)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "signature_def['serving_default']" in shown.stdout
    for name in ("text_a", "text_b", "probabilities", "label"):
        assert f"['{name}']" in shown.stdout
    # `run` executes the graph: the tensorflow_text ops must be registered in its process.
    run = subprocess.run(
        [sys.executable, "-c", "import sys, tensorflow_text; from tensorflow.python.tools."
         "saved_model_cli import main; sys.argv[0] = 'saved_model_cli'; sys.exit(main())",
         "run", "--dir", path, "--tag_set", "serve", "--signature_def", "serving_default",
         "--input_exprs", 'text_a=["The cat sat on the mat."];text_b=["A cat is sitting."]'],
        capture_output=True, text=True, timeout=PATIENCE, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "probabilities" in run.stdout and "label" in run.stdout
    expected = served["results"]["classified"]["label"][0]
    assert f"b'{expected}'" in run.stdout
