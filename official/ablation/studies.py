"""The four studies: their rows, the flags each row implies, their tasks, measures, columns and
orderings.

    study(name, size, vocab_size) -> Study

    objectives  the pre-training tasks: the BERT paper's Table 5, and the dispute over NSP
                (RoBERTa's Table 2, ALBERT's Table 5, Aroca-Ouellette & Rudzicz 2020)
                  bert         "BERT (MLM+NSP)"             data --objective=nsp
                  no_nsp       "No NSP (split segments)"    data --objective=nsp; run_pretraining
                                                            --nosecond_sentence_loss: NSP's
                                                            inputs (half their second segments
                                                            another document's) without its loss
                  no_nsp_full  "No NSP (full segments)"     data --objective=none: one stretch
                                                            of a document per sequence
                                                            (RoBERTa's FULL-SENTENCES)
                  sop          "MLM + SOP (ALBERT)"         data --objective=sop
                  ltr_no_nsp   "LTR & No NSP"               data --objective=none;
                                                            run_pretraining and the fine-tuning
                                                            runs --objective=ltr (a causal mask,
                                                            kept as the config's causal_attention)
                  random       "Random init (no pretraining)"  fine-tuned from its
                                                            initialisation: every task's
                                                            reference
                The paper's + BiLSTM row is not built.
    sizes       Table 6 (model size): three preset sizes around --size (below), each pretrained
                and fine-tuned alike; held-out masked-LM perplexity beside the tasks
    masking     Table 8 (the masking procedure): create_pretraining_data --masking_mix=MASK,
                SAME,RANDOM over the paper's six mixes (80/10/10, the generator's default, is
                given by no flag); NER fine-tuned and feature-based (run_ner --feature_based)
    albert      ALBERT's factorised embeddings and cross-layer sharing on --size: not shared or
                all shared (num_hidden_groups = layers or 1; inner_group_num 1), with E = H or
                E = 64 (embedding_size); parameters counted per row. Its data is ALBERT's
                sentence-order prediction (--objective=sop)
    crosslingual
                zero-shot transfer across languages, mBERT in miniature (Pires et al. 2019;
                K et al. 2020): a tagger of UD's parts of speech fine-tuned on English-EWT
                (best/ by its dev set), scored on English-EWT test and zero-shot on German-
                and Spanish-GSD test (task xpos); every row has one cased vocab learnt from
                the multilingual corpus, and pretrains on full segments (--objective=none)
                  random       "Random init (no pretraining)"
                  en           "English only"               English text alone (the control:
                                                            the same vocab and token budget)
                  multi        "English + German + Spanish" the three languages' text, their
                                                            shares smoothed as mBERT's
                                                            (data_prep.mix_languages)
                  multi_cs     "+ code-switching (CoSDA-ML)"  multi's pretraining; the tagger's
                                                            training words switched to German
                                                            or Spanish (run_ner
                                                            --code_switch_dictionaries)
                  multi_mix    "+ layer mix (Chen et al. 2022)"  multi's pretraining; the
                                                            tagger reads a learned mix of every
                                                            layer (run_ner --mix_layers)

Every row of a study pretrains on the same corpus for the same steps, batch and sequence length
(the same token budget) and differs from the study's other rows only in what its row says.
Besides its fine-tuned tasks a study measures, without fine-tuning (`measures`): "heldout" the
masked-LM loss and accuracy on held-out contiguous text (a left-to-right row: its next-token
loss and accuracy there), "heads" its second-sentence head on held-out NSP and SOP records
(rows trained with one), "probes" a fresh linear head on the frozen pooled output for NSP and
for SOP (every pretrained row), "blimp" BLiMP's minimal pairs zero-shot, "pos_probe" a linear
probe of the last layer for UD's universal parts of speech. The masked LM is scored on the
study's held-out text (`Study.heldout`: --corpus's, or the crosslingual study's multilingual
corpus's).

sizes' rows: with a named --size (tiny, mini, small, medium, base, large: Turc et al.'s ladder
of released sizes, then BERT-Large) the three consecutive ladder sizes centred on it (the first
three at tiny, the last three at large); with a grid name L{l}_H{h}, L{l} at the three widths of
128, 256, 512 and 768 centred on h. --size=mini gives L2/H128, L4/H256, L4/H512.

Example:
    >>> objectives = study("objectives", "mini", 30522)
    >>> [(row.id, row.data and row.data.flags(), row.pretraining_flags)
    ...  for row in objectives.rows]  # doctest: +NORMALIZE_WHITESPACE
    [('bert', ['--objective=nsp'], ()),
     ('no_nsp', ['--objective=nsp'], ('--nosecond_sentence_loss',)),
     ('no_nsp_full', ['--objective=none'], ()), ('sop', ['--objective=sop'], ()),
     ('ltr_no_nsp', ['--objective=none'], ('--objective=ltr',)), ('random', None, ())]
    >>> [row.id for row in study("sizes", "mini", 30522).rows]
    ['L2_H128', 'L4_H256', 'L4_H512']
"""

