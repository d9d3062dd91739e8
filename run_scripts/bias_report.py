r"""Measures social bias: SEAT on a sentence encoder, CrowS-Pairs on a masked language model, the
Equity Evaluation Corpus's test on a fine-tuned classifier, gender and race in names' vectors.

    python -m run_scripts.bias_report --test=seat --export_dir=exports/minilm \
      --seat_files=seat/ --permutations=100000 --seed=1 --output_dir=/tmp/bias_seat
    python -m run_scripts.bias_report --test=crows_pairs --init_checkpoint=$BERT_DIR \
      --input_file=crows_pairs_anonymized.csv --output_dir=/tmp/bias_crows
    python -m run_scripts.bias_report --test=eec --export_dir=exports/sst2 --score_class=1 \
      --input_file=data/eec_templates/eec_templates.json --output_dir=/tmp/bias_eec
    python -m run_scripts.bias_report --test=names --init_checkpoint=$BERT_DIR \
      --input_file=data/eec_templates/eec_templates.json --output_dir=/tmp/bias_names

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

--test=eec: Kiritchenko & Mohammad's Equity Evaluation Corpus (official/robustness/eec.py) on a
classifier export (export_saved_model of a single-text classification run, as behavioral_test
and attack_classifier read it): every sentence of the template set --input_file (the EEC's own,
written from its paper: data/eec_templates/) scored by the probability of the class
--score_class (a label of the export), then the pairs that differ in gender alone or race
alone: mean difference, share of pairs whose female (or first race's) sentence scored higher,
paired t-test at --alpha, overall, per emotion and per template, the papers' findings beside.
--words_per_emotion and --names_per_group (eec and names) score a sample of the set: each
emotion's first words and each race's first names of each gender, every pair kept whole
(official/robustness/eec.py's `sample`; examine_checkpoint's quick budget takes 1 and 3).

--test=names: gender and race in the contextual vectors of the template set's names
(official/robustness/name_probe.py): every layer's vector of each name in each sentence of
--input_file from the encoder of --init_checkpoint (any checkpoint the project reads: no head
needed), then per layer a logistic-regression probe for gender trained on one race's names and
tested on the other's, both ways, beside --folds-fold cross-validation within each race (and
the same for race across genders); --probe_l2 is its L2 weight. --bert_config_file and
--vocab_file default to the files beside --init_checkpoint.

Writes output_dir/bias_results.json (every figure, and for CrowS-Pairs each pair's scores, for
the EEC each sentence's) and bias_results.md (the table, also printed), each atomically.
Every input is checked before TensorFlow loads where it can be (flags, test files, the CSV or
the template set, the config and vocab; an unknown --score_class once the export is loaded); a
bad one ends the run with one line and nothing written. A flag of another test is refused first:
ignored without a word, it would let a user believe it was used (an export holds its own
tokenizer and sequence length, so --vocab_file, --do_lower_case and --max_seq_length belong to
the tests that read a checkpoint, crows_pairs and names).
"""

import glob
import json
import os
from typing import NamedTuple

from absl import flags, logging

from official import checkpoints, command_line
from official.atomic_files import open_atomically
from official.configs import BertConfig
from official.lm_scoring.checkpoint_files import language_model_files
from official.output_paths import check_output_dir
from official.robustness import crows_pairs, eec, name_probe, seat
from official.text import vocab
from official.training.options import check_checkpoint_path
from run_scripts import common_flags

RESULTS_FILE, TABLE_FILE = "bias_results.json", "bias_results.md"

flags.DEFINE_enum("test", None, ["seat", "crows_pairs", "eec", "names"],
                  "Which bias measure to run.")
flags.DEFINE_string("output_dir", None, "Where to write bias_results.json and bias_results.md.")
flags.DEFINE_string("export_dir", None, "seat: a sentence_encoder export (export_saved_model "
                    "--export_type=sentence_encoder); eec: a single-text classifier export. Its "
                    "export_dir or one version folder.")
flags.DEFINE_string("seat_files", None, "seat: comma-separated SEAT test files, or a folder "
                    "holding them (*.jsonl).")
flags.DEFINE_integer("permutations", 100000, "seat: the permutation test enumerates every "
                     "partition when there are at most this many, else samples this many.")
