r"""Bias measures on real weights: SEAT on all-MiniLM-L6-v2, CrowS-Pairs on small pretrained BERTs,
the Equity Evaluation Corpus on MiniLM fine-tuned on SST-2, gender and race in MiniLM's names.

    .venv/bin/python -m bench.bias [--work_dir=/work/benchwork/robustness]
        [--permutations=100000] [--pretraining_steps=3000] [--tests=seat,crows,eec,names]
        [--classifier_epochs=E]

Runs `python -m run_scripts.bias_report` as a user does:

  SEAT   on MiniLM's sentence-encoder export (bench/robustness_models.py: mean pooling,
         normalised, as sentence-transformers uses it) over the tests of May et al.'s (2019)
         main tables that ../shared/data/bias/seat/ holds (sent-bias's scripts/print_table.py
         names them: C1, C3, C6, the Angry Black Woman stereotype and the double binds, word
         and sentence level; C7 and C8 of their second table), each beside May et al.'s
         BERT figure (bert-large-cased) where this bench has it.
  CrowS  on the demo's pretrained BERT-Tiny (demo_output/pretrained: L2/H128, a 4k WordPiece
         vocab learned on the demo's Gutenberg text, 5,000 steps) and on a run_pretraining
         output made here (L2/H128 with the repo's 30,522-piece uncased vocab, on
         ../shared/data/pretraining_text/gutenberg_sentences.txt, --pretraining_steps steps),
         beside BERT-base's published 60.5 (Nangia et al. 2020, Table 3). These are far smaller
         models trained on old fiction: a report, not a target.
  EEC    on MiniLM fine-tuned on SST-2 (bench/robustness_models.py's classifier; with
         --classifier_epochs, a run of that many epochs of the same rows instead, named apart),
         scored by P(positive) over the 8,640 sentences of data/eec_templates/: gender and race
         differences with paired t-tests, beside Kiritchenko & Mohammad's (2018) finding over
         219 SemEval-2018 systems. Theirs scored emotion and valence intensity by regression;
         this is a binary sentiment classifier's probability, nearest to their valence task.
  names  MiniLM's vectors of the EEC's 40 names in its 5,760 name sentences, per layer: gender
         probes within and across races (official/robustness/name_probe.py), beside Guo &
         Caliskan's (2021) finding, whose measure is another (no figure to set beside ours).

May et al.'s BERT column (bert-large-cased) is quoted from sent-bias's pull request #2, whose
"BERT (prev)" column is the paper's Table 3 as the released code reproduces it (issue #1); that
issue also found the released code lower-cased the cased model's input and read the first
token's vector rather than [CLS]. C7 and C8 were not found in the references read: the column
says so rather than show a number from memory. MiniLM is another model (6 layers, distilled,
tuned for sentence similarity, mean-pooled): the paper's column is context, not a target.
Blodgett et al. (2021) found noise and reliability problems in CrowS-Pairs (the dataset's own
README now says so): its score is a weak indicator of bias, to be read beside other measures.
Writes DIR/bias_*/bias_results.{json,md} and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from bench.finetune_glue import minilm_checkpoint
from bench.robustness_models import (
    minilm_sentence_export,
    sst2_classifier_export,
    sst2_dev_accuracy,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(REPO, "..", "shared", "data")
SEAT_DIR = os.path.join(SHARED, "bias", "seat")
CROWS = os.path.join(SHARED, "bias", "crows_pairs", "crows_pairs_anonymized.csv")
CORPUS = os.path.join(SHARED, "pretraining_text", "gutenberg_sentences.txt")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
EEC_FILE = os.path.join(REPO, "data", "eec_templates", "eec_templates.json")
TESTS = ("seat", "crows", "eec", "names")
DEMO_PRETRAINED = os.path.join(REPO, "demo_output", "pretrained")

# The rows of May et al.'s Table 3 (sent-bias's print_table.py, test set "overall") and of their
# C7/C8 table ("78"), in their order: (file, their row label, level).
MAY_TESTS = [
    ("weat1", "C1: Flowers/Insects", "word"), ("sent-weat1", "C1: Flowers/Insects", "sent"),
    ("weat3", "C3: EA/AA Names", "word"), ("sent-weat3", "C3: EA/AA Names", "sent"),
    ("weat6", "C6: M/F Names, Career", "word"), ("sent-weat6", "C6: M/F Names, Career", "sent"),
    ("angry_black_woman_stereotype", "ABW Stereotype", "word"),
    ("sent-angry_black_woman_stereotype", "ABW Stereotype", "sent"),
    ("heilman_double_bind_competent_one_word", "Double Bind: Competent", "word"),
    ("sent-heilman_double_bind_competent_one_word", "Double Bind: Competent", "sent"),
    ("heilman_double_bind_competent_one_sentence", "Double Bind: Competent", "sent (u)"),
    ("heilman_double_bind_likable_one_word", "Double Bind: Likable", "word"),
    ("sent-heilman_double_bind_likable_one_word", "Double Bind: Likable", "sent"),
    ("heilman_double_bind_likable_one_sentence", "Double Bind: Likable", "sent (u)"),
    ("weat7", "C7: Math/Arts, M/F", "word"), ("sent-weat7", "C7: Math/Arts, M/F", "sent"),
    ("weat8", "C8: Science/Arts, M/F", "word"), ("sent-weat8", "C8: Science/Arts, M/F", "sent"),
]
# May et al.'s BERT effect sizes by file (see the module docstring); a file missing: not found.
MAY_BERT = {
    "weat1": 0.22, "sent-weat1": 0.62, "weat3": -0.11, "sent-weat3": 0.05,
    "weat6": 0.21, "sent-weat6": 0.08,
    "angry_black_woman_stereotype": -0.32, "sent-angry_black_woman_stereotype": -0.17,
    "heilman_double_bind_competent_one_word": -0.81,
    "sent-heilman_double_bind_competent_one_word": 0.39,
    "heilman_double_bind_competent_one_sentence": 1.17,
    "heilman_double_bind_likable_one_word": -0.55,
    "sent-heilman_double_bind_likable_one_word": -0.35,
    "heilman_double_bind_likable_one_sentence": 0.99,
}
CROWS_BERT_BASE = 60.5  # Nangia et al. (2020), Table 3: BERT-base, all pairs


def _run(*args: str) -> float:
    """`python -m args` from the repo, its output shown; returns its seconds."""
    print("$ python -m " + " ".join(args), flush=True)
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", *args], cwd=REPO, check=True)
    return time.monotonic() - start


def _results(output_dir: str) -> dict:
    with open(os.path.join(output_dir, "bias_results.json"), encoding="utf-8") as f:
        return json.load(f)


def pretraining_output(work_dir: str, steps: int) -> str:
    """A run_pretraining output_dir (see the module docstring), made once per steps."""
    output_dir = os.path.join(work_dir, f"bias_pretraining_{steps}")
    if os.path.isfile(os.path.join(output_dir, f"model.ckpt-{steps}.index")):
        return output_dir
    records = os.path.join(work_dir, "bias_pretraining_records")
    if not os.path.isfile(os.path.join(records, "summary.json")):
        _run("data_prep.create_pretraining_data", f"--input_file={CORPUS}",
             f"--output_dir={records}", f"--vocab_file={VOCAB}", "--do_lower_case=true",
             "--max_seq_length=128", "--max_predictions_per_seq=20", "--dupe_factor=2",
             "--num_shards=4", "--num_workers=2")
    config_file = os.path.join(work_dir, "bias_pretraining_bert_config.json")
    with open(config_file, "w", encoding="utf-8") as f:
        json.dump({"vocab_size": 30522, "hidden_size": 128, "num_hidden_layers": 2,
                   "num_attention_heads": 2, "intermediate_size": 512, "hidden_act": "gelu",
                   "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
                   "max_position_embeddings": 512, "type_vocab_size": 2,
                   "initializer_range": 0.02}, f, indent=2)
    _run("run_scripts.run_pretraining", f"--bert_config_file={config_file}",
         f"--input_file={records}/*.tfrecord", f"--output_dir={output_dir}", "--do_train",
         "--max_seq_length=128", "--max_predictions_per_seq=20", "--train_batch_size=32",
         f"--num_train_steps={steps}", f"--num_warmup_steps={steps // 10}",
         "--learning_rate=1e-3", "--log_steps=250", "--steps_per_loop=250",
         f"--save_checkpoints_steps={steps}", "--jit_compile=true")
    return output_dir


def seat(work_dir: str, permutations: int) -> dict:
    files = [os.path.join(SEAT_DIR, f"{name}.jsonl") for name, _, _ in MAY_TESTS]
    output_dir = os.path.join(work_dir, "bias_seat_minilm")
    seconds = _run("run_scripts.bias_report", "--test=seat",
                   f"--export_dir={minilm_sentence_export(work_dir)}",
                   f"--seat_files={','.join(files)}", f"--permutations={permutations}",
                   "--seed=1", f"--output_dir={output_dir}")
    return dict(_results(output_dir), seconds=seconds)


def crows_pairs(name: str, init_checkpoint: str, vocab_file: str, work_dir: str) -> dict:
    output_dir = os.path.join(work_dir, f"bias_crows_{name}")
    seconds = _run("run_scripts.bias_report", "--test=crows_pairs",
                   f"--init_checkpoint={init_checkpoint}", f"--vocab_file={vocab_file}",
                   "--do_lower_case=true", f"--input_file={CROWS}", "--batch_size=128",
                   f"--output_dir={output_dir}")
    return dict(_results(output_dir), seconds=seconds)


def eec(work_dir: str, classifier_epochs: float | None) -> None:
    """The EEC's test on the SST-2 classifier, its tables printed beside the published finding."""
    if classifier_epochs is None:
        name, flags = "sst2_minilm", ()
    else:
        name, flags = f"sst2_minilm_{classifier_epochs:g}ep", (
            f"--num_train_epochs={classifier_epochs:g}",)
    export = sst2_classifier_export(work_dir, name, *flags)
    output_dir = os.path.join(work_dir, f"bias_eec_{name}")
    seconds = _run("run_scripts.bias_report", "--test=eec", f"--export_dir={export}",
                   "--score_class=1", f"--input_file={EEC_FILE}", "--batch_size=128",
                   f"--output_dir={output_dir}")
    found = _results(output_dir)
    print(f"\nEEC on MiniLM fine-tuned on SST-2 ({name}: dev accuracy "
          f"{sst2_dev_accuracy(work_dir, name):.3f}), P(positive) of {found['sentences']} "
          f"sentences ({seconds:.0f} s)")
    print(f"{'comparison':<22} {'held':<14} {'pairs':>5} {'mean diff':>10} {'first >':>8} "
          f"{'t':>7} {'p':>9} sig")
    for comparison, rows in found["comparisons"].items():
        for held, row in [("all", rows["all"]), *rows["emotions"].items()]:
            print(f"{comparison:<22} {held:<14} {row['pairs']:>5} "
                  f"{row['mean_difference']:>+10.4f} {row['first_higher']:>8.1%} "
                  f"{row['t']:>7.2f} {row['p_value']:>9.1e} "
                  f"{'yes' if row['significant'] else 'no'}")
    published = found["published"]["eec"]
    print(f"Published ({published['source']}): {published['finding']} "
          f"({published['systems']} systems; {published['test']}). Per task: "
          f"{published['per_task_shares']}.")


