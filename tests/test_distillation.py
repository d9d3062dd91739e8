"""Distillation's library half against independent references: the losses against numpy (the
formulas of Hinton et al. and TinyBERT), the settings and layer map by hand, the student made of
teacher layers bit for bit, the distillation model against the two models run apart, the task's
weighted loss against numpy on the model's own tensors, and a training step that leaves the
teacher alone."""

import dataclasses
import os

import numpy as np
import pytest
import tensorflow as tf

from official.checkpoints import training
from official.configs import BertConfig
from official.distillation import losses
from official.distillation.model import copy_teacher_layers, load_teacher
from official.distillation.settings import DistillationSettings
from official.distillation.task import DistillationTask
from official.modeling.encoder import build_encoder
from official.peft import methods
from official.tasks.classification import ClassificationTask
from official.tasks.ner import NerTask
from official.tasks.pretraining import PretrainingTask
from official.tasks.squad import SquadTask
from official.training.optimization import create_optimizer
from official.training.options import FinetuningOptions
from official.training.trainer import LoopOptions, Trainer

T = 2.0


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---- losses against numpy ------------------------------------------------------------------

def test_soft_cross_entropy_is_hintons_with_t_squared_and_padding_left_out():
    rng = np.random.default_rng(0)
    student, teacher = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 3)) * 3
    weights = np.array([[1, 1, 1, 0, 0], [1, 1, 0, 0, 0]], np.float32)
    expected = T * T * np.sum(weights * -np.sum(softmax(teacher / T)
                                                * np.log(softmax(student / T)), axis=-1))

    got = losses.soft_cross_entropy(tf.constant(student, tf.float32),
                                    tf.constant(teacher, tf.float32), weights, T)

    np.testing.assert_allclose(got, expected, rtol=1e-5)
    # Padding's logits change nothing.
    student[0, 3:] += 100.0
    np.testing.assert_allclose(losses.soft_cross_entropy(
        tf.constant(student, tf.float32), tf.constant(teacher, tf.float32), weights, T),
        expected, rtol=1e-5)


def test_soft_cross_entropy_gradient_is_the_probability_gap_times_t():
    """d/ds of T^2 H(p_t, softmax(s/T)) = T (softmax(s/T) - p_t): the scaling that keeps the
    soft loss's gradients the size of the hard loss's whatever T is."""
    student = tf.Variable([[0.5, -1.0, 2.0]])
    teacher = np.array([[1.0, 0.0, -1.0]], np.float32)
    with tf.GradientTape() as tape:
        loss = losses.soft_cross_entropy(student, teacher, tf.ones([1]), T)
    expected = T * (softmax(student.numpy() / T) - softmax(teacher / T))
    np.testing.assert_allclose(tape.gradient(loss, student), expected, rtol=1e-5)


def test_squared_error_of_scores():
    got = losses.squared_error(tf.constant([1.0, 2.0, 5.0]), tf.constant([0.5, 2.0, 1.0]),
                               tf.constant([1.0, 1.0, 0.0]))
    assert float(got) == pytest.approx(0.25)


def test_hidden_mse_over_real_tokens():
    rng = np.random.default_rng(1)
    student = [rng.normal(size=(2, 4, 6)).astype(np.float32) for _ in range(2)]
    teacher = [rng.normal(size=(2, 4, 6)).astype(np.float32) for _ in range(2)]
    mask = np.array([[1, 1, 1, 0], [1, 0, 0, 0]], np.float32)
    expected = sum(np.sum(mask * np.mean((s - t) ** 2, axis=-1))
                   for s, t in zip(student, teacher))
    np.testing.assert_allclose(losses.hidden_mse(student, teacher, mask), expected, rtol=1e-5)


def test_attention_kl_by_hand():
    """One head, one real query over two real keys and a padding key: KL([.5 .5 0] ||
    [.25 .75 0]) = .5 ln 2 + .5 ln(2/3); the padding query adds nothing, and a student equal to
    its teacher adds 0."""
    teacher = np.zeros((1, 1, 2, 3), np.float32)
    student = np.zeros((1, 1, 2, 3), np.float32)
    teacher[0, 0, 0] = [0.5, 0.5, 0.0]
    student[0, 0, 0] = [0.25, 0.75, 0.0]
    teacher[0, 0, 1] = [1.0, 0.0, 0.0]  # the padding query's row: ignored
    mask = np.array([[1, 0]], np.float32)
    expected = 0.5 * np.log(2.0) + 0.5 * np.log(2.0 / 3.0)
    np.testing.assert_allclose(losses.attention_kl([student], [teacher], mask), expected,
                               rtol=1e-6)
    assert float(losses.attention_kl([teacher], [teacher], mask)) == 0.0


