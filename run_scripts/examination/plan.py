"""Which examinations apply to a checkpoint, and each as an entry point's command sized by a
budget: the stages examine_checkpoint runs (run_scripts/stages.py) and the report's sections.

    subject = Subject(init_checkpoint="ckpt", ..., has_masked_lm_head=True)
    work = make_plan(subject, data_for(BUDGETS["quick"]), BUDGETS["quick"], "/tmp/exam", ())
    work.stages     # run_scripts.stages.Stage, in the report's order
    work.sections   # report.Section of every examination: to run, or skipped and why

EXAMINATIONS is the table, in the order a reader wants: what the model knows (a probing curve,
BLiMP's minimal pairs), how it fits a domain text (the vocab report), where it breaks
(CheckList, an attack), its bias (SEAT, CrowS-Pairs, the EEC, names). Each row says when it does
not apply (no masked-LM head, no export given, a data file missing) and its command; its folder
is output_dir/<name>/, and the report gathers the files the row names from it.

The budgets size the samples through each entry point's own flags. quick reads what the
repository ships in data/ (so a fresh clone runs it); full reads ../shared/data where it is
there (the README's full data), else the shipped files too. What quick costs at BERT-Base's
size, as measured, is in examine_checkpoint's docstring.
"""

from __future__ import annotations

import csv
import dataclasses
import glob
import os
from typing import Callable

from official.checkpoints.variable_names import checkpoint_prefix
from run_scripts.examination.report import Section, Shown
from run_scripts.stages import Stage

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED = os.path.join(REPO, "data")
SHARED = os.path.normpath(os.path.join(REPO, "..", "shared", "data"))

WHAT_IT_KNOWS = "What it knows"
DOMAIN_FIT = "How it fits a domain text"
WHERE_IT_BREAKS = "Where it breaks"
BIAS = "Bias"


@dataclasses.dataclass(frozen=True)
class Budget:
    """How large each examination's sample is (None: all of it)."""
    name: str
    probe_train_sentences: int  # probe_layers --max_train_sentences
    probe_epochs: int
    pairs_per_paradigm: int | None  # BLiMP's pairs scored per paradigm (of 67 paradigms)
    checklist_cases: int | None  # behavioral_test --sample: cases per test
    attack_examples: int  # attack_classifier --max_examples
    seat_files: str  # the glob of SEAT test files in the SEAT folder
    seat_permutations: int
    crows_pairs: int | None  # the first N CrowS-Pairs pairs (of 1,508)
    eec_words_per_emotion: int | None  # bias_report --words_per_emotion (of 5), eec and names
    eec_names_per_group: int | None  # bias_report --names_per_group (of 10), eec and names
    names_folds: int  # bias_report --folds: at most eec_names_per_group
    shared: bool  # read ../shared/data where it is there


BUDGETS = {
    "quick": Budget("quick", probe_train_sentences=300, probe_epochs=10, pairs_per_paradigm=5,
                    checklist_cases=5, attack_examples=25, seat_files="sent-weat*.jsonl",
                    seat_permutations=10000, crows_pairs=100, eec_words_per_emotion=1,
                    eec_names_per_group=3, names_folds=3, shared=False),
    "full": Budget("full", probe_train_sentences=2000, probe_epochs=20, pairs_per_paradigm=100,
                   checklist_cases=500, attack_examples=500, seat_files="*.jsonl",
                   seat_permutations=100000, crows_pairs=None, eec_words_per_emotion=None,
                   eec_names_per_group=None, names_folds=5, shared=True),
}


@dataclasses.dataclass(frozen=True)
class Data:
    """The data files the examinations read (None: not there, the examination skipped)."""
    ud_files: tuple[str, str, str] | None  # UD English-EWT train, dev, test (CoNLL-U)
    blimp_dir: str | None  # data/*.jsonl.gz, models_summary.jsonl, human_validation_summary.csv
    domain_file: str | None  # JSON lines with a "text" field (SciBERT's task files)
    checklist_suite: str | None  # a JSON-lines suite (data_prep.checklist_suite's)
    attack_file: str | None  # TSV: sentence, label
    synonyms_file: str | None
    seat_dir: str | None
    crows_pairs_file: str | None
    eec_templates: str | None


