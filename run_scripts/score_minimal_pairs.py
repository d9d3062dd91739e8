r"""Zero-shot minimal pairs (BLiMP): does a language model prefer the grammatical sentence?

    python -m run_scripts.score_minimal_pairs --init_checkpoint=$PRETRAINED \
      --input_file='blimp/data/*.jsonl.gz' --published_file=blimp/models_summary.jsonl \
      --human_file=blimp/human_validation_summary.csv --output_dir=/tmp/blimp

Every pair of sentence_good / sentence_bad in the BLiMP-format files (JSON lines, .gz read as
such; official/lm_scoring/minimal_pairs.py) is scored with the checkpoint's language-model head,
no fine-tuning: a pair is right when the good sentence has the higher log-likelihood
(official/lm_scoring/sentence_scores.py). How a sentence is scored follows the checkpoint's
config: a masked LM by its pseudo-log-likelihood (Salazar et al. 2020: each piece masked in
turn, the true piece's log-probability summed), a left-to-right one (run_pretraining
--objective=ltr, causal_attention in its config) by the sum of its next-piece log-probabilities.

--init_checkpoint is any checkpoint with a masked-LM head (a run_pretraining output_dir, an
original release, a TF2 conversion of one, a Hugging Face BertForPreTraining folder);
--bert_config_file and --vocab_file default to the files beside it. A checkpoint without the
head (an encoder alone such as a converted MiniLM, a fine-tuned classifier) is refused in one
line before TensorFlow loads, as are a line without sentence_good, a file without pairs and a
sentence longer than --max_seq_length pieces (naming its file and line).

--pairs_per_paradigm=N scores each paradigm's first N pairs (all by default: BLiMP's 67,000).
Writes output_dir/minimal_pairs.json (accuracy per paradigm, phenomenon, field and overall, each
with its standard error, and the published figures of --published_file, BLiMP's
models_summary.jsonl, and human agreement of --human_file beside them), minimal_pairs.md (the
tables, also printed) and pair_scores.tsv (each pair's file:line and two scores), atomically.
"""

import json
import os
import time
from typing import NamedTuple

from absl import flags, logging

from official import command_line, console
from official.atomic_files import open_atomically
from official.lm_scoring import minimal_pairs, pair_report
from official.lm_scoring.checkpoint_files import language_model_files
from official.output_paths import check_output_dir
from official.pretraining_shards import expand_input_files
from run_scripts import common_flags

RESULTS_FILE, TABLE_FILE, SCORES_FILE = "minimal_pairs.json", "minimal_pairs.md", "pair_scores.tsv"

flags.DEFINE_string("input_file", None, "BLiMP-format minimal pairs: JSON-lines files (.gz "
                    "too), comma-separated, globs allowed.")
flags.DEFINE_string("init_checkpoint", None, "A checkpoint with its masked-LM head (or a "
                    "left-to-right model's next-token head).")
flags.DEFINE_string("output_dir", None, "Where minimal_pairs.json, minimal_pairs.md and "
                    "pair_scores.tsv go.")
flags.DEFINE_integer("pairs_per_paradigm", None, "Score each paradigm's first N pairs only "
                     "(default: all).")
flags.DEFINE_string("published_file", None, "BLiMP's models_summary.jsonl: the published "
                    "models' accuracy shown beside ours.")
flags.DEFINE_string("human_file", None, "BLiMP's human_validation_summary.csv: human "
                    "agreement per paradigm, shown beside ours.")
flags.DEFINE_integer("batch_size", 256, "Rows per model call (a masked LM: one row per piece "
                     "of a sentence).")
common_flags.define_bert_config_flag(extra_help=" Default: bert_config.json beside "
                                     "--init_checkpoint.")
