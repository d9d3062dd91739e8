"""official/peft/merging.py: LoRA folded into the matrices it adapts, against numpy and against
the unmerged model; a run's encoder as a checkpoint bundle of any format."""

import numpy as np
import pytest

from official.checkpoints import converter
from official.checkpoints.errors import CheckpointError
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier
from official.peft import lora, merging, methods
from tests.peft_helpers import write_base, write_run

LORA = methods.from_flags(lora_rank=2, lora_alpha=6,
                               lora_targets="query|value|intermediate")
ADAPTERS = methods.from_flags(adapter_size=4)


def test_fold_lora_against_numpy():
    rng = np.random.default_rng(0)
    p = "bert/encoder/layer_0/attention/self/query"
    weights = {f"{p}/kernel": rng.normal(size=(6, 6)), f"{p}/bias": rng.normal(size=6),
               f"{p}/lora_A": rng.normal(size=(6, 2)), f"{p}/lora_B": rng.normal(size=(2, 6)),
               "bert/pooler/dense/kernel": rng.normal(size=(6, 6))}
    folded = lora.fold_lora(weights, LORA)
    assert sorted(folded) == sorted(n for n in weights if "lora" not in n)
    np.testing.assert_allclose(folded[f"{p}/kernel"], weights[f"{p}/kernel"]
                               + 3.0 * weights[f"{p}/lora_A"] @ weights[f"{p}/lora_B"],
                               rtol=1e-6)
    np.testing.assert_array_equal(folded[f"{p}/bias"], weights[f"{p}/bias"])


def test_the_merged_model_computes_what_the_adapted_one_does(tiny_config, make_inputs,
                                                             tmp_path):
    base = write_base(tiny_config, tmp_path / "base")
    adapted = write_run(base, LORA, tmp_path / "run")
    plain = BertClassifier(build_encoder(tiny_config), 2)
    merged = merging.merged_model(adapted, plain, LORA)
    inputs = make_inputs(3, 9)
    np.testing.assert_allclose(merged(inputs), adapted(inputs), atol=1e-5)
    assert not merged.encoder.adapted
    with pytest.raises(ValueError, match="cannot be folded"):
        merging.merged_model(adapted, plain, ADAPTERS)


@pytest.mark.parametrize("settings, output_format", [(LORA, "hf"), (ADAPTERS, "tf1")])
def test_a_runs_encoder_written_and_read_back(tiny_config, make_inputs, tmp_path, settings,
                                              output_format):
    base = write_base(tiny_config, tmp_path / "base")
    adapted = write_run(base, settings, tmp_path / "run")
    bundle = merging.merged_bundle(str(tmp_path / "run"))
    converter.write(output_format, bundle, str(tmp_path / "out"))

    back = converter.read(output_format, str(tmp_path / "out"))
    back.inserted = bundle.inserted  # the names alone do not say which method made them
    encoder = converter.build_model(back, "written")
    inputs = make_inputs(2, 7)
    np.testing.assert_allclose(encoder(inputs)["pooled_output"],
                               adapted.encoder(inputs)["pooled_output"], atol=1e-5)
    if settings is ADAPTERS:  # adapter-bert's variables, beside the original's
        assert "bert/encoder/layer_1/output/adapters/weights2" in back.weights
    else:
        assert not [name for name in back.weights if "lora" in name]


def test_adapters_are_refused_by_formats_without_a_place_for_them(tiny_config, tmp_path):
    base = write_base(tiny_config, tmp_path / "base")
    write_run(base, ADAPTERS, tmp_path / "run")
    bundle = merging.merged_bundle(str(tmp_path / "run"))
    for output_format in ("hf", "keras_hub"):
        with pytest.raises(CheckpointError, match="has adapters, and .* has no place for them"):
            converter.write(output_format, bundle, str(tmp_path / output_format), source="run")
        assert not (tmp_path / output_format).exists()
    with pytest.raises(CheckpointError, match="not a parameter-efficient run"):
        merging.merged_bundle(base)
