"""A parameter-efficient run's output_dir made directly, without a training loop: a base
checkpoint, a model adapted on it with random trained variables (so no term is zero), and its
files as a run leaves them (its checkpoint at step 7, bert_config.json, peft_config.json)."""

import os

import keras
import numpy as np
import tensorflow as tf

from official import checkpoints
from official.checkpoints import tf1, training
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.peft import artifact, methods
from official.peft.method import PeftSettings
from official.tasks.classification import ClassificationTask


def write_base(config: BertConfig, folder, seed: int = 0) -> str:
    """A random encoder as the original's checkpoint (with its bert_config.json); the folder."""
    keras.utils.set_random_seed(seed)
    os.makedirs(folder, exist_ok=True)
    tf1.write(tf1.weights_of(build_encoder(config)), os.path.join(folder, "bert_model.ckpt"))
    config.to_json_file(os.path.join(folder, "bert_config.json"))
    return str(folder)


def write_run(base: str, settings: PeftSettings, folder, task=None, seed: int = 1):
    """A run of `task` (default: a two-label classifier, task name "tsv") with `settings` on
    `base`, trained variables random; returns its model."""
    task = task or ClassificationTask("tsv", ["neg", "pos"])
    config = BertConfig.from_json_file(os.path.join(base, "bert_config.json"))
    model = task.build_model(build_encoder(config))
    checkpoints.load_init_checkpoint(base, model)
    mark = artifact.fingerprint(model)
    methods.apply(model, settings)
    rng = np.random.default_rng(seed)
    for variable in model.trainable_variables:
        variable.assign(rng.normal(0, 0.05, variable.shape).astype(np.float32))
    os.makedirs(folder, exist_ok=True)
    step = tf.Variable(7, dtype=tf.int64)  # as the Trainer writes it
    tf.train.Checkpoint(**training.model_roots(model), step=step).write(
        os.path.join(folder, "model.ckpt-7"))
    with open(os.path.join(folder, "checkpoint"), "w") as f:
        f.write('model_checkpoint_path: "model.ckpt-7"\n')
    config.to_json_file(os.path.join(folder, "bert_config.json"))
    spec = dict(task.serving_spec(), max_seq_length=16)
    artifact.PeftRecord(settings, base, mark, spec).write(str(folder))
    return model
