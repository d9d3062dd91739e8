"""A study's work as entry-point commands (run_scripts/stages.py runs them), and
where each of its numbers will be read.

    make_plan(settings, study) -> Plan
      .stages    in order, seed by seed (every row's first seed before any second seed):
                   corpus.<languages>       data_prep.mix_languages: a data setting's languages'
                                            text in one corpus (the crosslingual study)
                   vocab                    data_prep.build_vocab over the corpus (without
                                            --vocab_file; a multilingual study's: the corpus of
                                            all its languages, cased)
                   overlap                  data_prep.wordpiece_overlap of the vocab between a
                                            multilingual study's languages
                   data.<setting>.seed<k>   data_prep.create_pretraining_data, once per data
                                            setting and seed (--random_seed=k); "none" too when
                                            a measure reads held-out contiguous text, "nsp" and
                                            "sop" when the heads or probes are measured
                   unigram.seed<k>          data_prep.unigram_baseline of the held-out
                                            contiguous text (measure heldout)
                   <row>.seed<k>.pretrain   run_scripts.run_pretraining from scratch (--seed=k),
                                            then --do_eval on the held-out contiguous text
                   <row>.seed<k>.nsp_head, .sop_head
                                            run_pretraining --do_eval of the row's own
                                            second-sentence head on held-out NSP and SOP records
                   <row>.seed<k>.nsp_probe, .sop_probe
                                            run_pretraining --probe_second_sentence: a fresh
                                            head on the frozen pooled output, then --do_eval
                   <row>.seed<k>.blimp      run_scripts.score_minimal_pairs
                   <row>.seed<k>.pos_probe  run_scripts.probe_layers --task=upos, last layer
                   <row>.seed<k>.<task>     run_classifier (qnli, mrpc, sst2), run_ner (pos:
                                            --data_format=conllu; conll, and conll_feature:
                                            --feature_based), run_squad (squad_sample), from
                                            the pretrained checkpoint; a row that is not
                                            pretrained fine-tunes from its initialisation;
                                            xpos: run_ner on UD EWT, --eval_languages English,
                                            German and Spanish test (a row pretrained as another
                                            starts from that row's checkpoint)
      .sources   (row, seed, column) -> Source: the file and field a number is read from
      .references (seed, column) -> Source: the unigram baseline's numbers
      .configs   row -> {"pretrain": (path, BertConfig), "finetune": (path, BertConfig)}: each
                 row's configs, written before the stages run (inputs of their stages)

The layout under --output_dir:
    corpus/corpus.txt, vocab.txt      the corpus as one plain text file; the learnt vocab
    corpus/<languages>.txt, .json     a multilingual study's corpora, and each language's part
    overlap.json                      the vocab's word-piece overlap between its languages
    data/<setting>/seed<k>/           NUM_SHARDS shards; shard 0 (a tenth of the corpus's bytes,
                                      whole documents: the same books for every setting and
                                      seed) is held out, the others train
    data/none/seed<k>/unigram.json    the unigram baseline of its held-out shard
    task_data/SST-2/, QNLI/, squad/   official/ablation/task_data.py's files
    rows/<row>/bert_config.json, finetune_config.json
    rows/<row>/seed<k>/pretrained/    run_pretraining's output_dir (and its held-out eval)
    rows/<row>/seed<k>/<stage>/       each other stage's output_dir
    stages/<stage>.json, logs/<stage>.log
    REPORT.md, results.json

Every row trains on the same records for its data setting and seed, with the same steps, batch
and sequence length: the same token budget (steps x batch x max_seq_length positions).
"""

from __future__ import annotations

import dataclasses
import glob
import os

from official.ablation.columns import TASK_COLUMNS
from official.ablation.results import HELD_OUT_SHARD, NUM_SHARDS, Source
from official.ablation.settings import (
    BLIMP_FILES,
    CROSSLINGUAL_DICTIONARY,
    CROSSLINGUAL_TEST,
    CROSSLINGUAL_TEXT,
    TASK_FILES,
    AblationSettings,
)
from official.ablation.studies import LANGUAGES, DataSetting, Row, Study
from official.configs import BertConfig
from official.pretraining_shards import shard_path
from run_scripts.stages import Stage

