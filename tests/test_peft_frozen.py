"""official/peft/frozen.py: the frozen encoder (the feature-based / linear-probe baseline)
trains the head alone; its artifact is the head and the record naming the base."""

import os

import numpy as np
import pytest
import tensorflow as tf

from official.checkpoints import tf1
from official.modeling.encoder import build_encoder
from official.modeling.models import BertClassifier, BertSpanLabeler
from official.peft import adaptation, artifact, merging, methods
from official.tasks.classification import ClassificationTask
from official.training import finetuning
from tests.peft_helpers import write_base
from tests.test_finetuning import LoggedData, options
from tests.test_peft_adaptation import Spy

FROZEN = methods.from_flags(freeze_encoder=True)
TASK = ClassificationTask("tsv", ["0", "1"])


def trained_names(model):
    return {name for name, variable in tf1.original_names(model).items() if variable.trainable}


def test_the_flag_and_the_record():
    assert FROZEN.method == "frozen" and not FROZEN.train_pooler
    assert methods.from_dict(FROZEN.to_dict()) == FROZEN
    assert FROZEN.describe() == "frozen encoder (the head alone trains), pooler frozen"
    with pytest.raises(ValueError, match="--bitfit and --freeze_encoder are two methods"):
        methods.from_flags(freeze_encoder=True, bitfit=True)


def test_nothing_of_the_encoder_trains_but_the_pooler_when_asked(tiny_config, make_inputs):
    model = BertClassifier(build_encoder(tiny_config), 2)
    inputs = make_inputs(3, 9)
    before = np.asarray(model(inputs))
    methods.apply(model, FROZEN)
    assert trained_names(model) == set()
    assert [v.path for v in model.trainable_variables] == \
        [v.path for v in model.classifier.trainable_variables]
    np.testing.assert_array_equal(np.asarray(model(inputs)), before)  # nothing inserted

    probe = BertClassifier(build_encoder(tiny_config), 2)
    methods.apply(probe, methods.from_flags(freeze_encoder=True, train_pooler=True))
    assert trained_names(probe) == {"bert/pooler/dense/kernel", "bert/pooler/dense/bias"}
    span = BertSpanLabeler(build_encoder(tiny_config))  # reads no pooler: all of it frozen
    methods.apply(span, methods.from_flags(freeze_encoder=True, train_pooler=True))
    assert trained_names(span) == set()


def test_a_linear_probe_keeps_the_base_and_saves_the_head_alone(files, tiny_config, tmp_path):
    base = write_base(tiny_config, tmp_path / "base")
    out = tmp_path / "out"
    opts, adapt = adaptation.resolve(FROZEN, options(files, out, do_train=True, do_eval=True,
                                                     init_checkpoint=base), TASK)
    spy = Spy(adapt)
    finetuning.run(opts, TASK, LoggedData(str(tmp_path)), [spy])
    base_weights = tf1.read(os.path.join(base, "bert_model.ckpt"))
    for name, value in tf1.weights_of(spy.model).items():
        np.testing.assert_array_equal(value, base_weights[name], err_msg=name)
    saved = dict(tf.train.list_variables(tf.train.latest_checkpoint(str(out / "best"))))
    assert {name.split("/")[0] for name in saved} == {"_CHECKPOINTABLE_OBJECT_GRAPH", "heads",
                                                      "step"}
    head = {name: shape for name, shape in saved.items() if name.startswith("heads/")}
    h = tiny_config.hidden_size
    assert sorted(map(tuple, head.values())) == [(2,), (h, 2)]  # the classifier's bias, kernel
    record = artifact.read_record(str(out / "best"))
    assert record.settings == FROZEN and record.base_checkpoint == os.path.abspath(base)
    assert record.base_fingerprint == artifact.fingerprint(spy.model)
    # Served as a plain model: the fold is the identity.
    plain = merging.merged_model(spy.model, TASK.build_model(build_encoder(tiny_config)), FROZEN)
    inputs = {"input_word_ids": np.array([[2, 9, 3]], np.int32),
              "input_mask": np.ones((1, 3), np.int32), "input_type_ids": np.zeros((1, 3),
                                                                                  np.int32)}
    np.testing.assert_array_equal(np.asarray(plain(inputs)), np.asarray(spy.model(inputs)))

