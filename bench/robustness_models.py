"""The models the robustness benches examine, made once in a work dir and reused.

    sst2_classifier_export(work_dir)   all-MiniLM-L6-v2 fine-tuned on SST-2 with run_classifier,
                                       exported (export_saved_model --export_type=classifier)
    minilm_sentence_export(work_dir)   all-MiniLM-L6-v2 as a sentence encoder (mean pooling,
                                       normalised: its sentence-transformers setting)
    upos_tagger_export(work_dir)       all-MiniLM-L6-v2 fine-tuned by run_ner on UD English
                                       EWT's parts of speech (UPOS), exported as a tagger

Each is made by the project's entry points, as a user would (`python -m run_scripts.NAME`), and
reused when its folder is there. The classifier trains on SST-2's first 16,000 training rows
(or as many as a bench asks: `train_rows`) for one epoch (batch 32, seq 64, learning rate 5e-5,
seed 1): all 67k rows for three epochs, the usual recipe, take hours on a 2-core CPU; the
benches print its dev accuracy beside their figures, so a reader sees what model was attacked.
The tagger trains on EWT's first UPOS_TRAIN_SENTENCES training sentences for one epoch (batch
32, seq 64, learning rate 5e-5, seed 1) and is scored on all of EWT's dev set
(upos_dev_accuracy): parts of speech are learnt fast, and the whole treebank's 12.5k sentences
would take most of an hour on a shared 2-core CPU.
"""

from __future__ import annotations

import os
import subprocess
import sys

from bench.finetune_glue import limited_data_dir, minilm_checkpoint, read_results
from official.export.versions import is_saved_model

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UD_EWT = os.path.join(REPO, "..", "shared", "data", "ud_english_ewt")
SST2_TRAIN_ROWS = 16000
SST2_SEQ_LENGTH = 64
UPOS_TRAIN_SENTENCES = 4000


def _run(*args: str) -> None:
    subprocess.run([sys.executable, "-m", *args], cwd=REPO, check=True)


def _exported(export_dir: str) -> bool:
    return os.path.isdir(export_dir) and any(
        name.isdigit() and is_saved_model(os.path.join(export_dir, name))
        for name in os.listdir(export_dir))


def sst2_classifier_run(work_dir: str, name: str = "sst2_minilm", *flags: str,
                        train_rows: int = SST2_TRAIN_ROWS) -> str:
    """The run_classifier output_dir `work_dir/name` of MiniLM fine-tuned on SST-2's first
    `train_rows` training rows (see the module docstring), with any further run_classifier
    `flags` (--augment_with)."""
    model = minilm_checkpoint(work_dir)
    output_dir = os.path.join(work_dir, name)
    if not os.path.isfile(os.path.join(output_dir, "eval_results.txt")):
        _run("run_scripts.run_classifier", "--task_name=SST-2",
             f"--data_dir={limited_data_dir('SST-2', train_rows, work_dir)}",
             f"--vocab_file={model}/vocab.txt", f"--bert_config_file={model}/bert_config.json",
             f"--init_checkpoint={model}", f"--output_dir={output_dir}", "--do_train",
             "--do_eval", f"--max_seq_length={SST2_SEQ_LENGTH}", "--train_batch_size=32",
             "--eval_batch_size=64", "--learning_rate=5e-5", "--num_train_epochs=1",
             "--log_steps=20", "--keep_checkpoint_max=1", "--seed=1", *flags)
    return output_dir


def sst2_dev_accuracy(work_dir: str, name: str = "sst2_minilm") -> float:
    results = read_results(os.path.join(work_dir, name, "eval_results.txt"))
    return float(results["eval_accuracy"])


