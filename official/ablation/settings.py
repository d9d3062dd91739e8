"""What an ablation study is asked to do, checked before any work (one-line errors naming the flag).

    PRESETS                      named budgets: every setting's value but the study's own
    AblationSettings(...)        every setting of run_ablation_study, checked when made
    STUDY_VALUES                 a preset's values that differ for one study
    settings_of(preset, given)   the preset's values (and its study's) with the flags a user
                                 gave over them
    settings.seed_list()         the seeds: --seeds of them from --first_seed (1, 2, 3 by default)
    settings.check_files(study)  the corpus, the vocab and each chosen task's data there
    settings.chosen_rows(study)  the rows --rows names (all by default), in the study's order

Presets (`--preset`; a flag given beside one wins over its value):

  miniature   the default: a study whose rows separate on two CPU cores. BERT-Tiny (L2/H128),
              an 8,192-piece vocab learnt from the corpus, 4 million words of public-domain
              books (../shared/data/pretraining_text/books_en) masked 8 times, 128-token
              sequences, 9,600 steps of 32 (39M tokens: a tiny model leaves the unigram/bigram
              plateau only after about 25M) and a learning rate decayed to zero at the budget,
              bfloat16 with the elementwise ops fused; fine-tuning with Turc et al.'s grid for
              small BERTs (a larger learning rate, more epochs). The numbers and how they were
              chosen: README ("The ablation studies") and bench/ablation_budget.md.
              The crosslingual study pretrains 28,800 steps under it (`STUDY_VALUES`): its
              multilingual row splits the tokens three ways, and at 9,600 steps (13M tokens a
              language) it stayed on the bigram plateau and transferred nothing; at 28,800
              (39M a language) it left the plateau and tagged German and Spanish zero-shot
              about 25 points above the controls (README: Across languages).
  reduced     the settings before the miniature (BERT-Mini, 1,000 steps of 32): they left every
              row at the unigram stage; kept to rerun old studies

Seeds are a count, not a list: `--seeds=5 --first_seed=1` are seeds 1 to 5, so raising --seeds
later runs only the new seeds and reuses the finished ones. A seed is each stage's seed: the
pretraining data's --random_seed, run_pretraining's and every fine-tuning run's --seed.

The task data (its layout as ../shared/data keeps it, ../shared/data/README.md):
    qnli          <glue_dir>/QNLI/dev.tsv, re-split: QNLI_DEV_EXAMPLES held out, the rest train
                  (official/ablation/task_data.py)
    mrpc          <glue_dir>/MRPC/train.tsv, dev.tsv (GLUE's download layout)
    sst2          <glue_dir>/SST-2/train.tsv, dev.tsv; the first --sst2_train_examples rows of a
                  seeded shuffle train
    pos           <ud_dir>/en_ewt-ud-train.conllu, en_ewt-ud-dev.conllu (UD English-EWT)
    conll         <conll_dir>/eng.train, eng.testa (CoNLL-2003, as released)
    squad_sample  --squad_file (SQuAD v1.1 JSON, e.g. dev-v1.1.json) split by article
    blimp         <blimp_dir>/data/*.jsonl.gz (and models_summary.jsonl, the published figures)
    xpos          <ud_dir>/en_ewt-ud-{train,dev,test}.conllu; <crosslingual_dir>/text/<lang>/*
                  (each language's pretraining text), dict/en-<lang>.txt (code-switching),
                  ud/<lang>_gsd/test.conllu[.gz] (German and Spanish, scored zero-shot)
"""

from __future__ import annotations

import dataclasses
import glob
import os
from typing import Any, Mapping

from official.ablation.studies import LANGUAGES, MEASURES, STUDIES, TASKS, Study
from official.output_paths import check_output_dir
from official.tasks.ner_settings import FeatureBasedSettings
from official.training.options import DTYPE_POLICIES, STRATEGIES