flags.DEFINE_integer("seed", 12345, "seat: seed of the sampled partitions.")
flags.DEFINE_string("init_checkpoint", None, "crows_pairs: a checkpoint with its masked-LM head "
                    "(an original release, a run_pretraining output_dir, a TF2 checkpoint, a "
                    "Hugging Face BertForPreTraining folder); names: any checkpoint the project "
                    "reads.")
flags.DEFINE_string("input_file", None, "crows_pairs: the CrowS-Pairs CSV; eec and names: a "
                    "template set (data/eec_templates/eec_templates.json is the EEC's).")
flags.DEFINE_string("score_class", None, "eec: the label of the export whose probability is "
                    "a sentence's score (SST-2's positive class is 1).")
flags.DEFINE_integer("words_per_emotion", None, "eec and names: a sample, each emotion's first "
                     "N words of each slot in the template set's order (default: all). With "
                     "--names_per_group, every pair stays whole (official/robustness/eec.py).")
flags.DEFINE_integer("names_per_group", None, "eec and names: a sample, each race's first N "
                     "names of each gender in the template set's order (default: all); names "
                     "needs at least --folds.")
flags.DEFINE_float("alpha", 0.05, "eec: the paired t-test's significance level (the EEC's).")
flags.DEFINE_integer("folds", 5, "names: folds of the cross-validation within a race (or "
                     "gender), by name; at most the fewest names of one gender of one race.")
flags.DEFINE_float("probe_l2", 1.0, "names: the probe's L2 weight (scikit-learn's 1 / C).")
flags.DEFINE_integer("batch_size", 64, "Texts (seat, eec, names) or masked copies (crows_pairs) "
                     "per model call.")
common_flags.define_bert_config_flag(
    extra_help=" crows_pairs and names; default: bert_config.json beside --init_checkpoint.")
common_flags.define_tokenizer_flags()
common_flags.define_max_seq_length_flag()
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


# The tests that read each flag, and what each test scores: another test's flags have no effect.
_CHECKPOINT_TESTS = ("crows_pairs", "names")
_FLAG_TESTS = {
    "export_dir": ("seat", "eec"), "seat_files": ("seat",), "permutations": ("seat",),
    "seed": ("seat",), "init_checkpoint": _CHECKPOINT_TESTS,
    "input_file": ("crows_pairs", "eec", "names"), "bert_config_file": _CHECKPOINT_TESTS,
    "vocab_file": _CHECKPOINT_TESTS, "do_lower_case": _CHECKPOINT_TESTS,
    "max_seq_length": _CHECKPOINT_TESTS, "score_class": ("eec",), "alpha": ("eec",),
    "folds": ("names",), "probe_l2": ("names",), "words_per_emotion": ("eec", "names"),
    "names_per_group": ("eec", "names"),
}
_SCORES = {"seat": "scores the sentence_encoder export --export_dir on --seat_files",
           "crows_pairs": "scores the masked LM of --init_checkpoint on the CSV --input_file",
           "eec": "scores the template set --input_file with the classifier export "
                  "--export_dir",
           "names": "probes the names of the template set --input_file in the vectors of "
                    "--init_checkpoint"}


class Plan(NamedTuple):
    """What the flags say, checked, with the inputs read."""
    tests: list  # seat: the SeatTests
    pairs: list  # crows_pairs: the Pairs
    bert_config_file: str | None  # crows_pairs, names: given or beside the checkpoint (None: a
    vocab_file: str | None        # folder format's own config)
    template_set: eec.TemplateSet | None = None  # eec, names


def _seat_files(value: str) -> list[str]:
    """--seat_files as paths: a folder's *.jsonl sorted by name, or the comma list."""
    if os.path.isdir(value):
        files = sorted(glob.glob(os.path.join(value, "*.jsonl")))
        if not files:
            raise ValueError(f"--seat_files={value}: a folder without *.jsonl test files")
        return files
    return [path.strip() for path in value.split(",") if path.strip()]


