"""A study's work as the stages' commands (run_scripts/ablation/plan.py), and the settings they
are made from (official/ablation/settings.py), checked without running a stage."""

from __future__ import annotations

import dataclasses
import os

import pytest

from official.ablation import studies
from official.ablation.results import Source
from official.ablation.settings import AblationSettings, settings_of
from run_scripts.ablation.plan import make_plan, squad_lengths

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join(REPO, "tests", "data", "cased_vocab.txt")
CORPUS = os.path.join(REPO, "tests", "data", "pretraining_sample.txt")

# ---- the stages' commands --------------------------------------------------------------------

def settings_for(tmp_path, **changes):
    values = dict(study="objectives", corpus=(CORPUS,), vocab_file=VOCAB,
                  output_dir=str(tmp_path / "out"), size="tiny", seeds=2, tasks=("mrpc",),
                  measures=(), glue_dir=str(tmp_path / "glue"), conll_dir=str(tmp_path / "conll"),
                  ud_dir=str(tmp_path / "ud"), blimp_dir=os.path.join(REPO, "data",
                                                                      "blimp_sample"),
                  max_seq_length=64, pretrain_steps=50)
    values.update(changes)
    return AblationSettings(**values)


def flags_of(command):
    return dict(arg[2:].split("=", 1) for arg in command if arg.startswith("--") and "=" in arg)


def test_the_objectives_plan_shares_records_and_passes_each_rows_flags(tmp_path):
    settings = settings_for(tmp_path, measures=None)
    study = studies.study("objectives", "tiny", 3891)
    plan = make_plan(settings, study)
    names = [s.name for s in plan.stages if s.name.endswith("seed1") or ".seed1." in s.name]
    assert names[:4] == ["data.none.seed1", "unigram.seed1", "data.nsp.seed1",
                         "bert.seed1.pretrain"]
    assert [n for n in names if n.startswith("bert.")] == [
        "bert.seed1.pretrain", "bert.seed1.nsp_head", "bert.seed1.nsp_probe",
        "bert.seed1.sop_head", "bert.seed1.sop_probe", "bert.seed1.blimp",
        "bert.seed1.pos_probe", "bert.seed1.mrpc"]
    # The random row is fine-tuned from its initialisation: no pretraining, no measures.
    assert [n for n in names if n.startswith("random.")] == ["random.seed1.mrpc"]
    # Heads only where a second-sentence loss trained one; probes of every pretrained row.
    assert {n for n in names if n.endswith("_head")} == {
        "bert.seed1.nsp_head", "bert.seed1.sop_head", "sop.seed1.nsp_head",
        "sop.seed1.sop_head"}
    assert len([n for n in names if n.endswith("_probe") and "pos" not in n]) == 10
    assert {s.name for s in plan.stages if s.name.startswith("data.")} == {
        f"data.{d}.seed{k}" for d in ("none", "nsp", "sop") for k in (1, 2)}
    by_name = {s.name: s for s in plan.stages}
    no_nsp = flags_of(by_name["no_nsp.seed2.pretrain"].command)
    assert "--nosecond_sentence_loss" in by_name["no_nsp.seed2.pretrain"].command
    assert no_nsp["input_file"].endswith("data/nsp/seed2/pretraining-0000[1-9]-of-00010"
                                         ".tfrecord")
    # Every row's masked LM is scored on the same held-out contiguous text.
    assert {flags_of(s.command)["eval_input_file"] for s in plan.stages
            if s.name.endswith("seed2.pretrain")} == {
        str(tmp_path / "out" / "data" / "none" / "seed2" / "pretraining-00000-of-00010.tfrecord")}
    ltr = by_name["ltr_no_nsp.seed2.pretrain"]
    assert flags_of(ltr.command)["objective"] == "ltr"
    assert ltr.after == ["data.none.seed2"]
    assert by_name["bert.seed2.pretrain"].after == ["data.nsp.seed2", "data.none.seed2"]
    assert flags_of(by_name["ltr_no_nsp.seed2.mrpc"].command)["objective"] == "ltr"
    assert plan.sources["ltr_no_nsp", 2, "ntp_loss"].field == "next_token_loss"
    assert ("ltr_no_nsp", 2, "mlm_loss") not in plan.sources
    assert plan.sources["bert", 2, "mlm_acc"] == Source(
        str(tmp_path / "out" / "rows" / "bert" / "seed2" / "pretrained" / "eval_results.txt"),
        "masked_lm_accuracy", "percent")
    probe = flags_of(by_name["no_nsp_full.seed1.sop_probe"].command)
    assert "--probe_second_sentence" in by_name["no_nsp_full.seed1.sop_probe"].command
    assert probe["input_file"].endswith("data/sop/seed1/pretraining-0000[1-9]-of-00010.tfrecord")
    assert probe["eval_input_file"].endswith("data/sop/seed1/pretraining-00000-of-00010.tfrecord")
    assert plan.sources["bert", 1, "blimp"].field == "overall.accuracy"
    assert plan.references[1, "mlm_loss"].path.endswith("data/none/seed1/unigram.json")
    random = flags_of(by_name["random.seed2.mrpc"].command)
    assert "init_checkpoint" not in random and random["seed"] == "2"
    assert by_name["random.seed2.mrpc"].after == []
    finetune = flags_of(by_name["bert.seed1.mrpc"].command)
    assert finetune["init_checkpoint"].endswith("rows/bert/seed1/pretrained")
    assert finetune["bert_config_file"].endswith("rows/bert/finetune_config.json")
    # Every row's pretraining differs from the others' only in its own flags: the same budget.
    budgets = {tuple(sorted((k, v) for k, v in flags_of(s.command).items()
                            if k in ("train_batch_size", "max_seq_length", "num_train_steps",
                                     "learning_rate", "dtype")))
               for s in plan.stages if s.name.endswith(".pretrain")}
    assert len(budgets) == 1