# ---- settings --------------------------------------------------------------------------------

def test_layer_maps():
    settings = DistillationSettings("teacher")
    assert settings.layer_map(6, 12) == [1, 3, 5, 7, 9, 11]  # TinyBERT's every second
    assert settings.layer_map(3, 6) == [1, 3, 5]
    assert settings.layer_map(4, 12) == [2, 5, 8, 11]
    assert settings.layer_map(2, 2) == [0, 1]
    assert DistillationSettings("teacher", student_layers=(0, 2, 4)).layer_map(3, 6) == [0, 2, 4]
    with pytest.raises(ValueError, match="more than the teacher's 2"):
        settings.layer_map(3, 2)


@pytest.mark.parametrize("flags, message", [
    (dict(student_layers="0,x"), "--student_layers='0,x' is not a comma-separated list"),
    (dict(temperature=0.0), "--temperature must be positive"),
    (dict(alpha_hard=-1.0), "--alpha_hard=-1.0: a loss weight must be 0 or more"),
    (dict(alpha_soft=0.0, alpha_hard=0.0), "every loss weight"),
    (dict(teacher_checkpoint=None, temperature=3.0), "--teacher_checkpoint is needed"),
    (dict(student_layers="1,1"), "^--student_layers=1,1 names a layer twice$"),
    (dict(student_layers="1,0"), "^--student_layers=1,0 is not in increasing order: give "
                                 "--student_layers_any_order if the order is meant$"),
])
def test_bad_settings_are_one_line_naming_the_flag(flags, message):
    values = dict(teacher_checkpoint="t", student_layers=None) | flags
    with pytest.raises(ValueError, match=message):
        DistillationSettings.from_flags(values.pop("teacher_checkpoint"),
                                        values.pop("student_layers"), **values)


def test_student_layers_in_another_order_on_purpose():
    settings = DistillationSettings.from_flags("t", "3,1,2", any_order=True)
    assert settings.student_layers == (3, 1, 2) and settings.layer_map(3, 4) == [3, 1, 2]


def test_flag_values_on_run_pretraining_take_distilberts_names_and_defaults():
    values = dict.fromkeys(["student_layers", "temperature", "alpha_hidden", "alpha_attention",
                            "alpha_cos", "alpha_ce", "alpha_mlm"])
    values |= dict(teacher_checkpoint="t", student_layers_any_order=False)
    assert DistillationSettings.from_flag_values(values, pretraining=True) == \
        DistillationSettings("t", alpha_soft=5.0, alpha_hard=2.0)  # DistilBERT's 5 and 2
    assert DistillationSettings.from_flag_values(
        values | dict(alpha_ce=1.0, alpha_cos=0.5), pretraining=True) == \
        DistillationSettings("t", alpha_soft=1.0, alpha_hard=2.0, alpha_cosine=0.5)
    with pytest.raises(ValueError, match="^--teacher_checkpoint is needed: --alpha_mlm "):
        DistillationSettings.from_flag_values(values | dict(teacher_checkpoint=None,
                                                            alpha_mlm=1.0), pretraining=True)
    with pytest.raises(ValueError, match="^--alpha_ce=-1.0: a loss weight must be 0 or more$"):
        DistillationSettings.from_flag_values(values | dict(alpha_ce=-1.0), pretraining=True)
    with pytest.raises(ValueError, match=r"^every loss weight \(--alpha_ce, --alpha_mlm, "):
        DistillationSettings.from_flag_values(values | dict(alpha_ce=0.0, alpha_mlm=0.0),
                                              pretraining=True)


def test_a_distillation_trains_its_student_whole_and_sized_once():
    student = DistillationSettings("t", student_layers=(0, 1))
    options = FinetuningOptions(bert_config_file=None, output_dir="out", do_train=True)
    student.check_run(options, {"peft": None})
    with pytest.raises(ValueError, match="^--teacher_checkpoint and BitFit \\(bias terms\\), "
                                         "pooler frozen: a distillation trains its student "
                                         "whole$"):
        student.check_run(options, {"peft": methods.from_flags(bitfit=True)})
    with pytest.raises(ValueError, match="^--bert_config_file and --student_layers both give"):
        student.check_run(dataclasses.replace(options, bert_config_file="c.json"), {})


def test_student_config_of_teacher_layers(tiny_config):
    config = dataclasses.replace(tiny_config, num_hidden_layers=4)
    student = DistillationSettings("t", student_layers=(0, 3)).student_config(config)
    assert student == dataclasses.replace(config, num_hidden_layers=2)
    with pytest.raises(ValueError, match="layers 0 to 3, not 4"):
        DistillationSettings("t", student_layers=(0, 4)).student_config(config)