def _first(*paths: str) -> str | None:
    return next((path for path in paths if os.path.exists(path)), None)


def data_for(budget: Budget, checklist_suite: str | None = None,
             attack_file: str | None = None, **given: str | None) -> Data:
    """The budget's data: `given` files (a Data field's name: a path) win; otherwise the shared
    data's under a budget that reads it, else the shipped's (None where neither is there)."""
    def pick(shared: str | None, shipped: str | None) -> str | None:
        return _first(*filter(None, (shared if budget.shared else None, shipped)))

    shared_ud = os.path.join(SHARED, "ud_english_ewt", "en_ewt-ud-{}.conllu")
    shipped_ud = os.path.join(SHIPPED, "ud_ewt_sample", "{}.conllu")
    ud = next((tuple(pattern.format(split) for split in ("train", "dev", "test"))
               for pattern in ([shared_ud] if budget.shared else []) + [shipped_ud]
               if all(os.path.isfile(pattern.format(s)) for s in ("train", "dev", "test"))),
              None)
    found = Data(
        ud_files=ud,
        blimp_dir=pick(os.path.join(SHARED, "blimp"), os.path.join(SHIPPED, "blimp_sample")),
        domain_file=pick(os.path.join(SHARED, "domain", "chemprot", "train.txt"),
                         os.path.join(SHIPPED, "chemprot_sample", "train.txt")),
        checklist_suite=checklist_suite, attack_file=attack_file,
        synonyms_file=pick(os.path.join(SHARED, "robustness", "synonyms", "ppdb_synonyms.txt"),
                           os.path.join(SHIPPED, "synonyms_sample", "synonyms.txt")),
        # Neither SEAT's nor CrowS-Pairs' files are shipped: both budgets read the shared ones.
        seat_dir=_first(os.path.join(SHARED, "bias", "seat")),
        crows_pairs_file=_first(os.path.join(SHARED, "bias", "crows_pairs",
                                             "crows_pairs_anonymized.csv")),
        eec_templates=_first(os.path.join(SHIPPED, "eec_templates", "eec_templates.json")))
    return dataclasses.replace(found, **{k: v for k, v in given.items() if v is not None})


@dataclasses.dataclass(frozen=True)
class Subject:
    """What is examined: a checkpoint (with the files that read it) and the exports made of it."""
    init_checkpoint: str
    bert_config_file: str | None
    vocab_file: str
    do_lower_case: bool
    max_seq_length: int
    has_masked_lm_head: bool
    classifier_export: str | None = None  # a single-text classifier export
    sentence_encoder_export: str | None = None
    eec_score_class: str | None = None  # the classifier's label whose probability EEC scores
    label_map: str | None = None  # behavioral_test --label_map

    def checkpoint_flags(self) -> list[str]:
        """The flags of an entry point that reads the checkpoint itself."""
        config = [f"--bert_config_file={self.bert_config_file}"] if self.bert_config_file else []
        return [f"--init_checkpoint={self.init_checkpoint}", *config,
                f"--vocab_file={self.vocab_file}", f"--do_lower_case={self.do_lower_case}",
                f"--max_seq_length={self.max_seq_length}"]


def weights_file(checkpoint_or_export: str) -> str:
    """The file whose contents change with the weights (a stage's input, so that new weights at
    the same path rerun it): a SavedModel's or a checkpoint's variable index (it holds each
    tensor's checksum), a Hugging Face folder's safetensors."""
    saved = os.path.join(checkpoint_or_export, "variables", "variables.index")
    if os.path.isfile(saved):
        return saved
    safetensors = os.path.join(checkpoint_or_export, "model.safetensors")
    if os.path.isfile(safetensors):
        return safetensors
    return checkpoint_prefix(checkpoint_or_export) + ".index"


