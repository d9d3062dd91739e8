"""The papers' own figures for each study, quoted beside ours in the report.

    PaperRow    a row of a paper's table: its figures by column key (official/ablation/
                columns.py), and the row of ours it stands beside (None: the paper's alone)
    PaperTable  the rows and where they come from
    TABLES      by study name

Our runs are far smaller (a few thousand CPU steps on a few million words against BERT-Base's
million steps on 3.3 billion words): the papers' figures are the shape to look for, not numbers
to reach. The orderings the studies check (official/ablation/studies.py) hold on these figures
(tests/test_ablation_report.py). A table may quote several papers; a row's label names its
paper and table in brackets.
"""

from __future__ import annotations

import dataclasses

from official.ablation.parameters import count_parameters
from official.configs import BertConfig


@dataclasses.dataclass(frozen=True)
class PaperRow:
    """A row of a paper's table.

    Attributes:
      id: the row's id (ours when `ours` is set, so that the studies' orderings read it too).
      label: the paper's name for it.
      values: its figures by column key.
      ours: the id of our row it stands beside, or None.
      note: what the report says beside it (a row not built here says why).
    """
    id: str
    label: str
    values: dict[str, float]
    ours: str | None = None
    note: str = ""


@dataclasses.dataclass(frozen=True)
class PaperTable:
    """A paper's table: `source` names the paper, table and setting."""
    source: str
    rows: tuple[PaperRow, ...]


def _values(columns: tuple[str, ...], figures: tuple[float, ...]) -> dict[str, float]:
    return dict(zip(columns, figures, strict=True))


_TABLE5 = ("mnli", "qnli", "mrpc", "sst2", "squad")
_ROBERTA = ("squad", "squad2", "mnli", "sst2", "race")
_ALBERT = ("mlm_acc", "nsp_head", "sop_head", "squad", "squad2", "mnli", "sst2", "race")
OBJECTIVES = PaperTable(
    "Devlin et al. (2019), BERT, Table 5 [BERT T5]: ablation over the pre-training tasks, "
    "BERT-Base, dev sets (accuracy; SQuAD v1.1 F1). Liu et al. (2019), RoBERTa, Table 2 "
    "[RoBERTa T2]: input formats with and without NSP, base models on BookCorpus and "
    "Wikipedia, 1M steps of 256 sequences, dev sets (SQuAD 1.1 and 2.0 F1; accuracy), medians "
    "of five seeds. Lan et al. (2020), ALBERT, Table 5 [ALBERT T5]: the sentence-prediction "
    "loss, ALBERT-base; intrinsic MLM, NSP and SOP accuracy of the pretrained heads, then "
    "downstream dev scores (SQuAD F1). Warstadt et al. (2023), BabyLM findings [BabyLM 2023]: "
    "strict-small (10M words) baselines, BLiMP",
    (PaperRow("bert", "BERT-Base (MLM+NSP) [BERT T5]",
              _values(_TABLE5, (84.4, 88.4, 86.7, 92.7, 88.5)), "bert"),
     PaperRow("roberta_segment_pair", "SEGMENT-PAIR, with NSP [RoBERTa T2]",
              _values(_ROBERTA, (90.4, 78.7, 84.0, 92.9, 64.2)), "bert"),
     PaperRow("albert_nsp", "ALBERT-base, NSP [ALBERT T5]",
              _values(_ALBERT, (54.5, 90.5, 52.0, 88.4, 77.2, 81.6, 91.1, 62.3)), "bert"),
     PaperRow("no_nsp", "No NSP [BERT T5]", _values(_TABLE5, (83.9, 84.9, 86.5, 92.6, 87.9)),
              "no_nsp"),
     PaperRow("albert_none", "ALBERT-base, no sentence loss [ALBERT T5]",
              _values(_ALBERT, (54.9, 52.4, 53.3, 88.6, 78.1, 81.5, 89.9, 61.7)), "no_nsp"),
     PaperRow("roberta_full_sentences", "FULL-SENTENCES, without NSP [RoBERTa T2]",
              _values(_ROBERTA, (90.4, 79.1, 84.7, 92.5, 64.8)), "no_nsp_full"),
     PaperRow("babylm_roberta", "RoBERTa-base, 10M words [BabyLM 2023]", {"blimp": 69.5},
              "no_nsp_full"),
     PaperRow("albert_sop", "ALBERT-base, SOP [ALBERT T5]",
              _values(_ALBERT, (54.0, 78.9, 86.5, 89.3, 80.0, 82.0, 90.3, 64.0)), "sop"),
     PaperRow("ltr_no_nsp", "LTR & No NSP [BERT T5]",
              _values(_TABLE5, (82.1, 84.3, 77.5, 92.1, 77.8)), "ltr_no_nsp"),
     PaperRow("babylm_opt", "OPT-125m (left to right), 10M words [BabyLM 2023]",
              {"blimp": 62.6}, "ltr_no_nsp"),
     PaperRow("bilstm", "+ BiLSTM [BERT T5]", _values(_TABLE5, (82.1, 84.1, 75.7, 91.6, 84.9)),
              None, "not built here: the paper adds a randomly initialised BiLSTM on top of "
              "the LTR model for fine-tuning"),
     PaperRow("roberta_sentence_pair", "SENTENCE-PAIR, with NSP [RoBERTa T2]",
              _values(_ROBERTA, (88.7, 76.2, 82.9, 92.1, 63.0)), None,
              "not built here: pairs of single sentences"),
     PaperRow("roberta_doc_sentences", "DOC-SENTENCES, without NSP [RoBERTa T2]",
              _values(_ROBERTA, (90.6, 79.7, 84.7, 92.7, 65.6)), None,
              "not built here: segments that never cross a document")))

