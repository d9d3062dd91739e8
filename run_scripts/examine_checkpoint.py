r"""One report for any checkpoint: every examination that applies to it, in the order a reader
wants, each an entry point's command, gathered into one Markdown (and HTML) report.

    python -m run_scripts.examine_checkpoint --init_checkpoint=$BERT_DIR \
      [--vocab_file=$BERT_DIR/vocab.txt] [--export_dir=exports/sst2 --eec_score_class=1 \
      --checklist_suite=sentiment_suite.jsonl --attack_file=SST-2/dev.tsv] \
      [--sentence_encoder_export_dir=exports/minilm] --budget=quick --output_dir=/tmp/exam

The examinations (run_scripts/examination/plan.py's table):
  what it knows     probing    a linear UPOS probe per layer on UD English-EWT (probe_layers)
                    blimp      BLiMP's minimal pairs (score_minimal_pairs; a masked-LM head)
  how it fits a     vocab      the vocab on a domain text, ChemProt's (data_prep.vocab_report)
  domain text
  where it breaks   checklist  CheckList's suite (behavioral_test; a classifier export and a
                               --checklist_suite: a sentiment classifier's)
                    attack     TextFooler (attack_classifier; a classifier export and labelled
                               texts, --attack_file; --sentence_encoder_export_dir its
                               similarity filter when given)
  bias              seat       SEAT (bias_report; a sentence-encoder export)
                    crows_pairs  CrowS-Pairs (bias_report; a masked-LM head)
                    eec        the EEC's gender and race pairs (bias_report; a classifier
                               export and --eec_score_class, the label scored)
                    names      gender and race in names' vectors (bias_report; any checkpoint)
One that does not apply (no masked-LM head, no export, a data file missing) is skipped, and the
report says why; --skip=name,... skips others. Each runs as a stage of run_scripts/stages.py:
its folder is output_dir/<name>/, its log output_dir/logs/<name>.log; rerunning the same
command reuses the stages done (a changed flag, data file or weights reruns a stage), and one
stopped by ctrl-C or SIGTERM resumes. --jobs runs that many at once.

--budget sizes the samples through each entry point's flags (plan.BUDGETS): quick reads the
data the repository ships (data/: UD EWT's 300/100/100-sentence sample, BLiMP's 10 pairs per
paradigm of which 5 are scored, ChemProt's 96 training lines, 4,616 synonym pairs, the EEC's
templates) with 5 CheckList cases a test, 25 texts attacked, SEAT's sent-weat* tests,
CrowS-Pairs' first 100 pairs (SEAT's and CrowS-Pairs' files are not shipped: both budgets read
them from ../shared/data/bias) and the EEC's templates with each emotion's first word and each
race and gender's first 3 names (1,024 of its 8,640 sentences, every pair whole; the names
probe 3-fold); full reads ../shared/data where it is there (UD EWT's 2,000 first training
sentences, BLiMP's 100 pairs per paradigm, ChemProt, PPDB's synonyms, every SEAT test, all
CrowS-Pairs, the whole EEC) with 500 cases a test and 500 texts attacked. Data flags
(--ud_dir, --domain_file, ...) replace a budget's file.

What quick costs (README: One report for any checkpoint, per stage). At BERT-Base's size, every
examination (a random checkpoint of its shape with its masked-LM head, an SST-2 classifier
fine-tuned from it and a sentence-encoder export), in one run on 2 quiet cores of an AMD EPYC:
10 min 37 s (EEC 1 min 57 s the longest; CheckList 1 min 43 s at 5 cases a test). On cores
shared with other jobs (load average 10 to 22): MiniLM (no masked-LM head) with an SST-2
classifier and a sentence-encoder export, 5 min 52 s; the demo's BERT-Tiny, probing left to the
demo, 1 min 49 s.

Writes output_dir/REPORT.md and REPORT.html (run_scripts/examination/report.py): the settings,
each examination's outcome (its time, reused, skipped and why, or failed: its status and its
log's last line), then each one's tables and plots as its entry point wrote them, with the
papers' figures beside. A failed examination stops none of the others, and the report is
written from those that finished; then the run exits non-zero naming the failed ones, and
rerunning the same command runs only them. Bad input (no checkpoint
there, an unknown --skip name or --budget, a missing vocab, export or data file) is one line
before any work; this entry point never loads TensorFlow itself.
"""

from __future__ import annotations

import dataclasses
import os
import sys

from absl import flags

