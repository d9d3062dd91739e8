r"""`make demo`: BERT's whole story on data the repository ships, each stage an entry point.

    python -m demo.run_demo [--output_dir=demo_output] [--fresh] [--smoke] [--jobs=1]

Stages (each the command a user would type; run_scripts/stages.py skips one already done with
the same flags and inputs, so a rerun reuses them, resumes one stopped, and --fresh starts
over; demo/stages.py shows them, each stage's log in output_dir/logs/):
  1. data_prep.build_vocab              a WordPiece vocab learned from data/gutenberg/corpus.txt
  2. demo.sized_config                  demo/bert_config.json (BERT-Tiny) sized to that vocab
  3. data_prep.create_pretraining_data  masked-LM + next-sentence TFRecords, in shards; the
                                        first shard (whole documents) is held out
  4. run_scripts.run_pretraining        BERT-Tiny pretrains on the other shards
  5. run_scripts.run_pretraining        --do_eval on the held-out shard
  6. run_scripts.run_classifier         fine-tunes it on authorship attribution (which of five
                                        authors wrote a sentence? data/gutenberg/authorship,
                                        --task_name=tsv), dev accuracy every epoch, test
                                        predictions from the best epoch
  7. run_scripts.run_classifier         the same task with adapters (--adapter_size=64): the
                                        pretrained encoder frozen, only adapters, LayerNorms
                                        and head trained and kept
  8. run_scripts.run_classifier         the same from random initialisation, the same budget
  9. run_scripts.run_classifier         the fine-tuned classifier (stage 6) distilled into a
                                        1-layer student made of its first layer
                                        (--teacher_checkpoint)
 10. run_scripts.run_classifier         the same authors from whole passages of 300-3,000
                                        words (data/gutenberg/authorship_passages,
                                        --long_doc=windows): stage 4's model reads each
                                        passage in windows half a window apart, pooled into
                                        one prediction (training: at most --max_windows)
 11. run_scripts.probe_layers           what each layer of stage 4's model knows: a linear
                                        part-of-speech probe per layer (0 = embeddings) on
                                        the shipped UD English-EWT sample, its control task
                                        (selectivity) and the layers' learned mix (E_s)
 12. run_scripts.export_saved_model     the fine-tuned classifier as a SavedModel serving text
 13. run_scripts.export_saved_model     the distilled student, the same way
 14. run_scripts.export_saved_model     the passage classifier, serving texts of any length
 15. demo.classify                      the first SavedModel, loaded with TensorFlow alone,
                                        labels demo/sentences.txt (lines by the same authors
                                        from works not in the data); the third labels the
                                        passages' test split (books no stage trained on)
 16. demo.serving_speed                 both sentence SavedModels' sentences/s, side by side
 17. run_scripts.attack_classifier      the first SavedModel attacked on the test sentences:
                                        words swapped for synonyms (data/synonyms_sample),
                                        the most telling first, until the predicted author
                                        changes (TextFooler's search)
 18. run_scripts.examine_checkpoint     stage 4's model through every examination that
                                        applies at --budget=quick (BLiMP's minimal pairs, the
                                        vocab on ChemProt's text, CrowS-Pairs when
                                        ../shared/data has it, the names probe; probing is
                                        stage 11's): output_dir/examination/REPORT.md and
                                        REPORT.html, which the demo's report links to
Then demo/report.py writes output_dir/REPORT.md with the figures and PNG plots of the curves.
--smoke runs the same stages at a size for tests (a minute or two, figures meaningless).
--jobs=N runs up to N stages side by side, each once the stages it reads are done (stages 5 to
11 wait for stage 4 at most, but the distillation for stage 6), each stage's output shown whole,
in order. The tests' --smoke run, where starting TensorFlow is most of a stage, uses 2: on two
otherwise idle cores it takes about 75 s instead of 125 (on busy ones, as long as one at a time).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import NamedTuple

from absl import flags

from data_prep.attack_data import summary_path as attack_summary_file
from demo.stages import Blocks
from official import command_line, output_lock
from official.atomic_files import open_atomically
from official.console import format_seconds
from run_scripts.stages import Runner, Stage, StageFailed, remove

SCRIPT = "run_demo"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLASSIFIED_FILE = "classified.jsonl"
CLASSIFIED_PASSAGES_FILE = "classified_passages.json"
SPEED_FILE = "serving_speed.json"
RUN_FILE = "last_run.json"
REPORT_FILE = "REPORT.md"  # demo/report.py's
PROBING_DIR = "probing"
ATTACK_FILE = "attack.jsonl"
EXAMINATION_DIR = "examination"
# An export holds the serving code of its day: a change to it exports again (an older export
# lacks what later stages read, such as its labels).
CLASSIFIER_EXPORTER = os.path.join("official", "export", "classifier.py")

flags.DEFINE_string("output_dir", "demo_output", "Where every stage writes.")
flags.DEFINE_bool("fresh", False, "Remove output_dir first: every stage runs again.")
flags.DEFINE_bool("smoke", False, "The tests' size: tiny budgets, the same stages.")
flags.DEFINE_integer("jobs", 1, "At most this many stages run side by side, each once the "
                     "stages it reads are done; their output is shown whole, in order.",
                     lower_bound=1)
flags.DEFINE_string("corpus", os.path.join(REPO, "data", "gutenberg", "corpus.txt"),
                    "Pretraining text: one sentence per line, blank lines between documents.")
flags.DEFINE_string("task_dir", os.path.join(REPO, "data", "gutenberg", "authorship"),
                    "The classification task (run_classifier --task_name=tsv layout).")
flags.DEFINE_string("passages_dir", os.path.join(REPO, "data", "gutenberg",
                                                 "authorship_passages"),
                    "The same task on long passages (the same layout), read in windows.")
flags.DEFINE_string("treebank_dir", os.path.join(REPO, "data", "ud_ewt_sample"),
                    "A UD treebank's train.conllu, dev.conllu and test.conllu, for probing.")
flags.DEFINE_string("sentences", os.path.join(REPO, "demo", "sentences.txt"),
                    "New sentences for the exported model: text<TAB>source per line.")
flags.DEFINE_string("synonyms", os.path.join(REPO, "data", "synonyms_sample", "synonyms.txt"),
                    "Synonym pairs (`word1 word2` a line) the attack swaps words for.")
FLAGS = flags.FLAGS


@dataclasses.dataclass(frozen=True)
class Budget:
    """How big each stage is. FULL is `make demo`'s (about ten minutes on two cores)."""
    vocab_size: int = 8000  # the most; from this corpus the learner keeps about 4,000
    pretrain_seq_length: int = 64
    max_predictions_per_seq: int = 10
    dupe_factor: int = 10
    num_shards: int = 10  # 2 to 10; shard 0 is held out: a tenth of the corpus's documents
    pretrain_batch_size: int = 32
    pretrain_steps: int = 5000
    pretrain_learning_rate: float = 1e-3
    jit_compile: bool = True  # XLA: about 1.3x the examples/s of BERT-Tiny on a CPU
    log_steps: int = 100
    finetune_log_steps: int = 20
    finetune_seq_length: int = 64
    finetune_batch_size: int = 32
    finetune_epochs: float = 4.0
    finetune_learning_rate: float = 2e-4
    adapter_size: int = 64
    # Adapters start near the identity and train few weights: a larger rate (adapter-bert
    # uses 3e-4 on BERT-Base; BERT-Tiny's narrow layers take more).
    adapter_learning_rate: float = 1e-3
    # The distilled student: the teacher's first layer (BERT-Tiny has two), with its
    # embeddings, pooler and head; soft targets at the default temperature and weights.
    student_layers: str = "0"
    # The passages (188 in training) in windows of finetune_seq_length, half a window apart.
    # Training reads at most max_windows of a passage (spread over it): 16 make an epoch
    # about 3,000 windows, as many rows as the sentence stage's epoch (4 windows a passage
    # left BERT-Tiny at 0.65 dev accuracy after 3 epochs, below its sentences' 0.86; 16 and 4
    # epochs reach 1.0 on dev and test). Evaluation reads every window of every dev passage
    # (about 2,000) each epoch: the stage, its export and serving the passages take about a
    # minute and a half on two cores.
    passages_epochs: float = 4.0
    passages_batch_size: int = 8
    max_windows: int = 16
    serving_rounds: int = 5
    # Probing BERT-Tiny's layers for part of speech on the shipped UD sample (300 training
    # sentences, 7,000 words): a linear probe per layer and its control task, and the mix of
    # all layers. probe_layers' defaults (batch 256, rate 1e-3) suit a treebank's 200,000
    # words; on 7,000 every probe still improved at epoch 20. Batches of 64 at 1e-2 stop early
    # (dev-best epochs 6 to 8) at 0.02 to 0.03 better dev accuracy, in about 15 s.
    probe_epochs: int = 40
    probe_batch_size: int = 64
    probe_learning_rate: float = 1e-2
    # examine_checkpoint --skip: probing is the probe stage's (with its control task and mix);
    # the classifier's attack is the attack stage's, and it is no sentiment classifier, so
    # neither CheckList nor the EEC applies (no export is given).
    examine_skip: str = "probing"


