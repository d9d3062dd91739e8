"""official/peft/bitfit.py: BitFit (Ben Zaken et al. 2022) trains the encoder's bias terms and the
head, nothing else; its artifact holds only those; served folded it is the adapted model.

The counts are by hand: a layer's bias terms are query, key and value (3H), the attention
output (H), its LayerNorm's beta (H), the intermediate (I), the output (H) and its LayerNorm's
beta (H); beside the layers, the embeddings' LayerNorm beta and the pooler's bias (H each).
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep.classifier_features import convert_examples
from data_prep.glue import InputExample
from official.checkpoints import tf1
from official.configs import preset
from official.export import jobs
from official.export.classifier import ClassifierExport
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier, BertSpanLabeler
from official.peft import adaptation, artifact, merging, methods
from official.tasks.classification import ClassificationTask
from official.text.tokenizer import FullTokenizer
from official.training import finetuning
from tests.peft_helpers import write_base, write_run
from tests.test_export_saved_model import VOCAB
from tests.test_finetuning import LoggedData, options
from tests.test_peft_adaptation import Spy

BITFIT = methods.from_flags(bitfit=True)
TASK = ClassificationTask("tsv", ["0", "1"])


def bias_terms(config, pooler=True):
    """{original name} of every bias term of an encoder of `config`."""
    names = {"bert/embeddings/LayerNorm/beta"} | ({"bert/pooler/dense/bias"} if pooler else set())
    for i in range(config.num_hidden_layers):
        layer = f"bert/encoder/layer_{i}"
        names |= {f"{layer}/attention/self/{m}/bias" for m in ("query", "key", "value")}
        names |= {f"{layer}/attention/output/dense/bias",
                  f"{layer}/attention/output/LayerNorm/beta", f"{layer}/intermediate/dense/bias",
                  f"{layer}/output/dense/bias",
                  f"{layer}/output/LayerNorm/beta"}
    return names


def trained_names(model):
    return {name for name, variable in tf1.original_names(model).items() if variable.trainable}


def test_the_flag_and_the_record():
    assert BITFIT.method == "bitfit" and not BITFIT.train_pooler
    assert methods.from_dict(BITFIT.to_dict()) == BITFIT
    assert methods.from_flags(bitfit=True, train_pooler=True).describe() == \
        "BitFit (bias terms), pooler trained"
    with pytest.raises(ValueError, match="--lora_rank and --bitfit are two methods"):
        methods.from_flags(bitfit=True, lora_rank=2)


def test_it_trains_exactly_the_bias_terms_and_the_head(tiny_config, make_inputs):
    model = BertClassifier(build_encoder(tiny_config), 2)
    inputs = make_inputs(3, 9)
    before = np.asarray(model(inputs))

    methods.apply(model, BITFIT)

    assert trained_names(model) == bias_terms(tiny_config)
    assert all(v.trainable for v in model.classifier.weights)
    assert model.encoder.adapted_by == "bitfit"
    np.testing.assert_array_equal(np.asarray(model(inputs)), before)  # nothing inserted
    # The fused QKV bias trains whole (all three of its parts are bias terms); its kernel not.
    qkv = model.encoder.transformer_layers[0].attention.qkv
    assert qkv.bias.trainable and not qkv.kernel.trainable


def test_under_a_head_that_never_reads_the_pooler_the_pooler_stays_frozen(tiny_config):
    model = BertSpanLabeler(build_encoder(tiny_config))
    methods.apply(model, methods.from_flags(bitfit=True, train_pooler=True))
    assert trained_names(model) == bias_terms(tiny_config, pooler=False)


def test_bert_base_trains_under_a_tenth_of_a_percent():
    """L(7H + I) + 2H bias terms: 102,912 of BERT-Base's 109.5M (0.094%; the paper's "about
    0.08%" of the whole model), plus the head's 2H + 2."""
    config = preset("base", vocab_size=30522)
    model = BertClassifier(build_encoder(config), 2)
    total = sum(int(np.prod(v.shape)) for v in model.encoder.weights)
    methods.apply(model, BITFIT)
    trained = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    h, i, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    assert trained == layers * (7 * h + i) + 2 * h + (2 * h + 2) == 102912 + 1538
    assert (trained - 1538) / total < 0.001