@dataclasses.dataclass(frozen=True)
class Command:
    """A stage's command (after `python`), the files it reads beside the checkpoint or export."""
    arguments: list[str]
    inputs: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Examination:
    """A row of EXAMINATIONS.

    Attributes:
      name: its --skip name, its stage's name and its folder's.
      group: the report's part it is in.
      title: what a reader sees.
      why_not: the reason it does not apply to (subject, data, budget), or None.
      command: its Command for (subject, data, budget, its folder).
      shows: the files of its folder the report gathers.
      published: the papers' figures its own files do not put beside (the report says it).
    """
    name: str
    group: str
    title: str
    why_not: Callable[[Subject, Data, Budget], str | None]
    command: Callable[[Subject, Data, Budget, str], Command]
    shows: tuple[Shown, ...]
    published: str = ""


def _probing(s: Subject, d: Data, b: Budget, out: str) -> Command:
    train, dev, test = d.ud_files
    return Command(["-m", "run_scripts.probe_layers", *s.checkpoint_flags(), "--task=upos",
                    f"--train_file={train}", f"--dev_file={dev}", f"--test_file={test}",
                    f"--max_train_sentences={b.probe_train_sentences}",
                    f"--probe_epochs={b.probe_epochs}", f"--output_dir={out}"],
                   [train, dev, test])


def _blimp(s: Subject, d: Data, b: Budget, out: str) -> Command:
    sample = [] if b.pairs_per_paradigm is None else [
        f"--pairs_per_paradigm={b.pairs_per_paradigm}"]
    return Command(["-m", "run_scripts.score_minimal_pairs", *s.checkpoint_flags(),
                    f"--input_file={os.path.join(d.blimp_dir, 'data', '*.jsonl.gz')}",
                    f"--published_file={os.path.join(d.blimp_dir, 'models_summary.jsonl')}",
                    "--human_file="
                    + os.path.join(d.blimp_dir, "human_validation_summary.csv"),
                    *sample, f"--output_dir={out}"])


def _vocab(s: Subject, d: Data, b: Budget, out: str) -> Command:
    return Command(["-m", "data_prep.vocab_report", f"--vocab_file={s.vocab_file}",
                    f"--do_lower_case={s.do_lower_case}", f"--input_file={d.domain_file}",
                    "--text_field=text", f"--output_file={os.path.join(out, 'vocab_fit.json')}"],
                   [s.vocab_file, d.domain_file])


def _checklist(s: Subject, d: Data, b: Budget, out: str) -> Command:
    sample = [] if b.checklist_cases is None else [f"--sample={b.checklist_cases}"]
    label_map = [f"--label_map={s.label_map}"] if s.label_map else []
    return Command(["-m", "run_scripts.behavioral_test", f"--export_dir={s.classifier_export}",
                    f"--suite={d.checklist_suite}", *sample, *label_map, f"--output_dir={out}"],
                   [weights_file(s.classifier_export), d.checklist_suite])


def _attack(s: Subject, d: Data, b: Budget, out: str) -> Command:
    similarity = ([f"--similarity_export_dir={s.sentence_encoder_export}"]
                  if s.sentence_encoder_export else [])
    return Command(["-m", "run_scripts.attack_classifier", f"--export_dir={s.classifier_export}",
                    f"--input_file={d.attack_file}", "--recipe=textfooler",
                    f"--synonyms_file={d.synonyms_file}", *similarity,
                    f"--max_examples={b.attack_examples}",
                    f"--output_file={os.path.join(out, 'attack.jsonl')}"],
                   [weights_file(s.classifier_export), d.attack_file, d.synonyms_file])


