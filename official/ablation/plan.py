"""A study's work as entry-point commands (official/ablation/stages.py runs them), and where each
of its numbers will be read.

    make_plan(settings, study) -> Plan
      .stages    in order, seed by seed (every row's first seed before any second seed):
                   data.<setting>.seed<k>   data_prep.create_pretraining_data, once per data
                                            setting and seed (--random_seed=k)
                   <row>.seed<k>.pretrain   run_scripts.run_pretraining from scratch (--seed=k)
                   <row>.seed<k>.heldout    run_pretraining --do_eval on the held-out shard
                                            (studies that report perplexity)
                   <row>.seed<k>.<task>     run_classifier (mrpc, sst2), run_ner (conll, and
                                            conll_feature: --feature_based), run_squad
                                            (squad_sample), from the pretrained checkpoint
      .sources   (row, seed, column) -> Source: the file and field a number is read from
      .configs   row -> (path, BertConfig): each row's bert_config.json, written before the
                 stages run (an input of its pretraining stage)

The layout under --output_dir:
    data/<setting>/seed<k>/           NUM_SHARDS shards; shard 0 (a tenth of the documents,
                                      whole) is held out, the others train
    task_data/SST-2/, task_data/squad/  official/ablation/task_data.py's files
    rows/<row>/bert_config.json
    rows/<row>/seed<k>/pretrained/    run_pretraining's output_dir
    rows/<row>/seed<k>/<task>/        each fine-tuning run's output_dir
    stages/<stage>.json, logs/<stage>.log
    REPORT.md, results.json

Every row trains on the same records for its data setting and seed, with the same steps, batch
and sequence length: the same token budget (steps x batch x max_seq_length positions).
"""

from __future__ import annotations

import dataclasses
import os

from official.ablation.columns import TASK_COLUMNS
from official.ablation.settings import AblationSettings
from official.ablation.studies import DataSetting, Row, Study
from official.configs import BertConfig
from official.pretraining_shards import shard_path
from official.stages import Stage

NUM_SHARDS = 10  # one digit of a glob: shards 1 to 9 train
HELD_OUT_SHARD = 0
EVAL_RESULTS = "eval_results.txt"


@dataclasses.dataclass(frozen=True)
class Source:
    """A number's origin: `field` of the `key = value` file at `path`, as `transform` makes it:
    "percent" (x 100), "as_is", or "exp" (a loss's perplexity)."""
    path: str
    field: str
    transform: str


@dataclasses.dataclass(frozen=True)
class Plan:
    stages: list[Stage]
    sources: dict[tuple[str, int, str], Source]
    configs: dict[str, tuple[str, BertConfig]]
    sst2_dir: str
    squad_dir: str


@dataclasses.dataclass(frozen=True)
class _Task:
    """How a task's fine-tuning runs: its entry point and what it is told; its score."""
    module: str
    title: str
    field: str
    transform: str


_TASKS = {"mrpc": _Task("run_scripts.run_classifier", "MRPC", "eval_accuracy", "percent"),
          "sst2": _Task("run_scripts.run_classifier", "SST-2", "eval_accuracy", "percent"),
          "conll": _Task("run_scripts.run_ner", "CoNLL-2003 NER", "f1", "percent"),
          "squad_sample": _Task("run_scripts.run_squad", "the SQuAD sample", "f1", "as_is")}


