"""run_pretraining's library half: from options to a pretrained checkpoint and eval results.

    options -> job_setup (strategy, BertPretrainer + init checkpoint, optimiser) -> Trainer
            -> output_dir/model.ckpt-N (+ bert_config.json) and eval_results.txt

output_dir then serves as `--init_checkpoint` (and its bert_config.json as `--bert_config_file`)
for run_classifier, run_squad, extract_features and convert_checkpoint.

options.objective "ltr" trains the BERT paper's left-to-right ablation instead ("LTR & No NSP",
Table 5): the same BertPretrainer, its masked-LM head predicting every position's next token
from the records with their masking undone (pretraining_input.next_token_batch), no
second-sentence loss whatever the records' objective, and causal attention: check_files
(official/training/options.py) makes the config's causal_attention true, so the
bert_config.json written beside the checkpoints carries it to fine-tuning and exports, and a
rerun resumes against it. Records made with create_pretraining_data --objective=none are one
stretch of text each, as a language model reads; next-sentence or sentence-order records are
read as they are (half of their second segments are another document's text, or swapped).

Each checkpoint holds, beside the input iterator, the fingerprint of the record files it reads
(pretraining_input.fingerprint): a rerun into the same output_dir after the records were
regenerated is refused, naming the files, since the iterator would read them at its saved places;
`restart_input` (run_pretraining --restart_input) goes on from the checkpoint with the input
started afresh instead.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np
from absl import logging

from official.adaptation import Adaptation
from official.checkpoints import extended_vocab, tf1
from official.configs import BertConfig
from official.pretraining_shards import expand_input_files
from official.tasks.pretraining import PretrainingTask, data_objective
from official.text.vocab import load_vocab
from official.training import job_setup, output_dir
from official.training.options import PretrainingOptions, check_dynamic_masking
from official.training.pretraining_input import (
    DynamicMasking,
    changed_files,
    check_records,
    fingerprint,
    pretraining_dataset,
)
from official.training.record_errors import naming_bad_records
from official.training.trainer import FirstSteps, SavedInput, Trainer


def run(options: PretrainingOptions, adaptations: Sequence[Adaptation] = (),
        restart_input: bool = False) -> dict[str, dict[str, float]]:
    """Trains and/or evaluates; returns {"train": last logged metrics, "eval": eval metrics}.

    `adaptations` are the methods resolved for this run (official/adaptation.py): a general
    distillation's wraps the pretraining task (the student beside its teacher) and may make the
    config (the student of the teacher's layers). `restart_input`: a resumed run restores all
    but the input iterator, whose input starts afresh at the checkpoint's step.

    Raises:
      ValueError: bad options or input (one line naming the flag or file); checkpoint errors are
        ValueErrors too.
      official.command_line.Preempted: SIGTERM stopped training after saving.
    """
    job_setup.fuse_elementwise(options)
    input_files = expand_input_files(options.input_file)
    eval_files = (expand_input_files(options.eval_input_file, "--eval_input_file")
                  if options.eval_input_file else input_files)
    config = job_setup.checked_config(options, adaptations)
    config_name = options.bert_config_file or "the model's config"
    next_token = options.objective == "ltr"
    masking = (_dynamic_masking(options, config, config_name)
               if options.dynamic_masking and not next_token else None)
    objective = data_objective(input_files)
    for files in {tuple(input_files), tuple(eval_files)}:
        check_records(files, options.max_seq_length, options.max_predictions_per_seq,
                      config.vocab_size, config_name)
    if options.probe_second_sentence and objective == "none":
        raise ValueError(f"--probe_second_sentence: {options.input_file} holds records made "
                         "with --objective=none, which have no second sentence to tell apart")
    task = _task(objective, options)
    eval_task = _task(data_objective(eval_files), options)
    for adaptation in adaptations:
        task, eval_task = adaptation.task(task), adaptation.task(eval_task)
    # A probe's head is never the checkpoint's own: every checkpoint it compares gets a fresh one.
    leave_out = (tf1.NEXT_SENTENCE_PREFIX,) if options.probe_second_sentence else ()
    job = job_setup.set_up(options, task.build_model, config, adaptations, leave_out)
    if options.probe_second_sentence:
        _freeze_all_but_the_second_sentence_head(job.model)
    strategy = job.strategy
    optimizer = job_setup.create_optimizer(options, job, options.num_train_steps,
                                           options.num_warmup_steps)
    first_steps = (_new_rows_first(options, job) if options.train_only_new_embeddings_steps
                   else None)
    trainer = Trainer(strategy, job.model, optimizer, task,
                      job_setup.loop_options(options, options.num_train_steps), first_steps)
    if trainer.is_chief:
        files = {}
        for adaptation in adaptations:
            files.update(adaptation.files())
        output_dir.claim(options.output_dir, config, files)
    results = {}

    def dataset_fn(is_training):
        def make(context, batch_size, start_step):
            return pretraining_dataset(
                input_files if is_training else eval_files,
                max_seq_length=options.max_seq_length,
                max_predictions_per_seq=options.max_predictions_per_seq, batch_size=batch_size,
                is_training=is_training, seed=options.seed + start_step, input_context=context,
                dynamic_masking=masking if is_training else None, next_token=next_token,
                vocab_size=config.vocab_size)
        return make

    with naming_bad_records(sorted({*input_files, *eval_files}), options.bert_config_file):
        if options.do_train:
            logging.info("Pretraining %s on %d file(s) (%s) with %d replica(s)",
                         config_name, len(input_files),
                         "left to right, causal attention" if next_token
                         else f"a probe of the {objective} head, encoder frozen"
                         if options.probe_second_sentence
                         else f"masked LM, objective {objective}"
                         + ("" if options.second_sentence_loss or objective == "none"
                            else ", its second-sentence loss left out"),
                         strategy.num_replicas_in_sync)
            results["train"] = trainer.train(
                dataset_fn(True), saved_input=_saved_input(options, input_files, restart_input))
        elif not trainer.restore_model():
            logging.warning("No checkpoint in %s: evaluating the %s weights", options.output_dir,
                            "--init_checkpoint" if options.init_checkpoint else "random")
        if options.do_eval:
            results["eval"] = trainer.evaluate(dataset_fn(False), options.eval_batch_size,
                                               options.max_eval_steps, eval_task)
    return results


def _saved_input(options: PretrainingOptions, input_files: Sequence[str],
                 restart_input: bool) -> SavedInput:
    """The training records' fingerprint, and the refusal of a checkpoint whose iterator was
    saved in other ones: resumed, it would read the new files at the old files' places (as
    damaged records, or silently elsewhere)."""
    def check(saved: str, checkpoint: str) -> None:
        changed = changed_files(saved, input_files)
        if changed:
            named = "; ".join(changed[:3]) + (f"; and {len(changed) - 3} more"
                                              if len(changed) > 3 else "")
            raise ValueError(
                f"--output_dir={options.output_dir}: {os.path.basename(checkpoint)} saved the "
                f"input's place in record files that have changed since ({named}); pass "
                f"--restart_input to go on from it with the input started afresh, or use a "
                f"fresh --output_dir")

    return SavedInput(fingerprint(input_files), check, restart_input)


def _task(objective: str, options: PretrainingOptions) -> PretrainingTask:
    """The loss and metrics of records made with `objective`: the second-sentence loss when
    the records carry one and the options keep it (never for a left-to-right model)."""
    next_token = options.objective == "ltr"
    return PretrainingTask(next_sentence=(objective != "none" and not next_token
                                          and options.second_sentence_loss),
                           next_token=next_token)


def _freeze_all_but_the_second_sentence_head(model) -> None:
    """A probe trains the pooled output's two-way classifier alone: the encoder (pooler
    included) and the masked-LM head stop being trainable, so their weights, and the
    masked-LM loss the task still reports, are the checkpoint's."""
    model.encoder.trainable = False
    model.masked_lm.trainable = False