def names(work_dir: str) -> None:
    """The names probe on MiniLM, its table printed beside the published finding."""
    output_dir = os.path.join(work_dir, "bias_names_minilm")
    model = minilm_checkpoint(work_dir)
    seconds = _run("run_scripts.bias_report", "--test=names", f"--init_checkpoint={model}",
                   f"--input_file={EEC_FILE}", "--max_seq_length=64", "--batch_size=128",
                   f"--output_dir={output_dir}")
    found = _results(output_dir)
    print(f"\nNames in all-MiniLM-L6-v2 (the table above): {found['occurrences']} occurrences "
          f"of {found['names']} names, within = {found['folds']}-fold by name ({seconds:.0f} s). "
          "A name is 1/20 of its race's occurrences: 5 points is one name.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work_dir", default="/work/benchwork/robustness")
    parser.add_argument("--permutations", type=int, default=100000)
    parser.add_argument("--pretraining_steps", type=int, default=3000)
    parser.add_argument("--tests", default=",".join(TESTS),
                        help=f"comma-separated, of {', '.join(TESTS)}")
    parser.add_argument("--classifier_epochs", type=float, default=None,
                        help="eec: fine-tune the SST-2 classifier for this many epochs (a run of "
                             "its own) instead of using robustness_models' one-epoch run")
    args = parser.parse_args()
    tests = [t for t in args.tests.split(",") if t]
    unknown = sorted(set(tests) - set(TESTS))
    if unknown:
        parser.error(f"--tests: {', '.join(unknown)} not among {', '.join(TESTS)}")
    os.makedirs(args.work_dir, exist_ok=True)
    if "seat" in tests:
        seat_table(args.work_dir, args.permutations)
    if "crows" in tests:
        crows_table(args.work_dir, args.pretraining_steps)
    if "eec" in tests:
        eec(args.work_dir, args.classifier_epochs)
    if "names" in tests:
        names(args.work_dir)


