r"""Masked-LM + next-sentence pretraining: the original's run_pretraining.py command line, in TF2.

    python -m run_scripts.run_pretraining \
      --input_file=/tmp/tf_examples.tfrecord --output_dir=/tmp/pretraining_output \
      --do_train=True --do_eval=True --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --train_batch_size=32 \
      --max_seq_length=128 --max_predictions_per_seq=20 --num_train_steps=20 \
      --num_warmup_steps=10 --learning_rate=2e-5

Rerunning the same command resumes from the newest checkpoint in --output_dir. The output_dir is
then a valid --init_checkpoint for the fine-tuning scripts. The work is done by
official/training/pretraining.py.
"""

import sys

from absl import app
from absl import flags
from absl import logging

from official.training import distribution, pretraining
from official.training.optimization import OPTIMIZERS
from official.training.trainer import Preempted
from run_scripts import common_flags

_D = pretraining.PretrainingOptions  # the defaults live with the options

flags.DEFINE_string("input_file", None,
                    "Input TF example files (can be a glob or comma separated).")
flags.DEFINE_string("output_dir", None,
                    "The output directory where the model checkpoints will be written.")
flags.DEFINE_integer(
    "max_predictions_per_seq", _D.max_predictions_per_seq,
    "Maximum number of masked LM predictions per sequence. Must match data generation.")
flags.DEFINE_bool("do_train", _D.do_train, "Whether to run training.")
flags.DEFINE_bool("do_eval", _D.do_eval, "Whether to run eval on the dev set.")
flags.DEFINE_integer("train_batch_size", _D.train_batch_size,
                     "Total batch size for training (over all replicas, per update).")
flags.DEFINE_integer("eval_batch_size", _D.eval_batch_size, "Total batch size for eval.")
flags.DEFINE_float("learning_rate", _D.learning_rate, "The initial learning rate for Adam.")
flags.DEFINE_integer("num_train_steps", _D.num_train_steps, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", _D.num_warmup_steps, "Number of warmup steps.")
flags.DEFINE_integer("save_checkpoints_steps", _D.save_checkpoints_steps,
                     "How often to save the model checkpoint.")
flags.DEFINE_integer("iterations_per_loop", _D.steps_per_loop,
                     "How many steps to make in each call to the training loop (the original's "
                     "name for --steps_per_loop).")
flags.DEFINE_integer("steps_per_loop", None,
                     "Steps run inside one tf.function call; overrides --iterations_per_loop.")
flags.DEFINE_integer("max_eval_steps", _D.max_eval_steps, "Maximum number of eval steps.")
flags.DEFINE_integer("log_steps", _D.log_steps, "Log a progress line every this many steps.")
flags.DEFINE_integer("keep_checkpoint_max", _D.keep_checkpoint_max,
                     "How many of the newest checkpoints to keep.")
flags.DEFINE_enum("optimizer", _D.optimizer, list(OPTIMIZERS),
                  "adamw: the original AdamWeightDecay; lamb: LAMB, for large batches.")
flags.DEFINE_float("weight_decay_rate", _D.weight_decay_rate,
                   "Decoupled weight decay (not for LayerNorm and bias variables).")
flags.DEFINE_integer("gradient_accumulation_steps", _D.gradient_accumulation_steps,
                     "Split each train_batch_size batch into this many micro-batches and sum "
                     "their gradients: the same update with less memory.")
flags.DEFINE_enum("dtype", _D.dtype, list(pretraining.DTYPE_POLICIES),
                  "Compute dtype: float32, or mixed precision bfloat16 / float16 (float16 with "
                  "dynamic loss scaling). Variables stay float32.")
flags.DEFINE_bool("jit_compile", _D.jit_compile,
                  "Compile each forward and backward pass with XLA.")
flags.DEFINE_enum("distribution_strategy", _D.distribution_strategy, distribution.STRATEGIES,
                  "default: one device; mirrored: --num_gpus local GPUs; "
                  "multi_worker_mirrored: hosts listed in TF_CONFIG; tpu: --tpu_name.")
flags.DEFINE_integer("num_gpus", _D.num_gpus, "GPUs for --distribution_strategy=mirrored.")
flags.DEFINE_integer("seed", _D.seed, "Random seed of initialisation, dropout and input order.")
flags.DEFINE_bool("dynamic_masking", _D.dynamic_masking,
                  "Re-mask every sequence each time it is read (RoBERTa) instead of using the "
                  "masks stored in the TFRecords; needs --vocab_file.")
flags.DEFINE_string("vocab_file", None, "The vocabulary, for --dynamic_masking.")
flags.DEFINE_bool("use_tpu", False, "Whether to use TPU (same as --distribution_strategy=tpu).")
flags.DEFINE_string("tpu_name", None, "The Cloud TPU to use for training: a name or an address.")
flags.DEFINE_string("tpu_zone", None, "GCE zone of the Cloud TPU." + common_flags.IGNORED_HELP)
flags.DEFINE_string("gcp_project", None,
                    "Project name of the Cloud TPU." + common_flags.IGNORED_HELP)
flags.DEFINE_string("master", None, "TensorFlow master URL." + common_flags.IGNORED_HELP)
flags.DEFINE_integer("num_tpu_cores", 8, "Total number of TPU cores." + common_flags.IGNORED_HELP)
common_flags.define_model_flags()
common_flags.define_max_seq_length_flag()
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


def options_from_flags() -> pretraining.PretrainingOptions:
    strategy = "tpu" if FLAGS.use_tpu else FLAGS.distribution_strategy
    return pretraining.PretrainingOptions(
        bert_config_file=FLAGS.bert_config_file, input_file=FLAGS.input_file,
        output_dir=FLAGS.output_dir, init_checkpoint=FLAGS.init_checkpoint,
        max_seq_length=FLAGS.max_seq_length,
        max_predictions_per_seq=FLAGS.max_predictions_per_seq, do_train=FLAGS.do_train,
        do_eval=FLAGS.do_eval, train_batch_size=FLAGS.train_batch_size,
        eval_batch_size=FLAGS.eval_batch_size, learning_rate=FLAGS.learning_rate,
        num_train_steps=FLAGS.num_train_steps, num_warmup_steps=FLAGS.num_warmup_steps,
        save_checkpoints_steps=FLAGS.save_checkpoints_steps,
        steps_per_loop=FLAGS.steps_per_loop or FLAGS.iterations_per_loop,
        max_eval_steps=FLAGS.max_eval_steps, log_steps=FLAGS.log_steps,
        keep_checkpoint_max=FLAGS.keep_checkpoint_max, optimizer=FLAGS.optimizer,
        weight_decay_rate=FLAGS.weight_decay_rate,
        gradient_accumulation_steps=FLAGS.gradient_accumulation_steps, dtype=FLAGS.dtype,
        jit_compile=FLAGS.jit_compile, distribution_strategy=strategy, num_gpus=FLAGS.num_gpus,
        tpu_address=FLAGS.tpu_name, seed=FLAGS.seed, dynamic_masking=FLAGS.dynamic_masking,
        vocab_file=FLAGS.vocab_file)


def main(argv: list[str]) -> None:
    del argv  # Unused.
    try:
        pretraining.run(options_from_flags())
    except Preempted as e:
        logging.warning("%s", e)
        sys.exit(143)  # 128 + SIGTERM: what a supervisor expects of a terminated job
    except (ValueError, OSError) as e:
        sys.exit(f"run_pretraining: {e}")


if __name__ == "__main__":
    flags.mark_flags_as_required(["input_file", "output_dir", "bert_config_file"])
    app.run(main)