EVAL_RESULTS = "eval_results.txt"
UNIGRAM_FILE = "unigram.json"
QNLI_DEV_EXAMPLES = 1000


@dataclasses.dataclass(frozen=True)
class Plan:
    stages: list[Stage]
    sources: dict[tuple[str, int, str], Source]
    references: dict[tuple[int, str], Source]
    configs: dict[str, dict[str, tuple[str, BertConfig]]]
    corpus: str
    vocab_file: str
    task_dirs: dict[str, str]
    overlap: str | None = None


@dataclasses.dataclass(frozen=True)
class _Task:
    """How a task's fine-tuning runs: its entry point, its title, its score; whether its
    examples are text pairs (--pair_max_seq_length)."""
    module: str
    title: str
    field: str
    transform: str
    pairs: bool = False


_TASKS = {"xpos": _Task("run_scripts.run_ner", "UD EWT parts of speech, then German and "
                       "Spanish zero-shot", "accuracy", "percent"),
          "qnli": _Task("run_scripts.run_classifier", "QNLI", "eval_accuracy", "percent", True),
          "mrpc": _Task("run_scripts.run_classifier", "MRPC", "eval_accuracy", "percent", True),
          "sst2": _Task("run_scripts.run_classifier", "SST-2", "eval_accuracy", "percent"),
          "pos": _Task("run_scripts.run_ner", "UD EWT parts of speech", "accuracy", "percent"),
          "conll": _Task("run_scripts.run_ner", "CoNLL-2003 NER", "f1", "percent"),
          "squad_sample": _Task("run_scripts.run_squad", "the SQuAD sample", "f1", "as_is")}