def seat_table(work_dir: str, permutations: int) -> None:
    """SEAT on MiniLM beside May et al.'s BERT column."""
    found = seat(work_dir, permutations)
    by_test = {r["test"]: r for r in found["results"]}
    print(f"\nSEAT on all-MiniLM-L6-v2 (mean pooling, normalised; {found['seconds']:.0f} s); "
          "May et al. (2019), Table 3: bert-large-cased (sent-bias PR #2's \"BERT (prev)\")")
    print(f"{'test':<24} {'level':<9} {'MiniLM d':>9} {'p':>9} {'p from':<8} "
          f"{'May et al. BERT d':>18}")
    for name, label, level in MAY_TESTS:
        r = by_test[name]
        theirs = f"{MAY_BERT[name]:.2f}" if name in MAY_BERT else "not found"
        print(f"{label:<24} {level:<9} {r['effect_size']:>9.2f} {r['p_value']:>9.1e} "
              f"{r['p_value_method']:<8} {theirs:>18}")



def crows_table(work_dir: str, pretraining_steps: int) -> None:
    """CrowS-Pairs on the demo's BERT-Tiny and a run_pretraining output, beside BERT-base's."""
    models = []
    if os.path.isdir(DEMO_PRETRAINED):
        models.append(("demo_bert_tiny", DEMO_PRETRAINED,
                       os.path.join(REPO, "demo_output", "vocab.txt"),
                       "the demo's BERT-Tiny (L2/H128, 4k Gutenberg vocab, 5,000 steps)"))
    else:
        print(f"\n{DEMO_PRETRAINED}: not there (run `make demo` first); skipped")
    output = pretraining_output(work_dir, pretraining_steps)
    models.append(("run_pretraining", output, VOCAB,
                   f"run_pretraining here (L2/H128, uncased 30k vocab, "
                   f"{pretraining_steps} steps on gutenberg_sentences)"))
    rows = [(about, crows_pairs(name, path, vocab, work_dir))
            for name, path, vocab, about in models]
    print(f"\nCrowS-Pairs: % of {rows[0][1]['pairs']} pairs whose more stereotyping sentence has "
          f"the higher pseudo-log-likelihood (50 = no preference); BERT-base {CROWS_BERT_BASE} "
          "(Nangia et al. 2020)")
    for about, r in rows:
        print(f"  {about}: {r['score']:.1f} (stereo {r['stereo']['score']:.1f}, antistereo "
              f"{r['antistereo']['score']:.1f}, ties {r['ties']}; {r['seconds']:.0f} s)")
        print("    per bias type: " + ", ".join(f"{b} {e['score']:.1f}"
                                                  for b, e in r["bias_types"].items()))
    print("Caveat (Blodgett et al. 2021): CrowS-Pairs has noise and reliability problems; read "
          "its score beside other measures, and these tiny models' scores as a report only.")


if __name__ == "__main__":
    main()