_TABLE6 = ("ppl", "mnli", "mrpc", "sst2")
# (layers, hidden, heads) -> LM ppl, MNLI-m, MRPC, SST-2
_SIZES = {(3, 768, 12): (5.84, 77.9, 79.8, 88.4), (6, 768, 3): (5.24, 80.6, 82.2, 90.7),
          (6, 768, 12): (4.68, 81.9, 84.8, 91.3), (12, 768, 12): (3.99, 84.4, 86.7, 92.9),
          (12, 1024, 16): (3.54, 85.7, 86.9, 93.3), (24, 1024, 16): (3.23, 86.6, 87.8, 93.7)}


def sizes(ours: dict[tuple[int, int, int], str]) -> PaperTable:
    """Table 6, its rows beside ours of the same (layers, hidden, heads) (`ours` maps a shape
    to our row's id)."""
    return PaperTable(
        "Devlin et al. (2019), BERT, Table 6: ablation over model size; LM ppl is the "
        "masked-LM perplexity of held-out training data; dev set accuracy",
        tuple(PaperRow(ours.get(shape, f"L{shape[0]}_H{shape[1]}_A{shape[2]}"),
                       f"L={shape[0]}, H={shape[1]}, A={shape[2]}", _values(_TABLE6, figures),
                       ours.get(shape))
              for shape, figures in _SIZES.items()))


_TABLE8 = ("mnli", "ner", "ner_feature")
MASKING = PaperTable(
    "Devlin et al. (2019), BERT, Table 8: masking procedures (MASK/SAME/RND shares of the "
    "predicted tokens); dev sets (MNLI-m accuracy, CoNLL-2003 NER F1; feature-based: the last "
    "4 layers concatenated)",
    tuple(PaperRow(row_id, label, _values(_TABLE8, figures), row_id)
          for row_id, label, figures in (
              ("80_10_10", "80% / 10% / 10%", (84.2, 95.4, 94.9)),
              ("100_0_0", "100% / 0% / 0%", (84.3, 94.9, 94.0)),
              ("80_0_20", "80% / 0% / 20%", (84.1, 95.2, 94.6)),
              ("80_20_0", "80% / 20% / 0%", (84.4, 95.2, 94.7)),
              ("0_20_80", "0% / 20% / 80%", (83.7, 94.8, 94.6)),
              ("0_0_100", "0% / 0% / 100%", (83.6, 94.9, 94.6)))))


def _albert_base(embedding_size: int, groups: int) -> int:
    """Our count (official/ablation/parameters.py) of an ALBERT-base config: 12 layers of 768,
    ALBERT's 30,000-piece vocab."""
    return count_parameters(BertConfig(vocab_size=30000, type_vocab_size=2,
                                       embedding_size=embedding_size, num_hidden_groups=groups))


ALBERT = PaperTable(
    "Lan et al. (2020), ALBERT, ALBERT-base configurations: SST-2 dev accuracy as issue 32 "
    "quotes them; params (M) is our count of each ALBERT-base config (official/ablation/"
    "parameters.py), not the paper's column",
    tuple(PaperRow(row_id, label, {"params": _albert_base(e, groups) / 1e6, "sst2": sst2,
                                   "sst2_per_m": sst2 / (_albert_base(e, groups) / 1e6)},
                   row_id)
          for row_id, label, e, groups, sst2 in (
              ("not_shared_e_h", "ALBERT-base not-shared, E=768", 768, 12, 92.8),
              ("not_shared_e64", "ALBERT-base not-shared, E=64", 64, 12, 91.5),
              ("shared_e_h", "ALBERT-base all-shared, E=768", 768, 1, 90.6),
              ("shared_e64", "ALBERT-base all-shared, E=64", 64, 1, 89.4))))


CROSSLINGUAL = PaperTable(
    "Pires et al. (2019), How multilingual is Multilingual BERT?, Table 3 [Pires]: mBERT "
    "fine-tuned on English UD POS, accuracy zero-shot (second-hand transcription, "
    "../shared/data/crosslingual/PROVENANCE.md); Wu & Dredze (2019) [W&D]: the same, UD v1.4",
    (PaperRow("mbert", "mBERT, English UD POS [Pires]",
              {"xpos_en": 96.82, "xpos_de": 89.40, "xpos_es": 85.91}, "multi"),
     PaperRow("mbert_wu_dredze", "mBERT, English UD POS [W&D]",
              {"xpos_de": 89.8, "xpos_es": 85.2}, "multi")))