def squad_lengths(max_seq_length: int) -> tuple[int, int]:
    """(max_query_length, doc_stride) for SQuAD windows of `max_seq_length`: the question's
    first 64 tokens at most and a quarter of the window, and windows half a context apart (the
    original's 64 and 128 at 384 leave a context of 317; at 128 they would leave 61 and skip
    text between windows)."""
    query = min(64, max_seq_length // 4)
    return query, max(1, (max_seq_length - query - 3) // 2)


def _row_configs(settings: AblationSettings, row: Row, out: str
                 ) -> dict[str, tuple[str, BertConfig]]:
    """The row's pretraining config (--pretrain_dropout) and fine-tuning config
    (--finetune_dropout): the same model, its dropout each stage's."""
    found = {}
    for stage, dropout, name in (("pretrain", settings.pretrain_dropout, "bert_config.json"),
                                 ("finetune", settings.finetune_dropout,
                                  "finetune_config.json")):
        config = row.config if dropout is None else dataclasses.replace(
            row.config, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
        found[stage] = (os.path.join(out, "rows", row.id, name), config)
    return found


def make_plan(settings: AblationSettings, study: Study) -> Plan:
    """The stages and sources of `study` as `settings` ask (see the module docstring)."""
    out = settings.output_dir
    rows = [study.row(row_id) for row_id in settings.chosen_rows(study)]
    tasks, measures = settings.chosen_tasks(study), settings.chosen_measures(study)
    task_dirs = {name: os.path.join(out, "task_data", name) for name in ("SST-2", "QNLI",
                                                                         "squad")}
    corpus = os.path.join(out, "corpus", "corpus.txt")
    # Each row's configs, and those of the rows whose pretraining a chosen row starts from.
    configs = {row.id: _row_configs(settings, row, out)
               for row in [*rows, *(study.row(r.pretrained_as) for r in rows if r.pretrained_as)]}
    stages: list[Stage] = []
    made: dict[str, Stage] = {}

    def added(stage: Stage) -> Stage:
        """`stage`, appended the first time it is asked for."""
        if stage.name not in made:
            stages.append(stage)
            made[stage.name] = stage
        return made[stage.name]

    def corpus_of(setting: DataSetting) -> tuple[str, list[str]]:
        """(the corpus file of `setting`, the stage that makes it, if any)."""
        if setting.languages is None:
            return corpus, []
        stage = added(_corpus_stage(settings, setting))
        return stage.outputs[0], [stage.name]

    vocab = Vocab(settings, study, *corpus_of(study.heldout), stages)
    overlap = _overlap_stage(settings, study, vocab) if study.heldout.languages else None
    if overlap is not None:
        stages.append(overlap)
    sources: dict[tuple[str, int, str], Source] = {}
    references: dict[tuple[int, str], Source] = {}

    def data(setting: DataSetting, seed: int) -> Stage:
        return added(_data_stage(settings, setting, seed, *corpus_of(setting), vocab))

    for seed in settings.seed_list():
        if "heldout" in measures:
            contiguous = data(study.heldout, seed)
            unigram = _unigram_stage(contiguous)
            stages.append(unigram)
            for key, field, transform in (("mlm_loss", "masked_lm_loss", "as_is"),
                                          ("mlm_acc", "masked_lm_accuracy", "percent")):
                references[seed, key] = Source(unigram.outputs[0], field, transform)
        for row in rows:
            run_dir = os.path.join(out, "rows", row.id, f"seed{seed}")
            after, init = [], []
            if row.pretrained:
                source = study.row(row.pretrained_as or row.id)
                pretrained = os.path.join(out, "rows", source.id, f"seed{seed}", "pretrained")
                pretrain = added(_pretrain_stage(
                    settings, study, source, seed, data(source.data, seed),
                    data(study.heldout, seed) if "heldout" in measures else None,
                    configs[source.id]["pretrain"][0],
                    pretrained, vocab))
                after, init = [pretrain.name], [f"--init_checkpoint={pretrained}"]
                sources.update(_held_out_sources(study, row, seed, pretrained, measures))
                if row.pretrained_as is None:
                    stages.extend(_measure_stages(settings, row, seed, run_dir, pretrained,
                                                  after, measures, data, vocab, sources))
            for task in tasks:
                variants = [(task, False)]
                if task == "conll" and settings.runs_feature_based(study):
                    variants.append(("conll_feature", True))
                for (name, feature_based), key in zip(variants, TASK_COLUMNS[task]):
                    if feature_based and not row.pretrained:
                        continue  # a frozen random encoder is no feature-based baseline
                    folder = os.path.join(run_dir, name)
                    stages.append(_task_stage(settings, row, seed, task, feature_based, after,
                                              init, configs[row.id]["finetune"][0], folder,
                                              task_dirs, vocab))
                    spec = _TASKS[task]
                    sources[row.id, seed, key] = Source(os.path.join(folder, EVAL_RESULTS),
                                                        spec.field, spec.transform)
                if task == "xpos":
                    sources.update(
                        ((row.id, seed, f"xpos_{language}"),
                         Source(os.path.join(folder, f"eval_results_{language}.txt"),
                                "accuracy", "percent")) for language in LANGUAGES)
    return Plan(stages, sources, references, configs, corpus, vocab.path, task_dirs,
                overlap.outputs[0] if overlap else None)


class Vocab:
    """The study's vocab: --vocab_file, or the one its first stage learns from `corpus` (the
    held-out text's corpus: every language of a multilingual study). A cased study's vocab and
    text keep case and accents whatever --do_lower_case says (mBERT's rule)."""

    def __init__(self, settings: AblationSettings, study: Study, corpus: str,
                 corpus_stages: list[str], stages: list[Stage]):
        self.stage = None
        self.lower_case = settings.do_lower_case and not study.cased
        if settings.vocab_file is not None:
            self.path, self.inputs = settings.vocab_file, [settings.vocab_file]
            return
        self.path, self.inputs = os.path.join(settings.output_dir, "vocab.txt"), []
        self.stage = Stage(
            "vocab", f"a WordPiece vocab of {settings.vocab_size:,} pieces learnt from the "
            "corpus (data_prep.build_vocab)",
            ["-m", "data_prep.build_vocab", f"--input_file={corpus}",
             f"--output_file={self.path}", f"--vocab_size={settings.vocab_size}",
             f"--do_lower_case={str(self.lower_case).lower()}"],
            outputs=[self.path], inputs=[] if corpus_stages else [corpus],
            after=corpus_stages)
        stages.append(self.stage)

    @property
    def after(self) -> list[str]:
        return [self.stage.name] if self.stage else []

    def flags(self, settings: AblationSettings) -> list[str]:
        return [f"--vocab_file={self.path}", f"--do_lower_case={str(self.lower_case).lower()}"]


def _corpus_stage(settings: AblationSettings, setting: DataSetting) -> Stage:
    """The languages of `setting` mixed into one corpus (data_prep.mix_languages: mBERT's
    smoothed shares)."""
    path = os.path.join(settings.output_dir, "corpus", f"{setting.corpus}.txt")
    texts = settings.crosslingual_files(CROSSLINGUAL_TEXT, setting.languages)
    return Stage(
        f"corpus.{setting.corpus}", f"corpus {setting.corpus}: "
        f"{', '.join(setting.languages)} text, shares smoothed by the exponent "
        f"{settings.language_smoothing:g} (data_prep.mix_languages)",
        ["-m", "data_prep.mix_languages",
         "--languages=" + ",".join(f"{lang}={path}" for lang, path in texts.items()),
         f"--output_file={path}", f"--smoothing={settings.language_smoothing:g}",
         f"--report_file={path[:-len('.txt')]}.json"],
        outputs=[path, f"{path[:-len('.txt')]}.json"],
        inputs=sorted(f for pattern in texts.values() for f in glob.glob(pattern)))


def _overlap_stage(settings: AblationSettings, study: Study, vocab: Vocab) -> Stage:
    """The vocab's word-piece overlap between the study's languages (data_prep.wordpiece_overlap),
    on each language's whole text."""
    texts = settings.crosslingual_files(CROSSLINGUAL_TEXT, study.heldout.languages)
    path = os.path.join(settings.output_dir, "overlap.json")
    return Stage(
        "overlap", "the vocab's word-piece overlap between the languages "
        "(data_prep.wordpiece_overlap)",
        ["-m", "data_prep.wordpiece_overlap", *vocab.flags(settings),
         "--languages=" + ",".join(f"{lang}={path}" for lang, path in texts.items()),
         f"--output_file={path}"],
        outputs=[path], inputs=[*vocab.inputs,
                                *sorted(f for p in texts.values() for f in glob.glob(p))],
        after=vocab.after)


def _strategy(settings: AblationSettings) -> list[str]:
    if settings.distribution_strategy == "default":
        return []
    return [f"--distribution_strategy={settings.distribution_strategy}",
            f"--num_gpus={settings.num_gpus}"]


def _data_stage(settings: AblationSettings, data: DataSetting, seed: int, corpus: str,
                corpus_stages: list[str], vocab: Vocab) -> Stage:
    folder = os.path.join(settings.output_dir, "data", data.id, f"seed{seed}")
    return Stage(
        f"data.{data.id}.seed{seed}",
        f"data {data.id}, seed {seed}: pretraining records (data_prep.create_pretraining_data)",
        ["-m", "data_prep.create_pretraining_data", f"--input_file={corpus}",
         f"--output_dir={folder}", *vocab.flags(settings),
         f"--max_seq_length={settings.max_seq_length}",
         f"--max_predictions_per_seq={settings.max_predictions_per_seq}",
         f"--dupe_factor={settings.dupe_factor}", f"--random_seed={seed}",
         f"--num_shards={NUM_SHARDS}", f"--num_workers={settings.data_workers}",
         *data.flags()],
        outputs=[folder], inputs=[*([] if corpus_stages else [corpus]), *vocab.inputs],
        after=list(dict.fromkeys([*corpus_stages, *vocab.after])))


def _shards(data: Stage) -> tuple[str, str]:
    """(a glob of the training shards, the held-out shard) of a data stage's folder: shards 1
    to 9 of 10 train, shard 0 is held out."""
    folder = data.outputs[0]
    train = shard_path(folder, HELD_OUT_SHARD, NUM_SHARDS).replace(
        f"-{HELD_OUT_SHARD:05d}-", f"-0000[1-{NUM_SHARDS - 1}]-")
    return train, shard_path(folder, HELD_OUT_SHARD, NUM_SHARDS)


def _unigram_stage(contiguous: Stage) -> Stage:
    train, held_out = _shards(contiguous)
    seed = contiguous.name.rsplit(".", 1)[1]
    output = os.path.join(contiguous.outputs[0], UNIGRAM_FILE)
    return Stage(
        f"unigram.{seed}", f"the unigram baseline of the held-out text, {seed} "
        "(data_prep.unigram_baseline)",
        ["-m", "data_prep.unigram_baseline", f"--train_file={train}", f"--eval_file={held_out}",
         f"--output_file={output}"],
        outputs=[output], after=[contiguous.name])


def _training(settings: AblationSettings, seed: int) -> list[str]:
    """What every training stage is told: precision, seed, strategy."""
    return [f"--dtype={settings.dtype}", f"--seed={seed}", *_strategy(settings)]


def _pretrain_stage(settings: AblationSettings, study: Study, row: Row, seed: int, data: Stage,
                    contiguous: Stage | None, config: str, pretrained: str,
                    vocab: Vocab) -> Stage:
    steps = settings.pretrain_steps
    log_steps = max(1, min(100, steps // 10))
    held_out = [] if contiguous is None else [
        "--do_eval", f"--eval_input_file={_shards(contiguous)[1]}",
        f"--eval_batch_size={settings.eval_batch_size}",
        f"--max_eval_steps={settings.max_eval_steps}"]
    return Stage(
        f"{row.id}.seed{seed}.pretrain",
        f"row {row.name}, seed {seed}: pretrain {steps} steps"
        + (", then the held-out loss" if held_out else "") + " (run_scripts.run_pretraining)",
        ["-m", "run_scripts.run_pretraining", f"--input_file={_shards(data)[0]}",
         f"--output_dir={pretrained}", f"--bert_config_file={config}", "--do_train",
         *held_out, f"--train_batch_size={settings.pretrain_batch_size}",
         f"--max_seq_length={settings.max_seq_length}",
         f"--max_predictions_per_seq={settings.max_predictions_per_seq}",
         f"--num_train_steps={steps}", f"--num_warmup_steps={settings.warmup_steps}",
         f"--learning_rate={settings.pretrain_learning_rate:g}",
         f"--log_steps={log_steps}", f"--steps_per_loop={log_steps}",
         f"--save_checkpoints_steps={steps}", *row.pretraining_flags,
         *_training(settings, seed)],
        outputs=[pretrained], inputs=[config],
        after=list(dict.fromkeys([data.name, *([contiguous.name] if contiguous else [])])))


def _held_out_sources(study: Study, row: Row, seed: int, pretrained: str,
                      measures: tuple[str, ...]) -> dict[tuple[str, int, str], Source]:
    """The held-out numbers the pretraining stage's eval writes: the masked LM's, or a
    left-to-right row's next-token ones."""
    if "heldout" not in measures:
        return {}
    results = os.path.join(pretrained, EVAL_RESULTS)
    prefix = "next_token" if "--objective=ltr" in row.pretraining_flags else "masked_lm"
    keys = ("ntp_loss", "ntp_acc") if prefix == "next_token" else ("mlm_loss", "mlm_acc")
    found = {(row.id, seed, keys[0]): Source(results, f"{prefix}_loss", "as_is"),
             (row.id, seed, keys[1]): Source(results, f"{prefix}_accuracy", "percent")}
    if study.perplexity and prefix == "masked_lm":
        found[row.id, seed, "ppl"] = Source(results, "masked_lm_loss", "exp")
    return found


def _measure_stages(settings: AblationSettings, row: Row, seed: int, run_dir: str,
                    pretrained: str, after: list[str], measures: tuple[str, ...], data,
                    vocab: Vocab, sources: dict) -> list[Stage]:
    """The stages that measure a pretrained row without fine-tuning, their sources added."""
    stages = []
    init = f"--init_checkpoint={pretrained}"
    common = [f"--bert_config_file={os.path.join(pretrained, 'bert_config.json')}",
              f"--max_seq_length={settings.max_seq_length}",
              f"--max_predictions_per_seq={settings.max_predictions_per_seq}",
              f"--eval_batch_size={settings.eval_batch_size}",
              f"--max_eval_steps={settings.max_eval_steps}", *_training(settings, seed)]
    for objective in ("nsp", "sop"):
        records = data(DataSetting(objective), seed) \
            if {"heads", "probes"} & set(measures) else None
        if "heads" in measures and row.second_sentence_head:
            folder = os.path.join(run_dir, f"{objective}_head")
            stages.append(Stage(
                f"{row.id}.seed{seed}.{objective}_head",
                f"row {row.name}, seed {seed}: its {row.second_sentence_head.upper()} head on "
                f"held-out {objective.upper()} records (run_scripts.run_pretraining --do_eval)",
                ["-m", "run_scripts.run_pretraining", f"--input_file={_shards(records)[1]}",
                 f"--output_dir={folder}", init, "--do_eval", *common],
                outputs=[folder], after=[*after, records.name]))
            sources[row.id, seed, f"{objective}_head"] = Source(
                os.path.join(folder, EVAL_RESULTS), "next_sentence_accuracy", "percent")
        if "probes" in measures:
            folder = os.path.join(run_dir, f"{objective}_probe")
            train, held_out = _shards(records)
            stages.append(Stage(
                f"{row.id}.seed{seed}.{objective}_probe",
                f"row {row.name}, seed {seed}: a {objective.upper()} probe of the frozen pooled "
                "output (run_scripts.run_pretraining --probe_second_sentence)",
                ["-m", "run_scripts.run_pretraining", f"--input_file={train}",
                 f"--eval_input_file={held_out}", f"--output_dir={folder}", init,
                 "--probe_second_sentence", "--do_train", "--do_eval",
                 f"--num_train_steps={settings.probe_steps}",
                 f"--num_warmup_steps={settings.probe_steps // 10}",
                 f"--learning_rate={settings.probe_learning_rate:g}",
                 f"--train_batch_size={settings.pretrain_batch_size}",
                 f"--save_checkpoints_steps={settings.probe_steps}",
                 f"--log_steps={max(1, settings.probe_steps // 5)}", *common],
                outputs=[folder], after=[*after, records.name]))
            sources[row.id, seed, f"{objective}_probe"] = Source(
                os.path.join(folder, EVAL_RESULTS), "next_sentence_accuracy", "percent")
    if "blimp" in measures:
        folder = os.path.join(run_dir, "blimp")
        pairs = [] if settings.blimp_pairs_per_paradigm is None else [
            f"--pairs_per_paradigm={settings.blimp_pairs_per_paradigm}"]
        published = os.path.join(settings.blimp_dir, "models_summary.jsonl")
        stages.append(Stage(
            f"{row.id}.seed{seed}.blimp",
            f"row {row.name}, seed {seed}: BLiMP's minimal pairs, zero-shot "
            "(run_scripts.score_minimal_pairs)",
            ["-m", "run_scripts.score_minimal_pairs", init, *vocab.flags(settings),
             f"--input_file={os.path.join(settings.blimp_dir, BLIMP_FILES)}", *pairs,
             *([f"--published_file={published}"] if os.path.isfile(published) else []),
             f"--max_seq_length={settings.max_seq_length}", f"--output_dir={folder}"],
            outputs=[folder], inputs=settings.blimp_files(), after=after))
        for key, field in (("blimp", "overall.accuracy"),
                           ("blimp_same", "by_length.same length.accuracy")):
            sources[row.id, seed, key] = Source(os.path.join(folder, "minimal_pairs.json"),
                                                field, "as_is")
    if "pos_probe" in measures:
        folder = os.path.join(run_dir, "pos_probe")
        files = {split: os.path.join(settings.ud_dir, f"en_ewt-ud-{split}.conllu")
                 for split in ("train", "dev", "test")}
        stages.append(Stage(
            f"{row.id}.seed{seed}.pos_probe",
            f"row {row.name}, seed {seed}: a linear probe of the last layer for parts of "
            "speech (run_scripts.probe_layers --task=upos)",
            ["-m", "run_scripts.probe_layers", "--task=upos", init, *vocab.flags(settings),
             *(f"--{split}_file={path}" for split, path in files.items()),
             f"--layers={row.config.num_hidden_layers}",
             f"--max_seq_length={settings.finetune_max_seq_length}", f"--seed={seed}",
             f"--output_dir={folder}", f"--cache_dir={os.path.join(folder, 'vectors')}"],
            outputs=[folder], inputs=list(files.values()), after=after))
        sources[row.id, seed, "pos_probe"] = Source(
            os.path.join(folder, "probe_results.json"), "layers.0.dev.accuracy", "percent")
    return stages


def _task_stage(settings: AblationSettings, row: Row, seed: int, task: str, feature_based: bool,
                after: list[str], init: list[str], config: str, folder: str,
                task_dirs: dict[str, str], vocab: Vocab) -> Stage:
    spec = _TASKS[task]
    learning_rate = settings.finetune_learning_rate
    length = settings.pair_max_seq_length if spec.pairs else settings.finetune_max_seq_length
    if task in ("qnli", "mrpc", "sst2"):
        data_dir = {"qnli": task_dirs["QNLI"], "sst2": task_dirs["SST-2"],
                    "mrpc": os.path.join(settings.glue_dir or "", "MRPC")}[task]
        data = [f"--task_name={spec.title}", f"--data_dir={data_dir}"]
        inputs = [os.path.join(data_dir, name) for name in ("train.tsv", "dev.tsv")]
    elif task in ("pos", "conll", "xpos"):
        flag, names = TASK_FILES[task]
        folder_of_data = getattr(settings, flag)
        inputs = [os.path.join(folder_of_data, name) for name in names]
        data = [f"--data_dir={folder_of_data}"]
        if task in ("pos", "xpos"):
            data += ["--data_format=conllu", f"--train_file={names[0]}",
                     f"--dev_file={names[1]}"]
        if task == "xpos":
            tests = {LANGUAGES[0]: inputs[2],
                     **settings.crosslingual_files(CROSSLINGUAL_TEST, LANGUAGES[1:])}
            data.append("--eval_languages=" + ",".join(f"{lang}={path}"
                                                       for lang, path in tests.items()))
            inputs += list(tests.values())[1:]
            if row.code_switching:
                pairs = settings.crosslingual_files(CROSSLINGUAL_DICTIONARY, LANGUAGES[1:])
                data += ["--code_switch_dictionaries=" + ",".join(
                    f"{lang}={path}" for lang, path in pairs.items()),
                    f"--code_switch_rate={settings.code_switch_rate:g}"]
                inputs += list(pairs.values())
        if feature_based:
            data += [f"--feature_based={settings.feature_based}",
                     f"--feature_lstm_units={settings.feature_lstm_units}"]
            learning_rate = settings.feature_learning_rate
    else:
        length = settings.max_seq_length
        query, stride = squad_lengths(length)
        inputs = [os.path.join(task_dirs["squad"], name) for name in ("train.json", "dev.json")]
        data = [f"--train_file={inputs[0]}", f"--predict_file={inputs[1]}",
                f"--max_query_length={query}", f"--doc_stride={stride}"]
    how = " feature-based" if feature_based else ""
    start = "" if row.pretrained else " from its random initialisation"
    return Stage(
        f"{row.id}.seed{seed}.{os.path.basename(folder)}",
        f"row {row.name}, seed {seed}: fine-tune{how} on {spec.title}{start} ({spec.module})",
        ["-m", spec.module, *data, *vocab.flags(settings), f"--bert_config_file={config}",
         *init, f"--output_dir={folder}", "--do_train", "--do_eval",
         f"--max_seq_length={length}", f"--train_batch_size={settings.finetune_batch_size}",
         f"--eval_batch_size={settings.eval_batch_size}", f"--learning_rate={learning_rate:g}",
         f"--num_train_epochs={settings.finetune_epochs:g}", "--warmup_proportion=0.1",
         *row.finetuning_flags, *_training(settings, seed)],
        outputs=[folder], inputs=[*inputs, *vocab.inputs, config],
        after=[*after, *vocab.after])
