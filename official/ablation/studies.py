"""The four studies: their rows, the flags each row implies, their tasks, columns and orderings.

    study(name, size, vocab_size) -> Study

    objectives  the BERT paper's Table 5 (what the pre-training tasks buy)
                  bert        "BERT (MLM+NSP)"  data --objective=nsp
                  no_nsp      "No NSP"          data --objective=none
                  ltr_no_nsp  "LTR & No NSP"    data --objective=none; run_pretraining and the
                                                fine-tuning runs --objective=ltr (a causal mask,
                                                kept as the config's causal_attention)
                The paper's fourth row (+ BiLSTM) is not built.
    sizes       Table 6 (model size): three preset sizes around --size (below), each pretrained
                and fine-tuned alike; the held-out masked-LM perplexity besides the tasks
    masking     Table 8 (the masking procedure): create_pretraining_data --masking_mix=MASK,
                SAME,RANDOM over the paper's six mixes (80/10/10, the generator's default, is
                given by no flag); NER fine-tuned and feature-based (run_ner --feature_based)
    albert      ALBERT's factorised embeddings and cross-layer sharing on --size: not shared or
                all shared (num_hidden_groups = layers or 1; inner_group_num 1), with E = H or
                E = 64 (embedding_size); parameters counted per row. Its data is ALBERT's
                sentence-order prediction (--objective=sop)

Every row of a study pretrains on the same corpus for the same steps, batch and sequence length
(the same token budget) and differs from the study's other rows only in what its row says.

sizes' rows: with a named --size (tiny, mini, small, medium, base, large: Turc et al.'s ladder
of released sizes, then BERT-Large) the three consecutive ladder sizes centred on it (the first
three at tiny, the last three at large); with a grid name L{l}_H{h}, L{l} at the three widths of
128, 256, 512 and 768 centred on h. --size=mini gives L2/H128, L4/H256, L4/H512.

Example:
    >>> objectives = study("objectives", "mini", 30522)
    >>> [(row.id, row.data.flags(), row.pretraining_flags) for row in objectives.rows]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('bert', ['--objective=nsp'], ()), ('no_nsp', ['--objective=none'], ()),
     ('ltr_no_nsp', ['--objective=none'], ('--objective=ltr',))]
    >>> [row.id for row in study("sizes", "mini", 30522).rows]
    ['L2_H128', 'L4_H256', 'L4_H512']
"""

from __future__ import annotations

import dataclasses

from official import configs
from official.ablation import paper as figures
from official.ablation.columns import PER_MILLION, TASK_COLUMNS
from official.ablation.orderings import Chain, LargerGap, Ordering
from official.configs import BertConfig

STUDIES = ("objectives", "sizes", "masking", "albert")
TASKS = ("mrpc", "sst2", "conll", "squad_sample")
_LADDER = ("tiny", "mini", "small", "medium", "base", "large")
_WIDTHS = (128, 256, 512, 768)
# ALBERT's factorised embeddings at the width the issue asks for: a real factorisation of every
# preset's width (the narrowest is 128).
ALBERT_EMBEDDING_SIZE = 64


@dataclasses.dataclass(frozen=True)
class DataSetting:
    """What create_pretraining_data is told beyond the corpus: the second-sentence objective and
    the masking mix (None: the generator's default, the original's 80/10/10)."""
    objective: str = "nsp"
    masking_mix: tuple[float, float, float] | None = None

    @property
    def id(self) -> str:
        """A folder name: "nsp", "none", "nsp_mix_100_0_0"."""
        if self.masking_mix is None:
            return self.objective
        return f"{self.objective}_mix_" + "_".join(f"{round(100 * s)}" for s in self.masking_mix)

    def flags(self) -> list[str]:
        mix = [] if self.masking_mix is None else [
            "--masking_mix=" + ",".join(f"{s:g}" for s in self.masking_mix)]
        return [f"--objective={self.objective}", *mix]