from __future__ import annotations

import dataclasses

from official import configs
from official.ablation import paper as figures
from official.ablation.columns import MEASURE_COLUMNS, PER_MILLION, TASK_COLUMNS
from official.ablation.orderings import AtChance, Compare, LargerGap, Ordering, chain
from official.configs import BertConfig

STUDIES = ("objectives", "sizes", "masking", "albert", "crosslingual")
TASKS = ("qnli", "sst2", "pos", "mrpc", "conll", "squad_sample", "xpos")
# The crosslingual study's languages: the one its tagger is fine-tuned in first, then those it
# is scored in zero-shot (../shared/data/crosslingual: UD German and Spanish GSD).
LANGUAGES = ("en", "de", "es")
MEASURES = ("heldout", "heads", "probes", "blimp", "pos_probe")
_LADDER = ("tiny", "mini", "small", "medium", "base", "large")
_WIDTHS = (128, 256, 512, 768)
# ALBERT's factorised embeddings at the width the issue asks for: a real factorisation of every
# preset's width (the narrowest is 128).
ALBERT_EMBEDDING_SIZE = 64


@dataclasses.dataclass(frozen=True)
class DataSetting:
    """What create_pretraining_data is told beyond the corpus: the second-sentence objective and
    the masking mix (None: the generator's default, the original's 80/10/10); and which corpus:
    None for the study's --corpus, or languages ("en", "de", "es") mixed by
    data_prep.mix_languages from --crosslingual_dir's text."""
    objective: str = "nsp"
    masking_mix: tuple[float, float, float] | None = None
    languages: tuple[str, ...] | None = None

    @property
    def corpus(self) -> str:
        """The corpus's name: "corpus" (--corpus), or its languages joined ("en_de_es")."""
        return "_".join(self.languages) if self.languages else "corpus"

    @property
    def id(self) -> str:
        """A folder name: "nsp", "none", "nsp_mix_100_0_0", "en_de_es_none"."""
        found = self.objective if self.masking_mix is None else (
            f"{self.objective}_mix_" + "_".join(f"{round(100 * s)}" for s in self.masking_mix))
        return f"{self.corpus}_{found}" if self.languages else found

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
      data: its pretraining data's setting; None for a row that is not pretrained (the random
        initialisation every task is measured against).
      config: its model (vocab_size the vocab's).
      pretraining_flags: what run_pretraining is told besides the study's shared flags.
      finetuning_flags: what every fine-tuning run is told besides them.
      pretrained_as: the row whose pretraining this row's fine-tuning starts from (the same
        data, model and flags: run once), or None for its own.
      code_switching: its fine-tuning data is code-switched (run_ner
        --code_switch_dictionaries, --crosslingual_dir's dictionaries).
    """
    id: str
    name: str
    data: DataSetting | None
    config: BertConfig
    pretraining_flags: tuple[str, ...] = ()
    finetuning_flags: tuple[str, ...] = ()
    pretrained_as: str | None = None
    code_switching: bool = False

    @property
    def pretrained(self) -> bool:
        return self.data is not None

    @property
    def second_sentence_head(self) -> str | None:
        """The objective its second-sentence head was trained on ("nsp", "sop"), or None."""
        trained = (self.pretrained and self.data.objective != "none"
                   and "--nosecond_sentence_loss" not in self.pretraining_flags
                   and "--objective=ltr" not in self.pretraining_flags)
        return self.data.objective if trained else None


@dataclasses.dataclass(frozen=True)
class Study:
    """A study: its rows, the tasks it may run (and runs by default), the measures it takes
    without fine-tuning, its table's columns (the papers', in their order), whether it
    reports held-out perplexity and parameters, whether NER also runs feature-based, its
    orderings and the papers' table; whether its vocab and text are cased whatever
    --do_lower_case says (mBERT's rule), and the held-out text every row's masked LM is scored
    on (records of contiguous text)."""
    name: str
    title: str
    rows: tuple[Row, ...]
    tasks: tuple[str, ...]
    default_tasks: tuple[str, ...]
    measures: tuple[str, ...]
    columns: tuple[str, ...]
    orderings: tuple[Ordering, ...]
    paper: figures.PaperTable
    perplexity: bool = False
    parameters: bool = False
    feature_based: bool = False
    notes: tuple[str, ...] = ()
    cased: bool = False
    heldout: DataSetting = DataSetting("none")

    def row(self, row_id: str) -> Row:
        return next(row for row in self.rows if row.id == row_id)

    def measured_columns(self, tasks: tuple[str, ...], measures: tuple[str, ...],
                         feature_based: bool) -> tuple[str, ...]:
        """The columns our runs fill for `tasks` and `measures`: parameters when counted, the
        measures', each task's, then its per-parameter score when parameters are counted."""
        found = ["params"] if self.parameters else []
        for measure in measures:
            found += MEASURE_COLUMNS[measure]
            if measure == "heldout" and self.perplexity:
                found += MEASURE_COLUMNS["perplexity"]
        for task in tasks:
            found += [key for key in TASK_COLUMNS[task]
                      if key != "ner_feature" or (self.feature_based and feature_based)]
        if self.parameters:
            found += [key + PER_MILLION for task in tasks for key in TASK_COLUMNS[task]]
        return tuple(found)



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
            "albert": _albert, "crosslingual": _crosslingual}[name](size, vocab_size)


_BERT, _ROBERTA, _ALBERT = "BERT Table 5", "RoBERTa Table 2", "ALBERT Table 5"
_AROCA = "Aroca-Ouellette & Rudzicz 2020"


def _objectives(size: str, vocab_size: int) -> Study:
    config = configs.preset(size, vocab_size)
    ltr = ("--objective=ltr",)
    rows = (Row("bert", "BERT (MLM+NSP)", DataSetting("nsp"), config),
            Row("no_nsp", "No NSP (split segments)", DataSetting("nsp"), config,
                ("--nosecond_sentence_loss",)),
            Row("no_nsp_full", "No NSP (full segments)", DataSetting("none"), config),
            Row("sop", "MLM + SOP (ALBERT)", DataSetting("sop"), config),
            Row("ltr_no_nsp", "LTR & No NSP", DataSetting("none"), config, ltr, ltr),
            Row("random", "Random init (no pretraining)", None, config))
    full_vs_nsp = (("roberta_segment_pair", "mnli"), ("roberta_full_sentences", "mnli"))
    orderings = (
        # The BERT paper: NSP helps sentence-pair tasks; left-to-right hurts, most at the
        # token level (SQuAD), where right context matters.
        chain("qnli", ("no_nsp", "bert"), "<", _BERT),
        chain("mrpc", ("ltr_no_nsp", "no_nsp"), "<", _BERT),
        chain("pos", ("ltr_no_nsp", "no_nsp"), "<", _BERT, paper_column="squad"),
        chain("pos_probe", ("ltr_no_nsp", "no_nsp"), "<", _BERT, paper_column="squad"),
        chain("qnli", ("ltr_no_nsp", "no_nsp"), "<", _BERT),
        chain("sst2", ("ltr_no_nsp", "no_nsp"), "<", _BERT),
        # RoBERTa and Aroca-Ouellette & Rudzicz: NSP is no help or a hindrance once the
        # context is whole; the split context is what costs the masked LM.
        chain("qnli", ("bert", "no_nsp_full"), "<", f"{_ROBERTA}; {_AROCA}", full_vs_nsp),
        chain("mlm_loss", ("no_nsp_full", "no_nsp"), "<", f"{_AROCA} (context splitting)", ()),
        chain("mlm_loss", ("no_nsp_full", "bert"), "<", _AROCA, ()),
        # ALBERT: an NSP head cannot tell sentence order, an SOP head can tell NSP's pairs
        # apart; SOP helps downstream.
        AtChance("bert", "sop_head", source=_ALBERT, paper=(("albert_nsp", "sop_head"),)),
        chain("sop_head", ("bert", "sop"), "<", _ALBERT,
              (("albert_nsp", "sop_head"), ("albert_sop", "sop_head"))),
        Compare((("bert", "sop_head"), ("sop", "nsp_head")), "<", _ALBERT,
                (("albert_nsp", "sop_head"), ("albert_sop", "nsp_head"))),
        chain("qnli", ("bert", "sop"), "<", _ALBERT,
              (("albert_nsp", "mnli"), ("albert_sop", "mnli"))),
        # BabyLM: at 10M words a masked LM beats a left-to-right one on BLiMP.
        chain("blimp", ("ltr_no_nsp", "no_nsp_full"), "<", "BabyLM 2023",
              (("babylm_opt", "blimp"), ("babylm_roberta", "blimp"))))
    return Study("objectives", "The pre-training tasks (BERT Table 5; RoBERTa, ALBERT)", rows,
                 tasks=("qnli", "sst2", "pos", "mrpc", "squad_sample"),
                 default_tasks=("qnli", "sst2", "pos"), measures=MEASURES,
                 columns=("mlm_acc", "nsp_head", "sop_head", "mnli", "qnli", "mrpc", "sst2",
                          "squad", "squad2", "race"),
                 orderings=orderings, paper=figures.OBJECTIVES,
                 notes=("The BERT paper's fourth row, LTR & No NSP + BiLSTM (a randomly "
                        "initialised BiLSTM on top of the left-to-right model while "
                        "fine-tuning), is not built here.",
                        "MNLI-m, RACE and SQuAD 2.0 are not run: their training sets are not "
                        "available offline. QNLI is the stand-in for the sentence-pair claims "
                        "(the papers' MNLI and QNLI), UPOS tagging for the token-level one "
                        "(the BERT paper's SQuAD).",
                        "The papers' MLM accuracy (ALBERT) is on their own dev text; ours on "
                        "held-out books."))


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
                 tasks=("qnli", "sst2", "pos", "mrpc"), default_tasks=("qnli", "sst2", "pos"),
                 measures=("heldout", "blimp", "pos_probe"), columns=columns,
                 orderings=size_orderings(ids),
                 paper=figures.sizes({_shape(row.config): row.id for row in rows}),
                 perplexity=True,
                 notes=("MNLI-m is not run: its training set is not available offline; QNLI "
                        "stands in for it.",))


def size_orderings(ids: tuple[str, ...]) -> tuple[Ordering, ...]:
    """Rows `ids` from the smallest model up: perplexity falls, accuracy rises."""
    source = "BERT Table 6"
    return (chain("ppl", ids, ">", source), chain("qnli", ids, "<", source, paper_column="mnli"),
            *(chain(c, ids, "<", source) for c in ("mrpc", "sst2")))


MASKING_MIXES = {"80_10_10": None, "100_0_0": (1.0, 0.0, 0.0), "80_0_20": (0.8, 0.0, 0.2),
                 "80_20_0": (0.8, 0.2, 0.0), "0_20_80": (0.0, 0.2, 0.8),
                 "0_0_100": (0.0, 0.0, 1.0)}


def _masking(size: str, vocab_size: int) -> Study:
    config = configs.preset(size, vocab_size)
    rows = tuple(Row(row_id, " / ".join(f"{part}%" for part in row_id.split("_")),
                     DataSetting("nsp", mix), config) for row_id, mix in MASKING_MIXES.items())
    source = "BERT Table 8"
    orderings = (chain("ner_feature", ("100_0_0", "80_10_10"), "<", source),
                 LargerGap("80_10_10", "100_0_0", "ner_feature", "ner", source),
                 *(chain(c, ("0_0_100", "80_10_10"), "<", source)
                   for c in ("mnli", "ner", "ner_feature")))
    return Study("masking", "The masking procedure (BERT paper, Table 8; MASK / SAME / RND)",
                 rows, tasks=("conll", "pos", "mrpc", "sst2"), default_tasks=("conll", "pos"),
                 measures=("heldout", "blimp"), columns=("mnli", "ner", "ner_feature"),
                 orderings=orderings, paper=figures.MASKING, feature_based=True,
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
    source = "ALBERT (issue 32's figures)"
    orderings = []
    for task in ("sst2", "mrpc"):
        for e in ("_h", "64"):
            orderings.append(chain(task, (f"shared_e{e}", f"not_shared_e{e}"), "<", source))
        for e in ("_h", "64"):
            orderings.append(chain(task + PER_MILLION, (f"not_shared_e{e}", f"shared_e{e}"),
                                   "<", source))
    return Study("albert", "Factorised embeddings and cross-layer sharing (ALBERT)", rows,
                 tasks=("sst2", "mrpc", "qnli", "pos"), default_tasks=("sst2",),
                 measures=("heldout", "blimp"), columns=("params", "sst2"),
                 orderings=tuple(orderings), paper=figures.ALBERT, parameters=True,
                 notes=("ALBERT's E=768 rows stand beside ours with E=H; its rows are "
                        "ALBERT-base's (12 layers of 768), ours --size's.",
                        "Every row pretrains with ALBERT's sentence-order prediction "
                        "(create_pretraining_data --objective=sop).",))


_PIRES, _KETAL = "Pires et al. 2019", "K et al. 2020"


def _crosslingual(size: str, vocab_size: int) -> Study:
    config = configs.preset(size, vocab_size)
    multilingual = DataSetting("none", languages=LANGUAGES)
    english = DataSetting("none", languages=LANGUAGES[:1])
    rows = (Row("random", "Random init (no pretraining)", None, config),
            Row("en", "English only", english, config),
            Row("multi", "English + German + Spanish", multilingual, config),
            Row("multi_cs", "+ code-switching (CoSDA-ML)", multilingual, config,
                pretrained_as="multi", code_switching=True),
            Row("multi_mix", "+ layer mix (Chen et al. 2022)", multilingual, config,
                finetuning_flags=("--mix_layers",), pretrained_as="multi"))
    targets = [f"xpos_{language}" for language in LANGUAGES[1:]]
    orderings = (
        # Pretraining helps the tagger where it was fine-tuned.
        chain("xpos_en", ("random", "en"), "<", "BERT (any pretraining)", ()),
        # Zero-shot transfer comes from the multilingual pretraining, not from the tagger
        # having seen shared words: the English-only model on the same vocab is the control,
        # and the random initialisation what the shared pieces give a tagger alone.
        *(chain(column, ("en", "multi"), "<", f"{_PIRES}; {_KETAL}", ()) for column in targets),
        *(chain(column, ("random", "multi"), "<", _KETAL, ()) for column in targets),
        # The language closer to English transfers better (mBERT: German 89.4, Spanish 85.9).
        Compare((("multi", "xpos_es"), ("multi", "xpos_de")), "<", _PIRES,
                (("mbert", "xpos_es"), ("mbert", "xpos_de"))),
        *(chain(column, ("multi", "multi_cs"), "<", "Qin et al. 2020 (CoSDA-ML)", ())
          for column in targets),
        *(chain(column, ("multi", "multi_mix"), "<", "Chen et al. 2022", ())
          for column in targets))
    return Study("crosslingual", "Zero-shot transfer across languages (mBERT in miniature)",
                 rows, tasks=("xpos",), default_tasks=("xpos",), measures=("heldout",),
                 columns=("xpos_en", *targets), orderings=orderings,
                 paper=figures.CROSSLINGUAL, cased=True, heldout=multilingual,
                 notes=("Every row shares one cased WordPiece vocab learnt from the "
                        "multilingual corpus (mBERT's rule: case and accents kept), so the "
                        "English-only row differs from the multilingual one in its "
                        "pretraining text alone, at the same token budget.",
                        "The tagger is fine-tuned on UD English-EWT; best/ is chosen on its "
                        "dev set alone, and the German and Spanish GSD test sets are scored "
                        "zero-shot: no target-language label or dev set is used.",
                        "The rows with code-switching and with a layer mix start from the "
                        "multilingual row's pretraining (the same checkpoint); only their "
                        "fine-tuning differs.",
                        "The papers' figures are mBERT's (BERT-Base on 104 Wikipedias): a "
                        "model of this size trained on three million words is far below "
                        "them; the orderings are the claims to test."))