# Files each task reads, relative to its data flag's folder.
TASK_FILES = {"qnli": ("glue_dir", ("QNLI/dev.tsv",)),
              "mrpc": ("glue_dir", ("MRPC/train.tsv", "MRPC/dev.tsv")),
              "sst2": ("glue_dir", ("SST-2/train.tsv", "SST-2/dev.tsv")),
              "pos": ("ud_dir", ("en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu")),
              "conll": ("conll_dir", ("eng.train", "eng.testa")),
              "squad_sample": ("squad_file", ("",)),
              "xpos": ("ud_dir", ("en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu",
                                  "en_ewt-ud-test.conllu"))}
BLIMP_FILES = "data/*.jsonl*"
# Under --crosslingual_dir (../shared/data/crosslingual's layout): each language's text, the
# English-to-<language> word pairs, the target languages' UD test sets (gzip-compressed or not).
CROSSLINGUAL_TEXT = "text/{language}/*"
CROSSLINGUAL_DICTIONARY = "dict/en-{language}.txt"
CROSSLINGUAL_TEST = "ud/{language}_gsd/test.conllu*"


@dataclasses.dataclass(frozen=True, kw_only=True)
class AblationSettings:
    """run_ablation_study's flags, checked when made (names and meanings: its --help).
    `vocab_file` None: the study learns a WordPiece vocab of `vocab_size` pieces from its
    corpus first; `max_seq_length` is pretraining's, the fine-tuning tasks' own are
    `finetune_max_seq_length` (one text) and `pair_max_seq_length` (two)."""

    study: str
    corpus: tuple[str, ...]
    output_dir: str
    vocab_file: str | None = None
    preset: str = "miniature"
    vocab_size: int = 8192
    do_lower_case: bool = True
    size: str = "mini"
    seeds: int = 3
    first_seed: int = 1
    rows: tuple[str, ...] | None = None
    tasks: tuple[str, ...] | None = None
    measures: tuple[str, ...] | None = None
    max_seq_length: int = 128
    finetune_max_seq_length: int = 128
    pair_max_seq_length: int = 128
    dupe_factor: int = 5
    data_workers: int = 2
    pretrain_steps: int = 1000
    pretrain_batch_size: int = 32
    pretrain_learning_rate: float = 5e-4
    pretrain_warmup: float = 0.1
    pretrain_dropout: float | None = None
    dtype: str = "float32"
    eval_batch_size: int = 64
    max_eval_steps: int = 200
    probe_steps: int = 300
    probe_learning_rate: float = 1e-3
    finetune_epochs: float = 3.0
    finetune_batch_size: int = 32
    finetune_learning_rate: float = 1e-4
    finetune_dropout: float | None = None
    feature_based: str | None = "concat_last_4"
    feature_lstm_units: int = 128
    feature_learning_rate: float = 1e-3
    blimp_pairs_per_paradigm: int | None = 100
    glue_dir: str | None = None
    ud_dir: str | None = None
    conll_dir: str | None = None
    squad_file: str | None = None
    blimp_dir: str | None = None
    crosslingual_dir: str | None = None
    language_smoothing: float = 0.7
    code_switch_rate: float = 0.5
    sst2_train_examples: int = 8000
    squad_train_questions: int = 2000
    squad_eval_questions: int = 500
    distribution_strategy: str = "default"
    num_gpus: int = 0

    def __post_init__(self):
        if self.study not in STUDIES:
            raise ValueError(f"--study={self.study}: not a study; one of {', '.join(STUDIES)}")
        for name in ("seeds", "pretrain_steps", "pretrain_batch_size", "eval_batch_size",
                     "max_eval_steps", "finetune_batch_size", "dupe_factor", "data_workers",
                     "feature_lstm_units", "sst2_train_examples", "squad_train_questions",
                     "squad_eval_questions", "probe_steps", "vocab_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name}={getattr(self, name)}: must be at least 1")
        if self.first_seed < 0:
            raise ValueError(f"--first_seed={self.first_seed}: must be at least 0")
        for name in ("pretrain_learning_rate", "finetune_learning_rate", "feature_learning_rate",
                     "finetune_epochs", "probe_learning_rate"):
            if not getattr(self, name) > 0:
                raise ValueError(f"--{name}={getattr(self, name)}: must be positive")
        if not 0 <= self.pretrain_warmup < 1:
            raise ValueError(f"--pretrain_warmup={self.pretrain_warmup}: a share of the steps, "
                             "0 or more and below 1")
        for name in ("pretrain_dropout", "finetune_dropout"):
            value = getattr(self, name)
            if value is not None and not 0 <= value < 1:
                raise ValueError(f"--{name}={value}: must be 0 or more and below 1")
        for name in ("max_seq_length", "finetune_max_seq_length", "pair_max_seq_length"):
            if not 8 <= getattr(self, name) <= 512:
                raise ValueError(f"--{name}={getattr(self, name)}: must be 8 to 512")
        if self.blimp_pairs_per_paradigm is not None and self.blimp_pairs_per_paradigm < 1:
            raise ValueError(f"--blimp_pairs_per_paradigm={self.blimp_pairs_per_paradigm}: "
                             "must be at least 1")
        if not 0 <= self.language_smoothing <= 1:
            raise ValueError(f"--language_smoothing={self.language_smoothing}: must be 0 to 1")
        if not 0 < self.code_switch_rate <= 1:
            raise ValueError(f"--code_switch_rate={self.code_switch_rate}: must be above 0 "
                             "and at most 1")
        for name, known in (("tasks", TASKS), ("measures", MEASURES)):
            chosen = getattr(self, name)
            if chosen is not None:
                unknown = [item for item in chosen if item not in known]
                if unknown or (not chosen and name == "tasks"):
                    raise ValueError(f"--{name}={','.join(chosen)}: "
                                     f"{unknown[0] if unknown else 'nothing'} is not one; "
                                     f"the {name} are {', '.join(known)}")
        if self.dtype not in DTYPE_POLICIES:
            raise ValueError(f"--dtype={self.dtype}: one of {', '.join(DTYPE_POLICIES)}")
        if self.feature_based is not None:
            FeatureBasedSettings(self.feature_based, self.feature_lstm_units)
        if self.distribution_strategy not in STRATEGIES:
            raise ValueError(f"--distribution_strategy={self.distribution_strategy}: one of "
                             f"{', '.join(STRATEGIES)}")
        check_output_dir(self.output_dir, "output_dir")

    @property
    def max_predictions_per_seq(self) -> int:
        """The masked positions a sequence holds room for: 15% of it, rounded up (the original's
        20 at 128 tokens)."""
        return -(-15 * self.max_seq_length // 100)

    @property
    def warmup_steps(self) -> int:
        return int(self.pretrain_warmup * self.pretrain_steps)

    def experiment(self) -> dict[str, Any]:
        """The settings that shape the numbers, as JSON values: every setting but where the
        files are (the corpus and the vocab by file name only), which rows, seeds, tasks and
        measures run, and how many processes or devices run them. Two runs joined into one
        report (official/ablation/joined.py) must agree on all of it."""
        where = {"output_dir", "corpus", "vocab_file", "glue_dir", "ud_dir", "conll_dir",
                 "squad_file", "blimp_dir", "crosslingual_dir"}
        which = {"seeds", "first_seed", "rows", "tasks", "measures", "data_workers",
                 "eval_batch_size", "distribution_strategy", "num_gpus"}
        found = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                 if f.name not in where | which}
        found["corpus"] = [os.path.basename(path) for path in self.corpus]
        found["vocab_file"] = self.vocab_file and os.path.basename(self.vocab_file)
        return found

    def seed_list(self) -> tuple[int, ...]:
        return tuple(range(self.first_seed, self.first_seed + self.seeds))

    def chosen_tasks(self, study: Study) -> tuple[str, ...]:
        """--tasks (the study's default without it), each checked against the study's set."""
        tasks = self.tasks if self.tasks is not None else study.default_tasks
        for task in tasks:
            if task not in study.tasks:
                raise ValueError(f"--tasks={','.join(tasks)}: the {study.name} study runs "
                                 f"{', '.join(study.tasks)}, not {task}")
        return tasks

    def chosen_measures(self, study: Study) -> tuple[str, ...]:
        """--measures (the study's own without it), each one the study takes."""
        measures = self.measures if self.measures is not None else study.measures
        for measure in measures:
            if measure not in study.measures:
                raise ValueError(f"--measures={','.join(measures)}: the {study.name} study "
                                 f"takes {', '.join(study.measures)}, not {measure}")
        return tuple(m for m in study.measures if m in measures)

    def chosen_rows(self, study: Study) -> tuple[str, ...]:
        """--rows (every row without it), in the study's order."""
        ids = [row.id for row in study.rows]
        if self.rows is None:
            return tuple(ids)
        unknown = [row for row in self.rows if row not in ids]
        if unknown or not self.rows:
            raise ValueError(f"--rows={','.join(self.rows)}: "
                             f"{unknown[0] if unknown else 'nothing'} is not a row of the "
                             f"{study.name} study; its rows are {', '.join(ids)}")
        return tuple(row for row in ids if row in self.rows)

    def runs_feature_based(self, study: Study) -> bool:
        """Whether NER also runs feature-based: the study asks for it and --feature_based is
        a choice (not none)."""
        return study.feature_based and self.feature_based is not None

    def blimp_files(self) -> list[str]:
        return sorted(glob.glob(os.path.join(self.blimp_dir, BLIMP_FILES))) \
            if self.blimp_dir else []

    def reads_corpus(self, study: Study) -> bool:
        """Whether a chosen row pretrains on --corpus (not on --crosslingual_dir's text)."""
        return any(row.data is not None and row.data.languages is None
                   for row in map(study.row, self.chosen_rows(study)))

    def crosslingual_files(self, kind: str, languages: tuple[str, ...]) -> dict[str, str]:
        """{language: its file or glob of `kind` (CROSSLINGUAL_TEXT, _DICTIONARY or _TEST)}
        under --crosslingual_dir; a test set's glob resolved to its one file."""
        found = {language: os.path.join(self.crosslingual_dir or "",
                                        kind.format(language=language))
                 for language in languages}
        if kind == CROSSLINGUAL_TEST:
            found = {language: (sorted(glob.glob(pattern)) or [pattern])[0]
                     for language, pattern in found.items()}
        return found

    def check_files(self, study: Study) -> None:
        """The corpus files, the vocab, and the chosen tasks' and measures' files are there; a
        feature-based NER's layers are in the model.

        Raises:
          ValueError: the first missing one, naming its flag.
        """
        if self.reads_corpus(study) and not self.corpus:
            raise ValueError("--corpus: required (no default corpus under ../shared/data here)")
        for path in self.corpus if self.reads_corpus(study) else ():
            if not os.path.isfile(path):
                raise ValueError(f"--corpus: {path}: no such file")
        if "xpos" in self.chosen_tasks(study) or not self.reads_corpus(study):
            self._check_crosslingual(study)
        if self.vocab_file is not None and not os.path.isfile(self.vocab_file):
            raise ValueError(f"--vocab_file={self.vocab_file}: no such file")
        for task in self.chosen_tasks(study):
            flag, names = TASK_FILES[task]
            folder = getattr(self, flag)
            if folder is None:
                raise ValueError(f"--{flag} is needed for task {task} (no default folder is "
                                 "there)")
            for name in names:
                path = os.path.join(folder, name) if name else folder
                if not os.path.isfile(path):
                    raise ValueError(f"--{flag}={folder}: {path} is not there (task {task})")
        measures = self.chosen_measures(study)
        if "blimp" in measures and not self.blimp_files():
            raise ValueError(f"--blimp_dir={self.blimp_dir}: no {BLIMP_FILES} there (measure "
                             "blimp; --measures without it skips it)")
        if "pos_probe" in measures and (self.ud_dir is None or not os.path.isfile(
                os.path.join(self.ud_dir, TASK_FILES["pos"][1][0]))):
            raise ValueError(f"--ud_dir={self.ud_dir}: no {TASK_FILES['pos'][1][0]} there "
                             "(measure pos_probe)")
        if "conll" in self.chosen_tasks(study) and self.runs_feature_based(study):
            depth = min(study.row(row).config.num_hidden_layers
                        for row in self.chosen_rows(study))
            try:
                FeatureBasedSettings(self.feature_based).check_depth(depth)
            except ValueError as e:
                raise ValueError(f"{e} (--size={self.size}; --feature_based=none skips it)") \
                    from None


    def _check_crosslingual(self, study: Study) -> None:
        """Every language's text, dictionary (code-switching rows) and test set is there."""
        if self.crosslingual_dir is None:
            raise ValueError("--crosslingual_dir is needed for the crosslingual study (no "
                             "default folder is there)")
        wanted = [(CROSSLINGUAL_TEXT, LANGUAGES), (CROSSLINGUAL_TEST, LANGUAGES[1:])]
        if any(study.row(row).code_switching for row in self.chosen_rows(study)):
            wanted.append((CROSSLINGUAL_DICTIONARY, LANGUAGES[1:]))
        for kind, languages in wanted:
            for language, path in self.crosslingual_files(kind, languages).items():
                if not glob.glob(path):
                    raise ValueError(f"--crosslingual_dir={self.crosslingual_dir}: {path} is "
                                     f"not there (language {language})")


