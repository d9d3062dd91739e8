r"""The BERT paper in miniature: its ablations rerun on one's own corpus and budget, with seeds.

    python -m run_scripts.run_ablation_study --study=objectives \
      --corpus=data/gutenberg/corpus.txt --vocab_file=data/vocab/uncased_vocab.txt \
      --output_dir=/tmp/ablation_objectives [--seeds=3] [--size=mini] [--tasks=mrpc,sst2]

Studies (official/ablation/studies.py says what each row is and what it is told):
  objectives  Table 5: BERT (MLM+NSP), No NSP, LTR & No NSP           tasks mrpc, sst2,
                                                                      squad_sample
  sizes       Table 6: three sizes around --size; held-out masked-LM  tasks mrpc, sst2
              perplexity too
  masking     Table 8: six [MASK]/same/random mixes; NER fine-tuned   tasks conll (default),
              and feature-based (--feature_based)                     mrpc, sst2
  albert      ALBERT: factorised embeddings (E=H, E=64) x cross-layer tasks sst2 (default),
              sharing (none, all); parameters counted                 mrpc

For each seed and row: pretraining records once per data setting and seed
(data_prep.create_pretraining_data --random_seed=seed), pretraining from scratch
(run_scripts.run_pretraining: the same corpus, steps, batch and sequence length for every row,
so the same token budget), then each task fine-tuned from that checkpoint (run_classifier,
run_ner, run_squad) and its dev score read from the eval_results.txt it writes. Each is an
ordinary entry point's command, run as a subprocess with its log in output_dir/logs/ (and on
stderr with --show_stage_output), --jobs of them at once; --distribution_strategy is passed to
every training run. --dry_run prints the commands and runs none.

Budget: at the defaults (--size=mini, 128 tokens, 1,000 pretraining steps of 32 sequences)
pretraining took about 2 s a step on two busy CPU cores, half an hour a row and seed, and the
fine-tuning runs as long again; a study is rows x seeds of that (--jobs, more cores or a GPU
shorten it; --rows and --seeds run part of it first).

Seeds: --seeds=N runs seeds --first_seed .. --first_seed + N - 1 (1, 2, 3 by default), so a
larger --seeds later reuses the seeds already run. Rows: --rows=a,b runs some rows only.

A finished stage is reused when its command and inputs are unchanged (official/ablation/
stages.py), so rerunning the command after a change reruns only what it changed, and a study
stopped by ctrl-C or SIGTERM (exit 130 or 143, one line) resumes where it stopped: the stage
then running was stopped by the same signal, which its entry point turns into a saved
checkpoint or nothing half-written.

Writes output_dir/REPORT.md (the paper-shaped table: our rows' mean ± sample standard deviation
over seeds beside the paper's rows; each expected ordering with "holds" or "does not hold"; the
settings; where every number came from) and results.json (every seed's number and source).

Bad settings (an unknown study, row or task, a task the study does not run, a missing corpus,
vocab or task data file, --seeds < 1, a --size that is not a preset) are answered in one line
naming the flag before any work; this entry point never loads TensorFlow itself.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from typing import NamedTuple

from absl import app, flags

from official import command_line, configs, console
from official.ablation import report, results, studies, task_data
from official.ablation.plan import Plan as StudyPlan
from official.ablation.plan import make_plan
from official.ablation.settings import AblationSettings, corpus_files
from official.ablation.stages import StageFailed, Stages, Stopped
from official.pretraining_shards import read_summary
from official.stages import format_seconds
from official.text.vocab import load_vocab
from official.training.options import STRATEGIES

SCRIPT = "run_ablation_study"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_DATA = os.path.normpath(os.path.join(REPO, "..", "shared", "data"))
_D = AblationSettings


def _shared(*parts: str) -> str | None:
    """A path under ../shared/data when it is there (the default of a task data flag)."""
    path = os.path.join(SHARED_DATA, *parts)
    return path if os.path.exists(path) else None


flags.DEFINE_enum("study", None, list(studies.STUDIES), "The ablation to run.")
flags.DEFINE_string("corpus", None,
                    "Pretraining text: files or globs, comma-separated; one sentence per line, "
                    "a blank line between documents (the original's format).")
flags.DEFINE_string("vocab_file", None, "The WordPiece vocab every stage tokenises with.")
flags.DEFINE_bool("do_lower_case", _D.do_lower_case, "Lower-case the text (an uncased vocab).")
flags.DEFINE_string("output_dir", None, "Where every stage, REPORT.md and results.json go.")
flags.DEFINE_integer("seeds", _D.seeds, "How many seeds: --first_seed, --first_seed + 1, ...")
flags.DEFINE_integer("first_seed", _D.first_seed, "The first seed.")
flags.DEFINE_string("rows", None, "Only these rows of the study (comma-separated ids, e.g. "
                    "bert,no_nsp); default every row.")
flags.DEFINE_string("tasks", None, "Fine-tuning tasks, comma-separated, of mrpc, sst2, conll, "
                    "squad_sample (each study runs some); default the study's.")
flags.DEFINE_string("size", _D.size, "The model's size preset (official/configs.py: tiny, mini, "
                    "small, ..., L4_H256, ...); the sizes study's middle row.")
flags.DEFINE_integer("max_seq_length", _D.max_seq_length,
                     "Tokens per sequence, pretraining and fine-tuning.")
flags.DEFINE_integer("dupe_factor", _D.dupe_factor,
                     "Passes over the corpus, each masked anew, in the pretraining records.")
flags.DEFINE_integer("data_workers", _D.data_workers,
                     "Processes making the pretraining records.")
flags.DEFINE_integer("pretrain_steps", _D.pretrain_steps,
                     "Pretraining steps of every row (10% warmup).")
flags.DEFINE_integer("pretrain_batch_size", _D.pretrain_batch_size, "Pretraining batch size.")
flags.DEFINE_float("pretrain_learning_rate", _D.pretrain_learning_rate,
                   "Pretraining peak learning rate.")
flags.DEFINE_integer("eval_batch_size", _D.eval_batch_size,
                     "Batch size of every evaluation (held-out records, dev sets).")
flags.DEFINE_integer("max_eval_steps", _D.max_eval_steps,
                     "The most batches of the held-out records the perplexity reads.")
flags.DEFINE_float("finetune_epochs", _D.finetune_epochs, "Fine-tuning epochs of every task.")
flags.DEFINE_integer("finetune_batch_size", _D.finetune_batch_size, "Fine-tuning batch size.")
flags.DEFINE_float("finetune_learning_rate", _D.finetune_learning_rate,
                   "Fine-tuning peak learning rate (10% warmup).")
flags.DEFINE_string("feature_based", _D.feature_based,
                    "The masking study's feature-based NER: run_ner --feature_based's layers "
                    "(the paper's concat_last_4: 4 layers or more), or none to skip it.")
flags.DEFINE_integer("feature_lstm_units", _D.feature_lstm_units,
                     "Units of each direction of the feature-based NER's BiLSTM.")
flags.DEFINE_float("feature_learning_rate", _D.feature_learning_rate,
                   "The feature-based NER's learning rate (only its BiLSTM and tagger train).")
flags.DEFINE_string("glue_dir", _shared("glue"),
                    "GLUE's folders (MRPC/, SST-2/ with train.tsv and dev.tsv).")
flags.DEFINE_string("conll_dir", _shared("conll2003"),
                    "CoNLL-2003's eng.train and eng.testa (dev).")
flags.DEFINE_string("squad_file", _shared("squad", "v1.1", "dev-v1.1.json"),
                    "SQuAD v1.1 JSON that squad_sample splits by article (80% train).")
flags.DEFINE_integer("sst2_train_examples", _D.sst2_train_examples,
                     "SST-2 training sentences used (a seeded sample of its 67,349).")
flags.DEFINE_integer("squad_train_questions", _D.squad_train_questions,
                     "squad_sample's training questions (the first of its training articles).")
flags.DEFINE_integer("squad_eval_questions", _D.squad_eval_questions,
                     "squad_sample's evaluation questions (the first of the other articles).")
flags.DEFINE_enum("distribution_strategy", _D.distribution_strategy, list(STRATEGIES),
                  "Every training run's --distribution_strategy.")
flags.DEFINE_integer("num_gpus", _D.num_gpus, "--num_gpus, with the mirrored strategy.")
flags.DEFINE_integer("jobs", 1, "Stages run at once, each its own process (a stage starts "
                     "when those it reads have finished): more than 1 on a machine with cores to "
                     "spare, where a process's start-up and single-threaded work leave them idle; "
                     "1 on a single accelerator.")
flags.DEFINE_bool("show_stage_output", False,
                  "Copy every stage's output to stderr as well as to its log.")
flags.DEFINE_bool("dry_run", False, "Check the settings and print the stages' commands; run "
                  "nothing.")
FLAGS = flags.FLAGS


def _names(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(filter(None, (p.strip() for p in text.split(","))))


def _path(text: str | None) -> str | None:
    return None if text is None else os.path.abspath(text)


class Plan(NamedTuple):
    """What the flags say, checked."""
    settings: AblationSettings
    study: studies.Study
    vocab_size: int
    work: StudyPlan


def prepare() -> Plan:
    """Every check, before any work: one ValueError naming the flag."""
    feature_based = None if FLAGS.feature_based in ("", "none") else FLAGS.feature_based
    settings = AblationSettings(
        study=FLAGS.study, corpus=corpus_files(FLAGS.corpus),
        vocab_file=_path(FLAGS.vocab_file), output_dir=_path(FLAGS.output_dir),
        do_lower_case=FLAGS.do_lower_case, size=FLAGS.size, seeds=FLAGS.seeds,
        first_seed=FLAGS.first_seed, rows=_names(FLAGS.rows), tasks=_names(FLAGS.tasks),
        max_seq_length=FLAGS.max_seq_length, dupe_factor=FLAGS.dupe_factor,
        data_workers=FLAGS.data_workers, pretrain_steps=FLAGS.pretrain_steps,
        pretrain_batch_size=FLAGS.pretrain_batch_size,
        pretrain_learning_rate=FLAGS.pretrain_learning_rate,
        eval_batch_size=FLAGS.eval_batch_size, max_eval_steps=FLAGS.max_eval_steps,
        finetune_epochs=FLAGS.finetune_epochs, finetune_batch_size=FLAGS.finetune_batch_size,
        finetune_learning_rate=FLAGS.finetune_learning_rate, feature_based=feature_based,
        feature_lstm_units=FLAGS.feature_lstm_units,
        feature_learning_rate=FLAGS.feature_learning_rate, glue_dir=_path(FLAGS.glue_dir),
        conll_dir=_path(FLAGS.conll_dir), squad_file=_path(FLAGS.squad_file),
        sst2_train_examples=FLAGS.sst2_train_examples,
        squad_train_questions=FLAGS.squad_train_questions,
        squad_eval_questions=FLAGS.squad_eval_questions,
        distribution_strategy=FLAGS.distribution_strategy, num_gpus=FLAGS.num_gpus)
    if settings.size not in configs.preset_names():
        raise ValueError(f"--size={settings.size}: not a preset; one of "
                         f"{', '.join(configs.preset_names())}")
    if not os.path.isfile(settings.vocab_file):
        raise ValueError(f"--vocab_file={settings.vocab_file}: no such file")
    vocab_size = len(load_vocab(settings.vocab_file))
    study = studies.study(settings.study, settings.size, vocab_size)
    settings.check_files(study)
    for row_id in settings.chosen_rows(study):
        study.row(row_id).config.check_seq_length(settings.max_seq_length,
                                                  f"--size={settings.size}")
    if "squad_sample" in settings.chosen_tasks(study):
        task_data.read_articles(settings.squad_file)
    return Plan(settings, study, vocab_size, make_plan(settings, study))


def _text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write_inputs(plan: Plan) -> dict[str, str]:
    """The task data and the rows' configs the stages read; what of each task's data is used."""
    settings, study = plan.settings, plan.study
    tasks = settings.chosen_tasks(study)
    counts = {}
    if "sst2" in tasks:
        kept, total = task_data.sst2_subset(settings.glue_dir, settings.sst2_train_examples,
                                            plan.work.sst2_dir)
        counts["SST-2 training sentences"] = f"{kept:,} of {total:,} (a seeded sample)"
    if "squad_sample" in tasks:
        split = task_data.squad_split(settings.squad_file, settings.squad_train_questions,
                                      settings.squad_eval_questions, plan.work.squad_dir)
        counts["SQuAD sample"] = (
            f"{split['train'][1]:,} training questions from {split['train'][0]} article(s), "
            f"{split['dev'][1]:,} evaluation questions from {split['dev'][0]} other article(s) "
            f"of {settings.squad_file}")
    for path, config in plan.work.configs.values():
        if not os.path.isfile(path) or _text(path) != config.to_json_string():
            config.to_json_file(path)
    return counts


def job(plan: Plan) -> None:
    """Runs the stages, reads their numbers, writes the report."""
    settings, study, work = plan.settings, plan.study, plan.work
    counts = _write_inputs(plan)
    out = settings.output_dir
    runner = Stages(os.path.join(out, "stages"), os.path.join(out, "logs"), cwd=REPO,
                    echo=FLAGS.show_stage_output, jobs=FLAGS.jobs)
    try:
        runs = runner.run(work.stages)
    except (KeyboardInterrupt, Stopped) as e:
        signum = e.signum if isinstance(e, Stopped) else signal.SIGINT
        name = "ctrl-C" if signum == signal.SIGINT else "SIGTERM"
        stopped = runner.stopped
        during = f" during: {'; '.join(stage.title for stage in stopped)}" if stopped else ""
        command_line.fail(SCRIPT, f"stopped by {name}{during}; what was done is kept, and "
                                  "rerunning the same command goes on from there",
                          128 + signum)
    rows, seeds = settings.chosen_rows(study), settings.seed_list()
    measured = study.measured_columns(settings.chosen_tasks(study),
                                      settings.runs_feature_based(study))
    found = results.collect(study, rows, seeds, work.sources, measured)
    first_data = next(stage for stage in work.stages if stage.name.startswith("data."))
    described = report.describe_settings(settings, study, rows, plan.vocab_size,
                                         read_summary(first_data.outputs[0]), counts)
    reused, seconds = sum(r.reused for r in runs), sum(r.seconds for r in runs)
    described.append(("stages", f"{len(runs)} ({len(runs) - reused} run now, {reused} reused "
                                f"from earlier runs): {format_seconds(seconds)} of running "
                                "time in all"))
    outcome = report.Outcome(study, rows, seeds, measured, found, work.sources, described, out)
    report_file, results_file = report.write(outcome)
    checked, _ = report.verdicts(outcome)
    print(report.table(outcome))
    for verdict in checked:
        print(f"- {verdict.line()}")
    print(f"{SCRIPT}: wrote {report_file} and {results_file}", file=sys.stderr)


def main(argv: list[str]) -> None:
    """Like run_scripts/entry_point.py's ending, without loading TensorFlow: the stages do."""
    if len(argv) > 1:
        command_line.fail(SCRIPT, f"{argv[1]}: unexpected argument")
    if FLAGS.jobs < 1:
        command_line.fail(SCRIPT, f"--jobs={FLAGS.jobs}: must be at least 1")
    console.use_plain_lines()

    def stop(signum, frame):
        raise Stopped(signum)

    signal.signal(signal.SIGTERM, stop)
    try:
        plan = prepare()
        if FLAGS.dry_run:
            for stage in plan.work.stages:
                print(f"# {stage.name}: {stage.title}")
                print("python " + " ".join(shlex.quote(arg) for arg in stage.command))
            return
        job(plan)
    except (KeyboardInterrupt, Stopped) as e:
        signum = e.signum if isinstance(e, Stopped) else signal.SIGINT
        name = "ctrl-C" if signum == signal.SIGINT else "SIGTERM"
        command_line.fail(SCRIPT, f"stopped by {name}; nothing half-written was left",
                          128 + signum)
    except StageFailed as e:
        command_line.fail(SCRIPT, str(e))
    except (ValueError, OSError) as e:
        command_line.fail(SCRIPT, command_line.describe(e))


if __name__ == "__main__":
    flags.mark_flags_as_required(["study", "corpus", "vocab_file", "output_dir"])
    app.run(main, flags_parser=command_line.flags_parser(SCRIPT))
