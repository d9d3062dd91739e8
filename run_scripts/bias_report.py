r"""Measures social bias: SEAT on a sentence encoder, CrowS-Pairs on a masked language model.

    python -m run_scripts.bias_report --test=seat --export_dir=exports/minilm \
      --seat_files=seat/ --permutations=100000 --seed=1 --output_dir=/tmp/bias_seat
    python -m run_scripts.bias_report --test=crows_pairs --init_checkpoint=$BERT_DIR \
      --input_file=crows_pairs_anonymized.csv --output_dir=/tmp/bias_crows

--test=seat: May et al.'s Sentence Encoder Association Tests (official/robustness/seat.py) on a
sentence_encoder export (export_saved_model --export_type=sentence_encoder; another export type
is refused): per test file, the effect size and the one-sided permutation-test p-value, exact
when the partitions of the targets are at most --permutations, else --permutations sampled with
--seed. --seat_files is a comma list of test files or a folder of them (*.jsonl).

--test=crows_pairs: Nangia et al.'s CrowS-Pairs (official/robustness/crows_pairs.py) on a
checkpoint with its masked-LM head (official/lm_scoring/masked_lm.py; one without is refused):
the percentage of pairs whose more stereotyping sentence has the higher pseudo-log-likelihood,
overall, per direction and per bias type, and the ties. --bert_config_file and --vocab_file
default to the files beside --init_checkpoint.

Writes output_dir/bias_results.json (every figure, and for CrowS-Pairs each pair's scores) and
bias_results.md (the table, also printed), each atomically. Every input is checked before
TensorFlow loads where it can be (flags, test files, the CSV, the config and vocab); a bad one
ends the run with one line and nothing written. A flag of the other test is refused first:
ignored without a word, it would let a user believe it was used (a SEAT export holds its own
tokenizer and sequence length, so --vocab_file, --do_lower_case and --max_seq_length belong to
--test=crows_pairs alone).
"""

import glob
import json
import os
from typing import NamedTuple

from absl import flags, logging

from official import command_line
from official.atomic_files import open_atomically
from official.lm_scoring.checkpoint_files import language_model_files
from official.output_paths import check_output_dir
from official.robustness import crows_pairs, seat
from run_scripts import common_flags

RESULTS_FILE, TABLE_FILE = "bias_results.json", "bias_results.md"

flags.DEFINE_enum("test", None, ["seat", "crows_pairs"], "Which bias measure to run.")
flags.DEFINE_string("output_dir", None, "Where to write bias_results.json and bias_results.md.")
flags.DEFINE_string("export_dir", None, "seat: a sentence_encoder export (export_saved_model "
                    "--export_type=sentence_encoder): its export_dir or one version folder.")
flags.DEFINE_string("seat_files", None, "seat: comma-separated SEAT test files, or a folder "
                    "holding them (*.jsonl).")
flags.DEFINE_integer("permutations", 100000, "seat: the permutation test enumerates every "
                     "partition when there are at most this many, else samples this many.")
flags.DEFINE_integer("seed", 12345, "seat: seed of the sampled partitions.")
flags.DEFINE_string("init_checkpoint", None, "crows_pairs: a checkpoint with its masked-LM head "
                    "(an original release, a run_pretraining output_dir, a TF2 checkpoint, a "
                    "Hugging Face BertForPreTraining folder).")
flags.DEFINE_string("input_file", None, "crows_pairs: the CrowS-Pairs CSV.")
flags.DEFINE_integer("batch_size", 64, "Texts (seat) or masked copies (crows_pairs) per model "
                     "call.")
common_flags.define_bert_config_flag(
    extra_help=" crows_pairs; default: bert_config.json beside --init_checkpoint.")
common_flags.define_tokenizer_flags()
common_flags.define_max_seq_length_flag()
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


# Each test's own flags, and what the test scores: the other test's flags have no effect on it.
_OWN_FLAGS = {
    "seat": ("export_dir", "seat_files", "permutations", "seed"),
    "crows_pairs": ("init_checkpoint", "input_file", "bert_config_file", "vocab_file",
                    "do_lower_case", "max_seq_length"),
}
_SCORES = {"seat": "scores the sentence_encoder export --export_dir on --seat_files",
           "crows_pairs": "scores the masked LM of --init_checkpoint on the CSV --input_file"}


class Plan(NamedTuple):
    """What the flags say, checked, with the inputs read."""
    tests: list  # seat: the SeatTests
    pairs: list  # crows_pairs: the Pairs
    bert_config_file: str | None  # crows_pairs: given or beside the checkpoint (None: a folder's)
    vocab_file: str | None


def _seat_files(value: str) -> list[str]:
    """--seat_files as paths: a folder's *.jsonl sorted by name, or the comma list."""
    if os.path.isdir(value):
        files = sorted(glob.glob(os.path.join(value, "*.jsonl")))
        if not files:
            raise ValueError(f"--seat_files={value}: a folder without *.jsonl test files")
        return files
    return [path.strip() for path in value.split(",") if path.strip()]