common_flags.define_tokenizer_flags()
common_flags.define_max_seq_length_flag()
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """What the flags say, checked, with the files read."""
    pairs: list
    published: minimal_pairs.Published | None
    human: dict | None
    bert_config_file: str | None
    vocab_file: str | None


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py): the pairs and the
    published files read whole, the checkpoint there with its masked-LM head, its config and
    vocab, the output_dir."""
    if FLAGS.batch_size < 1:
        raise ValueError(f"--batch_size={FLAGS.batch_size}: must be at least 1")
    if FLAGS.pairs_per_paradigm is not None and FLAGS.pairs_per_paradigm < 1:
        raise ValueError(f"--pairs_per_paradigm={FLAGS.pairs_per_paradigm}: must be at least 1")
    pairs = minimal_pairs.read_pairs(expand_input_files(FLAGS.input_file),
                                     FLAGS.pairs_per_paradigm)
    published = (minimal_pairs.read_published(FLAGS.published_file)
                 if FLAGS.published_file else None)
    human = minimal_pairs.read_human(FLAGS.human_file) if FLAGS.human_file else None
    config_file, vocab_file = language_model_files(FLAGS.init_checkpoint, FLAGS.bert_config_file,
                                                   FLAGS.vocab_file, FLAGS.max_seq_length)
    check_output_dir(FLAGS.output_dir)
    return Plan(pairs, published, human, config_file, vocab_file)


def _sequences(pairs: list, tokenizer) -> tuple[list, list]:
    """The good and the bad sentences' [CLS] pieces [SEP] ids.

    Raises:
      ValueError: a sentence over --max_seq_length pieces, naming its file:line.
    """
    from official.lm_scoring.sentence_scores import encode

    good = encode(tokenizer, [pair.good for pair in pairs])
    bad = encode(tokenizer, [pair.bad for pair in pairs])
    for pair, ids, column in ((p, i, c) for c, side in (("sentence_good", good),
                                                        ("sentence_bad", bad))
                              for p, i in zip(pairs, side)):
        if len(ids) > FLAGS.max_seq_length:
            raise ValueError(f"{pair.where}: {column} is {len(ids)} pieces with [CLS] and "
                             f"[SEP], over --max_seq_length={FLAGS.max_seq_length}")
    return good, bad


def job(plan: Plan) -> dict:
    """Scores every pair, writes the three files, prints the tables; returns the summary."""
    from official.lm_scoring.masked_lm import MaskedLanguageModel
    from official.lm_scoring.sentence_scores import sentence_log_likelihoods

    model = MaskedLanguageModel.load(FLAGS.init_checkpoint, plan.bert_config_file,
                                     plan.vocab_file, FLAGS.do_lower_case)
    good, bad = _sequences(plan.pairs, model.tokenizer)
    scoring = "left-to-right log-likelihood" if model.left_to_right else \
        "pseudo-log-likelihood (each piece masked in turn)"
    logging.info("Scoring %d pairs by %s", len(plan.pairs), scoring)
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        logging.info("scored %d of %d rows", done, total, extra=console.PROGRESS)

    scores = sentence_log_likelihoods(model, good + bad, FLAGS.batch_size, progress)
    seconds = time.perf_counter() - started
    good_scores, bad_scores = scores[:len(good)], scores[len(good):]
    summary = pair_report.summarize(plan.pairs, good_scores, bad_scores, plan.published,
                                    plan.human, ([len(ids) for ids in good],
                                                 [len(ids) for ids in bad]))
    report = {"init_checkpoint": FLAGS.init_checkpoint, "input_file": FLAGS.input_file,
              "scoring": "left_to_right" if model.left_to_right else "pseudo_log_likelihood",
              "pairs_per_paradigm": FLAGS.pairs_per_paradigm, "seconds": round(seconds, 1),
              **summary}
    text = pair_report.markdown(summary, f"Minimal pairs: {FLAGS.init_checkpoint}, scored by "
                                         f"{scoring}")
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    with open_atomically(os.path.join(FLAGS.output_dir, SCORES_FILE)) as f:
        f.write("where\tgood_score\tbad_score\n")
        f.writelines(f"{pair.where}\t{g:.6f}\t{b:.6f}\n"
                     for pair, g, b in zip(plan.pairs, good_scores, bad_scores))
    with open_atomically(os.path.join(FLAGS.output_dir, RESULTS_FILE)) as f:
        json.dump(report, f, indent=2, ensure_ascii=False)
        f.write("\n")
    with open_atomically(os.path.join(FLAGS.output_dir, TABLE_FILE)) as f:
        f.write(text)
    print(text, flush=True)
    logging.info("%d pairs in %.0f s: %.1f%% overall", len(plan.pairs), seconds,
                 summary["overall"]["accuracy"])
    return report


if __name__ == "__main__":
    command_line.main("score_minimal_pairs", prepare, job,
                       required=["input_file", "init_checkpoint", "output_dir"])
