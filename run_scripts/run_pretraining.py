r"""Masked-LM + next-sentence pretraining: the original's run_pretraining.py command line, in TF2.

    python -m run_scripts.run_pretraining \
      --input_file=/tmp/tf_examples.tfrecord --output_dir=/tmp/pretraining_output \
      --do_train=True --do_eval=True --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --train_batch_size=32 \
      --max_seq_length=128 --max_predictions_per_seq=20 --num_train_steps=20 \
      --num_warmup_steps=10 --learning_rate=2e-5

Continued pretraining on a domain's text starts from any checkpoint --init_checkpoint reads (a
masked-LM head it lacks is built fresh, and says so); after convert_checkpoint --extend_vocab,
--train_only_new_embeddings_steps=S first trains only the new tokens' rows for S steps.

On several hosts, the same command on each with --distribution_strategy=multi_worker_mirrored
and its TF_CONFIG (run_scripts/recipes/pretrain_multi_host.sh): the global batches are one
process's, worker 0 writes the checkpoints, and SIGTERM to any one worker stops them all at one
saved step.

Rerunning the same command resumes from the newest checkpoint in --output_dir, its input where
it stopped (on several workers, restarted at the checkpoint's step); if the records were
regenerated since, it refuses (naming them) unless --restart_input. The output_dir is then a
valid --init_checkpoint for the fine-tuning scripts. The work is done by
official/training/pretraining.py.

The BERT paper's ablations (Tables 5 and 8): --objective=ltr trains a left-to-right language
model (causal attention, every position predicting the next token, no next-sentence loss) on
any pretraining records, best made with create_pretraining_data --objective=none; its
output_dir's bert_config.json says "causal_attention": true, which fine-tuning keeps.
--dynamic_masking --masking_mix=1,0,0 re-masks with another [MASK]/same/random mix.

General distillation (DistilBERT's losses), from a teacher with a masked-LM head (a
run_pretraining output_dir, the original's bert_model.ckpt) into a student of its layers:

    python -m run_scripts.run_pretraining --input_file='records/*.tfrecord' \
      --teacher_checkpoint=$BERT_DIR --student_layers=0,2,4,6,8,10 --alpha_ce=5 \
      --alpha_mlm=2 --alpha_cos=1 --do_train --num_train_steps=100000 \
      --max_predictions_per_seq=20 --output_dir=/tmp/distilled_bert
"""


import os
from typing import Any, NamedTuple

from absl import flags

from official import command_line
from official.checkpoints import extended_vocab
from official.pretraining_records import ORIGINAL_MASKING_MIX
from official.pretraining_shards import expand_input_files
from official.settings_parsing import shares
from official.training.options import PretrainingOptions, check_files
from run_scripts import common_flags

_D = PretrainingOptions  # the defaults live with the options

flags.DEFINE_string("input_file", None,
                    "Input TF example files (can be a glob or comma separated).")
flags.DEFINE_string("eval_input_file", None,
                    "The records --do_eval reads (held-out text), as --input_file is given; "
                    "default: --input_file. Their objective decides the eval metrics: records "
                    "made with --objective=none report the masked LM alone.")
flags.DEFINE_bool("second_sentence_loss", True,
                  "Train the records' second-sentence objective (next-sentence or "
                  "sentence-order prediction, as create_pretraining_data --objective made them) "
                  "beside the masked LM. --nosecond_sentence_loss trains the masked LM alone on "
                  "the same two-segment inputs: the BERT paper's No NSP, which keeps NSP's split "
                  "context and drops its loss.")
flags.DEFINE_bool("probe_second_sentence", False,
                  "A linear probe, not pretraining: train only a fresh second-sentence head (the "
                  "pooled output's two-way classifier) on the frozen --init_checkpoint, with the "
                  "records' next-sentence or sentence-order labels; --do_eval then says how well "
                  "the pooled output tells them apart (ALBERT's NSP and SOP comparison).")
flags.DEFINE_string("output_dir", None,
                    "The output directory where the model checkpoints will be written.")
flags.DEFINE_integer(
    "max_predictions_per_seq", _D.max_predictions_per_seq,
    "Maximum number of masked LM predictions per sequence. Must match data generation.")
