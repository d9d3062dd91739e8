"""official/peft/methods.py: what each method inserts and trains, on every fine-tuning model."""

import numpy as np
import pytest

from official.checkpoints import tf1
from official.configs import BertConfig, preset
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier, BertSpanLabeler, BertTokenClassifier
from official.peft import methods
from official.training.optimization import decay_exempt_variables

ADAPTERS = methods.from_flags(adapter_size=8)
LORA = methods.from_flags(lora_rank=4)
MODELS = {"classifier": lambda encoder: BertClassifier(encoder, 3),
          "span": BertSpanLabeler, "token": lambda encoder: BertTokenClassifier(encoder, 5)}


def outputs(model, inputs):
    result = model(inputs)
    return {k: np.asarray(v) for k, v in result.items()} if isinstance(result, dict) \
        else {"logits": np.asarray(result)}


@pytest.mark.parametrize("settings", [ADAPTERS, LORA], ids=["adapters", "lora"])
@pytest.mark.parametrize("kind", list(MODELS))
def test_a_fresh_method_leaves_every_models_outputs_as_they_were(tiny_config, make_inputs,
                                                                 settings, kind):
    model = MODELS[kind](build_encoder(tiny_config))
    inputs = make_inputs(3, 9)
    before = outputs(model, inputs)

    methods.apply(model, settings)

    assert model.encoder.adapted
    for name, value in outputs(model, inputs).items():
        np.testing.assert_allclose(value, before[name], atol=1e-6)


def trained_names(model):
    return sorted(name for name, variable in tf1.original_names(model).items()
                  if variable.trainable)


@pytest.mark.parametrize("train_pooler", [True, False])
def test_adapters_train_adapters_layer_norms_pooler_and_head(tiny_config, train_pooler):
    model = BertClassifier(build_encoder(tiny_config), 2)
    methods.apply(model, methods.from_flags(adapter_size=8, train_pooler=train_pooler))
    trained = trained_names(model)
    layers = tiny_config.num_hidden_layers
    assert sum("/adapters/" in name for name in trained) == layers * 2 * 4
    assert sum("/LayerNorm/" in name for name in trained) == (2 * layers + 1) * 2
    assert any(name.startswith("bert/pooler/") for name in trained) == train_pooler
    assert len(trained) == layers * 8 + (2 * layers + 1) * 2 + 2 * train_pooler
    assert all(v.trainable for v in model.classifier.weights)  # the head always trains


def test_lora_trains_its_matrices_on_the_query_and_value_blocks_by_default(tiny_config):
    model = BertClassifier(build_encoder(tiny_config), 2)
    methods.apply(model, methods.from_flags(lora_rank=4, train_pooler=False))
    for block in model.encoder.transformer_layers:
        assert block.attention.qkv.lora_blocks == (0, 2)  # query and value, not key
        assert not block.intermediate_dense.lora_blocks
    trained = trained_names(model)
    assert trained == sorted(f"bert/encoder/layer_{i}/attention/self/{m}/lora_{x}"
                             for i in range(tiny_config.num_hidden_layers)
                             for m in ("query", "value") for x in "AB")
    assert not any(block.inserted() for block in model.encoder.transformer_layers)


def test_lora_targets_are_a_regular_expression_over_original_kernel_names(tiny_config):
    model = BertClassifier(build_encoder(tiny_config), 2)
    methods.apply(model, methods.from_flags(
        lora_rank=2, lora_targets=r"layer_1/attention/self/key|intermediate"))
    first, second = model.encoder.transformer_layers
    assert not first.attention.qkv.lora_blocks and second.attention.qkv.lora_blocks == (1,)
    assert first.intermediate_dense.lora_blocks == second.intermediate_dense.lora_blocks == (0,)
    assert not first.output_dense.lora_blocks  # "output/dense" is not "intermediate"


@pytest.mark.parametrize("settings, message", [
    (methods.from_flags(lora_rank=2, lora_targets="LayerNorm"),
     "finds none of the encoder's projection matrices"),
    (methods.from_flags(lora_rank=2, lora_targets="pooler", train_pooler=True),
     "names the pooler, which --peft_train_pooler trains whole"),
])
def test_targets_that_cannot_be_used_are_refused(tiny_config, settings, message):
    with pytest.raises(ValueError, match=message):
        methods.apply(BertClassifier(build_encoder(tiny_config), 2), settings)


def test_a_method_applies_once(tiny_config):
    model = BertClassifier(build_encoder(tiny_config), 2)
    methods.apply(model, ADAPTERS)
    with pytest.raises(ValueError, match="already has a parameter-efficient method"):
        methods.apply(model, LORA)


def parameters(variables):
    return sum(int(np.prod(v.shape)) for v in variables)


@pytest.mark.parametrize("config", [
    BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
               intermediate_size=1536),  # all-MiniLM-L6-v2
    preset("base", vocab_size=30522),
], ids=["MiniLM", "BERT-Base"])
def test_adapter_64_and_rank_8_train_under_4_percent(config):
    """Trained parameters by hand: adapters 2L(2Hm + m + H) + LayerNorms 2H(2L + 1), LoRA
    L * 2(Hr + rH) on query and value; both + head 2H + 2 (+ pooler H^2 + H when it trains)."""
    h, layers = config.hidden_size, config.num_hidden_layers
    head, pooler = 2 * h + 2, h * h + h
    expected = {"adapters": 2 * layers * (2 * h * 64 + 64 + h) + 2 * h * (2 * layers + 1),
                "lora": layers * 2 * (h * 8 + 8 * h)}
    base = None
    for name, settings in (("adapters", methods.from_flags(adapter_size=64)),
                           ("lora", methods.from_flags(lora_rank=8, train_pooler=True))):
        model = BertClassifier(build_encoder(config), 2)
        base = base or parameters(model.encoder.weights)
        methods.apply(model, settings)
        trained = parameters(model.trainable_variables)
        assert trained == expected[name] + head + pooler * settings.train_pooler
        # The artifact holds these as float32, as the base checkpoint holds its weights.
        assert trained / base <= 0.04, (name, trained / base)


@pytest.mark.parametrize("settings", [ADAPTERS, LORA], ids=["adapters", "lora"])
def test_weight_decay_follows_the_originals_exclusions(tiny_config, settings):
    """LayerNorm and bias names are exempt (adapter-bert's biases1/biases2 too); adapter
    weights, LoRA matrices, the pooler's kernel and the head's are decayed."""
    model = BertClassifier(build_encoder(tiny_config), 2)
    methods.apply(model, settings)
    exempt = {id(v) for v in decay_exempt_variables(model)}
    named = dict(tf1.original_names(model))
    named.update({v.path: v for v in model.classifier.weights})
    for name, variable in named.items():
        if variable.trainable:
            assert (id(variable) in exempt) == any(
                part in name for part in ("LayerNorm", "bias")), name


@pytest.mark.parametrize("kind", ["span", "token"])
def test_a_head_that_never_reads_the_pooler_leaves_it_frozen(tiny_config, kind):
    model = MODELS[kind](build_encoder(tiny_config))
    methods.apply(model, methods.from_flags(lora_rank=2, train_pooler=True))
    assert not [name for name in trained_names(model) if name.startswith("bert/pooler/")]