@dataclasses.dataclass(frozen=True)
class Row:
    """A row of a study.

    Attributes:
      id: a folder name ("no_nsp").
      name: the row in words ("No NSP").
      data: its pretraining data's setting.
      config: its model (vocab_size the vocab's).
      pretraining_flags: what run_pretraining is told besides the study's shared flags.
      finetuning_flags: what every fine-tuning run is told besides them.
    """
    id: str
    name: str
    data: DataSetting
    config: BertConfig
    pretraining_flags: tuple[str, ...] = ()
    finetuning_flags: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Study:
    """A study: its rows, the tasks it may run (and runs by default), its table's columns (the
    paper's, in its order), whether it measures held-out perplexity and parameters, whether NER
    also runs feature-based, its orderings and the paper's table."""
    name: str
    title: str
    rows: tuple[Row, ...]
    tasks: tuple[str, ...]
    default_tasks: tuple[str, ...]
    columns: tuple[str, ...]
    orderings: tuple[Ordering, ...]
    paper: figures.PaperTable
    perplexity: bool = False
    parameters: bool = False
    feature_based: bool = False
    notes: tuple[str, ...] = ()

    def row(self, row_id: str) -> Row:
        return next(row for row in self.rows if row.id == row_id)

    def measured_columns(self, tasks: tuple[str, ...], feature_based: bool) -> tuple[str, ...]:
        """The columns our runs fill for `tasks`: perplexity and parameters when the study
        measures them, each task's, then its per-parameter score when parameters are counted."""
        found = ["ppl"] if self.perplexity else []
        found += ["params"] if self.parameters else []
        for task in tasks:
            found += [key for key in TASK_COLUMNS[task]
                      if key != "ner_feature" or (self.feature_based and feature_based)]
        if self.parameters:
            found += [key + PER_MILLION for task in tasks for key in TASK_COLUMNS[task]]
        return tuple(found)

    def table_columns(self, tasks: tuple[str, ...], feature_based: bool) -> tuple[str, ...]:
        """The paper's columns in its order, then ours it lacks."""
        ours = self.measured_columns(tasks, feature_based)
        return self.columns + tuple(key for key in ours if key not in self.columns)


def study(name: str, size: str, vocab_size: int) -> Study:
    """The study `name` (one of STUDIES) at preset `size`, its configs sized to `vocab_size`.

    Raises:
      ValueError: an unknown study or size.
    """
    if name not in STUDIES:
        raise ValueError(f"--study={name}: not a study; one of {', '.join(STUDIES)}")
    if size not in configs.preset_names():
        raise ValueError(f"--size={size}: not a preset; one of {', '.join(configs.preset_names())}")
    return {"objectives": _objectives, "sizes": _sizes, "masking": _masking,
            "albert": _albert}[name](size, vocab_size)


def _objectives(size: str, vocab_size: int) -> Study:
    config = configs.preset(size, vocab_size)
    ltr = ("--objective=ltr",)
    rows = (Row("bert", "BERT (MLM+NSP)", DataSetting("nsp"), config),
            Row("no_nsp", "No NSP", DataSetting("none"), config),
            Row("ltr_no_nsp", "LTR & No NSP", DataSetting("none"), config, ltr, ltr))
    columns = ("mnli", "qnli", "mrpc", "sst2", "squad")
    orderings = (*(Chain(c, ("no_nsp", "bert"), "<") for c in ("mnli", "qnli")),
                 *(Chain(c, ("ltr_no_nsp", "no_nsp"), "<") for c in ("mrpc", "squad")),
                 *(Chain(c, ("ltr_no_nsp", "bert"), "<=") for c in columns))
    return Study("objectives", "The pre-training tasks (BERT paper, Table 5)", rows,
                 tasks=("mrpc", "sst2", "squad_sample"),
                 default_tasks=("mrpc", "sst2", "squad_sample"), columns=columns,
                 orderings=orderings, paper=figures.OBJECTIVES,
                 notes=("The paper's fourth row, LTR & No NSP + BiLSTM (a randomly initialised "
                        "BiLSTM on top of the left-to-right model while fine-tuning), is not "
                        "built here.",
                        "MNLI-m and QNLI are not run: their training sets are not available "
                        "offline."))


def size_names(size: str) -> tuple[str, ...]:
    """The presets of the sizes study around `size` (see the module docstring)."""
    if size == "L24_H1024":
        size = "large"
    if size in _LADDER:
        start = min(max(_LADDER.index(size) - 1, 0), len(_LADDER) - 3)
        return _LADDER[start:start + 3]
    layers, hidden = (int(part[1:]) for part in size.split("_"))
    start = min(max(_WIDTHS.index(hidden) - 1, 0), len(_WIDTHS) - 3)
    return tuple(f"L{layers}_H{width}" for width in _WIDTHS[start:start + 3])