def squad_lengths(max_seq_length: int) -> tuple[int, int]:
    """(max_query_length, doc_stride) for SQuAD windows of `max_seq_length`: the question's
    first 64 tokens at most and a quarter of the window, and windows half a context apart (the
    original's 64 and 128 at 384 leave a context of 317; at 128 they would leave 61 and skip
    text between windows)."""
    query = min(64, max_seq_length // 4)
    return query, max(1, (max_seq_length - query - 3) // 2)


def make_plan(settings: AblationSettings, study: Study) -> Plan:
    """The stages and sources of `study` as `settings` ask (see the module docstring)."""
    out = settings.output_dir
    rows = [study.row(row_id) for row_id in settings.chosen_rows(study)]
    tasks = settings.chosen_tasks(study)
    sst2_dir = os.path.join(out, "task_data", "SST-2")
    squad_dir = os.path.join(out, "task_data", "squad")
    configs = {row.id: (os.path.join(out, "rows", row.id, "bert_config.json"), row.config)
               for row in rows}
    stages: list[Stage] = []
    sources: dict[tuple[str, int, str], Source] = {}
    made: set[str] = set()
    for seed in settings.seed_list():
        for row in rows:
            data = _data_stage(settings, row.data, seed,
                               [r.name for r in rows if r.data == row.data])
            if data.name not in made:
                stages.append(data)
                made.add(data.name)
            run_dir = os.path.join(out, "rows", row.id, f"seed{seed}")
            pretrained = os.path.join(run_dir, "pretrained")
            pretrain = _pretrain_stage(settings, row, seed, data, configs[row.id][0], pretrained)
            stages.append(pretrain)
            if study.perplexity:
                stages.append(_held_out_stage(settings, row, seed, data, configs[row.id][0],
                                              pretrained))
                sources[row.id, seed, "ppl"] = Source(
                    os.path.join(pretrained, EVAL_RESULTS), "masked_lm_loss", "exp")
            for task in tasks:
                variants = [(task, False)]
                if task == "conll" and settings.runs_feature_based(study):
                    variants.append(("conll_feature", True))
                for (name, feature_based), column in zip(variants, TASK_COLUMNS[task]):
                    folder = os.path.join(run_dir, name)
                    stages.append(_task_stage(settings, row, seed, task, feature_based,
                                              pretrain, pretrained, folder, sst2_dir,
                                              squad_dir))
                    spec = _TASKS[task]
                    sources[row.id, seed, column] = Source(
                        os.path.join(folder, EVAL_RESULTS), spec.field, spec.transform)
    return Plan(stages, sources, configs, sst2_dir, squad_dir)


def _strategy(settings: AblationSettings) -> list[str]:
    if settings.distribution_strategy == "default":
        return []
    return [f"--distribution_strategy={settings.distribution_strategy}",
            f"--num_gpus={settings.num_gpus}"]


def _tokenizer(settings: AblationSettings) -> list[str]:
    return [f"--vocab_file={settings.vocab_file}",
            f"--do_lower_case={str(settings.do_lower_case).lower()}"]


def _data_stage(settings: AblationSettings, data: DataSetting, seed: int,
                row_names: list[str]) -> Stage:
    folder = os.path.join(settings.output_dir, "data", data.id, f"seed{seed}")
    return Stage(
        f"data.{data.id}.seed{seed}",
        f"data {data.id} (for {', '.join(row_names)}), seed {seed}: pretraining records "
        "(data_prep.create_pretraining_data)",
        ["-m", "data_prep.create_pretraining_data", f"--input_file={','.join(settings.corpus)}",
         f"--output_dir={folder}", *_tokenizer(settings),
         f"--max_seq_length={settings.max_seq_length}",
         f"--max_predictions_per_seq={settings.max_predictions_per_seq}",
         f"--dupe_factor={settings.dupe_factor}", f"--random_seed={seed}",
         f"--num_shards={NUM_SHARDS}", f"--num_workers={settings.data_workers}",
         *data.flags()],
        outputs=[folder], inputs=[*settings.corpus, settings.vocab_file])


def _shards(data: Stage) -> tuple[str, str]:
    """(a glob of the training shards, the held-out shard) of a data stage's folder: shards 1
    to 9 of 10 train, shard 0 is held out."""
    folder = data.outputs[0]
    train = shard_path(folder, HELD_OUT_SHARD, NUM_SHARDS).replace(
        f"-{HELD_OUT_SHARD:05d}-", f"-0000[1-{NUM_SHARDS - 1}]-")
    return train, shard_path(folder, HELD_OUT_SHARD, NUM_SHARDS)


def _pretrain_stage(settings: AblationSettings, row: Row, seed: int, data: Stage, config: str,
                    pretrained: str) -> Stage:
    steps = settings.pretrain_steps
    log_steps = max(1, min(100, steps // 10))
    return Stage(
        f"{row.id}.seed{seed}.pretrain",
        f"row {row.name}, seed {seed}: pretrain {steps} steps (run_scripts.run_pretraining)",
        ["-m", "run_scripts.run_pretraining", f"--input_file={_shards(data)[0]}",
         f"--output_dir={pretrained}", f"--bert_config_file={config}", "--do_train",
         f"--train_batch_size={settings.pretrain_batch_size}",
         f"--max_seq_length={settings.max_seq_length}",
         f"--max_predictions_per_seq={settings.max_predictions_per_seq}",
         f"--num_train_steps={steps}", f"--num_warmup_steps={steps // 10}",
         f"--learning_rate={settings.pretrain_learning_rate:g}", f"--seed={seed}",
         f"--log_steps={log_steps}", f"--steps_per_loop={log_steps}",
         f"--save_checkpoints_steps={min(steps, 1000)}", *row.pretraining_flags,
         *_strategy(settings)],
        outputs=[pretrained], inputs=[config], after=[data.name])


def _held_out_stage(settings: AblationSettings, row: Row, seed: int, data: Stage, config: str,
                    pretrained: str) -> Stage:
    return Stage(
        f"{row.id}.seed{seed}.heldout",
        f"row {row.name}, seed {seed}: masked-LM loss on the held-out shard "
        "(run_scripts.run_pretraining --do_eval)",
        ["-m", "run_scripts.run_pretraining", f"--input_file={_shards(data)[1]}",
         f"--output_dir={pretrained}", f"--bert_config_file={config}", "--do_eval",
         f"--eval_batch_size={settings.eval_batch_size}",
         f"--max_eval_steps={settings.max_eval_steps}",
         f"--max_seq_length={settings.max_seq_length}",
         f"--max_predictions_per_seq={settings.max_predictions_per_seq}", f"--seed={seed}",
         *row.pretraining_flags, *_strategy(settings)],
        outputs=[os.path.join(pretrained, EVAL_RESULTS)],
        after=[data.name, f"{row.id}.seed{seed}.pretrain"])


def _task_stage(settings: AblationSettings, row: Row, seed: int, task: str, feature_based: bool,
                pretrain: Stage, pretrained: str, folder: str, sst2_dir: str,
                squad_dir: str) -> Stage:
    spec = _TASKS[task]
    learning_rate = settings.finetune_learning_rate
    if task in ("mrpc", "sst2"):
        data_dir = os.path.join(settings.glue_dir, "MRPC") if task == "mrpc" else sst2_dir
        data = [f"--task_name={spec.title}", f"--data_dir={data_dir}"]
        inputs = [os.path.join(data_dir, name) for name in ("train.tsv", "dev.tsv")]
    elif task == "conll":
        data = [f"--data_dir={settings.conll_dir}"]
        inputs = [os.path.join(settings.conll_dir, name) for name in ("eng.train", "eng.testa")]
        if feature_based:
            data += [f"--feature_based={settings.feature_based}",
                     f"--feature_lstm_units={settings.feature_lstm_units}"]
            learning_rate = settings.feature_learning_rate
    else:
        query, stride = squad_lengths(settings.max_seq_length)
        inputs = [os.path.join(squad_dir, name) for name in ("train.json", "dev.json")]
        data = [f"--train_file={inputs[0]}", f"--predict_file={inputs[1]}",
                f"--max_query_length={query}", f"--doc_stride={stride}"]
    how = " feature-based" if feature_based else ""
    return Stage(
        f"{row.id}.seed{seed}.{os.path.basename(folder)}",
        f"row {row.name}, seed {seed}: fine-tune{how} on {spec.title} ({spec.module})",
        ["-m", spec.module, *data, *_tokenizer(settings),
         f"--bert_config_file={os.path.join(pretrained, 'bert_config.json')}",
         f"--init_checkpoint={pretrained}", f"--output_dir={folder}", "--do_train", "--do_eval",
         f"--max_seq_length={settings.max_seq_length}",
         f"--train_batch_size={settings.finetune_batch_size}",
         f"--eval_batch_size={settings.eval_batch_size}", f"--learning_rate={learning_rate:g}",
         f"--num_train_epochs={settings.finetune_epochs:g}", "--warmup_proportion=0.1",
         f"--seed={seed}", *row.finetuning_flags, *_strategy(settings)],
        outputs=[folder], inputs=[*inputs, settings.vocab_file], after=[pretrain.name])