def _refuse_the_other_tests_flags() -> None:
    """Refuses a flag given on the command line (even at its default) that only other tests
    read."""
    for name, tests in _FLAG_TESTS.items():
        if FLAGS.test not in tests and FLAGS[name].present:
            raise ValueError(f"--{name} is a flag of --test={' and '.join(tests)}: it has no "
                             f"effect with --test={FLAGS.test}, which {_SCORES[FLAGS.test]}")


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


def _template_set() -> eec.TemplateSet:
    """--input_file read, sampled by --words_per_emotion and --names_per_group."""
    template_set = eec.read_template_set(FLAGS.input_file)
    try:
        return eec.sample(template_set, FLAGS.words_per_emotion, FLAGS.names_per_group)
    except ValueError as e:  # it names its argument, the flag of that name
        raise ValueError(f"--{e}") from None


def _sampled() -> str:
    """The sample the flags took, as the report says it ("" for the whole set)."""
    taken = [f"{whose} first {value} {what}{'s' if value > 1 else ''}" for value, whose, what in (
        (FLAGS.words_per_emotion, "each emotion's", "word"),
        (FLAGS.names_per_group, "each race and gender's", "name")) if value is not None]
    return f" (a sample: {' and '.join(taken)})" if taken else ""


def _prepare_eec() -> Plan:
    _require(["export_dir", "input_file", "score_class"])
    if not 0 < FLAGS.alpha < 1:
        raise ValueError(f"--alpha={FLAGS.alpha}: must be between 0 and 1")
    template_set = _template_set()
    if not os.path.isdir(FLAGS.export_dir):
        raise ValueError(f"--export_dir: {FLAGS.export_dir}: no such folder")
    return Plan([], [], None, None, template_set)


def _encoder_files() -> tuple[str | None, str]:
    """names: the config (None: a folder format's own) and vocab of --init_checkpoint, checked
    to fit each other and --max_seq_length."""
    check_checkpoint_path(FLAGS.init_checkpoint)
    config_file = FLAGS.bert_config_file or checkpoints.beside(FLAGS.init_checkpoint,
                                                               checkpoints.CONFIG_FILE)
    vocab_file = FLAGS.vocab_file or checkpoints.beside(FLAGS.init_checkpoint,
                                                        checkpoints.VOCAB_FILE)
    if vocab_file is None:
        raise ValueError(f"--vocab_file: not given, and no {checkpoints.VOCAB_FILE} beside "
                         f"--init_checkpoint {FLAGS.init_checkpoint}")
    if config_file:
        config = BertConfig.from_json_file(config_file)
        config.check_seq_length(FLAGS.max_seq_length, config_file)
        vocab.check_fits(vocab_file, config.vocab_size, config_file)
    else:
        vocab.load_vocab(vocab_file)
    return config_file, vocab_file


def _prepare_names() -> Plan:
    _require(["init_checkpoint", "input_file"])
    if FLAGS.probe_l2 <= 0:
        raise ValueError(f"--probe_l2={FLAGS.probe_l2}: must be positive")
    template_set = _template_set()
    fewest = min(len(names) for by_gender in template_set.names.values()
                 for names in by_gender.values())
    if not 2 <= FLAGS.folds <= fewest:
        sample = (f" (--names_per_group={FLAGS.names_per_group})"
                  if FLAGS.names_per_group is not None else "")
        raise ValueError(f"--folds={FLAGS.folds}: must be from 2 to {fewest}, the fewest names "
                         f"of one gender of one race in {FLAGS.input_file}{sample}")
    return Plan([], [], *_encoder_files(), template_set)


