r"""The BERT paper in miniature: its ablations rerun with seeds, on two CPU cores by default.

    python -m run_scripts.run_ablation_study --study=objectives --output_dir=/tmp/objectives

Studies (official/ablation/studies.py says what each row is and what it is told):
  objectives  the pre-training tasks: BERT (MLM+NSP), No NSP on NSP's split segments, No NSP on
              full segments (RoBERTa's FULL-SENTENCES), MLM + SOP (ALBERT), LTR & No NSP, and a
              random initialisation; tasks qnli, sst2, pos (default), mrpc, squad_sample; every
              measure: held-out masked LM, the NSP/SOP heads and probes, BLiMP, a UPOS probe
  sizes       Table 6: three sizes around --size; held-out perplexity, BLiMP, the UPOS probe;
              tasks qnli, sst2, pos (default), mrpc
  masking     Table 8: six [MASK]/same/random mixes; NER fine-tuned and feature-based
              (--feature_based), UPOS; the held-out masked LM and BLiMP
  albert      ALBERT: factorised embeddings (E=H, E=64) x cross-layer sharing (none, all);
              parameters counted; sst2 (default), mrpc, qnli, pos
  crosslingual
              zero-shot transfer (mBERT in miniature): no pretraining, English only, English +
              German + Spanish (shares smoothed as mBERT's), the latter with code-switching or
              a layer mix while fine-tuning; task xpos (a UPOS tagger fine-tuned on English-EWT,
              scored zero-shot on German and Spanish GSD); --crosslingual_dir's text,
              dictionaries and test sets (../shared/data/crosslingual); --corpus unused

--preset names a budget (official/ablation/settings.py); a flag given beside it wins. The
default, miniature, is the one whose rows separate on two CPU cores: the README's "The ablation
studies" gives its tables and wall times as they came out, and bench/ablation_budget.md how it
was chosen. --preset=reduced is the settings before it (they resolved nothing).

For each seed and row: pretraining records once per data setting and seed
(data_prep.create_pretraining_data --random_seed=seed), pretraining from scratch
(run_scripts.run_pretraining: the same corpus, steps, batch and sequence length for every row,
so the same token budget) and its held-out masked-LM loss, the measures without fine-tuning,
then each task fine-tuned from that checkpoint (run_classifier, run_ner, run_squad), each score
read from the file its stage writes. Each stage is an ordinary entry point's command, run as a
subprocess with its log in output_dir/logs/ (and on stderr with --show_stage_output), --jobs of
them at once; --distribution_strategy is passed to every training run. Without --vocab_file the
first stage learns a WordPiece vocab of --vocab_size pieces from the corpus (.gz files are read
as such). --dry_run prints the commands and runs none.

Seeds: --seeds=N runs seeds --first_seed .. --first_seed + N - 1 (1, 2, 3 by default), so a
larger --seeds later reuses the seeds already run. Rows: --rows=a,b runs some rows only.
A study too long for one sitting runs in pieces, each some rows and seeds in an output_dir of
its own (on several machines, or at several times), the last with --join=<the others'
results.json>: its report summarises every piece's rows and seeds as one study's (the pieces'
settings must agree where they shape the numbers; each row and seed comes from one piece).

A finished stage is reused when its command and inputs are unchanged (run_scripts/
stages.py), so rerunning the command after a change reruns only what it changed, and a study
stopped by ctrl-C or SIGTERM (exit 130 or 143, one line) resumes where it stopped: the stage
then running was stopped by the same signal, which its entry point turns into a saved
checkpoint or nothing half-written. One runner per output_dir: a second is refused in one line
while the first lives, and a runner killed outright (SIGKILL) takes its running stage with it
(the stage is sent SIGTERM and saves; a rerun waits for it to end, then resumes it).

Writes output_dir/REPORT.md (the papers-shaped tables: our rows' mean ± sample standard
deviation over seeds beside the papers' rows, the unigram baseline and the majority class;
each expected ordering tested on the seeds; whether the study resolves; the settings and each
row's wall time; where every number came from) and results.json (every seed's number and
source).

Bad settings (an unknown study, preset, row, task or measure, a task the study does not run, a
missing corpus, vocab or task data file, --seeds < 1, a --size that is not a preset) are
answered in one line naming the flag before any work; this entry point never loads TensorFlow
itself.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from typing import NamedTuple

from absl import flags

from official import command_line, configs, output_lock
from official.ablation import joined, report, results, studies, task_data
from official.ablation.settings import (
    CROSSLINGUAL_TEST,
    PRESETS,
    STUDY_VALUES,
    AblationSettings,
    corpus_files,
    settings_of,
)
from official.console import format_seconds
from official.pretraining_shards import read_summary
from official.text.vocab import load_vocab
from official.training.options import DTYPE_POLICIES, STRATEGIES
from run_scripts.ablation.plan import QNLI_DEV_EXAMPLES, make_plan
from run_scripts.ablation.plan import Plan as StudyPlan
from run_scripts.stages import ProgressLines, Runner, StageFailed

SCRIPT = "run_ablation_study"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_DATA = os.path.normpath(os.path.join(REPO, "..", "shared", "data"))
_D = AblationSettings
# --corpus's default: four million words of public-domain books (../shared/data/README.md).
BOOKS = os.path.join(SHARED_DATA, "pretraining_text", "books_en", "*.txt.gz")


def _shared(*parts: str) -> str | None:
    """A path under ../shared/data when it is there (the default of a data flag)."""
    path = os.path.join(SHARED_DATA, *parts)
    return path if os.path.exists(path) else None


def _by_preset(name: str) -> str:
    """" (miniature: X; reduced: Y)": a setting's value in each preset (and where a study's
    differs), for its help."""
    values = [f"{preset}: {values[name]}" for preset, values in PRESETS.items()
              if name in values]
    values += [f"{preset}, the {study} study: {own[name]}"
               for preset, studies in STUDY_VALUES.items()
               for study, own in studies.items() if name in own]
    return f" Default: the preset's ({'; '.join(values)})." if values else ""


flags.DEFINE_enum("study", None, list(studies.STUDIES), "The ablation to run.")
flags.DEFINE_enum("preset", "miniature", list(PRESETS), "The budget: every setting below "
                  "that is not given takes the preset's value (official/ablation/settings.py).")
flags.DEFINE_string("corpus", BOOKS if os.path.exists(os.path.dirname(BOOKS)) else None,
                    "Pretraining text: files or globs, comma-separated (.gz read as such); one "
                    "sentence per line, a blank line between documents (the original's "
                    "format).")
flags.DEFINE_string("vocab_file", None, "The WordPiece vocab every stage tokenises with. "
                    "Default: one of --vocab_size pieces learnt from the corpus (its first "
                    "stage).")
flags.DEFINE_bool("do_lower_case", _D.do_lower_case, "Lower-case the text (an uncased vocab).")
flags.DEFINE_string("output_dir", None, "Where every stage, REPORT.md and results.json go.")
flags.DEFINE_integer("seeds", _D.seeds, "How many seeds: --first_seed, --first_seed + 1, ...")
flags.DEFINE_integer("first_seed", _D.first_seed, "The first seed.")
flags.DEFINE_string("rows", None, "Only these rows of the study (comma-separated ids, e.g. "
                    "bert,no_nsp); default every row.")
flags.DEFINE_string("tasks", None, "Fine-tuning tasks, comma-separated, of "
                    f"{', '.join(studies.TASKS)} (each study runs some); default the study's.")
flags.DEFINE_string("measures", None, "Measures without fine-tuning, comma-separated, of "
                    f"{', '.join(studies.MEASURES)}, or none; default the study's.")
_PRESET_FLAGS = {
    "vocab_size": (flags.DEFINE_integer, "Pieces of the vocab learnt without --vocab_file."),
    "size": (flags.DEFINE_string, "The model's size preset (official/configs.py: tiny, mini, "
             "..., L4_H128, ...); the sizes study's middle row."),
    "max_seq_length": (flags.DEFINE_integer, "Tokens per pretraining sequence."),
    "finetune_max_seq_length": (flags.DEFINE_integer, "Tokens per fine-tuning example of one "
                                "text (sst2, pos, conll) and of the UPOS probe."),
    "pair_max_seq_length": (flags.DEFINE_integer, "Tokens per text-pair example (qnli, mrpc)."),
    "dupe_factor": (flags.DEFINE_integer, "Passes over the corpus, each masked anew, in the "
                    "pretraining records."),
    "pretrain_steps": (flags.DEFINE_integer, "Pretraining steps of every row."),
    "pretrain_batch_size": (flags.DEFINE_integer, "Pretraining batch size."),
    "pretrain_learning_rate": (flags.DEFINE_float, "Pretraining peak learning rate (decayed "
                               "linearly to 0 at the last step)."),
    "pretrain_warmup": (flags.DEFINE_float, "The share of pretraining steps that warm up."),
    "pretrain_dropout": (flags.DEFINE_float, "Dropout while pretraining (the config's 0.1 when "
                         "unset)."),
    "dtype": (flags.DEFINE_string, f"Compute dtype of every training stage: "
              f"{', '.join(DTYPE_POLICIES)}."),
    "max_eval_steps": (flags.DEFINE_integer, "The most batches of held-out records a measure "
                       "reads."),
    "probe_steps": (flags.DEFINE_integer, "Training steps of each NSP and SOP probe."),
    "probe_learning_rate": (flags.DEFINE_float, "The NSP and SOP probes' learning rate."),
    "finetune_epochs": (flags.DEFINE_float, "Fine-tuning epochs of every task."),
    "finetune_batch_size": (flags.DEFINE_integer, "Fine-tuning batch size."),
    "finetune_learning_rate": (flags.DEFINE_float, "Fine-tuning peak learning rate (10% "
                               "warmup)."),
    "finetune_dropout": (flags.DEFINE_float, "Dropout while fine-tuning (the config's when "
                         "unset)."),
    "blimp_pairs_per_paradigm": (flags.DEFINE_integer, "BLiMP pairs scored of each paradigm "
                                 "(its first)."),
    "sst2_train_examples": (flags.DEFINE_integer, "SST-2 training sentences used (a seeded "
                            "sample of its 67,349)."),
}
for _name, (_define, _help) in _PRESET_FLAGS.items():
    _define(_name, None, _help + _by_preset(_name))
flags.DEFINE_integer("data_workers", _D.data_workers, "Processes making the pretraining records.")
flags.DEFINE_integer("eval_batch_size", _D.eval_batch_size,
                     "Batch size of every evaluation (held-out records, dev sets).")
flags.DEFINE_string("feature_based", _D.feature_based,
                    "The masking study's feature-based NER: run_ner --feature_based's layers "
                    "(the paper's concat_last_4: 4 layers or more), or none to skip it.")
flags.DEFINE_integer("feature_lstm_units", _D.feature_lstm_units,
                     "Units of each direction of the feature-based NER's BiLSTM.")
flags.DEFINE_float("feature_learning_rate", _D.feature_learning_rate,
                   "The feature-based NER's learning rate (only its BiLSTM and tagger train).")
flags.DEFINE_string("glue_dir", _shared("glue"),
                    "GLUE's folders (QNLI/, MRPC/, SST-2/ with their .tsv files).")
flags.DEFINE_string("ud_dir", _shared("ud_english_ewt"),
                    "UD English-EWT's en_ewt-ud-{train,dev,test}.conllu (task pos, measure "
                    "pos_probe).")
flags.DEFINE_string("conll_dir", _shared("conll2003"),
                    "CoNLL-2003's eng.train and eng.testa (dev).")
flags.DEFINE_string("squad_file", _shared("squad", "v1.1", "dev-v1.1.json"),
                    "SQuAD v1.1 JSON that squad_sample splits by article (80% train).")
flags.DEFINE_string("blimp_dir", _shared("blimp"),
                    "BLiMP: data/*.jsonl.gz and models_summary.jsonl (measure blimp).")
flags.DEFINE_string("crosslingual_dir", _shared("crosslingual"),
                    "The crosslingual study's data: text/<language>/* (pretraining text), "
                    "dict/en-<language>.txt (code-switching word pairs), "
                    "ud/<language>_gsd/test.conllu[.gz] (German and Spanish, scored zero-shot).")
flags.DEFINE_float("language_smoothing", _D.language_smoothing,
                   "The crosslingual study's exponent of the languages' shares in its corpus "
                   "(mBERT's 0.7: data_prep.mix_languages).")
flags.DEFINE_float("code_switch_rate", _D.code_switch_rate,
                   "The crosslingual study's code-switching row: the probability that a word "
                   "the dictionaries have is replaced while fine-tuning.")
flags.DEFINE_integer("squad_train_questions", _D.squad_train_questions,
                     "squad_sample's training questions (the first of its training articles).")
flags.DEFINE_integer("squad_eval_questions", _D.squad_eval_questions,
                     "squad_sample's evaluation questions (the first of the other articles).")
flags.DEFINE_enum("distribution_strategy", _D.distribution_strategy, list(STRATEGIES),
                  "Every training run's --distribution_strategy.")
flags.DEFINE_integer("num_gpus", _D.num_gpus, "--num_gpus, with the mirrored strategy.")
flags.DEFINE_integer("jobs", 1, "Stages run at once, each its own process (a stage starts "
                     "when those it reads have finished), TensorFlow's threads shared among "
                     "them: on two cores, 2 pretrains 1.28x the examples/s of 1 "
                     "(bench/ablation_budget.md).")
flags.DEFINE_bool("show_stage_output", False,
                  "Copy every stage's output to stderr as well as to its log.")
flags.DEFINE_string("join", None, "Earlier runs' results.json (comma-separated) of the same "
                    "study at the same settings, whose rows and seeds this run's report takes "
                    "in (official/ablation/joined.py): a study run in pieces, on several "
                    "machines or at several times. A row and seed comes from one run only.")
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
    earlier: tuple[joined.Earlier, ...]


def _given() -> dict:
    """The preset-controlled settings the command line names."""
    given = {name: FLAGS[name].value for name in _PRESET_FLAGS if FLAGS[name].present}
    if "pretrain_dropout" in given and given["pretrain_dropout"] < 0:
        given["pretrain_dropout"] = None  # a negative value asks for the config's own
    return given


def prepare() -> Plan:
    """Every check, before any work: one ValueError naming the flag."""
    if FLAGS.jobs < 1:
        raise ValueError(f"--jobs={FLAGS.jobs}: must be at least 1")
    feature_based = None if FLAGS.feature_based in ("", "none") else FLAGS.feature_based
    settings = settings_of(FLAGS.preset, dict(
        _given(), study=FLAGS.study, corpus=corpus_files(FLAGS.corpus or ""),
        vocab_file=_path(FLAGS.vocab_file), output_dir=_path(FLAGS.output_dir),
        do_lower_case=FLAGS.do_lower_case, seeds=FLAGS.seeds, first_seed=FLAGS.first_seed,
        rows=_names(FLAGS.rows), tasks=_names(FLAGS.tasks),
        measures=() if FLAGS.measures == "none" else _names(FLAGS.measures),
        data_workers=FLAGS.data_workers, eval_batch_size=FLAGS.eval_batch_size,
        feature_based=feature_based, feature_lstm_units=FLAGS.feature_lstm_units,
        feature_learning_rate=FLAGS.feature_learning_rate, glue_dir=_path(FLAGS.glue_dir),
        ud_dir=_path(FLAGS.ud_dir), conll_dir=_path(FLAGS.conll_dir),
        squad_file=_path(FLAGS.squad_file), blimp_dir=_path(FLAGS.blimp_dir),
        crosslingual_dir=_path(FLAGS.crosslingual_dir),
        language_smoothing=FLAGS.language_smoothing, code_switch_rate=FLAGS.code_switch_rate,
        squad_train_questions=FLAGS.squad_train_questions,
        squad_eval_questions=FLAGS.squad_eval_questions,
        distribution_strategy=FLAGS.distribution_strategy, num_gpus=FLAGS.num_gpus))
    if settings.size not in configs.preset_names():
        raise ValueError(f"--size={settings.size}: not a preset; one of "
                         f"{', '.join(configs.preset_names())}")
    if settings.vocab_file is not None:
        if not os.path.isfile(settings.vocab_file):
            raise ValueError(f"--vocab_file={settings.vocab_file}: no such file")
        vocab_size = len(load_vocab(settings.vocab_file))
    else:
        vocab_size = settings.vocab_size
    study = studies.study(settings.study, settings.size, vocab_size)
    settings.check_files(study)
    for row_id in settings.chosen_rows(study):
        for length, name in ((settings.max_seq_length, "max_seq_length"),
                             (settings.finetune_max_seq_length, "finetune_max_seq_length"),
                             (settings.pair_max_seq_length, "pair_max_seq_length")):
            study.row(row_id).config.check_seq_length(length, f"--size={settings.size} "
                                                              f"(--{name})")
    if "squad_sample" in settings.chosen_tasks(study):
        task_data.read_articles(settings.squad_file)
    earlier = tuple(joined.read(path, study, settings.experiment())
                    for path in map(os.path.abspath, _names(FLAGS.join) or ()))
    joined.check_apart(earlier, [(row, seed) for row in settings.chosen_rows(study)
                                 for seed in settings.seed_list()])
    return Plan(settings, study, vocab_size, make_plan(settings, study), earlier)


def _text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write_inputs(plan: Plan) -> dict[str, str]:
    """The corpus, the task data and the rows' configs the stages read; what of each task's
    data is used."""
    settings, study, work = plan.settings, plan.study, plan.work
    tasks = settings.chosen_tasks(study)
    if settings.reads_corpus(study):
        task_data.plain_corpus(settings.corpus, work.corpus)
    counts = {}
    if "sst2" in tasks:
        kept, total = task_data.sst2_subset(settings.glue_dir, settings.sst2_train_examples,
                                            work.task_dirs["SST-2"])
        counts["SST-2 training sentences"] = f"{kept:,} of {total:,} (a seeded sample)"
    if "qnli" in tasks:
        train, dev = task_data.qnli_split(settings.glue_dir, QNLI_DEV_EXAMPLES,
                                          work.task_dirs["QNLI"])
        counts["QNLI"] = (f"{train:,} of its released dev pairs train, the other {dev:,} "
                          "evaluate (a seeded split)")
    if "squad_sample" in tasks:
        split = task_data.squad_split(settings.squad_file, settings.squad_train_questions,
                                      settings.squad_eval_questions, work.task_dirs["squad"])
        counts["SQuAD sample"] = (
            f"{split['train'][1]:,} training questions from {split['train'][0]} article(s), "
            f"{split['dev'][1]:,} evaluation questions from {split['dev'][0]} other article(s) "
            f"of {settings.squad_file}")
    for by_stage in work.configs.values():
        for path, config in by_stage.values():
            if not os.path.isfile(path) or _text(path) != config.to_json_string():
                config.to_json_file(path)
    return counts


def _chance(plan: Plan, measured: tuple[str, ...]) -> dict[str, float]:
    """What a model that learnt nothing of a task scores: each dev set's majority class; 50 on
    BLiMP and the NSP and SOP records (balanced by construction)."""
    settings, work = plan.settings, plan.work
    found = {}
    dev_sets = {"qnli": (os.path.join(work.task_dirs["QNLI"], "dev.tsv"), "label"),
                "sst2": (os.path.join(work.task_dirs["SST-2"], "dev.tsv"), "label"),
                "mrpc": (os.path.join(settings.glue_dir or "", "MRPC", "dev.tsv"), "Quality")}
    for key, (path, label) in dev_sets.items():
        if key in measured:
            found[key] = task_data.majority_share(path, label)
    if "pos" in measured or "pos_probe" in measured:
        share = task_data.majority_tag_share(os.path.join(settings.ud_dir,
                                                          "en_ewt-ud-dev.conllu"))
        found.update({key: share for key in ("pos", "pos_probe") if key in measured})
    if "xpos_en" in measured:
        tests = {"en": os.path.join(settings.ud_dir, "en_ewt-ud-test.conllu"),
                 **settings.crosslingual_files(CROSSLINGUAL_TEST, studies.LANGUAGES[1:])}
        found.update({f"xpos_{language}": task_data.majority_tag_share(path)
                      for language, path in tests.items()})
    for key in ("blimp", "blimp_same", "nsp_head", "sop_head", "nsp_probe", "sop_probe"):
        if key in measured:
            found[key] = 50.0
    return found


def job(plan: Plan) -> None:
    """Runs the stages, reads their numbers, writes the report (with --dry_run, prints the
    stages' commands only)."""
    settings, study, work = plan.settings, plan.study, plan.work
    if FLAGS.dry_run:
        for stage in work.stages:
            print(f"# {stage.name}: {stage.title}")
            print("python " + shlex.join(stage.command))
        return
    out = settings.output_dir
    os.makedirs(out, exist_ok=True)
    output_lock.hold(out)  # one runner per study folder
    counts = _write_inputs(plan)
    runner = Runner(os.path.join(out, "stages"), os.path.join(out, "logs"), cwd=REPO,
                    view=ProgressLines(echo=FLAGS.show_stage_output), jobs=FLAGS.jobs)
    try:
        runs = runner.run(work.stages)
    except KeyboardInterrupt as e:
        stopped = runner.stopped
        during = f"during {'; '.join(stage.title for stage in stopped)}: " if stopped else ""
        command_line.stopped(SCRIPT, e, f"{during}what was done is kept, and rerunning the "
                                        "same command goes on from there")
    except StageFailed as e:
        command_line.fail(SCRIPT, str(e))
    rows, seeds = settings.chosen_rows(study), settings.seed_list()
    measured = study.measured_columns(settings.chosen_tasks(study),
                                      settings.chosen_measures(study),
                                      settings.runs_feature_based(study))
    own = results.collect(study, rows, seeds, work.sources, measured)
    per_row = {row: sum(r.seconds for r in runs if r.stage.name.startswith(f"{row}.seed"))
               for row in rows}
    pieces = joined.join(joined.Pieces(
        own, dict(work.sources), per_row,
        {report.UNIGRAM: results.reference_values(seeds, work.references)}
        if work.references else {}, _chance(plan, measured), measured), plan.earlier)
    outcome = report.of_pieces(pieces, study, out, settings.experiment())
    # None when no row pretrains (the random initialisation alone).
    first_data = next((stage for stage in work.stages if stage.name.startswith("data.")), None)
    corpora = {stage.name.split(".", 1)[1]: stage.outputs[1] for stage in work.stages
               if stage.name.startswith("corpus.")}
    described = report.describe_settings(
        settings, study, outcome.rows, (work.vocab_file, plan.vocab_size),
        first_data and read_summary(first_data.outputs[0]), counts,
        report.describe_languages(corpora, work.overlap))
    reused, seconds = sum(r.reused for r in runs), sum(r.seconds for r in runs)
    described.append(("stages", f"{len(runs)} ({len(runs) - reused} run now, {reused} reused "
                                f"from earlier runs): {format_seconds(seconds)} of running "
                                "time in all"))
    if plan.earlier:
        described.append(("joined", "; ".join(
            f"{one.path}: " + ", ".join(f"{row} seed {seed}" for row, seed in sorted(one.runs()))
            for one in plan.earlier)))
    outcome = dataclasses.replace(outcome, settings=described)
    report_file, results_file = report.write(outcome)
    checked, _ = report.verdicts(outcome)
    for table in report.tables(outcome):
        if table:
            print(table + "\n")
    for verdict, source, _ in checked:
        print(f"- {verdict.line()} [{source}]")
    print(f"{SCRIPT}: wrote {report_file} and {results_file}", file=sys.stderr)


if __name__ == "__main__":
    command_line.main(SCRIPT, prepare, job, required=["study", "output_dir"], tensorflow=False)
