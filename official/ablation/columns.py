"""The columns of an ablation table: ours (measured) and the papers' (quoted), in one list.

    key            title                     ours: what the number is
    mnli           MNLI-m                    (the papers' only: no MNLI training data offline)
    qnli           QNLI                      (the papers' only: no QNLI training data offline)
    mrpc           MRPC                      dev accuracy (%), run_classifier --task_name=MRPC
    sst2           SST-2                     dev accuracy (%), run_classifier --task_name=SST-2
    squad          SQuAD F1                  F1 (%) on the SQuAD sample's held-out articles
    ner            NER fine-tuned            CoNLL-2003 dev (eng.testa) entity F1 (%), run_ner
    ner_feature    NER feature-based         the same, run_ner --feature_based (encoder frozen)
    ppl            LM ppl                    exp(masked_lm_loss) on held-out records
    params         params (M)                the encoder's parameters (official/ablation/
                                             parameters.py), millions
    <task>_per_m   <title> / M params        the task's score per million parameters

Every measured score is the dev evaluation a fine-tuning run writes after its last epoch
(output_dir/eval_results.txt), not the best epoch's (best/): the dev set picks nothing.
"""

from __future__ import annotations

import dataclasses

PER_MILLION = "_per_m"


@dataclasses.dataclass(frozen=True)
class Column:
    """A column: its `key`, its heading, the digits its numbers are written with, and what our
    number is ("" for the papers' alone)."""
    key: str
    title: str
    digits: int = 1
    ours: str = ""


_DEV = "after the last fine-tuning epoch"
COLUMNS = {column.key: column for column in (
    Column("mnli", "MNLI-m"),
    Column("qnli", "QNLI"),
    Column("mrpc", "MRPC", ours=f"dev accuracy (%) {_DEV} (run_scripts.run_classifier "
                                 "--task_name=MRPC)"),
    Column("sst2", "SST-2", ours=f"dev accuracy (%) {_DEV} (run_scripts.run_classifier "
                                 "--task_name=SST-2, trained on the SST-2 subset)"),
    Column("squad", "SQuAD F1", ours=f"F1 (%) on the SQuAD sample's held-out articles {_DEV} "
                                     "(run_scripts.run_squad --do_eval)"),
    Column("ner", "NER fine-tuned", ours=f"CoNLL-2003 dev (eng.testa) entity F1 (%) {_DEV} "
                                         "(run_scripts.run_ner)"),
    Column("ner_feature", "NER feature-based",
           ours="the same with the encoder frozen, its layers read by a BiLSTM, "
                f"{_DEV} (run_scripts.run_ner --feature_based)"),
    Column("ppl", "LM ppl", 2, ours="exp(masked_lm_loss) of run_pretraining --do_eval on the "
                                    "held-out shard"),
    Column("params", "params (M)", 2, ours="the encoder's parameters in millions, counted from "
                                           "the row's config (official/ablation/parameters.py)"),
)}

# The columns each fine-tuning task of the runner fills (conll's feature-based column only when
# the study runs the feature-based approach).
TASK_COLUMNS = {"mrpc": ("mrpc",), "sst2": ("sst2",), "squad_sample": ("squad",),
                "conll": ("ner", "ner_feature")}


def column(key: str) -> Column:
    """The column `key`, a per-parameter one ("sst2_per_m") made from its task's."""
    if key.endswith(PER_MILLION):
        of = COLUMNS[key[:-len(PER_MILLION)]]
        return Column(key, f"{of.title} / M params", 2,
                      f"{of.title} over the parameters in millions, seed by seed")
    return COLUMNS[key]
