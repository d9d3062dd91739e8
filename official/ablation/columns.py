"""The columns of an ablation table: ours (measured) and the papers' (quoted), in one list.

    key            title                ours: what the number is
  intrinsic (no fine-tuning)
    mlm_loss       MLM loss             masked-LM loss (nats) on held-out contiguous text
    mlm_acc        MLM acc              masked-LM accuracy (%) there
    ntp_loss, ntp_acc                   a left-to-right row's next-token loss and accuracy there
    ppl            LM ppl               exp(mlm_loss) (Table 6's "LM ppl")
    nsp_head       NSP (head)           the pretrained second-sentence head's accuracy (%) on
                                        held-out next-sentence records
    sop_head       SOP (head)           the same head on held-out sentence-order records
    nsp_probe      NSP (probe)          a fresh linear head trained on the frozen pooled output
                                        for next-sentence prediction, its held-out accuracy (%)
    sop_probe      SOP (probe)          the same for sentence order
    blimp          BLiMP                zero-shot minimal pairs right (%), mean over paradigms
    blimp_same     BLiMP (same length)  the pairs whose sentences have as many pieces, pooled:
                                        where a summed log-probability cannot win by length
    pos_probe      UPOS (probe)         a linear probe of the last layer's word vectors: UD
                                        EWT dev accuracy (%)
    params         params (M)           the encoder's parameters, millions
  fine-tuned (dev scores after the last epoch)
    mnli, race, squad2                  (the papers' only: no training data offline)
    qnli           QNLI                 accuracy (%) on 1,000 of QNLI's released dev pairs,
                                        trained on the other 4,463
    mrpc, sst2     MRPC, SST-2          dev accuracy (%)
    squad          SQuAD F1             F1 (%) on the SQuAD sample's held-out articles
    pos            UPOS                 UD EWT dev accuracy (%), run_ner --data_format=conllu
    ner            NER fine-tuned       CoNLL-2003 dev (eng.testa) entity F1 (%), run_ner
    ner_feature    NER feature-based    the same, run_ner --feature_based (encoder frozen)
    xpos_en        UPOS en              UD English-EWT test accuracy (%) of a tagger
                                        fine-tuned on English-EWT (best/ by its dev set)
    xpos_de, xpos_es                    the same tagger on UD German and Spanish GSD test,
                                        zero-shot
    <task>_per_m   <title> / M params   the task's score per million parameters

Every fine-tuned score is the dev evaluation a run writes after its last epoch
(output_dir/eval_results.txt), not the best epoch's (best/): the dev set picks nothing. The
xpos columns are test sets, scored by the checkpoint English-EWT's dev set keeps.
"""

from __future__ import annotations

import dataclasses

PER_MILLION = "_per_m"
INTRINSIC, FINE_TUNED = "intrinsic", "fine-tuned"


@dataclasses.dataclass(frozen=True)
class Column:
    """A column: its `key`, its heading, the digits its numbers are written with, what our
    number is ("" for the papers' alone), which table it stands in (INTRINSIC or FINE_TUNED)
    and whether lower is better."""
    key: str
    title: str
    digits: int = 1
    ours: str = ""
    kind: str = FINE_TUNED
    lower_is_better: bool = False


_DEV = "after the last fine-tuning epoch"
_KEPT = ("the tagger fine-tuned on English-EWT, the epoch kept by its dev set alone "
         "(run_scripts.run_ner --data_format=conllu --eval_languages)")