_PREPARE = {"seat": _prepare_seat, "crows_pairs": _prepare_crows_pairs, "eec": _prepare_eec,
            "names": _prepare_names}


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py): flags, the test files,
    the CSV or the template set read whole, the config and vocab, the output_dir."""
    _refuse_the_other_tests_flags()
    if FLAGS.seed < 0:
        raise ValueError(f"--seed={FLAGS.seed}: must be 0 or more")
    if FLAGS.batch_size < 1:
        raise ValueError(f"--batch_size={FLAGS.batch_size}: must be at least 1")
    plan = _PREPARE[FLAGS.test]()
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


def _run_eec(plan: Plan) -> tuple[dict, str]:
    from official.robustness.classifier import single_text_classifier

    model = single_text_classifier(FLAGS.export_dir, "--export_dir")
    if FLAGS.score_class not in model.labels:
        raise ValueError(f"--score_class={FLAGS.score_class}: not a label of {model.path} (its "
                         f"labels: {', '.join(model.labels)})")
    sentences = eec.sentences(plan.template_set)
    probabilities = model.probabilities([s.text for s in sentences], FLAGS.batch_size)
    scores = probabilities[:, model.labels.index(FLAGS.score_class)]
    summary = eec.summarize(eec.pairs(sentences, scores), FLAGS.alpha)
    report = {"test": "eec", "export": model.path, "input_file": FLAGS.input_file,
              "words_per_emotion": FLAGS.words_per_emotion,
              "names_per_group": FLAGS.names_per_group, "score_class": FLAGS.score_class,
              "alpha": FLAGS.alpha,
              "sentences": len(sentences), "comparisons": summary, "published": eec.PUBLISHED,
              "scored": [{"text": s.text, "score": float(p)}
                         for s, p in zip(sentences, scores)]}
    published = eec.PUBLISHED["eec"]
    text = (f"EEC on {model.path}: the probability of class {FLAGS.score_class} of "
            f"{len(sentences)} sentences of {FLAGS.input_file}{_sampled()}\n\n"
            + eec.markdown(summary, plan.template_set.races, FLAGS.alpha)
            + f"\n\nPublished ({published['source']}; {published['systems']} systems, "
            f"{published['test']}): {published['finding']}. Per-task shares: "
            f"{published['per_task_shares']}. {eec.PUBLISHED['bert']['source']}: "
            f"{eec.PUBLISHED['bert']['finding']} (figures {eec.PUBLISHED['bert']['figures']}).")
    return report, text


def _run_names(plan: Plan) -> tuple[dict, str]:
    from official.api import load_encoder
    from official.probing.word_vectors import layer_function
    from official.text.tokenizer import FullTokenizer

    encoder = load_encoder(FLAGS.init_checkpoint, plan.bert_config_file)
    config = encoder.config
    config.check_seq_length(FLAGS.max_seq_length, FLAGS.init_checkpoint)
    tokenizer = FullTokenizer(plan.vocab_file, do_lower_case=FLAGS.do_lower_case)
    found = name_probe.occurrences(plan.template_set)
    vectors = name_probe.name_vectors(found, tokenizer, layer_function(encoder),
                                      config.num_hidden_layers + 1, config.hidden_size,
                                      FLAGS.max_seq_length, FLAGS.batch_size)
    logging.info("Vectors of %d name occurrences at %d layers", len(found.words), len(vectors))
    rows = name_probe.study(vectors, found, FLAGS.folds, FLAGS.probe_l2)
    races = plan.template_set.races
    report = {"test": "names", "init_checkpoint": FLAGS.init_checkpoint,
              "input_file": FLAGS.input_file, "words_per_emotion": FLAGS.words_per_emotion,
              "names_per_group": FLAGS.names_per_group, "do_lower_case": FLAGS.do_lower_case,
              "occurrences": len(found.words), "names": len(set(found.name)),
              "folds": FLAGS.folds, "probe_l2": FLAGS.probe_l2, "layers": rows,
              "published": name_probe.PUBLISHED}
    text = (f"Names of {FLAGS.input_file}{_sampled()} in {FLAGS.init_checkpoint}: probe "
            f"accuracy (%) by layer over {len(found.words)} occurrences of "
            f"{len(set(found.name))} names (chance 50; within: {FLAGS.folds}-fold by name)\n\n"
            + name_probe.markdown(rows, races)
            + f"\n\nAcross below within: gender and race entangled at that layer. Published "
              f"({name_probe.PUBLISHED['source']}): {name_probe.PUBLISHED['finding']}; figure: "
              f"{name_probe.PUBLISHED['figure']}.")
    return report, text


_RUN = {"seat": _run_seat, "crows_pairs": _run_crows_pairs, "eec": _run_eec,
        "names": _run_names}


def job(plan: Plan) -> dict:
    """Runs the test, writes the two files, prints the table; returns the results."""
    report, text = _RUN[FLAGS.test](plan)
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