# ---- the teacher, the student, the model -------------------------------------------------------

TASK = ClassificationTask("tsv", ["a", "b", "c"])


@pytest.fixture
def teacher_dir(tmp_path, tiny_config):
    """A fine-tuning output_dir of a 4-layer classifier with random weights (heads too)."""
    config = dataclasses.replace(tiny_config, num_hidden_layers=4)
    model = TASK.build_model(build_encoder(config))
    rng = np.random.default_rng(3)
    for variable in model.trainable_variables:
        variable.assign(rng.normal(0, 0.2, variable.shape).astype(np.float32))
    folder = tmp_path / "teacher"
    os.makedirs(folder)
    tf.train.Checkpoint(**training.model_roots(model), step=tf.Variable(5, dtype=tf.int64)
                        ).write(str(folder / "model.ckpt-5"))
    (folder / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-5"\n')
    config.to_json_file(str(folder / "bert_config.json"))
    return str(folder), model


def test_student_layers_are_the_teachers_bit_for_bit(teacher_dir, tiny_config):
    path, _ = teacher_dir
    teacher, config = load_teacher(path, TASK.build_model)
    settings = DistillationSettings(path, student_layers=(3, 1))
    student = TASK.build_model(build_encoder(settings.student_config(config)))

    copy_teacher_layers(student, teacher, (3, 1))

    pairs = [(student.encoder.embeddings, teacher.encoder.embeddings),
             (student.encoder.pooler, teacher.encoder.pooler),
             (student.classifier, teacher.classifier),
             (student.encoder.transformer_layers[0], teacher.encoder.transformer_layers[3]),
             (student.encoder.transformer_layers[1], teacher.encoder.transformer_layers[1])]
    for ours, theirs in pairs:
        assert len(ours.weights) == len(theirs.weights) > 0
        for a, b in zip(ours.weights, theirs.weights):
            assert a.path.split("/")[-1] == b.path.split("/")[-1]
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_the_teacher_is_loaded_frozen_without_dropout(teacher_dir, make_inputs):
    path, written = teacher_dir
    teacher, config = load_teacher(path, TASK.build_model)
    inputs = make_inputs(3, 8)
    assert config.hidden_dropout_prob == 0.1  # its own config, as saved
    assert not teacher.trainable_variables
    # Called for training (as the Trainer calls the model) it computes its inference outputs.
    np.testing.assert_allclose(teacher(inputs, training=True), written(inputs, training=False),
                               atol=1e-5)


def make_distillation(teacher_dir, **alphas):
    """A DistillationTask of `alphas`, its model (a 2-layer student of width 16, so the hidden
    states go through the projection) and the teacher model, all deterministic."""
    path, teacher_model = teacher_dir
    task = DistillationTask(TASK, DistillationSettings(path, temperature=T, **alphas))
    student_config = BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=2,
                                num_attention_heads=4, intermediate_size=32,
                                max_position_embeddings=64, type_vocab_size=2)
    model = task.build_model(build_encoder(student_config))
    rng = np.random.default_rng(5)  # far from uniform attention, so the KL is no rounding error
    for variable in model.trainable_variables:
        variable.assign(rng.normal(0, 0.3, variable.shape).astype(np.float32))
    return task, model, teacher_model


@pytest.fixture
def distillation(teacher_dir):
    """Every loss on."""
    return make_distillation(teacher_dir, alpha_soft=0.7, alpha_hard=0.3, alpha_hidden=2.0,
                             alpha_attention=0.5)


def test_distillation_model_runs_student_and_teacher_as_they_run_apart(distillation,
                                                                       make_inputs):
    task, model, teacher = distillation
    inputs = make_inputs(3, 8)
    outputs = model(inputs, training=False)

    np.testing.assert_allclose(outputs["student"], model.student(inputs), atol=1e-5)
    np.testing.assert_allclose(outputs["teacher"], teacher(inputs, training=False), atol=1e-5)
    teacher_layers = teacher.encoder(inputs)["encoder_outputs"]
    # Uniform map of 2 student layers onto 4: teacher layers 1 and 3.
    np.testing.assert_allclose(outputs["teacher_hidden_0"], teacher_layers[1], atol=1e-5)
    np.testing.assert_allclose(outputs["teacher_hidden_1"], teacher_layers[3], atol=1e-5)
    student_layer = model.student.encoder(inputs)["encoder_outputs"][0]
    projection = model.hidden_projection
    np.testing.assert_allclose(outputs["student_hidden_0"],
                               student_layer @ projection.kernel.numpy()
                               + projection.bias.numpy(), atol=1e-5)
    assert outputs["student_attention_1"].shape == (3, 4, 8, 8)
    # What checkpoints hold: the student and the projection, never the teacher.
    roots = training.model_roots(model)
    assert roots["encoder"] is model.student.encoder
    assert set(roots["heads"]) == {"classifier", "hidden_projection"}
    assert model.inference_model is model.student