def _new_rows_first(options: PretrainingOptions, job: job_setup.Job) -> FirstSteps:
    """The first --train_only_new_embeddings_steps updates: the rows of the tokens the init
    checkpoint's vocab extension added (official/checkpoints/extended_vocab.py) in the word
    embeddings (the masked-LM decoder too: it is tied to them) and in the masked-LM output bias,
    plus every head variable the checkpoint lacked (a fresh head has nothing to keep, and the new
    rows learn nothing through a random one). Everything else waits."""
    record = extended_vocab.read_record(options.init_checkpoint, job.config.vocab_size,
                                        options.bert_config_file)
    rows = np.zeros(record.vocab_size, bool)
    rows[list(record.new_ids)] = True
    names = tf1.original_names(job.model)
    fresh = {id(v) for v in job.fresh}
    masked = [(names[name], rows) for name in (extended_vocab.WORD_EMBEDDINGS,
                                                extended_vocab.OUTPUT_BIAS)
              if name in names and id(names[name]) not in fresh]
    description = (f"the {len(record.new_ids)} new tokens' rows"
                   + (" and the pretraining heads the checkpoint lacked" if fresh else ""))
    return FirstSteps(options.train_only_new_embeddings_steps,
                      tuple(v for v, _ in masked) + job.fresh, tuple(masked), description)


def _dynamic_masking(options: PretrainingOptions, config: BertConfig,
                     config_name: str) -> DynamicMasking:
    check_dynamic_masking(options)
    vocab = load_vocab(options.vocab_file)
    missing = [t for t in ("[MASK]", "[CLS]", "[SEP]") if t not in vocab]
    if missing:
        raise ValueError(f"{options.vocab_file}: no {', '.join(missing)} token")
    if len(vocab) != config.vocab_size:
        raise ValueError(f"{options.vocab_file} has {len(vocab)} tokens but "
                         f"{config_name} says vocab_size={config.vocab_size}")
    return DynamicMasking(vocab_size=config.vocab_size, mask_id=vocab["[MASK]"],
                          special_ids=(0, vocab["[CLS]"], vocab["[SEP]"]),
                          masking_mix=options.masking_mix)