def test_a_run_changes_only_the_bias_terms_and_keeps_only_them(files, tiny_config, tmp_path):
    base = write_base(tiny_config, tmp_path / "base")
    out = tmp_path / "out"
    opts, adapt = adaptation.resolve(BITFIT, options(files, out, do_train=True, do_eval=True,
                                                     init_checkpoint=base), TASK)
    spy = Spy(adapt)
    finetuning.run(opts, TASK, LoggedData(str(tmp_path)), [spy])
    model = spy.model

    base_weights = tf1.read(os.path.join(base, "bert_model.ckpt"))
    changed = {name for name, value in tf1.weights_of(model).items()
               if not np.array_equal(value, base_weights[name])}
    assert changed and changed <= bias_terms(tiny_config)  # the rest bit-identical to the base
    saved = dict(tf.train.list_variables(tf.train.latest_checkpoint(str(out / "best"))))
    assert {name.split("/")[0] for name in saved} == {
        "_CHECKPOINTABLE_OBJECT_GRAPH", "encoder_trained", "heads", "step"}
    # The encoder's part is the bias terms' values, every one once (the fused QKV bias whole).
    h, i = tiny_config.hidden_size, tiny_config.intermediate_size
    assert sum(int(np.prod(shape)) for name, shape in saved.items()
               if name.startswith("encoder_trained/")) == \
        tiny_config.num_hidden_layers * (7 * h + i) + 2 * h
    assert artifact.read_record(str(out / "best")).settings == BITFIT


def test_served_folded_it_is_the_adapted_model(tiny_config, make_inputs, tmp_path):
    """A BitFit run has nothing to fold: its biases are the plain model's. The export serves
    the plain model with them (merged), and computes what the adapted model does."""
    config = preset("tiny", vocab_size=30522)
    base = write_base(config, tmp_path / "base")
    adapted = write_run(base, BITFIT, tmp_path / "run")
    plain = merging.merged_model(adapted, TASK.build_model(build_encoder(config)), BITFIT)
    assert not plain.encoder.adapted
    inputs = make_inputs(3, 9)
    np.testing.assert_array_equal(np.asarray(plain(inputs)), np.asarray(adapted(inputs)))

    texts = ["The cat sat on the mat.", "Zoë lives in Zürich.", "", "a long text " * 20]
    tokenizer = FullTokenizer(VOCAB, do_lower_case=True)
    merged = jobs.serving_module(jobs.ExportOptions(
        export_type="classifier", export_dir="", vocab_file=VOCAB, max_seq_length=16,
        init_checkpoint=str(tmp_path / "run"), labels=["neg", "pos"]), tokenizer)
    unmerged = ClassifierExport(adapted, tokenizer, ["neg", "pos"], 16, pair=False)
    served = {name: module.signatures()["serving_default"](text_a=tf.constant(texts))
              for name, module in (("merged", merged), ("unmerged", unmerged))}
    np.testing.assert_allclose(served["merged"]["probabilities"],
                               served["unmerged"]["probabilities"], atol=1e-6)
    made = convert_examples([InputExample(str(i), t, None, None) for i, t in enumerate(texts)],
                            None, 16, tokenizer)
    logits = np.asarray(adapted({
        "input_word_ids": np.array([f.input_ids for f in made], np.int32),
        "input_mask": np.array([f.input_mask for f in made], np.int32),
        "input_type_ids": np.array([f.segment_ids for f in made], np.int32)}), np.float64)
    np.testing.assert_allclose(served["merged"]["probabilities"],
                               np.exp(logits) / np.exp(logits).sum(-1, keepdims=True), atol=1e-5)