FULL = Budget()
SMOKE = Budget(vocab_size=1000, dupe_factor=1, num_shards=2, pretrain_steps=20, log_steps=10,
               jit_compile=False, finetune_log_steps=5, finetune_epochs=1.0,
               passages_epochs=1.0, max_windows=2, serving_rounds=1, probe_epochs=2,
               # The vocab's fit alone: no TensorFlow, seconds; the end-to-end test of the
               # rest is tests/test_examine_checkpoint.py's.
               examine_skip="probing,blimp,crows_pairs,names")



def stages(budget: Budget, out: str, corpus: str, task_dir: str, passages_dir: str,
           sentences: str, treebank_dir: str, synonyms: str) -> list[Stage]:
    """The demo's stages in order (see the module docstring); all paths under `out`."""
    vocab = os.path.join(out, "vocab.txt")
    config = os.path.join(out, "bert_config.json")
    records = os.path.join(out, "pretraining_data")
    if not 2 <= budget.num_shards <= 10:
        raise ValueError(f"num_shards must be 2 to 10 (one digit of a glob), got "
                         f"{budget.num_shards}")
    of = f"-of-{budget.num_shards:05d}.tfrecord"
    train_shards = os.path.join(records, f"pretraining-0000[1-{budget.num_shards - 1}]{of}")
    held_out_shard = os.path.join(records, f"pretraining-00000{of}")
    pretrained = os.path.join(out, "pretrained")
    export_dir = os.path.join(out, "export")
    tokenizer = [f"--vocab_file={vocab}", "--do_lower_case=true"]
    pretraining = ["-m", "run_scripts.run_pretraining", f"--bert_config_file={config}",
                   f"--output_dir={pretrained}", f"--max_seq_length={budget.pretrain_seq_length}",
                   f"--max_predictions_per_seq={budget.max_predictions_per_seq}"]

    def finetuning(output_dir: str, init: list[str],
                   learning_rate: float = budget.finetune_learning_rate,
                   sized: bool = True, data_dir: str = task_dir,
                   batch_size: int = budget.finetune_batch_size,
                   epochs: float = budget.finetune_epochs) -> list[str]:
        # A student made of teacher layers takes its size from them, not from the config.
        model = [f"--bert_config_file={config}"] if sized else []
        return ["-m", "run_scripts.run_classifier", "--task_name=tsv", f"--data_dir={data_dir}",
                *tokenizer, *model, *init,
                f"--output_dir={output_dir}", "--do_train", "--do_eval", "--do_predict",
                f"--max_seq_length={budget.finetune_seq_length}",
                f"--train_batch_size={batch_size}", "--eval_batch_size=64",
                "--predict_batch_size=64", f"--learning_rate={learning_rate}",
                f"--num_train_epochs={epochs}", "--warmup_proportion=0.1",
                f"--log_steps={budget.finetune_log_steps}",
                f"--steps_per_loop={budget.finetune_log_steps}"]

    task_files, passage_files = ([os.path.join(folder, name)
                                  for name in ("labels.txt", "train.tsv", "dev.tsv", "test.tsv")]
                                 for folder in (task_dir, passages_dir))
    classifier = os.path.join(out, "classifier")
    distilled_export_dir = os.path.join(out, "export_distilled")
    passages_classifier = os.path.join(out, "classifier_passages")
    passages_export_dir = os.path.join(out, "export_passages")
    treebank = {split: os.path.join(treebank_dir, f"{split}.conllu")
                for split in ("train", "dev", "test")}
    layers = len(budget.student_layers.split(","))
    student_size = f"{layers} layer{'s' if layers > 1 else ''}"

    def export(name: str, what: str, run: str, folder: str, after: str,
               data_dir: str = task_dir) -> Stage:
        return Stage(name, f"Export {what} (run_scripts.export_saved_model)",
                     ["-m", "run_scripts.export_saved_model", "--export_type=classifier",
                      "--task_name=tsv", f"--data_dir={data_dir}", f"--init_checkpoint={run}",
                      *tokenizer, f"--max_seq_length={budget.finetune_seq_length}",
                      f"--export_dir={folder}"],
                     outputs=[folder], inputs=[CLASSIFIER_EXPORTER], after=[after])

    return [
        Stage("vocab", "Learn a WordPiece vocab from the corpus (data_prep.build_vocab)",
              ["-m", "data_prep.build_vocab", f"--input_file={corpus}",
               f"--vocab_size={budget.vocab_size}", f"--output_file={vocab}"],
              outputs=[vocab], inputs=[corpus]),
        Stage("config", "Size BERT-Tiny's config to that vocab (demo.sized_config)",
              ["-m", "demo.sized_config", "--template=demo/bert_config.json",
               f"--vocab_file={vocab}", f"--output_file={config}"],
              outputs=[config], inputs=["demo/bert_config.json"],
              after=["vocab"]),
        Stage("records", "Write masked-LM + next-sentence TFRecords "
                         "(data_prep.create_pretraining_data)",
              ["-m", "data_prep.create_pretraining_data", f"--input_file={corpus}",
               f"--output_dir={records}", *tokenizer,
               f"--max_seq_length={budget.pretrain_seq_length}",
               f"--max_predictions_per_seq={budget.max_predictions_per_seq}",
               f"--dupe_factor={budget.dupe_factor}", f"--num_shards={budget.num_shards}",
               "--num_workers=2"],
              outputs=[records], inputs=[corpus], after=["vocab"]),
        Stage("pretrain", f"Pretrain BERT-Tiny for {budget.pretrain_steps} steps "
                          "(run_scripts.run_pretraining)",
              [*pretraining, f"--input_file={train_shards}", "--do_train",
               f"--train_batch_size={budget.pretrain_batch_size}",
               f"--num_train_steps={budget.pretrain_steps}",
               f"--num_warmup_steps={budget.pretrain_steps // 10}",
               f"--learning_rate={budget.pretrain_learning_rate}",
               f"--log_steps={budget.log_steps}", f"--steps_per_loop={budget.log_steps}",
               f"--save_checkpoints_steps={budget.pretrain_steps}",
               f"--jit_compile={str(budget.jit_compile).lower()}"],
              outputs=[pretrained], after=["config", "records"]),
        Stage("pretrain_eval", "Evaluate it on the held-out shard (run_scripts.run_pretraining "
                               "--do_eval)",
              [*pretraining, f"--input_file={held_out_shard}", "--do_eval",
               "--eval_batch_size=64", "--max_eval_steps=50"],
              outputs=[os.path.join(pretrained, "eval_results.txt")], after=["pretrain"]),
        Stage("finetune", "Fine-tune it on authorship attribution (run_scripts.run_classifier)",
              finetuning(classifier, [f"--init_checkpoint={pretrained}"]),
              outputs=[classifier], inputs=task_files, after=["pretrain"]),
        Stage("finetune_adapters", f"The same with adapters of {budget.adapter_size} units, "
                                   "the pretrained encoder frozen (run_scripts.run_classifier "
                                   "--adapter_size)",
              finetuning(os.path.join(out, "classifier_adapters"),
                         [f"--init_checkpoint={pretrained}",
                          f"--adapter_size={budget.adapter_size}"],
                         budget.adapter_learning_rate),
              outputs=[os.path.join(out, "classifier_adapters")], inputs=task_files,
              after=["pretrain"]),
        Stage("finetune_scratch", "The same from random weights, the same budget "
                                  "(run_scripts.run_classifier)",
              finetuning(os.path.join(out, "classifier_scratch"), []),
              outputs=[os.path.join(out, "classifier_scratch")], inputs=task_files,
              after=["config"]),
        Stage("distill", f"Distil the fine-tuned classifier into {student_size} (run_scripts."
                         "run_classifier --teacher_checkpoint)",
              finetuning(os.path.join(out, "classifier_distilled"),
                         [f"--teacher_checkpoint={classifier}",
                          f"--student_layers={budget.student_layers}"], sized=False),
              outputs=[os.path.join(out, "classifier_distilled")], inputs=task_files,
              after=["finetune"]),
        Stage("finetune_passages", "Fine-tune the pretrained model on whole passages by the "
                                   f"same authors, in windows of {budget.finetune_seq_length} "
                                   "tokens (run_scripts.run_classifier --long_doc=windows)",
              finetuning(passages_classifier,
                         [f"--init_checkpoint={pretrained}", "--long_doc=windows",
                          f"--doc_stride={(budget.finetune_seq_length - 2) // 2}",
                          f"--max_windows={budget.max_windows}"],
                         data_dir=passages_dir, batch_size=budget.passages_batch_size,
                         epochs=budget.passages_epochs),
              outputs=[passages_classifier], inputs=passage_files, after=["pretrain"]),
        Stage("probe", "Probe each layer of the pretrained model for part of speech, with a "
                       "control task and the layers' learned mix (run_scripts.probe_layers)",
              ["-m", "run_scripts.probe_layers", "--task=upos", f"--init_checkpoint={pretrained}",
               f"--bert_config_file={config}", *tokenizer,
               *[f"--{split}_file={path}" for split, path in treebank.items()],
               "--control_task", "--mix=scalar", f"--probe_epochs={budget.probe_epochs}",
               f"--probe_batch_size={budget.probe_batch_size}",
               f"--probe_learning_rate={budget.probe_learning_rate}",
               f"--max_seq_length={budget.finetune_seq_length}",
               f"--output_dir={os.path.join(out, PROBING_DIR)}"],
              outputs=[os.path.join(out, PROBING_DIR)], inputs=list(treebank.values()),
              after=["pretrain"]),
        export("export", "the fine-tuned classifier", classifier, export_dir, "finetune"),
        export("export_distilled", "the distilled student", os.path.join(
            out, "classifier_distilled"), distilled_export_dir, "distill"),
        export("export_passages", "the passage classifier, serving texts of any length",
               passages_classifier, passages_export_dir, "finetune_passages", passages_dir),
        Stage("classify", "Classify new sentences, and the test passages from unseen books, "
                          "with the SavedModels (demo.classify)",
              ["-m", "demo.classify", f"--export_dir={export_dir}", f"--sentences={sentences}",
               f"--output_file={os.path.join(out, CLASSIFIED_FILE)}",
               f"--passages_export_dir={passages_export_dir}",
               f"--passages={passage_files[-1]}",
               f"--passages_output_file={os.path.join(out, CLASSIFIED_PASSAGES_FILE)}"],
              outputs=[os.path.join(out, CLASSIFIED_FILE),
                       os.path.join(out, CLASSIFIED_PASSAGES_FILE)],
              inputs=[sentences, passage_files[-1]], after=["export", "export_passages"]),
        Stage("serving_speed", "Time both SavedModels serving the test sentences, side by "
                               "side (demo.serving_speed)",
              ["-m", "demo.serving_speed",
               f"--export_dirs=teacher={export_dir},student={distilled_export_dir}",
               f"--texts={os.path.join(task_dir, 'test.tsv')}",
               f"--rounds={budget.serving_rounds}",
               f"--output_file={os.path.join(out, SPEED_FILE)}"],
              outputs=[os.path.join(out, SPEED_FILE)], inputs=task_files[-1:],
              after=["export", "export_distilled"]),
        Stage("attack", "Attack the classifier on the test sentences: synonyms swapped in, word "
                        "by word, until the predicted author changes "
                        "(run_scripts.attack_classifier)",
              ["-m", "run_scripts.attack_classifier", f"--export_dir={export_dir}",
               f"--input_file={task_files[-1]}", f"--synonyms_file={synonyms}",
               f"--output_file={os.path.join(out, ATTACK_FILE)}"],
              outputs=[os.path.join(out, ATTACK_FILE),
                       os.path.join(out, attack_summary_file(ATTACK_FILE))],
              inputs=[task_files[-1], synonyms], after=["export"]),
        Stage("examine", "Examine the pretrained model: what it knows, how its vocab fits a "
                         "domain's text, its bias (run_scripts.examine_checkpoint "
                         "--budget=quick)",
              ["-m", "run_scripts.examine_checkpoint", f"--init_checkpoint={pretrained}",
               f"--bert_config_file={config}", *tokenizer,
               f"--max_seq_length={budget.pretrain_seq_length}", "--budget=quick",
               f"--skip={budget.examine_skip}",
               f"--output_dir={os.path.join(out, EXAMINATION_DIR)}"],
              outputs=[os.path.join(out, EXAMINATION_DIR)], after=["pretrain"]),
    ]


