r"""GLUE, XNLI and PAWS-X fine-tuning: the original's run_classifier.py command line, in TF2.

    python -m run_scripts.run_classifier \
      --task_name=MRPC --do_train=true --do_eval=true --data_dir=$GLUE_DIR/MRPC \
      --vocab_file=$BERT_BASE_DIR/vocab.txt --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
      --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0 \
      --output_dir=/tmp/mrpc_output/

Tasks: cola, sst-2, mrpc, sts-b (regression), qqp, mnli, mnli-mm, qnli, rte, wnli, ax, xnli
(xnli-<language> for another language: xnli alone is the original's Chinese), pawsx (PAWS-X;
pawsx-<language>, English alone); see data_prep/glue.py for the files each reads. Task tsv
is one's own classification data: --data_dir holds labels.txt and train/dev/test.tsv with a
header (sentence, label; or sentence1, sentence2, label), as data/gutenberg/authorship does.
`--tfds_data_dir` reads TensorFlow Datasets' prepared glue/* data instead of `--data_dir`.
Task 20ng is 20 Newsgroups (data_prep/glue.py).

`--augment_with=<attack output>` adds the texts of an attack's successful attacks
(run_scripts/attack_classifier.py), with their gold labels, to the training rows: adversarial
training; attacking the new run's export again shows whether it helped.

Documents longer than max_seq_length (single texts): `--long_doc=truncate` (the original's, the
default), `head_tail` (`--head_tokens` from the start, the rest of the row from the end) or
`windows` (every window, `--doc_stride` apart, pooled by `--window_pool` into one prediction
per document; training reads at most `--max_windows` of a document; `--window_loss`); see
official/tasks/long_doc_settings.py. Metrics and test_results.tsv count documents, and the
export serves documents of any length as the run read them.

Zero-shot cross-lingual transfer (the original's multilingual README, with mBERT's
multi_cased_L-12_H-768_A-12): trained on English, the model kept by English's dev accuracy alone
(no target-language data picks it) is scored on each language of `--eval_languages`, its dev set
and, with --do_predict, its (labelled) test set, into eval_results_by_language.json and a table
of them, eval_results_by_language.md (data_prep/cross_lingual.py):

    python -m run_scripts.run_classifier --task_name=xnli-en --data_dir=$XNLI_DIR \
      --vocab_file=$MBERT_DIR/vocab.txt --bert_config_file=$MBERT_DIR/bert_config.json \
      --init_checkpoint=$MBERT_DIR/bert_model.ckpt --do_lower_case=false \
      --do_train --do_eval --do_predict \
      --eval_languages=en,ar,bg,de,el,es,fr,hi,ru,sw,th,tr,ur,vi,zh \
      --max_seq_length=128 --train_batch_size=32 --learning_rate=5e-5 --num_train_epochs=2.0 \
      --output_dir=/tmp/xnli_zero_shot/

($XNLI_DIR holds XNLI-1.0's xnli.dev.tsv and xnli.test.tsv and XNLI-MT-1.0's multinli/; for
PAWS-X, --task_name=pawsx-en and --data_dir its x-final folder.)

Every fine-tuning entry point also takes a parameter-efficient method (--adapter_size,
--lora_rank, --bitfit, --ia3: official/peft) or a teacher to distil (--teacher_checkpoint, with
--student_layers or a --bert_config_file of the student's size: official/distillation), e.g. a
3-layer student made of the teacher's layers 0, 2 and 4 (DistilBERT's initialisation), trained on
the teacher's soft targets, SST-2's labels and unlabelled sentences the teacher labels:

    python -m run_scripts.run_classifier --task_name=SST-2 --data_dir=$GLUE_DIR/SST-2 \
      --vocab_file=$BERT_DIR/vocab.txt --teacher_checkpoint=/tmp/sst2_teacher \
      --student_layers=0,2,4 --transfer_data=unlabelled_sentences.txt \
      --do_train --do_eval --num_train_epochs=3 --output_dir=/tmp/sst2_student

Outputs in --output_dir: the split's TFRecords (cached: reused by the next run with the same
settings), checkpoints, eval_results.txt (after every epoch when training: the original's keys
plus the task's GLUE metrics), best/ (the checkpoint with the best GLUE score so far),
test_results.tsv (class probabilities, the original's file) and <TASK>.tsv (GLUE's submission
file). A run with only --do_predict (or --do_eval) uses the checkpoint a finished run left. With
--eval_languages: eval_results_<language>-dev.txt (and -test) and eval_results_by_set.md too.

The halves: data_prep/glue.py and classifier_features.py (files -> records; cross_lingual.py,
the evaluation languages' sets), official/tasks/classification.py (model, loss, metrics, test
files; language_results.py, the files by language), and official/training/finetuning.py (the
run every fine-tuning task shares).
"""