flags.DEFINE_bool("do_train", _D.do_train, "Whether to run training.")
flags.DEFINE_bool("do_eval", _D.do_eval, "Whether to run eval on the dev set.")
flags.DEFINE_integer("num_train_steps", _D.num_train_steps, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", _D.num_warmup_steps, "Number of warmup steps.")
flags.DEFINE_integer("max_eval_steps", _D.max_eval_steps, "Maximum number of eval steps.")
flags.DEFINE_bool("dynamic_masking", _D.dynamic_masking,
                  "Re-mask every sequence each time it is read (RoBERTa) instead of using the "
                  "masks stored in the TFRecords; needs --vocab_file.")
flags.DEFINE_string("vocab_file", None, "The vocabulary, for --dynamic_masking.")
flags.DEFINE_string("masking_mix", ",".join(map(str, ORIGINAL_MASKING_MIX)),
                    "MASK,SAME,RANDOM: the shares of --dynamic_masking's predictions shown as "
                    "[MASK], as the same token, or as a random token; three non-negative numbers "
                    "summing to 1 (the records' stored masks have create_pretraining_data's "
                    "own --masking_mix).")
flags.DEFINE_string("objective", "mlm",
                    "mlm: the masked LM (BERT). ltr: a left-to-right language model, the BERT "
                    "paper's 'LTR & No NSP' ablation: the records are read with their masking "
                    "undone, every position predicts the next token under causal attention, "
                    "their second-sentence labels are not trained on, --dynamic_masking masks "
                    "nothing; reported as next_token_loss, next_token_accuracy and perplexity.")
flags.DEFINE_integer(
    "train_only_new_embeddings_steps", _D.train_only_new_embeddings_steps,
    "For this many first steps train only the word-embedding rows (and masked-LM output biases) "
    "of the tokens convert_checkpoint --extend_vocab added to --init_checkpoint, and any "
    "pretraining head the checkpoint lacked; every other weight stays bit for bit. Then "
    "everything trains.")
flags.DEFINE_bool("restart_input", False,
                  "Resuming from a checkpoint in --output_dir, restore the model, optimiser and "
                  "step but not the input's place in the records: the input starts afresh at "
                  "that step (shuffled with --seed moved by the step). For records regenerated "
                  "since the checkpoint was saved, where a resumed run would otherwise read the "
                  "new files at the old ones' places (it refuses to).")
common_flags.define_model_flags()
common_flags.define_training_flags(_D)
common_flags.define_max_seq_length_flag()
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


def options_from_flags() -> PretrainingOptions:
    return PretrainingOptions(
        bert_config_file=FLAGS.bert_config_file, input_file=FLAGS.input_file,
        eval_input_file=FLAGS.eval_input_file, second_sentence_loss=FLAGS.second_sentence_loss,
        probe_second_sentence=FLAGS.probe_second_sentence,
        output_dir=FLAGS.output_dir, init_checkpoint=FLAGS.init_checkpoint,
        max_seq_length=FLAGS.max_seq_length,
        max_predictions_per_seq=FLAGS.max_predictions_per_seq, do_train=FLAGS.do_train,
        do_eval=FLAGS.do_eval, num_train_steps=FLAGS.num_train_steps,
        num_warmup_steps=FLAGS.num_warmup_steps, max_eval_steps=FLAGS.max_eval_steps,
        dynamic_masking=FLAGS.dynamic_masking, vocab_file=FLAGS.vocab_file,
        masking_mix=shares(FLAGS.masking_mix, "--masking_mix", 3), objective=FLAGS.objective,
        train_only_new_embeddings_steps=FLAGS.train_only_new_embeddings_steps,
        **common_flags.training_options())


class Plan(NamedTuple):
    """What the flags say, checked."""
    options: PretrainingOptions
    adaptations: dict[str, Any]
    restart_input: bool


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py)."""
    options = options_from_flags()
    config = check_files(options)
    expand_input_files(options.input_file)
    if options.eval_input_file:
        expand_input_files(options.eval_input_file, "--eval_input_file")
    adaptations = common_flags.adaptation_settings(options, pretraining=True)
    if options.objective == "ltr" and any(adaptations.values()):
        raise ValueError("--objective=ltr and --teacher_checkpoint: a general distillation "
                         "teaches a masked LM")
    if options.probe_second_sentence and any(adaptations.values()):
        raise ValueError("--probe_second_sentence and --teacher_checkpoint: a probe trains a "
                         "head on a frozen checkpoint, no student")
    if options.train_only_new_embeddings_steps:
        if any(adaptations.values()):
            raise ValueError("--train_only_new_embeddings_steps and --teacher_checkpoint: a "
                             "distillation's student has no extended vocab to train first")
        extended_vocab.read_record(options.init_checkpoint,
                                   config.vocab_size if config else None,
                                   options.bert_config_file)
    common_flags.check_adaptation_checkpoints(adaptations)
    if FLAGS.restart_input and not options.do_train:
        raise ValueError("--restart_input restarts training's input: it needs --do_train")
    if FLAGS.restart_input and not os.path.isfile(os.path.join(options.output_dir,
                                                               "checkpoint")):
        raise ValueError(f"--restart_input: {options.output_dir} holds no checkpoint to go on "
                         "from (a fresh run starts its input anyway)")
    return Plan(options, adaptations, FLAGS.restart_input)


def job(plan: Plan) -> dict[str, dict[str, float]]:
    """Pretraining, or a general distillation with --teacher_checkpoint (DistilBERT's: the
    student's masked LM learns the teacher's predictions, --alpha_ce, beside the data's labels,
    --alpha_mlm)."""
    from official.training import pretraining

    options, adaptations = common_flags.adaptations(plan.options, None, plan.adaptations)
    return pretraining.run(options, adaptations, restart_input=plan.restart_input)


if __name__ == "__main__":
    command_line.main("run_pretraining", prepare, job, required=["input_file", "output_dir"])