def test_without_a_vocab_the_first_stage_learns_one_from_the_corpus(tmp_path):
    settings = settings_for(tmp_path, vocab_file=None, vocab_size=5000, seeds=1)
    plan = make_plan(settings, studies.study("objectives", "tiny", 5000))
    first = plan.stages[0]
    assert first.name == "vocab" and first.outputs == [plan.vocab_file]
    assert flags_of(first.command)["vocab_size"] == "5000"
    assert flags_of(first.command)["input_file"] == plan.corpus
    data = next(s for s in plan.stages if s.name.startswith("data."))
    assert data.after == ["vocab"] and flags_of(data.command)["vocab_file"] == plan.vocab_file


def test_the_configs_take_each_stages_dropout(tmp_path):
    settings = settings_for(tmp_path, pretrain_dropout=0.0, finetune_dropout=0.1)
    configs_of = make_plan(settings, studies.study("objectives", "tiny", 3891)).configs
    pretrain, finetune = configs_of["bert"]["pretrain"][1], configs_of["bert"]["finetune"][1]
    assert pretrain.hidden_dropout_prob == pretrain.attention_probs_dropout_prob == 0.0
    assert finetune.hidden_dropout_prob == finetune.attention_probs_dropout_prob == 0.1
    assert dataclasses.replace(finetune, hidden_dropout_prob=0.0,
                               attention_probs_dropout_prob=0.0) == pretrain


def test_the_sizes_plan_measures_held_out_perplexity(tmp_path):
    settings = settings_for(tmp_path, study="sizes", seeds=1, measures=("heldout",))
    study = studies.study("sizes", "tiny", 3891)
    plan = make_plan(settings, study)
    assert plan.sources["L2_H128", 1, "ppl"] == Source(
        str(tmp_path / "out" / "rows" / "L2_H128" / "seed1" / "pretrained" / "eval_results.txt"),
        "masked_lm_loss", "exp")
    assert {s.name for s in plan.stages if s.name.startswith("data.")} == {"data.none.seed1",
                                                                          "data.nsp.seed1"}


def test_the_masking_plan_runs_ner_fine_tuned_and_feature_based(tmp_path):
    settings = settings_for(tmp_path, study="masking", size="mini", seeds=1, tasks=("conll",),
                            rows=("80_10_10", "100_0_0"))
    study = studies.study("masking", "mini", 3891)
    by_name = {s.name: s for s in make_plan(settings, study).stages}
    assert "--masking_mix=1,0,0" in by_name["data.nsp_mix_100_0_0.seed1"].command
    feature = flags_of(by_name["100_0_0.seed1.conll_feature"].command)
    assert feature["feature_based"] == "concat_last_4" and feature["learning_rate"] == "0.001"
    assert "feature_based" not in flags_of(by_name["100_0_0.seed1.conll"].command)
    no_feature = settings_for(tmp_path, study="masking", size="mini", seeds=1, tasks=("conll",),
                              feature_based=None)
    assert not any(s.name.endswith("conll_feature")
                   for s in make_plan(no_feature, study).stages)