def _shape(config: BertConfig) -> tuple[int, int, int]:
    return config.num_hidden_layers, config.hidden_size, config.num_attention_heads


def _sizes(size: str, vocab_size: int) -> Study:
    rows = []
    for name in size_names(size):
        config = configs.preset(name, vocab_size)
        layers, hidden, heads = _shape(config)
        rows.append(Row(f"L{layers}_H{hidden}", f"L={layers}, H={hidden}, A={heads}",
                        DataSetting("nsp"), config))
    ids = tuple(row.id for row in rows)
    columns = ("ppl", "mnli", "mrpc", "sst2")
    return Study("sizes", "Model size (BERT paper, Table 6)", tuple(rows),
                 tasks=("mrpc", "sst2"), default_tasks=("mrpc", "sst2"), columns=columns,
                 orderings=size_orderings(ids),
                 paper=figures.sizes({_shape(row.config): row.id for row in rows}),
                 perplexity=True,
                 notes=("MNLI-m is not run: its training set is not available offline.",))


def size_orderings(ids: tuple[str, ...]) -> tuple[Ordering, ...]:
    """Rows `ids` from the smallest model up: perplexity falls, accuracy rises."""
    return (Chain("ppl", ids, ">"), *(Chain(c, ids, "<") for c in ("mnli", "mrpc", "sst2")))


MASKING_MIXES = {"80_10_10": None, "100_0_0": (1.0, 0.0, 0.0), "80_0_20": (0.8, 0.0, 0.2),
                 "80_20_0": (0.8, 0.2, 0.0), "0_20_80": (0.0, 0.2, 0.8),
                 "0_0_100": (0.0, 0.0, 1.0)}


def _masking(size: str, vocab_size: int) -> Study:
    config = configs.preset(size, vocab_size)
    rows = tuple(Row(row_id, " / ".join(f"{part}%" for part in row_id.split("_")),
                     DataSetting("nsp", mix), config) for row_id, mix in MASKING_MIXES.items())
    orderings = (Chain("ner_feature", ("100_0_0", "80_10_10"), "<"),
                 LargerGap("80_10_10", "100_0_0", "ner_feature", "ner"),
                 *(Chain(c, ("0_0_100", "80_10_10"), "<") for c in ("mnli", "ner",
                                                                     "ner_feature")))
    return Study("masking", "The masking procedure (BERT paper, Table 8; MASK / SAME / RND)",
                 rows, tasks=("conll", "mrpc", "sst2"), default_tasks=("conll",),
                 columns=("mnli", "ner", "ner_feature"), orderings=orderings,
                 paper=figures.MASKING, feature_based=True,
                 notes=("MNLI-m is not run: its training set is not available offline.",))


def _albert(size: str, vocab_size: int) -> Study:
    base = configs.preset(size, vocab_size)
    layers, hidden = base.num_hidden_layers, base.hidden_size
    rows = tuple(
        Row(f"{'shared' if shared else 'not_shared'}_e{'_h' if e == hidden else e}",
            f"{'all shared' if shared else 'not shared'}, E={e}", DataSetting("sop"),
            dataclasses.replace(base, embedding_size=e, num_hidden_groups=1 if shared else layers,
                                inner_group_num=1))
        for shared in (False, True) for e in (hidden, ALBERT_EMBEDDING_SIZE))
    orderings = []
    for task in ("sst2", "mrpc"):
        for e in ("_h", "64"):
            orderings.append(Chain(task, (f"shared_e{e}", f"not_shared_e{e}"), "<"))
        for e in ("_h", "64"):
            orderings.append(Chain(task + PER_MILLION, (f"not_shared_e{e}", f"shared_e{e}"), "<"))
    return Study("albert", "Factorised embeddings and cross-layer sharing (ALBERT)", rows,
                 tasks=("sst2", "mrpc"), default_tasks=("sst2",), columns=("params", "sst2"),
                 orderings=tuple(orderings), paper=figures.ALBERT, parameters=True,
                 notes=("ALBERT's E=768 rows stand beside ours with E=H; its rows are "
                        "ALBERT-base's (12 layers of 768), ours --size's.",
                        "Every row pretrains with ALBERT's sentence-order prediction "
                        "(create_pretraining_data --objective=sop).",))