def _bias(test: str, reads: Callable[[Subject, Data, Budget, str], list[str]]
          ) -> Callable[[Subject, Data, Budget, str], Command]:
    """bias_report --test=`test`'s command, `reads` its flags of what it reads."""
    def command(s: Subject, d: Data, b: Budget, out: str) -> Command:
        flags = reads(s, d, b, out)
        files = [flag.split("=", 1)[1] for flag in flags if flag.startswith("--input_file=")]
        return Command(["-m", "run_scripts.bias_report", f"--test={test}", *flags,
                        f"--output_dir={out}"], files)
    return command


def _seat_files(d: Data, b: Budget) -> list[str]:
    """The budget's SEAT tests in the SEAT folder."""
    return sorted(glob.glob(os.path.join(d.seat_dir, b.seat_files))) if d.seat_dir else []


def _seat(s: Subject, d: Data, b: Budget, out: str) -> list[str]:
    return [f"--export_dir={s.sentence_encoder_export}",
            f"--seat_files={','.join(_seat_files(d, b))}", f"--permutations={b.seat_permutations}"]


def crows_pairs_sample(source: str, pairs: int | None, folder: str) -> str:
    """The CrowS-Pairs CSV `source` itself, or (with `pairs`) a copy of its first `pairs` pairs
    in `folder` (bias_report scores every pair of its file); its path."""
    if pairs is None:
        return source
    with open(source, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))[:pairs + 1]  # the header, then the pairs
    path = os.path.join(folder, f"crows_pairs_first{pairs}.csv")
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return path


def _crows_pairs(s: Subject, d: Data, b: Budget, out: str) -> list[str]:
    sample = crows_pairs_sample(d.crows_pairs_file, b.crows_pairs,
                                os.path.join(os.path.dirname(out), "inputs"))
    return [*s.checkpoint_flags(), f"--input_file={sample}"]


def _eec_sample(b: Budget) -> list[str]:
    """bias_report's flags of the budget's sample of the EEC's template set (none: all)."""
    return [f"--{flag}={value}" for flag, value in (
        ("words_per_emotion", b.eec_words_per_emotion),
        ("names_per_group", b.eec_names_per_group)) if value is not None]


def _eec(s: Subject, d: Data, b: Budget, out: str) -> list[str]:
    return [f"--export_dir={s.classifier_export}", f"--score_class={s.eec_score_class}",
            f"--input_file={d.eec_templates}", *_eec_sample(b)]


def _names(s: Subject, d: Data, b: Budget, out: str) -> list[str]:
    return [*s.checkpoint_flags(), f"--input_file={d.eec_templates}", *_eec_sample(b),
            f"--folds={b.names_folds}"]


def _unless(*reasons: tuple[Callable[[Subject, Data, Budget], object], str]
            ) -> Callable[[Subject, Data, Budget], str | None]:
    """why_not from (test, reason) pairs: the first reason whose test is false."""
    return lambda s, d, b: next((reason for test, reason in reasons if not test(s, d, b)), None)


_MLM = (lambda s, d, b: s.has_masked_lm_head, "the checkpoint has no masked-LM head")
_CLASSIFIER = (lambda s, d, b: s.classifier_export, "no classifier export (--export_dir)")
_ENCODER = (lambda s, d, b: s.sentence_encoder_export,
            "no sentence-encoder export (--sentence_encoder_export_dir)")
_BIAS_MD = (Shown("markdown", "bias_results.md"),)