def test_tasks_take_their_own_lengths_and_the_pos_task_its_treebank(tmp_path):
    settings = settings_for(tmp_path, tasks=("qnli", "sst2", "pos"), seeds=1,
                            finetune_max_seq_length=48, pair_max_seq_length=96)
    by_name = {s.name: s for s in make_plan(settings, studies.study("objectives", "tiny",
                                                                    3891)).stages}
    assert flags_of(by_name["bert.seed1.qnli"].command)["max_seq_length"] == "96"
    assert flags_of(by_name["bert.seed1.sst2"].command)["max_seq_length"] == "48"
    pos = flags_of(by_name["bert.seed1.pos"].command)
    assert (pos["data_format"], pos["train_file"], pos["dev_file"], pos["max_seq_length"]) == (
        "conllu", "en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu", "48")
    assert flags_of(by_name["bert.seed1.qnli"].command)["data_dir"].endswith("task_data/QNLI")


def test_squad_windows_leave_no_gap_between_them():
    assert squad_lengths(384) == (64, 158)
    assert squad_lengths(128) == (32, 46)
    query, stride = squad_lengths(64)
    assert stride < 64 - query - 3


# ---- settings --------------------------------------------------------------------------------

@pytest.mark.parametrize("changes, message", [
    ({"seeds": 0}, "--seeds=0: must be at least 1"),
    ({"tasks": ("mrpc", "qqp")}, "--tasks=mrpc,qqp: qqp is not one; the tasks are"),
    ({"measures": ("blimp", "ppl")}, "--measures=blimp,ppl: ppl is not one; the measures are"),
    ({"pretrain_warmup": 1.0}, "--pretrain_warmup=1.0: a share of the steps"),
    ({"finetune_dropout": 1.5}, "--finetune_dropout=1.5: must be 0 or more and below 1"),
    ({"max_seq_length": 4}, "--max_seq_length=4: must be 8 to 512"),
    ({"finetune_learning_rate": 0.0}, "--finetune_learning_rate=0.0: must be positive"),
    ({"feature_based": "middle"}, "--feature_based: 'middle' is not one of concat_last_4")])
def test_bad_settings_are_refused_when_made(tmp_path, changes, message):
    with pytest.raises(ValueError, match="^" + message):
        settings_for(tmp_path, **changes)


def test_seeds_count_from_the_first_seed(tmp_path):
    assert settings_for(tmp_path, seeds=3).seed_list() == (1, 2, 3)
    assert settings_for(tmp_path, seeds=2, first_seed=7).seed_list() == (7, 8)
    assert settings_for(tmp_path, max_seq_length=128).max_predictions_per_seq == 20


def test_the_crosslingual_study_pretrains_three_times_the_miniatures_steps_unless_given():
    def steps(preset, **given):
        return settings_of(preset, dict(given, corpus=(CORPUS,), output_dir="out")).pretrain_steps

    assert steps("miniature", study="objectives") == 9600
    assert steps("miniature", study="crosslingual") == 28800
    assert steps("miniature", study="crosslingual", pretrain_steps=100) == 100
    assert steps("reduced", study="crosslingual") == 1000


# ---- the crosslingual study: corpora mixed from languages, one cased vocab, zero-shot tagging --

def crosslingual_dir(tmp_path):
    """The crosslingual data folder's layout (text, ud, dict), a line of text per language,
    German's test set gzip-compressed as it is in the full data set."""
    root = tmp_path / "crosslingual"
    for language in ("en", "de", "es"):
        (root / "text" / language).mkdir(parents=True)
        (root / "text" / language / "a.txt").write_text(f"{language} words here\n")
    for language, name in (("de", "test.conllu.gz"), ("es", "test.conllu")):
        (root / "ud" / f"{language}_gsd").mkdir(parents=True)
        (root / "ud" / f"{language}_gsd" / name).write_bytes(b"")
        (root / "dict").mkdir(exist_ok=True)
        (root / "dict" / f"en-{language}.txt").write_text("dog\tx\n")
    (tmp_path / "ud").mkdir(exist_ok=True)
    for split in ("train", "dev", "test"):
        (tmp_path / "ud" / f"en_ewt-ud-{split}.conllu").write_bytes(b"")
    return root