_HELD_OUT = "held-out contiguous text (records of create_pretraining_data --objective=none)"
COLUMNS = {column.key: column for column in (
    Column("mlm_loss", "MLM loss", 2, f"masked-LM loss (nats) on {_HELD_OUT}", INTRINSIC, True),
    Column("mlm_acc", "MLM acc", 1, f"masked-LM accuracy (%) on {_HELD_OUT}", INTRINSIC),
    Column("ntp_loss", "next-token loss", 2, f"a left-to-right row's next-token loss (nats) on "
           f"{_HELD_OUT}", INTRINSIC, True),
    Column("ntp_acc", "next-token acc", 1, "its next-token accuracy (%) there", INTRINSIC),
    Column("ppl", "LM ppl", 2, f"exp(masked-LM loss) on {_HELD_OUT}", INTRINSIC, True),
    Column("nsp_head", "NSP (head)", 1, "accuracy (%) of the pretrained second-sentence head "
           "on held-out next-sentence records", INTRINSIC),
    Column("sop_head", "SOP (head)", 1, "accuracy (%) of the pretrained second-sentence head "
           "on held-out sentence-order records", INTRINSIC),
    Column("nsp_probe", "NSP (probe)", 1, "held-out accuracy (%) of a fresh two-way head "
           "trained on the frozen pooled output for next-sentence prediction "
           "(run_pretraining --probe_second_sentence)", INTRINSIC),
    Column("sop_probe", "SOP (probe)", 1, "the same probe for sentence order", INTRINSIC),
    Column("blimp", "BLiMP", 1, "zero-shot minimal pairs right (%), mean over BLiMP's "
           "paradigms (run_scripts.score_minimal_pairs: pseudo-log-likelihood, or left to "
           "right for the LTR row)", INTRINSIC),
    Column("blimp_same", "BLiMP (same length)", 1, "zero-shot minimal pairs right (%) "
           "among the pairs whose two sentences have as many pieces, pooled: where a summed "
           "log-probability cannot prefer a sentence for being shorter", INTRINSIC),
    Column("pos_probe", "UPOS (probe)", 1, "UD EWT dev accuracy (%) of a linear probe of the "
           "last layer's word vectors (run_scripts.probe_layers --task=upos)", INTRINSIC),
    Column("params", "params (M)", 2, "the encoder's parameters in millions, counted from the "
           "row's config (official/ablation/parameters.py)", INTRINSIC),
    Column("mnli", "MNLI-m"),
    Column("qnli", "QNLI", ours=f"accuracy (%) on 1,000 of QNLI's released dev pairs {_DEV}, "
                                "trained on its other 4,463 (QNLI's train set is not "
                                "available offline; run_scripts.run_classifier "
                                "--task_name=QNLI)"),
    Column("mrpc", "MRPC", ours=f"dev accuracy (%) {_DEV} (run_scripts.run_classifier "
                                "--task_name=MRPC)"),
    Column("sst2", "SST-2", ours=f"dev accuracy (%) {_DEV} (run_scripts.run_classifier "
                                 "--task_name=SST-2, trained on the SST-2 subset)"),
    Column("squad", "SQuAD F1", ours=f"F1 (%) on the SQuAD sample's held-out articles {_DEV} "
                                     "(run_scripts.run_squad --do_eval)"),
    Column("squad2", "SQuAD 2.0 F1"),
    Column("race", "RACE"),
    Column("pos", "UPOS", ours=f"UD English-EWT dev accuracy (%) over words {_DEV} "
                               "(run_scripts.run_ner --data_format=conllu)"),
    Column("ner", "NER fine-tuned", ours=f"CoNLL-2003 dev (eng.testa) entity F1 (%) {_DEV} "
                                         "(run_scripts.run_ner)"),
    Column("ner_feature", "NER feature-based",
           ours="the same with the encoder frozen, its layers read by a BiLSTM, "
                f"{_DEV} (run_scripts.run_ner --feature_based)"),
    Column("xpos_en", "UPOS en", ours=f"UD English-EWT test accuracy (%) over words, {_KEPT}"),
    Column("xpos_de", "UPOS de (zero-shot)", ours=f"UD German-GSD test accuracy (%), {_KEPT}; "
                                                  "no German label seen"),
    Column("xpos_es", "UPOS es (zero-shot)", ours=f"UD Spanish-GSD test accuracy (%), {_KEPT}; "
                                                  "no Spanish label seen"),
)}

# The columns each fine-tuning task of the runner fills (conll's feature-based column only when
# the study runs the feature-based approach).
TASK_COLUMNS = {"qnli": ("qnli",), "mrpc": ("mrpc",), "sst2": ("sst2",),
                "squad_sample": ("squad",), "pos": ("pos",), "conll": ("ner", "ner_feature"),
                "xpos": ("xpos_en", "xpos_de", "xpos_es")}
# The columns each measure without fine-tuning fills.
MEASURE_COLUMNS = {"heldout": ("mlm_loss", "mlm_acc", "ntp_loss", "ntp_acc"),
                   "perplexity": ("ppl",),
                   "heads": ("nsp_head", "sop_head"), "probes": ("nsp_probe", "sop_probe"),
                   "blimp": ("blimp", "blimp_same"), "pos_probe": ("pos_probe",)}


def column(key: str) -> Column:
    """The column `key`, a per-parameter one ("sst2_per_m") made from its task's."""
    if key.endswith(PER_MILLION):
        of = COLUMNS[key[:-len(PER_MILLION)]]
        return Column(key, f"{of.title} / M params", 2,
                      f"{of.title} over the parameters in millions, seed by seed", of.kind)
    return COLUMNS[key]