# The presets' values (module docstring); fields not named keep AblationSettings' defaults.
PRESETS: dict[str, dict[str, Any]] = {
    "miniature": {
        "size": "tiny", "vocab_size": 8192, "max_seq_length": 128,
        "finetune_max_seq_length": 64, "pair_max_seq_length": 128, "dupe_factor": 8,
        "pretrain_steps": 9600, "pretrain_batch_size": 32, "pretrain_learning_rate": 1e-3,
        "pretrain_warmup": 0.1, "pretrain_dropout": 0.0, "dtype": "bfloat16",
        "max_eval_steps": 100, "probe_steps": 300, "probe_learning_rate": 1e-3,
        "finetune_epochs": 3.0, "finetune_batch_size": 32, "finetune_learning_rate": 2e-4,
        "finetune_dropout": 0.1, "blimp_pairs_per_paradigm": 100,
        "sst2_train_examples": 20000},
    "reduced": {
        "size": "mini", "vocab_size": 8192, "max_seq_length": 128,
        "finetune_max_seq_length": 128, "pair_max_seq_length": 128, "dupe_factor": 5,
        "pretrain_steps": 1000, "pretrain_batch_size": 32, "pretrain_learning_rate": 5e-4,
        "pretrain_warmup": 0.1, "pretrain_dropout": None, "dtype": "float32",
        "max_eval_steps": 200, "finetune_epochs": 3.0, "finetune_batch_size": 32,
        "finetune_learning_rate": 1e-4, "finetune_dropout": None,
        "blimp_pairs_per_paradigm": 100, "sst2_train_examples": 8000},
}


