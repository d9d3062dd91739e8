"""official/peft/artifact.py: the base's fingerprint, the record, and loading a run on its base."""

import numpy as np
import pytest

from official import checkpoints
from official.checkpoints import tf1
from official.checkpoints.errors import CheckpointError
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier
from official.peft import artifact, methods
from tests.peft_helpers import write_base, write_run

LORA = methods.from_flags(lora_rank=2)


def test_the_fingerprint_is_of_the_weights_and_sees_one_changed_value(tiny_config):
    encoder = build_encoder(tiny_config)
    mark = artifact.fingerprint(encoder)
    assert mark.startswith("sha256:") and len(mark) == 7 + 64
    twin = build_encoder(tiny_config)
    tf1.assign(twin, tf1.weights_of(encoder), "test")
    assert artifact.fingerprint(BertClassifier(twin, 2)) == mark  # the encoder's, not the head
    value = twin.embeddings.word_embeddings.numpy()
    value[3, 4] = np.nextafter(value[3, 4], 1.0)
    twin.embeddings.word_embeddings.assign(value)
    assert artifact.fingerprint(twin) != mark


def test_the_record_round_trip(tiny_config, tmp_path):
    task = {"export_type": "classifier", "task_name": "MRPC", "labels": ["0", "1"],
            "pair": True, "max_seq_length": 128}
    record = artifact.PeftRecord(LORA, "/models/base", "sha256:" + "0" * 64, task)
    record.write(str(tmp_path))
    assert artifact.read_record(str(tmp_path)) == record
    assert artifact.read_record(str(tmp_path / "nothing")) is None
    (tmp_path / artifact.PEFT_FILE).write_text('{"method": "lora"}')
    with pytest.raises(CheckpointError, match="peft_config.json: not a parameter-efficient"):
        artifact.read_record(str(tmp_path))


def test_a_run_loads_on_its_base_and_refuses_another(tiny_config, tmp_path):
    base = write_base(tiny_config, tmp_path / "base")
    trained = write_run(base, LORA, tmp_path / "run")
    inputs = {"input_word_ids": np.array([[2, 7, 9, 3, 0]], "int32"),
              "input_mask": np.array([[1, 1, 1, 1, 0]], "int32"),
              "input_type_ids": np.zeros((1, 5), "int32")}

    model = BertClassifier(build_encoder(tiny_config), 2)
    artifact.restore(model, str(tmp_path / "run"))  # the base its record names
    np.testing.assert_array_equal(model(inputs), trained(inputs))

    other = write_base(tiny_config, tmp_path / "other", seed=5)
    with pytest.raises(CheckpointError, match=f"{other} is not the base of the "
                                              f"parameter-efficient run {tmp_path / 'run'}"):
        artifact.restore(BertClassifier(build_encoder(tiny_config), 2),
                                    str(tmp_path / "run"), base=other)
    with pytest.raises(CheckpointError, match="a parameter-efficient run's checkpoint"):
        checkpoints.read_weights(str(tmp_path / "run"))
