"""What an ablation study is asked to do, checked before any work (one-line errors naming the flag).

    AblationSettings(...)        every setting of run_ablation_study, checked when made
    settings.seed_list()         the seeds: --seeds of them from --first_seed (1, 2, 3 by default)
    settings.check_files(study)  the corpus, the vocab and each chosen task's data there
    settings.chosen_rows(study)  the rows --rows names (all by default), in the study's order

Seeds are a count, not a list: `--seeds=5 --first_seed=1` are seeds 1 to 5, so raising --seeds
later runs only the new seeds and reuses the finished ones. A seed is each stage's seed: the
pretraining data's --random_seed, run_pretraining's and every fine-tuning run's --seed.

The task data (its layout as ../shared/data keeps it, ../shared/data/README.md):
    mrpc          <glue_dir>/MRPC/train.tsv, dev.tsv (GLUE's download layout)
    sst2          <glue_dir>/SST-2/train.tsv, dev.tsv; the first --sst2_train_examples rows of a
                  seeded shuffle train (official/ablation/task_data.py)
    conll         <conll_dir>/eng.train, eng.testa (CoNLL-2003, as released)
    squad_sample  --squad_file (SQuAD v1.1 JSON, e.g. dev-v1.1.json) split by article
                  (official/ablation/task_data.py)
"""

from __future__ import annotations

import dataclasses
import glob
import os

from official.ablation.studies import STUDIES, TASKS, Study
from official.output_paths import check_output_dir
from official.tasks.ner_settings import FeatureBasedSettings
from official.training.options import STRATEGIES

# Files each task reads, relative to its data flag's folder.
TASK_FILES = {"mrpc": ("glue_dir", ("MRPC/train.tsv", "MRPC/dev.tsv")),
              "sst2": ("glue_dir", ("SST-2/train.tsv", "SST-2/dev.tsv")),
              "conll": ("conll_dir", ("eng.train", "eng.testa")),
              "squad_sample": ("squad_file", ("",))}


@dataclasses.dataclass(frozen=True, kw_only=True)
class AblationSettings:
    """run_ablation_study's flags, checked when made (names and meanings: its --help)."""

    study: str
    corpus: tuple[str, ...]
    vocab_file: str
    output_dir: str
    do_lower_case: bool = True
    size: str = "mini"
    seeds: int = 3
    first_seed: int = 1
    rows: tuple[str, ...] | None = None
    tasks: tuple[str, ...] | None = None
    max_seq_length: int = 128
    dupe_factor: int = 5
    data_workers: int = 2
    pretrain_steps: int = 1000
    pretrain_batch_size: int = 32
    pretrain_learning_rate: float = 5e-4
    eval_batch_size: int = 64
    max_eval_steps: int = 200
    finetune_epochs: float = 3.0
    finetune_batch_size: int = 32
    finetune_learning_rate: float = 1e-4
    feature_based: str | None = "concat_last_4"
    feature_lstm_units: int = 128
    feature_learning_rate: float = 1e-3
    glue_dir: str | None = None
    conll_dir: str | None = None
    squad_file: str | None = None
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
                     "squad_eval_questions"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name}={getattr(self, name)}: must be at least 1")
        if self.first_seed < 0:
            raise ValueError(f"--first_seed={self.first_seed}: must be at least 0")
        for name in ("pretrain_learning_rate", "finetune_learning_rate", "feature_learning_rate",
                     "finetune_epochs"):
            if not getattr(self, name) > 0:
                raise ValueError(f"--{name}={getattr(self, name)}: must be positive")
        if not 8 <= self.max_seq_length <= 512:
            raise ValueError(f"--max_seq_length={self.max_seq_length}: must be 8 to 512")
        if not self.corpus:
            raise ValueError("--corpus: no file given")
        if self.tasks is not None:
            unknown = [task for task in self.tasks if task not in TASKS]
            if unknown or not self.tasks:
                raise ValueError(f"--tasks={','.join(self.tasks)}: "
                                 f"{unknown[0] if unknown else 'nothing'} is not a task; "
                                 f"the tasks are {', '.join(TASKS)}")
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

    def check_files(self, study: Study) -> None:
        """The corpus files, the vocab, and the chosen tasks' files are there; a feature-based
        NER's layers are in the model.

        Raises:
          ValueError: the first missing one, naming its flag.
        """
        for path in self.corpus:
            if not os.path.isfile(path):
                raise ValueError(f"--corpus: {path}: no such file")
        if not os.path.isfile(self.vocab_file):
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
        if "conll" in self.chosen_tasks(study) and self.runs_feature_based(study):
            depth = min(study.row(row).config.num_hidden_layers
                        for row in self.chosen_rows(study))
            try:
                FeatureBasedSettings(self.feature_based).check_depth(depth)
            except ValueError as e:
                raise ValueError(f"{e} (--size={self.size}; --feature_based=none skips it)") \
                    from None


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
