"""One process of tests/test_distributed_training.py: trains a tiny BertPretrainer a few steps.

    python -m tests.distributed_worker OUTPUT_DIR WEIGHTS.npy [multi_worker_mirrored]

The data is fixed: global batch s holds rows 8s..8s+7 of one random array, and input pipeline i
of n takes rows i, i+n, ... of it, so a single process and n workers see the same global batches.
Dropout is off, so the only difference a split could make is in how gradients are combined.
"""

import sys

import keras
import numpy as np
import tensorflow as tf

from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from official.modeling.models import BertPretrainer
from official.tasks.pretraining import PretrainingTask
from official.training import distribution, optimization
from official.training.trainer import LoopOptions, Trainer

GLOBAL_BATCH, STEPS, SEQ, PREDICTIONS, VOCAB = 8, 3, 16, 4, 64


def global_batches() -> dict[str, np.ndarray]:
    """[STEPS, GLOBAL_BATCH, ...] arrays of every feature."""
    rng = np.random.default_rng(0)
    shape = (STEPS, GLOBAL_BATCH)
    weights = (rng.random((*shape, PREDICTIONS)) < 0.8).astype(np.float32)
    return {
        "input_word_ids": rng.integers(0, VOCAB, (*shape, SEQ)).astype(np.int32),
        "input_mask": np.ones((*shape, SEQ), np.int32),
        "input_type_ids": rng.integers(0, 2, (*shape, SEQ)).astype(np.int32),
        "masked_lm_positions": rng.integers(0, SEQ, (*shape, PREDICTIONS)).astype(np.int32),
        "masked_lm_ids": rng.integers(0, VOCAB, (*shape, PREDICTIONS)).astype(np.int32),
        "masked_lm_weights": weights,
        "next_sentence_labels": rng.integers(0, 2, shape).astype(np.int32),
    }


def dataset_fn(context: tf.distribute.InputContext, batch_size: int, start_step: int):
    n, i = context.num_input_pipelines, context.input_pipeline_id
    assert batch_size == GLOBAL_BATCH // context.num_replicas_in_sync
    rows = {name: value[:, i::n] for name, value in global_batches().items()}
    return tf.data.Dataset.from_tensor_slices(rows)


def build_model() -> BertPretrainer:
    """The tiny pretrainer, initialised the same way every time (dropout off)."""
    keras.utils.set_random_seed(1)
    config = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=SEQ,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return BertPretrainer(build_encoder(config))


def train_model(output_dir: str, strategy_name: str = "default",
                gradient_accumulation_steps: int = 1,
                task: PretrainingTask | None = None) -> BertPretrainer:
    """Trains STEPS updates from `build_model()`'s initialisation; returns the model."""
    strategy = distribution.get_strategy(strategy_name)
    with strategy.scope():
        model = build_model()
        # A high rate and gradients above norm 1 exercise clipping of the global gradient.
        optimizer = optimization.create_optimizer(
            "adamw", 1e-2, STEPS, 1, decay_exempt=optimization.decay_exempt_variables(model))
    trainer = Trainer(strategy, model, optimizer, task or PretrainingTask(), LoopOptions(
        output_dir=output_dir, num_train_steps=STEPS, train_batch_size=GLOBAL_BATCH,
        steps_per_loop=STEPS, log_steps=STEPS, save_checkpoints_steps=STEPS,
        gradient_accumulation_steps=gradient_accumulation_steps))
    trainer.train(dataset_fn)
    return model


def flat_weights(model: keras.Model) -> np.ndarray:
    return np.concatenate([np.ravel(keras.ops.convert_to_numpy(v))
                           for v in model.trainable_variables])


def train(output_dir: str, strategy_name: str = "default", gradient_accumulation_steps: int = 1,
          task: PretrainingTask | None = None) -> np.ndarray:
    """`train_model`'s trainable weights, flat."""
    return flat_weights(train_model(output_dir, strategy_name, gradient_accumulation_steps, task))


if __name__ == "__main__":
    output_dir, weights_file, *strategy_name = sys.argv[1:]
    np.save(weights_file, train(output_dir, *strategy_name))