from official import checkpoints, command_line, output_lock
from official.checkpoints.variable_names import has_masked_lm_head
from official.export.versions import newest_version
from official.output_paths import check_output_dir
from official.text.vocab import load_vocab
from official.training.options import check_checkpoint_path
from run_scripts import common_flags
from run_scripts.examination import plan as planning
from run_scripts.examination import report
from run_scripts.stages import ProgressLines, Runner, StageFailed

SCRIPT = "examine_checkpoint"

flags.DEFINE_string("init_checkpoint", None, "The checkpoint examined (any format the project "
                    "reads: an original release, a run_pretraining output_dir, a Hugging Face "
                    "folder, ...).")
common_flags.define_bert_config_flag(extra_help=" Default: bert_config.json beside "
                                     "--init_checkpoint.")
common_flags.define_tokenizer_flags()
common_flags.define_max_seq_length_flag()
flags.DEFINE_string("export_dir", None, "A single-text classifier export fine-tuned from the "
                    "checkpoint (export_saved_model): checklist, attack, eec.")
flags.DEFINE_string("sentence_encoder_export_dir", None, "A sentence_encoder export: seat, and "
                    "the attack's similarity filter.")
flags.DEFINE_string("output_dir", None, "Where each examination's folder, the logs and "
                    "REPORT.md / REPORT.html go.")
flags.DEFINE_enum("budget", None, list(planning.BUDGETS), "How large each sample is (see "
                  "--help).")
flags.DEFINE_string("skip", "", "Examinations not to run, comma-separated, of "
                    f"{', '.join(planning.NAMES)}.")
flags.DEFINE_string("eec_score_class", None, "The export's label whose probability the EEC "
                    "scores (SST-2's positive: 1).")
flags.DEFINE_string("label_map", None, "behavioral_test --label_map (export label:suite class).")
flags.DEFINE_string("checklist_suite", None, "A CheckList suite as JSON lines "
                    "(data_prep.checklist_suite).")
flags.DEFINE_string("attack_file", None, "TSV with sentence and label columns the classifier's "
                    "labels, attacked (GLUE's SST-2 dev.tsv).")
flags.DEFINE_string("ud_dir", None, "UD English-EWT: train.conllu, dev.conllu, test.conllu (the "
                    "shipped sample's names) or en_ewt-ud-{train,dev,test}.conllu.")
flags.DEFINE_string("blimp_dir", None, "BLiMP: data/*.jsonl.gz, models_summary.jsonl, "
                    "human_validation_summary.csv.")
flags.DEFINE_string("domain_file", None, "The domain text: JSON lines with a text field.")
flags.DEFINE_string("synonyms_file", None, "The attack's synonym pairs.")
flags.DEFINE_string("seat_dir", None, "SEAT's test files (*.jsonl).")
flags.DEFINE_string("crows_pairs_file", None, "CrowS-Pairs' CSV.")
flags.DEFINE_string("eec_templates", None, "The EEC template set (data/eec_templates/).")
flags.DEFINE_integer("jobs", 1, "Examinations run at once, each its own process.")
flags.DEFINE_bool("show_stage_output", False, "Copy every stage's output to stderr as well.")
FLAGS = flags.FLAGS

_FILES = ("checklist_suite", "attack_file", "domain_file", "synonyms_file", "crows_pairs_file",
          "eec_templates")
_FOLDERS = ("blimp_dir", "seat_dir")


def _ud_files(folder: str) -> tuple[str, str, str]:
    """The three splits in `folder`, under either naming."""
    for pattern in ("{}.conllu", "en_ewt-ud-{}.conllu"):
        files = tuple(os.path.join(folder, pattern.format(s)) for s in ("train", "dev", "test"))
        if all(os.path.isfile(file) for file in files):
            return files
    raise ValueError(f"--ud_dir={folder}: no train.conllu, dev.conllu, test.conllu (or "
                     "en_ewt-ud-*.conllu) there")


def _given_data() -> dict:
    """The data flags given, checked, as plan.Data's fields."""
    given = {}
    for name in _FILES + _FOLDERS:
        path = FLAGS[name].value
        if path is None:
            continue
        there = os.path.isdir(path) if name in _FOLDERS else os.path.isfile(path)
        if not there:
            raise ValueError(f"--{name}={path}: no such {'folder' if name in _FOLDERS else 'file'}")
        given[name] = os.path.abspath(path)
    if FLAGS.ud_dir is not None:
        given["ud_files"] = _ud_files(os.path.abspath(FLAGS.ud_dir))
    return given