import os
from typing import Any, NamedTuple

from absl import flags

from data_prep import glue
from data_prep.attack_data import read_adversarial_examples
from official import command_line
from official.tasks import long_doc_settings
from official.training.options import FinetuningOptions
from run_scripts import common_flags

flags.DEFINE_string("data_dir", None,
                    "The input data dir. Should contain the .tsv files (or other data files) "
                    "for the task.")
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_string("tfds_data_dir", None,
                    "Read the task from TensorFlow Datasets' prepared glue/<task> data in this "
                    "directory instead of --data_dir (never downloads).")
flags.DEFINE_enum("long_doc", "truncate", list(long_doc_settings.MODES),
                  "How a text longer than max_seq_length - 2 tokens is read: cut at the end "
                  "(truncate, the original's), its head and tail (head_tail), or every window, "
                  "pooled (windows).")
flags.DEFINE_integer("doc_stride", None, "--long_doc=windows: tokens between two windows' "
                     "starts (default half a window, (max_seq_length - 2) // 2).")
flags.DEFINE_integer("max_windows", None, "--long_doc=windows: the most windows of one document "
                     "a training step reads, spread evenly over it (default "
                     f"{long_doc_settings.DEFAULT_MAX_WINDOWS}); evaluation reads all.")
flags.DEFINE_integer("head_tokens", None, "--long_doc=head_tail: tokens kept from the start "
                     "(default a quarter of max_seq_length - 2); the rest of the row comes from "
                     "the end.")
flags.DEFINE_enum("window_pool", None, list(long_doc_settings.WINDOW_POOLS),
                  "--long_doc=windows: how a document's windows become one prediction (default "
                  "mean_logits).")
flags.DEFINE_string("transfer_data", None,
                    "With --teacher_checkpoint: unlabelled texts the teacher labels, one per line "
                    "(a pair task's two texts separated by a tab), trained on beside the "
                    "labelled data (Turc et al.'s well-read students).")
flags.DEFINE_enum("window_loss", None, list(long_doc_settings.WINDOW_LOSSES),
                  "--long_doc=windows: the loss on each document's pooled prediction (document, "
                  "the default) or on every window with its document's label (window).")
flags.DEFINE_string("augment_with", None,
                    "An attack's output (run_scripts.attack_classifier --output_file): the "
                    "texts of its successful attacks, with their gold labels, are added to the "
                    "training rows (adversarial training).")
flags.DEFINE_list("eval_languages", None,
                  "Zero-shot cross-lingual evaluation of a multilingual task (xnli-<language>, "
                  "pawsx-<language>): language codes, comma-separated (de,es,zh). With --do_eval "
                  "the model the run keeps (best/, chosen on the training language's dev set "
                  "alone: no target-language data picks the model) is scored on each "
                  "language's dev set, and with --do_predict on its test set, into "
                  "eval_results_by_language.json and eval_results_by_language.md.")