# preset -> study -> the values that study takes instead of the preset's (module docstring).
STUDY_VALUES: dict[str, dict[str, dict[str, Any]]] = {
    "miniature": {"crosslingual": {"pretrain_steps": 28800}},
}


def settings_of(preset: str, given: Mapping[str, Any]) -> AblationSettings:
    """AblationSettings of `preset`'s values, its study's own (`STUDY_VALUES`, for
    given["study"]), and `given` (the settings a user named) over them.

    Raises:
      ValueError: an unknown preset, or a bad setting (AblationSettings' checks).
    """
    if preset not in PRESETS:
        raise ValueError(f"--preset={preset}: not a preset; one of {', '.join(PRESETS)}")
    study_values = STUDY_VALUES.get(preset, {}).get(given.get("study"), {})
    return AblationSettings(**{**PRESETS[preset], **study_values, **given, "preset": preset})


def corpus_files(text: str) -> tuple[str, ...]:
    """--corpus: a comma-separated list of files and globs, each glob's files sorted.

    Raises:
      ValueError: a glob that matches nothing.
    """
    files = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if glob.has_magic(part):
            found = sorted(glob.glob(part))
            if not found:
                raise ValueError(f"--corpus: {part} matches no file")
            files += found
        else:
            files.append(part)
    return tuple(os.path.abspath(path) for path in files)