def test_the_weighted_loss_against_numpy(distillation, make_inputs):
    task, model, _ = distillation
    inputs = make_inputs(4, 8, seed=2)
    labels = np.array([0, 2, 1, 1], np.int32)
    real = np.array([1, 1, 1, 0], np.int32)  # the last row: transfer data, unlabelled
    features = dict(inputs, label_ids=labels, is_real_example=real)
    features = {k: tf.constant(v) for k, v in features.items()}
    outputs = model(inputs, training=False)
    normalizers = task.normalizers(features)

    loss, stats = task.loss_and_stats(outputs, features, normalizers)

    o = {k: np.asarray(v, np.float64) for k, v in outputs.items()}
    mask = inputs["input_mask"].astype(np.float64)
    log_p = np.log(softmax(o["student"]))
    hard = -np.sum(real * log_p[np.arange(4), labels]) / real.sum()
    soft = T * T * np.mean(-np.sum(softmax(o["teacher"] / T)
                                   * np.log(softmax(o["student"] / T)), axis=-1))
    hidden = sum(np.sum(mask * np.mean((o[f"student_hidden_{i}"]
                                        - o[f"teacher_hidden_{i}"]) ** 2, axis=-1))
                 for i in range(2)) / (mask.sum() * 2)
    kl = 0.0
    for i in range(2):
        p, q = o[f"teacher_attention_{i}"], o[f"student_attention_{i}"]
        terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1)) - np.log(np.maximum(q, 1e-30))),
                         0.0)
        kl += np.sum(mask[:, None, :] * terms.sum(-1))
    attention = kl / (mask.sum() * 2 * 4)
    expected = 0.3 * hard + 0.7 * soft + 2.0 * hidden + 0.5 * attention

    np.testing.assert_allclose(loss, expected, rtol=1e-4)
    metrics = task.metrics({k: float(v) for k, v in stats.items()})
    np.testing.assert_allclose(
        [metrics["loss"], metrics["soft_logits"], metrics["hidden_loss"],
         metrics["attention_loss"]], [hard, soft, hidden, attention], rtol=1e-4)


def test_a_training_step_moves_the_student_alone(teacher_dir, make_inputs, tmp_path):
    """The teacher's weights stay as loaded and get no optimiser slots; the student moves."""
    task, model, _ = make_distillation(teacher_dir, alpha_soft=1.0, alpha_hidden=1.0)
    inputs = make_inputs(8, 8, seed=4)
    features = dict(inputs, label_ids=np.arange(8, dtype=np.int32) % 3,
                    is_real_example=np.ones(8, np.int32))
    teacher_before = [v.numpy().copy() for v in model.teacher.weights]
    student_before = [v.numpy().copy() for v in model.student.trainable_variables]
    optimizer = create_optimizer("adamw", 1e-3, 10, 0)
    trainer = Trainer(tf.distribute.get_strategy(), model, optimizer, task,
                      LoopOptions(output_dir=str(tmp_path), num_train_steps=2,
                                  train_batch_size=8, steps_per_loop=2, log_steps=2,
                                  save_checkpoints_steps=2))
    trainer.train(lambda context, batch, start: tf.data.Dataset.from_tensors(
        {k: tf.constant(v) for k, v in features.items()}).repeat())

    for before, variable in zip(teacher_before, model.teacher.weights):
        np.testing.assert_array_equal(variable.numpy(), before)
    assert all(np.any(v.numpy() != b)
               for v, b in zip(model.student.trainable_variables, student_before))
    trained = {id(v) for v in model.trainable_variables}
    assert trained == ({id(v) for v in model.student.trainable_variables}
                       | {id(v) for v in model.hidden_projection.trainable_variables})
    slots = sum(int(np.prod(v.shape)) for v in optimizer.variables if len(v.shape))
    assert slots == 2 * sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    # best/ and restore read the student alone; the checkpoint holds no teacher variable.
    names = [name for name, _ in tf.train.list_variables(str(tmp_path / "model.ckpt-2"))]
    assert not [n for n in names if "teacher" in n]