common_flags.define_finetuning_flags()
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """What the flags say, checked."""
    options: FinetuningOptions
    adaptations: dict[str, Any]
    processor: glue.TaskProcessor
    long_doc: long_doc_settings.LongDocSettings
    languages: dict[str, glue.TaskProcessor]  # --eval_languages: the task in each


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py)."""
    options, adaptations = common_flags.prepare_finetuning()
    if FLAGS.data_dir is None and FLAGS.tfds_data_dir is None:
        raise ValueError("one of --data_dir or --tfds_data_dir is needed")
    for flag in ("data_dir", "tfds_data_dir"):
        if FLAGS[flag].value is not None and not os.path.isdir(FLAGS[flag].value):
            raise ValueError(f"--{flag}={FLAGS[flag].value}: no such folder")
    if FLAGS.transfer_data and adaptations["distillation"] is None:
        raise ValueError("--transfer_data needs --teacher_checkpoint: the teacher labels it")
    if FLAGS.transfer_data and not os.path.isfile(FLAGS.transfer_data):
        raise ValueError(f"{FLAGS.transfer_data}: no such file (--transfer_data)")
    processor = glue.get_processor(FLAGS.task_name, FLAGS.data_dir)
    if FLAGS.augment_with:
        if processor.is_regression or processor.is_pair:
            raise ValueError(f"--augment_with: task {processor.name} is a "
                             f"{'regression' if processor.is_regression else 'text-pair'} "
                             "task; an attack's examples are single texts with a class label")
        read_adversarial_examples(FLAGS.augment_with, processor.get_labels())
    long_doc = long_doc_settings.LongDocSettings.from_flags(
        FLAGS.long_doc, FLAGS.doc_stride, FLAGS.max_windows, FLAGS.head_tokens,
        FLAGS.window_pool, FLAGS.window_loss, max_seq_length=options.max_seq_length,
        pair=processor.is_pair, gradient_accumulation_steps=options.gradient_accumulation_steps)
    common_flags.check_adaptation_checkpoints(adaptations)
    return Plan(options, adaptations, processor, long_doc,
                evaluation_languages(processor, options))


def evaluation_languages(processor: glue.TaskProcessor, options: FinetuningOptions
                         ) -> dict[str, glue.TaskProcessor]:
    """{language: the task in it} of --eval_languages (checked), {} without it."""
    languages = FLAGS.eval_languages or []
    if not languages:
        return {}
    if "" in languages:
        raise ValueError(f"--eval_languages={','.join(languages)}: an empty language")
    try:
        tasks = {language: glue.in_language(processor, language) for language in languages}
    except ValueError as e:  # a task of one language, a language that is no name
        raise ValueError(f"--eval_languages: {e}") from None
    repeated = sorted({language for language in languages if languages.count(language) > 1})
    if repeated:
        raise ValueError(f"--eval_languages: {', '.join(repeated)} listed twice")
    if not options.do_eval:
        raise ValueError("--eval_languages are scored with --do_eval (by the checkpoint the "
                         "training language's dev set picks)")
    return tasks


def job(plan: Plan) -> dict[str, dict[str, float]]:
    """The task and data the flags name, fine-tuned (and scored in each --eval_languages)."""
    from data_prep.classifier_features import ClassifierData
    from data_prep.cross_lingual import CrossLingualData
    from official.tasks import language_results
    from official.tasks.classification import ClassificationTask

    options, processor = plan.options, plan.processor
    task = ClassificationTask(processor.name, processor.get_labels(),
                              glue.submission_file(processor.name)
                              if processor.submission_name else None, processor.is_pair,
                              plan.long_doc)

    def data_of(processor: glue.TaskProcessor) -> ClassifierData:
        return ClassifierData(processor, FLAGS.data_dir, FLAGS.tfds_data_dir,
                              options.max_seq_length, FLAGS.vocab_file, FLAGS.do_lower_case,
                              options.output_dir, FLAGS.transfer_data, plan.long_doc,
                              FLAGS.augment_with)

    if not plan.languages:
        return common_flags.finetune(options, task, data_of(processor), plan.adaptations)
    data = CrossLingualData(data_of(processor),
                            {language: data_of(language_task)
                             for language, language_task in plan.languages.items()},
                            ("dev", "test") if options.do_predict else ("dev",))
    results = common_flags.finetune(options, task, data, plan.adaptations)
    language_results.write(options.output_dir, data.by_language(results, task.best_metric),
                           processor.name)
    return results


if __name__ == "__main__":
    command_line.main("run_classifier", prepare, job,
                       required=["task_name", "vocab_file", "output_dir"])