def _refuse_the_other_tests_flags() -> None:
    """Refuses a flag given on the command line (even at its default) that only the other test
    reads."""
    for test, names in _OWN_FLAGS.items():
        for name in names:
            if test != FLAGS.test and FLAGS[name].present:
                raise ValueError(f"--{name} is a flag of --test={test}: it has no effect with "
                                 f"--test={FLAGS.test}, which {_SCORES[FLAGS.test]}")


def _require(names: list[str]) -> None:
    for name in names:
        if not FLAGS[name].value:
            raise ValueError(f"--{name}: required with --test={FLAGS.test}")


def _prepare_seat() -> Plan:
    _require(["export_dir", "seat_files"])
    if FLAGS.permutations < 1:
        raise ValueError(f"--permutations={FLAGS.permutations}: must be at least 1")
    tests = [seat.read_test(path) for path in _seat_files(FLAGS.seat_files)]
    if not os.path.isdir(FLAGS.export_dir):
        raise ValueError(f"--export_dir: {FLAGS.export_dir}: no such folder")
    return Plan(tests, [], None, None)


def _prepare_crows_pairs() -> Plan:
    _require(["init_checkpoint", "input_file"])
    pairs = crows_pairs.read_pairs(FLAGS.input_file)
    config_file, vocab_file = language_model_files(FLAGS.init_checkpoint, FLAGS.bert_config_file,
                                                   FLAGS.vocab_file, FLAGS.max_seq_length)
    return Plan([], pairs, config_file, vocab_file)


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py): flags, the test files
    or the CSV read whole, the config and vocab, the output_dir."""
    _refuse_the_other_tests_flags()
    if FLAGS.seed < 0:
        raise ValueError(f"--seed={FLAGS.seed}: must be 0 or more")
    if FLAGS.batch_size < 1:
        raise ValueError(f"--batch_size={FLAGS.batch_size}: must be at least 1")
    plan = _prepare_seat() if FLAGS.test == "seat" else _prepare_crows_pairs()
    check_output_dir(FLAGS.output_dir)
    return plan


def _run_seat(plan: Plan) -> tuple[dict, str]:
    from official.retrieval.encoder import SentenceEncoder

    try:
        encoder = SentenceEncoder(FLAGS.export_dir)
    except ValueError as e:
        raise ValueError(f"--export_dir: {e}") from None
    results = []
    for test in plan.tests:
        texts = test.texts
        vectors = {}
        for start in range(0, len(texts), FLAGS.batch_size):
            batch = texts[start:start + FLAGS.batch_size]
            vectors.update(zip(batch, encoder(batch)))
        results.append(seat.run_test(test, vectors.__getitem__, FLAGS.permutations, FLAGS.seed))
        logging.info("%s: effect size %.3f, p %.2g", test.name, results[-1]["effect_size"],
                     results[-1]["p_value"])
    report = {"test": "seat", "export": encoder.path, "fingerprint": encoder.fingerprint,
              "permutations": FLAGS.permutations, "seed": FLAGS.seed, "results": results}
    return report, "SEAT on " + encoder.path + "\n\n" + seat.markdown(results)


def _run_crows_pairs(plan: Plan) -> tuple[dict, str]:
    from official.lm_scoring.masked_lm import MaskedLanguageModel

    mlm = MaskedLanguageModel.load(FLAGS.init_checkpoint, plan.bert_config_file,
                                   plan.vocab_file, FLAGS.do_lower_case)
    scores = crows_pairs.pseudo_log_likelihoods(plan.pairs, mlm, FLAGS.max_seq_length,
                                                FLAGS.batch_size)
    summary = crows_pairs.summarize(plan.pairs, scores)
    report = {"test": "crows_pairs", "init_checkpoint": FLAGS.init_checkpoint,
              "input_file": FLAGS.input_file, "do_lower_case": FLAGS.do_lower_case, **summary}
    text = (f"CrowS-Pairs on {FLAGS.init_checkpoint} ({FLAGS.input_file})\n\n"
            + crows_pairs.markdown(summary) + "\n\n50 is no preference. Blodgett et al. (2021) "
            "found noise and reliability problems in these pairs: read the score beside other "
            "measures.")
    return report, text


def job(plan: Plan) -> dict:
    """Runs the test, writes the two files, prints the table; returns the results."""
    report, text = (_run_seat if FLAGS.test == "seat" else _run_crows_pairs)(plan)
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    with open_atomically(os.path.join(FLAGS.output_dir, RESULTS_FILE)) as f:
        json.dump(report, f, indent=2, ensure_ascii=False)
        f.write("\n")
    with open_atomically(os.path.join(FLAGS.output_dir, TABLE_FILE)) as f:
        f.write(text + "\n")
    print(text, flush=True)
    return report


if __name__ == "__main__":
    command_line.main("bias_report", prepare, job, required=["test", "output_dir"])