def _from_repo(path: str) -> str:
    """`path` (relative to the working directory) as the stages see it, running in the
    repository: relative to it when inside it, so that the commands shown are short."""
    absolute = os.path.abspath(path)
    inside = os.path.commonpath([absolute, REPO]) == REPO
    return os.path.relpath(absolute, REPO) if inside else absolute


class Paths(NamedTuple):
    """The flags' paths as the stages see them (`_from_repo`)."""
    out: str
    corpus: str
    task_dir: str
    passages_dir: str
    sentences: str
    treebank_dir: str
    synonyms: str


def prepare() -> Paths:
    return Paths(*(_from_repo(path) for path in (
        FLAGS.output_dir, FLAGS.corpus, FLAGS.task_dir, FLAGS.passages_dir, FLAGS.sentences,
        FLAGS.treebank_dir, FLAGS.synonyms)))


def job(paths: Paths) -> None:
    """Runs the stages, writes the run's account, then the report."""
    out = paths.out
    root = os.path.join(REPO, out)
    os.makedirs(root, exist_ok=True)
    output_lock.hold(root)  # one demo per output_dir, and --fresh never empties a live one's
    if FLAGS.fresh:
        remove([os.path.join(root, name) for name in os.listdir(root)])
    budget = SMOKE if FLAGS.smoke else FULL
    started = time.perf_counter()
    runner = Runner(os.path.join(root, "stages"), os.path.join(root, "logs"), cwd=REPO,
                    view=Blocks(), jobs=FLAGS.jobs)
    try:
        runs = runner.run(stages(budget, out, paths.corpus, paths.task_dir,
                                 paths.passages_dir, paths.sentences, paths.treebank_dir,
                                 paths.synonyms))
    except StageFailed as e:
        command_line.fail(SCRIPT, f"{e}; its output is above. Rerun `make demo` to retry from "
                                  "there.")
    run_file = os.path.join(out, "stages", RUN_FILE)
    with open_atomically(os.path.join(REPO, run_file)) as f:
        json.dump({"budget": dataclasses.asdict(budget), "corpus": paths.corpus,
                   "task_dir": paths.task_dir, "passages_dir": paths.passages_dir,
                   "classified": os.path.join(out, CLASSIFIED_FILE),
                   "classified_passages": os.path.join(out, CLASSIFIED_PASSAGES_FILE),
                   "serving_speed": os.path.join(out, SPEED_FILE),
                   "probing": os.path.join(out, PROBING_DIR),
                   "attack": os.path.join(out, ATTACK_FILE),
                   "examination": os.path.join(out, EXAMINATION_DIR),
                   "seconds": time.perf_counter() - started,
                   "stages": [{"name": run.stage.name, "command": run.stage.command,
                               "reused": run.reused, "seconds": run.seconds} for run in runs]},
                  f, indent=2)
    # Its own run: the account it reads (its input) changes with every run, so it always runs.
    try:
        runner.run([report_stage(out, run_file)])
    except StageFailed as e:
        command_line.fail(SCRIPT, str(e))
    print(f"\nThe demo took {format_seconds(time.perf_counter() - started)}.")


def report_stage(out: str, run_file: str) -> Stage:
    """demo.report over the run's account (`run_file`)."""
    return Stage("report", "Write the report: REPORT.md and the plots (demo.report)",
                 ["-m", "demo.report", f"--output_dir={out}", f"--run_file={run_file}"],
                 outputs=[os.path.join(out, REPORT_FILE)], inputs=[run_file])


if __name__ == "__main__":
    # The stages load TensorFlow, this process never does; a stop by ctrl-C or SIGTERM stops
    # the running stages, which a rerun resumes.
    command_line.main(SCRIPT, prepare, job, tensorflow=False,
                      left="what was done is kept, and `make demo` goes on from there")