def test_the_crosslingual_plan_mixes_its_corpora_shares_a_cased_vocab_and_a_pretraining(
        tmp_path):
    root = crosslingual_dir(tmp_path)
    settings = settings_for(tmp_path, study="crosslingual", vocab_file=None, tasks=None,
                            measures=None, crosslingual_dir=str(root), seeds=1, corpus=())
    study = studies.study("crosslingual", "tiny", 8192)
    settings.check_files(study)  # no --corpus is needed: every row reads the languages' text
    plan = make_plan(settings, study)
    by_name = {s.name: s for s in plan.stages}
    mixed = flags_of(by_name["corpus.en_de_es"].command)
    assert mixed["languages"] == ",".join(f"{lang}={root}/text/{lang}/*"
                                          for lang in ("en", "de", "es"))
    assert mixed["smoothing"] == "0.7"
    assert flags_of(by_name["corpus.en"].command)["languages"] == f"en={root}/text/en/*"
    # One vocab, learnt from the multilingual corpus and cased whatever --do_lower_case says.
    vocab = flags_of(by_name["vocab"].command)
    assert vocab["input_file"].endswith("corpus/en_de_es.txt")
    assert vocab["do_lower_case"] == "false" and settings.do_lower_case
    assert by_name["vocab"].after == ["corpus.en_de_es"]
    assert flags_of(by_name["overlap"].command)["languages"] == mixed["languages"]
    assert plan.overlap == str(tmp_path / "out" / "overlap.json")
    # English only and the multilingual row pretrain on their own corpora at the same budget,
    # and are scored on the same multilingual held-out text; the code-switching and layer-mix
    # rows start from the multilingual row's pretraining.
    pretrains = sorted(n for n in by_name if n.endswith(".pretrain"))
    assert pretrains == ["en.seed1.pretrain", "multi.seed1.pretrain"]
    english, multi = (flags_of(by_name[n].command) for n in pretrains)
    assert english["input_file"].endswith("data/en_none/seed1/pretraining-0000[1-9]-of-00010"
                                          ".tfrecord")
    assert english["eval_input_file"] == multi["eval_input_file"]
    assert english["num_train_steps"] == multi["num_train_steps"]
    for row in ("multi_cs", "multi_mix"):
        stage = by_name[f"{row}.seed1.xpos"]
        assert stage.after == ["multi.seed1.pretrain", "vocab"]
        assert flags_of(stage.command)["init_checkpoint"].endswith("rows/multi/seed1/pretrained")
    tagger = flags_of(by_name["multi_cs.seed1.xpos"].command)
    assert tagger["eval_languages"] == (
        f"en={tmp_path}/ud/en_ewt-ud-test.conllu,de={root}/ud/de_gsd/test.conllu.gz,"
        f"es={root}/ud/es_gsd/test.conllu")
    assert tagger["code_switch_dictionaries"] == (f"de={root}/dict/en-de.txt,"
                                                  f"es={root}/dict/en-es.txt")
    assert "--mix_layers" in by_name["multi_mix.seed1.xpos"].command
    assert "code_switch_dictionaries" not in flags_of(by_name["multi_mix.seed1.xpos"].command)
    assert plan.sources["multi_mix", 1, "xpos_de"] == Source(
        str(tmp_path / "out" / "rows" / "multi_mix" / "seed1" / "xpos" / "eval_results_de.txt"),
        "accuracy", "percent")
    assert plan.sources["multi_cs", 1, "mlm_acc"] == plan.sources["multi", 1, "mlm_acc"]


def test_a_crosslingual_row_alone_still_runs_the_pretraining_it_starts_from(tmp_path):
    settings = settings_for(tmp_path, study="crosslingual", tasks=None, measures=(),
                            crosslingual_dir=str(crosslingual_dir(tmp_path)), seeds=1,
                            rows=("multi_cs",))
    plan = make_plan(settings, studies.study("crosslingual", "tiny", 3891))
    assert [s.name for s in plan.stages] == ["corpus.en_de_es", "overlap",
                                             "data.en_de_es_none.seed1",
                                             "multi.seed1.pretrain", "multi_cs.seed1.xpos"]
    assert set(plan.configs) == {"multi_cs", "multi"}


def test_a_missing_language_file_names_the_folder_and_the_language(tmp_path):
    root = crosslingual_dir(tmp_path)
    (root / "ud" / "es_gsd" / "test.conllu").unlink()
    settings = settings_for(tmp_path, study="crosslingual", tasks=None, measures=(),
                            crosslingual_dir=str(root))
    with pytest.raises(ValueError, match=r"--crosslingual_dir=.*es_gsd/test\.conllu\* is not "
                                         r"there \(language es\)"):
        settings.check_files(studies.study("crosslingual", "tiny", 3891))