# ---- every task's soft targets, on made-up outputs ------------------------------------------

def soft_loss_of(task, student, teacher, features):
    """DistillationTask's loss with the soft targets alone, on outputs given as numpy."""
    distilling = DistillationTask(task, DistillationSettings("t", alpha_soft=1.0,
                                                             alpha_hard=0.0, temperature=T))
    features = {k: tf.constant(v) for k, v in features.items()}
    outputs = {"student": tf.nest.map_structure(tf.constant, student),
               "teacher": tf.nest.map_structure(tf.constant, teacher)}
    loss, _ = distilling.loss_and_stats(outputs, features, distilling.normalizers(features))
    return float(loss)


def soft_ce(student, teacher):
    return T * T * -np.sum(softmax(teacher / T) * np.log(softmax(student / T)), axis=-1)


def test_squad_distributions_over_real_tokens_start_and_end_averaged():
    rng = np.random.default_rng(6)
    mask = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0]], np.int32)
    student = {k: rng.normal(size=(2, 6)).astype(np.float32) for k in ("start_logits",
                                                                       "end_logits")}
    teacher = {k: rng.normal(size=(2, 6)).astype(np.float32) * 2 for k in student}
    features = {"input_mask": mask, "start_positions": np.array([1, 2], np.int32),
                "end_positions": np.array([2, 2], np.int32)}
    expected = 0.0
    for key in student:
        for row in range(2):
            real = mask[row] == 1  # padding is no candidate, for either model
            expected += soft_ce(student[key][row, real], teacher[key][row, real]) / 2
    expected /= 2  # start and end: the mean of the two, as the task's own loss

    got = soft_loss_of(SquadTask(), student, teacher, features)

    assert got == pytest.approx(expected, rel=1e-4)


def test_ner_tags_of_the_tokens_the_task_scores():
    rng = np.random.default_rng(7)
    student = rng.normal(size=(2, 5, 4)).astype(np.float32)
    teacher = rng.normal(size=(2, 5, 4)).astype(np.float32)
    weights = np.array([[0, 1, 1, 0, 1], [0, 1, 0, 0, 0]], np.float32)
    features = {"label_weights": weights, "label_ids": np.zeros((2, 5), np.int32),
                "input_mask": np.ones((2, 5), np.int32)}
    expected = np.sum(weights * soft_ce(student, teacher)) / weights.sum()

    got = soft_loss_of(NerTask(["O", "B-PER", "I-PER", "B-LOC"]), student, teacher, features)

    assert got == pytest.approx(expected, rel=1e-4)


def test_a_regression_matches_the_teachers_score():
    student = np.array([[1.0], [3.0], [0.5]], np.float32)
    teacher = np.array([[2.0], [3.0], [1.5]], np.float32)
    features = {"label_ids": np.zeros(3, np.float32), "is_real_example": np.array([1, 1, 0]),
                "input_mask": np.ones((3, 4), np.int32)}
    # Every row, labelled or not (the third is transfer data): (1 + 0 + 1) / 3.
    got = soft_loss_of(ClassificationTask("sts-b", None), student, teacher, features)
    assert got == pytest.approx(2.0 / 3.0, rel=1e-6)


def test_cosine_distance_over_real_tokens():
    rng = np.random.default_rng(8)
    student, teacher = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 3, 5))
    mask = np.array([[1, 1, 0], [1, 0, 0]], np.float32)
    cosine = np.sum(student * teacher, -1) / (np.linalg.norm(student, axis=-1)
                                              * np.linalg.norm(teacher, axis=-1))
    expected = np.sum(mask * (1 - cosine))
    np.testing.assert_allclose(losses.cosine_distance(tf.constant(student, tf.float32),
                                                      tf.constant(teacher, tf.float32), mask),
                               expected, rtol=1e-5)


def test_masked_lm_soft_targets_at_the_masked_positions():
    rng = np.random.default_rng(9)
    student = rng.normal(size=(2, 3, 7)).astype(np.float32)
    teacher = rng.normal(size=(2, 3, 7)).astype(np.float32)
    weights = np.array([[1, 1, 0], [1, 0, 0]], np.float32)  # 0: padding predictions
    features = {"masked_lm_weights": weights, "masked_lm_ids": np.zeros((2, 3), np.int32),
                "input_mask": np.ones((2, 4), np.int32)}
    expected = np.sum(weights * soft_ce(student, teacher)) / weights.sum()

    got = soft_loss_of(PretrainingTask(next_sentence=False),
                       {"masked_lm_logits": student}, {"masked_lm_logits": teacher}, features)

    assert got == pytest.approx(expected, rel=1e-4)