def sst2_classifier_export(work_dir: str, name: str = "sst2_minilm", *flags: str,
                           train_rows: int = SST2_TRAIN_ROWS) -> str:
    """The export_dir `work_dir/<name>_export` of that run (made when missing)."""
    export_dir = os.path.join(work_dir, f"{name}_export")
    if not _exported(export_dir):
        run = sst2_classifier_run(work_dir, name, *flags, train_rows=train_rows)
        model = minilm_checkpoint(work_dir)
        _run("run_scripts.export_saved_model", "--export_type=classifier", "--task_name=SST-2",
             f"--init_checkpoint={run}", f"--vocab_file={model}/vocab.txt",
             f"--max_seq_length={SST2_SEQ_LENGTH}", f"--export_dir={export_dir}")
    return export_dir


def minilm_sentence_export(work_dir: str) -> str:
    """MiniLM's sentence-encoder export_dir (its own pooling and normalisation)."""
    export_dir = os.path.join(work_dir, "minilm_sentence_export")
    if not _exported(export_dir):
        model = minilm_checkpoint(work_dir)
        _run("run_scripts.export_saved_model", "--export_type=sentence_encoder",
             f"--init_checkpoint={model}", f"--vocab_file={model}/vocab.txt",
             f"--export_dir={export_dir}")
    return export_dir


def _first_sentences(source: str, count: int, target: str) -> None:
    """`target`: the CoNLL-U file `source`'s first `count` sentences (blank-line separated)."""
    kept, sentences = [], 0
    with open(source, encoding="utf-8") as f:
        for line in f:
            kept.append(line)
            if not line.strip():
                sentences += 1
                if sentences == count:
                    break
    with open(target + ".tmp", "w", encoding="utf-8") as f:
        f.writelines(kept)
    os.replace(target + ".tmp", target)


def upos_tagger_run(work_dir: str) -> str:
    """The run_ner output_dir `work_dir/upos_minilm` (see the module docstring)."""
    model = minilm_checkpoint(work_dir)
    output_dir = os.path.join(work_dir, "upos_minilm")
    if not os.path.isfile(os.path.join(output_dir, "eval_results.txt")):
        data_dir = os.path.join(work_dir, "ud_ewt")
        os.makedirs(data_dir, exist_ok=True)
        train = f"train_first{UPOS_TRAIN_SENTENCES}.conllu"
        _first_sentences(os.path.join(UD_EWT, "en_ewt-ud-train.conllu"), UPOS_TRAIN_SENTENCES,
                         os.path.join(data_dir, train))
        dev = os.path.join(data_dir, "en_ewt-ud-dev.conllu")
        if not os.path.exists(dev):
            os.symlink(os.path.abspath(os.path.join(UD_EWT, "en_ewt-ud-dev.conllu")), dev)
        _run("run_scripts.run_ner", "--data_format=conllu", f"--data_dir={data_dir}",
             f"--train_file={train}", "--dev_file=en_ewt-ud-dev.conllu",
             f"--vocab_file={model}/vocab.txt", f"--bert_config_file={model}/bert_config.json",
             f"--init_checkpoint={model}", f"--output_dir={output_dir}", "--do_train",
             "--do_eval", f"--max_seq_length={SST2_SEQ_LENGTH}", "--train_batch_size=32",
             "--eval_batch_size=64", "--learning_rate=5e-5", "--num_train_epochs=1",
             "--log_steps=20", "--keep_checkpoint_max=1", "--seed=1")
    return output_dir


def upos_dev_accuracy(work_dir: str) -> dict[str, str]:
    """The tagger's eval_results.txt as {name: value}: "accuracy" over EWT dev's words."""
    return read_results(os.path.join(work_dir, "upos_minilm", "eval_results.txt"))


def upos_tagger_export(work_dir: str) -> str:
    """The tagger's export_dir `work_dir/upos_minilm_export` (made when missing): the NER
    export of the UPOS run (its tags from the run's tagger.json)."""
    export_dir = os.path.join(work_dir, "upos_minilm_export")
    if not _exported(export_dir):
        run = upos_tagger_run(work_dir)
        model = minilm_checkpoint(work_dir)
        _run("run_scripts.export_saved_model", "--export_type=ner",
             f"--init_checkpoint={run}", f"--vocab_file={model}/vocab.txt",
             f"--max_seq_length={SST2_SEQ_LENGTH}", f"--export_dir={export_dir}")
    return export_dir
