"""Training checkpoints (what the training loop saves): read back as original-named weights, and
the roots every model declares (`checkpoint_items`) hold all it trains."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from official import checkpoints
from official.checkpoints import converter, tf1, training
from official.checkpoints.errors import CheckpointError
from official.checkpoints.training import check_holds, model_roots
from official.modeling.encoder import build_encoder, encoder_inputs
from official.modeling.models import BertClassifier, BertPretrainer, _EncoderModel
from official.tasks.classification import ClassificationTask
from official.tasks.ner import NerTask
from official.tasks.squad import SquadTask


def save_training_checkpoint(model, config, directory):
    """What official/training/trainer.py writes: model roots plus optimiser-like extra state."""
    config.to_json_file(str(directory / "bert_config.json"))
    extra = tf.Variable(7, dtype=tf.int64)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(**model_roots(model), step=extra),
                                         str(directory), max_to_keep=2,
                                         checkpoint_name="model.ckpt")
    return manager.save(checkpoint_number=7)


def test_a_pretraining_checkpoint_reads_as_the_models_weights(tiny_config, tmp_path):
    model = BertPretrainer(build_encoder(tiny_config))
    save_training_checkpoint(model, tiny_config, tmp_path)
    expected = tf1.weights_of(model)
    for path in (str(tmp_path), str(tmp_path / "model.ckpt-7")):
        weights = checkpoints.read_weights(path)
        assert weights.keys() == expected.keys()
        for name in expected:
            np.testing.assert_array_equal(weights[name], expected[name], err_msg=name)

    # ... and so it starts another model, and converts like any checkpoint of ours.
    fresh = BertPretrainer(build_encoder(tiny_config))
    checkpoints.load_init_checkpoint(str(tmp_path), fresh)
    np.testing.assert_array_equal(tf1.weights_of(fresh)["cls/predictions/output_bias"],
                                  expected["cls/predictions/output_bias"])
    bundle = converter.read("tf2", str(tmp_path))
    assert bundle.config == tiny_config
    converter.write("tf1", bundle, str(tmp_path / "as_tf1"))
    np.testing.assert_array_equal(
        tf1.read(str(tmp_path / "as_tf1" / "bert_model.ckpt"))["bert/pooler/dense/kernel"],
        expected["bert/pooler/dense/kernel"])


def test_a_fine_tuning_checkpoint_gives_its_encoder(tiny_config, tmp_path):
    model = BertClassifier(build_encoder(tiny_config), num_labels=3)
    save_training_checkpoint(model, tiny_config, tmp_path)
    weights = checkpoints.read_weights(str(tmp_path))
    assert not any(name.startswith("cls/") for name in weights)
    np.testing.assert_array_equal(weights["bert/embeddings/word_embeddings"],
                                  tf1.weights_of(model)["bert/embeddings/word_embeddings"])


def test_without_its_config_a_training_checkpoint_is_a_clear_error(tiny_config, tmp_path):
    save_training_checkpoint(BertPretrainer(build_encoder(tiny_config)), tiny_config, tmp_path)
    (tmp_path / "bert_config.json").unlink()
    with pytest.raises(checkpoints.CheckpointError, match="bert_config.json"):
        checkpoints.read_weights(str(tmp_path))


def test_a_checkpoint_of_another_size_is_a_clear_error(tiny_config, tmp_path):
    save_training_checkpoint(BertPretrainer(build_encoder(tiny_config)), tiny_config, tmp_path)
    bigger = type(tiny_config)(**{**tiny_config.to_dict(), "hidden_size": 64})
    bigger.to_json_file(str(tmp_path / "bert_config.json"))
    with pytest.raises(checkpoints.CheckpointError, match="model.ckpt-7"):
        checkpoints.read_weights(str(tmp_path))


# ---- every model's trainable variables lie under a checkpoint root ------------------------------

class BertRegressor(_EncoderModel):
    """A model with a head under an attribute name no other model uses, as an adaptation or a new
    task brings: it is saved because it declares the head, not because a list knows its name."""

    def __init__(self, encoder, declare=True, **kwargs):
        self.encoder = encoder
        self.declare = declare
        self.regressor = keras.layers.Dense(1, name="regressor")
        inputs = encoder_inputs()
        super().__init__(inputs=inputs,
                         outputs=self.regressor(encoder(inputs)["pooled_output"]), **kwargs)

    @property
    def checkpoint_heads(self):
        return {"regressor": self.regressor} if self.declare else {}


def every_model(config):
    """Each model the project trains, as its task builds it, and the regressor above."""
    return {
        "pretrainer": lambda: BertPretrainer(build_encoder(config)),
        "classifier": lambda: ClassificationTask("mrpc", ["0", "1"]).build_model(
            build_encoder(config)),
        "sts-b": lambda: ClassificationTask("sts-b", None).build_model(build_encoder(config)),
        "squad": lambda: SquadTask().build_model(build_encoder(config)),
        "ner": lambda: NerTask(["O", "B-PER", "I-PER"]).build_model(build_encoder(config)),
        "regressor": lambda: BertRegressor(build_encoder(config)),
    }


@pytest.mark.parametrize("name", ["pretrainer", "classifier", "sts-b", "squad", "ner",
                                  "regressor"])
def test_every_trainable_variable_survives_a_save_and_restore(tiny_config, tmp_path, name):
    build = every_model(tiny_config)[name]
    saved, restored = build(), build()
    for variable in saved.trainable_variables:  # nothing left equal by chance
        variable.assign(np.random.default_rng(len(variable.path)).normal(
            size=variable.shape).astype(variable.dtype))
    # As the training loop saves: the optimiser's variables list names the heads' variables too.
    optimizer = keras.optimizers.Adam()
    optimizer.build(saved.trainable_variables)
    prefix = tf.train.Checkpoint(**model_roots(saved), optimizer=optimizer).write(
        str(tmp_path / "model.ckpt-1"))
    roots = model_roots(restored)
    check_holds(prefix, roots)
    tf.train.Checkpoint(**roots).read(prefix).assert_existing_objects_matched()
    assert len(restored.trainable_variables) == len(saved.trainable_variables) > 0
    for before, after in zip(saved.trainable_variables, restored.trainable_variables):
        np.testing.assert_array_equal(after.numpy(), before.numpy(), err_msg=before.path)


def test_a_head_the_model_does_not_declare_is_refused(tiny_config):
    model = BertRegressor(build_encoder(tiny_config), declare=False)
    with pytest.raises(ValueError, match=r"BertRegressor: 2 trainable variables lie under none "
                                         r"of its checkpoint_items \(regressor/kernel"):
        model_roots(model)


def test_a_checkpoint_without_the_models_head_is_refused(tiny_config, tmp_path):
    classifier = ClassificationTask("mrpc", ["0", "1"]).build_model(build_encoder(tiny_config))
    prefix = tf.train.Checkpoint(**model_roots(classifier)).write(str(tmp_path / "model.ckpt-1"))
    regressor = BertRegressor(build_encoder(tiny_config))
    with pytest.raises(CheckpointError, match="holds no heads/regressor: those weights would "
                                              "stay at their initial values"):
        check_holds(prefix, model_roots(regressor))


def test_an_adapted_model_saves_its_trained_variables_alone(tiny_config, tmp_path):
    """The `encoder_trained` root: the frozen encoder is the base's, never in the checkpoint."""
    from official.peft import methods

    model = ClassificationTask("mrpc", ["0", "1"]).build_model(build_encoder(tiny_config))
    methods.apply(model, methods.from_flags(lora_rank=2, train_pooler=False))
    prefix = tf.train.Checkpoint(**model_roots(model)).write(str(tmp_path / "model.ckpt-1"))
    roots = {name.split("/")[0] for name, _ in tf.train.list_variables(prefix)}
    assert roots == {"_CHECKPOINTABLE_OBJECT_GRAPH", "encoder_trained", "heads"}
    saved = sum(int(np.prod(shape)) for name, shape in tf.train.list_variables(prefix)
                if name != "_CHECKPOINTABLE_OBJECT_GRAPH")
    assert saved == sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    assert training.is_peft_checkpoint(prefix) and not training.is_training_checkpoint(prefix)


def test_garbage_under_a_checkpoints_names_is_one_error_naming_it(tmp_path):
    """Every first question asked of an --init_checkpoint (is it a PEFT run's? a training
    checkpoint? which heads?) meets TensorFlow's reader's refusal as a CheckpointError."""
    from official.checkpoints import finetuned

    prefix = str(tmp_path / "model.ckpt-3")
    for suffix in (".index", ".data-00000-of-00001"):
        with open(prefix + suffix, "wb") as f:
            f.write(np.random.default_rng(1).bytes(2048))
    expected = f"^{prefix}: unreadable checkpoint \\(.+\\)$"
    for ask in (checkpoints.read_weights, training.is_peft_checkpoint, training.saved_heads,
                lambda p: finetuned.resolve_source(p).checkpoint.is_partial):
        with pytest.raises(CheckpointError, match=expected):
            ask(prefix)