def _export(flag: str) -> str | None:
    path = FLAGS[flag].value
    if path is None:
        return None
    try:
        return newest_version(os.path.abspath(path))
    except ValueError as e:
        raise ValueError(f"--{flag}: {e}") from None


def prepare() -> tuple[planning.Subject, planning.Data, planning.Budget, tuple[str, ...]]:
    """Every check, before any work: one ValueError naming the flag."""
    skip = tuple(filter(None, (name.strip() for name in FLAGS.skip.split(","))))
    unknown = [name for name in skip if name not in planning.NAMES]
    if unknown:
        raise ValueError(f"--skip={FLAGS.skip}: {', '.join(unknown)} is not an examination; "
                         f"they are {', '.join(planning.NAMES)}")
    if FLAGS.jobs < 1:
        raise ValueError(f"--jobs={FLAGS.jobs}: must be at least 1")
    check_checkpoint_path(FLAGS.init_checkpoint)
    checkpoint = os.path.abspath(FLAGS.init_checkpoint)
    vocab_file = FLAGS.vocab_file or checkpoints.beside(checkpoint, checkpoints.VOCAB_FILE)
    if vocab_file is None:
        raise ValueError(f"--vocab_file: not given, and no {checkpoints.VOCAB_FILE} beside "
                         f"{checkpoint}")
    load_vocab(vocab_file)
    check_output_dir(FLAGS.output_dir)
    budget = planning.BUDGETS[FLAGS.budget]
    subject = planning.Subject(
        checkpoint, FLAGS.bert_config_file and os.path.abspath(FLAGS.bert_config_file),
        os.path.abspath(vocab_file), FLAGS.do_lower_case, FLAGS.max_seq_length,
        has_masked_lm_head(checkpoint), _export("export_dir"),
        _export("sentence_encoder_export_dir"), FLAGS.eec_score_class, FLAGS.label_map)
    return subject, planning.data_for(budget, **_given_data()), budget, skip


def _failed(failure: StageFailed | None, output_dir: str) -> str | None:
    """A failed examination as the report says it: its status, its log's last line, its log
    (relative to output_dir)."""
    if failure is None:
        return None
    said = f", its last line: {failure.last_line}" if failure.last_line else ""
    return (f"exit status {failure.returncode}{said} (log: "
            f"{os.path.relpath(failure.log, output_dir)})")


def job(prepared: tuple[planning.Subject, planning.Data, planning.Budget, tuple[str, ...]]
        ) -> None:
    """Runs the examinations that apply, then writes the report."""
    subject, data, budget, skip = prepared
    out = os.path.abspath(FLAGS.output_dir)
    os.makedirs(out, exist_ok=True)
    output_lock.hold(out)  # one examiner per output folder
    work = planning.make_plan(subject, data, budget, out, skip)
    runner = Runner(os.path.join(out, "stages"), os.path.join(out, "logs"), cwd=planning.REPO,
                    view=ProgressLines(echo=FLAGS.show_stage_output), jobs=FLAGS.jobs,
                    keep_going=True)
    try:
        runs = {run.stage.name: run for run in runner.run(work.stages)}
    except KeyboardInterrupt as e:
        command_line.stopped(SCRIPT, e, "the examinations done are kept, and rerunning the "
                                        "same command goes on from there")
    sections = [section if section.name not in runs else dataclasses.replace(
        section, seconds=runs[section.name].seconds, reused=runs[section.name].reused,
        failed=_failed(runs[section.name].failure, out)) for section in work.sections]
    described = [("checkpoint", subject.init_checkpoint),
                 ("masked-LM head", "yes" if subject.has_masked_lm_head else "no"),
                 ("classifier export", subject.classifier_export or "none"),
                 ("sentence-encoder export", subject.sentence_encoder_export or "none"),
                 ("budget", budget.name)]
    paths = report.write(out, f"Examination of {os.path.basename(subject.init_checkpoint)}",
                         described, sections)
    print(f"{SCRIPT}: wrote {paths[0]} and {paths[1]}", file=sys.stderr)
    failed = [run.stage.name for run in runs.values() if run.failure is not None]
    if failed:
        command_line.fail(SCRIPT, f"{', '.join(failed)} failed (the report says how; rerunning "
                                  f"the same command runs only what did not finish): "
                                  f"{paths[0]}")


if __name__ == "__main__":
    command_line.main(SCRIPT, prepare, job, required=["init_checkpoint", "output_dir", "budget"],
                      tensorflow=False)