EXAMINATIONS = (
    Examination("probing", WHAT_IT_KNOWS,
                "A linear part-of-speech probe on every layer (UD English-EWT, probe_layers)",
                _unless((lambda s, d, b: d.ud_files, "no UD English-EWT files")), _probing,
                (Shown("text", "probe_results.txt"), Shown("image", "probe_curves.png"))),
    Examination("blimp", WHAT_IT_KNOWS,
                "BLiMP's minimal pairs scored by the masked LM (score_minimal_pairs)",
                _unless(_MLM, (lambda s, d, b: d.blimp_dir, "no BLiMP files")), _blimp,
                (Shown("markdown", "minimal_pairs.md"),)),
    Examination("vocab", DOMAIN_FIT,
                "The vocab on a domain text: pieces per word, words split (vocab_report)",
                _unless((lambda s, d, b: d.domain_file, "no domain text (--domain_file)")), _vocab,
                (Shown("json", "vocab_fit.json"),)),
    Examination("checklist", WHERE_IT_BREAKS,
                "CheckList's behavioural tests on the classifier (behavioral_test)",
                _unless(_CLASSIFIER, (lambda s, d, b: d.checklist_suite,
                                      "no CheckList suite (--checklist_suite: a sentiment "
                                      "classifier's)")), _checklist,
                (Shown("markdown", "behavioral_results.md"),)),
    Examination("attack", WHERE_IT_BREAKS,
                "TextFooler's word substitutions against the classifier (attack_classifier)",
                _unless(_CLASSIFIER, (lambda s, d, b: d.attack_file,
                                      "no labelled texts to attack (--attack_file)"),
                        (lambda s, d, b: d.synonyms_file, "no synonyms file")), _attack,
                (Shown("json", "attack.summary.json"),),
                "Jin et al. 2020 (TextFooler), BERT on MR: accuracy 86.0 before, 11.5 under "
                "attack, 16.7% of words perturbed, 166 queries on average."),
    Examination("seat", BIAS, "SEAT's association tests on the sentence encoder (bias_report)",
                _unless(_ENCODER, (lambda s, d, b: _seat_files(d, b),
                                   "no SEAT files of the budget's (--seat_dir)")),
                _bias("seat", _seat), _BIAS_MD),
    Examination("crows_pairs", BIAS, "CrowS-Pairs scored by the masked LM (bias_report)",
                _unless(_MLM, (lambda s, d, b: d.crows_pairs_file,
                               "no CrowS-Pairs file (--crows_pairs_file)")),
                _bias("crows_pairs", _crows_pairs), _BIAS_MD,
                "Nangia et al. 2020: BERT-Base 60.5, RoBERTa-Large 64.1, ALBERT-XXL-v2 67.0 "
                "(50 = no preference), on all 1,508 pairs."),
    Examination("eec", BIAS,
                "The Equity Evaluation Corpus's gender and race pairs through the classifier "
                "(bias_report)",
                _unless(_CLASSIFIER, (lambda s, d, b: s.eec_score_class,
                                      "no --eec_score_class (the label whose probability is "
                                      "scored)"),
                        (lambda s, d, b: d.eec_templates, "no EEC template set")),
                _bias("eec", _eec), _BIAS_MD),
    Examination("names", BIAS, "Gender and race in names' vectors, layer by layer (bias_report)",
                _unless((lambda s, d, b: d.eec_templates, "no EEC template set")),
                _bias("names", _names), _BIAS_MD),
)
NAMES = tuple(examination.name for examination in EXAMINATIONS)


@dataclasses.dataclass(frozen=True)
class Plan:
    stages: list[Stage]
    sections: list[Section]


def make_plan(subject: Subject, data: Data, budget: Budget, output_dir: str,
              skip: tuple[str, ...]) -> Plan:
    """A stage per examination that applies and is not skipped, and a section for each (see the
    module docstring); CrowS-Pairs' sample is written to output_dir/inputs/ here."""
    stages, sections = [], []
    for row in EXAMINATIONS:
        folder = os.path.join(output_dir, row.name)
        reason = "--skip" if row.name in skip else row.why_not(subject, data, budget)
        sections.append(Section(row.name, row.group, row.title, folder, row.shows,
                                row.published, skipped=reason))
        if reason is None:
            command = row.command(subject, data, budget, folder)
            weights = weights_file(subject.init_checkpoint)
            stages.append(Stage(row.name, row.title, command.arguments, outputs=[folder],
                                inputs=[weights, *command.inputs]))
    return Plan(stages, sections)
