"""Every entry point answers a bad flag, a missing file, a bad setting and --help before it imports
TensorFlow: each runs here in a process where TensorFlow, Keras, tensorflow-text,
tensorflow-datasets and keras-hub cannot be imported (tests/without_tensorflow/ first on its
PYTHONPATH), and must still end with its one-line error (or its help), never an ImportError.

bench/startup.py measures how long each takes on a machine that has TensorFlow.
"""

import os
import subprocess
import sys

import pytest

from official.checkpoints import tf1
from official.configs import BertConfig
from tests.checkpoint_helpers import original_weights
from tests.cli import ENV, PATIENCE, REPO, refused

BLOCKED = os.path.join(REPO, "tests", "without_tensorflow")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
BLIMP = os.path.join(REPO, "data", "blimp_sample", "data", "adjunct_island.jsonl.gz")


def run_without_tensorflow(module: str, *flags) -> subprocess.CompletedProcess:
    env = dict(ENV, PYTHONPATH=os.pathsep.join([BLOCKED, ENV["PYTHONPATH"]]))
    return subprocess.run([sys.executable, "-m", module, *map(str, flags)], cwd=REPO,
                          capture_output=True, text=True, env=env, timeout=PATIENCE)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("startup")
    BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=64).to_json_file(
                   str(root / "bert_config.json"))
    (root / "glue").mkdir()
    (root / "text.txt").write_text("one line\n")
    (root / "bad.conllu").write_text("1\tword\tword\tNOUN\n")
    (root / "empty.jsonl").write_text("\n")
    encoder = root / "encoder"
    encoder.mkdir()
    tf1.write(original_weights(BertConfig(vocab_size=99, hidden_size=8, num_hidden_layers=1,
                                          num_attention_heads=2, intermediate_size=8),
                               heads=False), str(encoder / "bert_model.ckpt"))
    return {"encoder": str(encoder), "config": str(root / "bert_config.json"),
            "glue": str(root / "glue"), "text": str(root / "text.txt"), "out": str(root / "out"),
            "root": root}


def cases(f):
    """(module, flags, what the one line holds) for each entry point's checks."""
    model = [f"--bert_config_file={f['config']}", f"--vocab_file={VOCAB}",
             f"--output_dir={f['out']}", "--max_seq_length=64"]
    classify = ["--task_name=MRPC", f"--data_dir={f['glue']}", "--do_train", *model]
    probe = [*model, f"--init_checkpoint={f['root']}",
             *[f"--{split}_file={REPO}/data/ud_ewt_sample/{split}.conllu"
               for split in ("train", "dev", "test")]]
    pairs = [f"--init_checkpoint={f['root']}", f"--input_file={BLIMP}",
             f"--vocab_file={VOCAB}", f"--output_dir={f['out']}"]
    return [
        ("run_scripts.run_classifier", ["--task_name=MRPC"],
         "Flag --output_dir must have a value other than None"),
        ("run_scripts.run_classifier", [*classify, "--long_doc=median"],
         "--long_doc=median: value should be one of"),
        ("run_scripts.run_classifier", [*classify, "--long_doc=windows"],
         "this task's examples are pairs"),
        ("run_scripts.run_classifier", [*classify, "--max_seq_length=128"],
         "--max_seq_length=128 is more than the max_position_embeddings=64"),
        ("run_scripts.run_classifier", [*classify, "--lora_alpha=8"],
         "--lora_alpha is a LoRA setting: it needs --lora_rank"),
        ("run_scripts.run_classifier", [*classify, "--teacher_checkpoint=t", "--bitfit"],
         "--teacher_checkpoint and BitFit (bias terms), pooler frozen: a distillation trains"),
        ("run_scripts.run_classifier", [*classify, "--init_checkpoint=/nowhere/ckpt"],
         "/nowhere/ckpt: no checkpoint there (no ckpt.index)"),
        ("run_scripts.run_squad", [*model, "--do_train", "--train_file=/nowhere.json"],
         "/nowhere.json: no such file"),
        ("run_scripts.run_squad", [*model, "--do_predict", f"--predict_file={f['text']}",
                                   "--doc_stride=0", "--max_query_length=16"],
         "doc_stride must be positive"),
        ("run_scripts.run_ner", [*model, "--do_train", f"--data_dir={f['glue']}"],
         "eng.train: no such file"),
        ("run_scripts.run_ner", [*model, "--do_train", f"--data_dir={f['glue']}",
                                 "--feature_lstm_units=64"],
         "--feature_lstm_units is a setting of --feature_based: give both, or neither"),
        ("run_scripts.run_ner", [*model, "--do_train", f"--data_dir={f['glue']}",
                                 "--feature_based=last", "--lora_rank=4"],
         "--feature_based and --lora_rank: the feature-based approach freezes the whole"),
        ("run_scripts.run_ner", [*model, "--do_train", f"--data_dir={f['glue']}",
                                 "--feature_based=last", "--teacher_checkpoint=t"],
         "--feature_based and --teacher_checkpoint"),
        ("run_scripts.run_ner", [*model, "--do_train", f"--data_dir={f['glue']}",
                                 "--feature_based=concat_last_4"],
         "--feature_based=concat_last_4 reads the last 4 transformer layers: the model has 2"),
        ("run_scripts.run_sentence_embedding", [*model, "--do_train",
                                                f"--train_file={f['text']}", "--scale=0"],
         "--scale must be positive"),
        ("run_scripts.run_pretraining", [*model, "--do_train", "--input_file=/nowhere/*.tf"],
         "--input_file pattern '/nowhere/*.tf' matches no file"),
        ("run_scripts.run_pretraining", [*model, "--do_train", f"--input_file={f['text']}",
                                         "--teacher_checkpoint=t", "--student_layers=0,x"],
         "--student_layers='0,x' is not a comma-separated list of integers"),
        ("run_scripts.export_saved_model", ["--export_type=classifier", "--task_name=MRPC",
                                            "--export_dir=e",
                                            f"--vocab_file={VOCAB}", "--peft_checkpoints=a"],
         "--peft_checkpoints is for export_type=multitask"),
        ("run_scripts.export_saved_model", ["--export_type=sentence_encoder", "--pooling=median",
                                            "--export_dir=e", f"--vocab_file={VOCAB}"],
         "--pooling=median: value should be one of"),
        ("run_scripts.extract_features", [f"--input_file={f['text']}", "--output_file=o.jsonl",
                                          f"--vocab_file={VOCAB}", "--layers=-1,x"],
         "--layers='-1,x' is not a comma-separated list of integers"),
        ("run_scripts.build_static_embeddings", ["--init_checkpoint=i", f"--output_dir={f['out']}",
                                                 "--corpus_file=/nowhere.txt"],
         "--corpus_file: /nowhere.txt: no such file"),
        ("run_scripts.convert_checkpoint", [f"--output_dir={f['out']}", "--input_format=tf1"],
         "--input and --input_format are needed"),
        ("run_scripts.semantic_search", ["--export_dir=e", f"--corpus_file={f['text']}",
                                         f"--queries_file={f['text']}", "--top_k=0"],
         "--top_k=0: must be at least 1"),
        ("data_prep.create_pretraining_data", [f"--input_file={f['text']}",
                                               f"--vocab_file={VOCAB}",
                                               f"--output_dir={f['out']}", "--num_workers=0"],
         "--num_workers=0: must be at least 1"),
        ("data_prep.build_vocab", ["--output_file=v.txt"], "--input_file: required"),
        ("data_prep.build_vocab", ["--output_file=v.txt", "--vocab_size=many"],
         "flag --vocab_size=many: invalid literal for int()"),
        ("data_prep.extend_vocab", [f"--vocab_file={VOCAB}", f"--input_file={f['text']}",
                                    f"--output_dir={f['out']}", "--max_new_tokens=995"],
         "has only 994 [unusedN] lines for --strategy=unused"),
        ("data_prep.vocab_report", [f"--vocab_file={VOCAB}", "--input_file=/nowhere.txt"],
         "/nowhere.txt: no file matches"),
        ("run_scripts.run_pretraining", [*model, "--do_train", f"--input_file={f['text']}",
                                         "--init_checkpoint=/",
                                         "--train_only_new_embeddings_steps=1"],
         "/: no extended_vocab.json beside it"),
        ("run_scripts.attack_classifier", ["--export_dir=e", f"--input_file={f['text']}",
                                           "--output_file=o.jsonl", "--recipe=bae"],
         "--recipe=bae needs --masked_lm_checkpoint"),
        ("run_scripts.attack_classifier", [f"--export_dir={f['root']}", "--output_file=o.jsonl",
                                           f"--input_file={f['text']}",
                                           f"--synonyms_file={VOCAB}"],
         "uncased_vocab.txt:1: 1 fields, expected two words"),
        ("run_scripts.attack_classifier", [f"--export_dir={f['root']}", "--output_file=o.jsonl",
                                           f"--input_file={f['text']}", f"--synonyms_file="
                                           f"{REPO}/data/synonyms_sample/synonyms.txt"],
         "text.txt:1: the header has no sentence and no label column"),
        ("run_scripts.bias_report", ["--test=seat", "--export_dir=e", f"--seat_files={f['text']}",
                                     f"--output_dir={f['out']}"], "text.txt: not one JSON object"),
        ("run_scripts.bias_report", ["--test=crows_pairs", *model, "--init_checkpoint=/",
                                     f"--input_file={f['text']}"],
         "text.txt:1: no column sent_more"),
        ("run_scripts.behavioral_test", ["--export_dir=e", f"--suite={f['text']}",
                                         f"--output_dir={f['out']}"], ":1: not JSON"),
        ("run_scripts.behavioral_test", ["--export_dir=e", f"--suite={f['text']}",
                                         f"--output_dir={f['out']}", "--sample=0"],
         "--sample=0: must be at least 1"),
        ("data_prep.checklist_suite", [f"--input_file={f['text']}", "--output_file=s.jsonl"],
         "neither a tarball nor a pickle"),
        ("run_scripts.counter_fit_vectors", [f"--vectors_file={f['text']}",
                                             f"--synonyms_file={f['text']}", "--output_file=o",
                                             "--epochs=0"],
         "--epochs=0: must be at least 1"),
        ("run_scripts.run_classifier", [*classify, f"--augment_with={f['text']}"],
         "--augment_with: task mrpc is a text-pair task"),
        ("run_scripts.probe_layers", [*probe, "--task=upos", "--layers=3"],
         "--layers: layer 3 is beyond the model"),
        ("run_scripts.probe_layers", [*probe, "--task=upos", f"--dev_file={f['root']}/bad.conllu"],
         "bad.conllu:1: 4 tab-separated columns, expected 10"),
        ("run_scripts.score_minimal_pairs", [*pairs, f"--input_file={f['text']}"],
         "text.txt:1: not JSON"),
        ("run_scripts.score_minimal_pairs", [*pairs, f"--input_file={f['root']}/empty.jsonl"],
         "empty.jsonl: no pairs"),
        ("run_scripts.score_minimal_pairs", [*pairs[1:], f"--init_checkpoint={f['encoder']}"],
         "encoder: has no masked-LM head"),
    ]


def test_every_entry_point_answers_bad_input_without_tensorflow(files):
    """The checks of each entry point, run side by side (each a process of its own)."""
    runs = [(module, flags, expected, subprocess.Popen(
        [sys.executable, "-m", module, *flags], cwd=REPO, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        env=dict(ENV, PYTHONPATH=os.pathsep.join([BLOCKED, ENV["PYTHONPATH"]]))))
        for module, flags, expected in cases(files)]
    for module, flags, expected, process in runs:
        stdout, stderr = process.communicate(timeout=PATIENCE)
        result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        assert "ImportError" not in stderr, (module, flags, stderr[-2000:])
        refused(result, f"{module.split('.')[-1]}: ", expected)
    assert not os.path.exists(files["out"])


@pytest.mark.parametrize("module", [
    "run_scripts.run_classifier", "run_scripts.run_pretraining", "run_scripts.export_saved_model",
    "data_prep.create_pretraining_data"])
def test_help_needs_no_tensorflow(module):
    result = run_without_tensorflow(module, "--helpshort")
    assert "ImportError" not in result.stderr and "Traceback" not in result.stderr
    assert "--" in result.stdout + result.stderr


def test_a_command_that_passes_its_checks_reaches_tensorflow_only_in_its_job(files):
    """The guard itself: a valid command passes every check here, then fails where its job
    imports TensorFlow (so the refusals above come from checks that ran before it)."""
    result = run_without_tensorflow(
        "run_scripts.run_classifier", "--task_name=MRPC", f"--data_dir={files['glue']}",
        "--do_train", f"--bert_config_file={files['config']}", f"--vocab_file={VOCAB}",
        f"--output_dir={files['root'] / 'valid'}", "--max_seq_length=64")
    assert result.returncode != 0
    assert "tensorflow is not importable here" in result.stderr, result.stderr[-2000:]
    assert not (files["root"] / "valid").exists()


def test_the_names_flags_list_are_the_registrations_tensorflow_loads():
    """The TensorFlow-free name lists the flags are defined with, against the tables that
    build each name (which import TensorFlow)."""
    from official import checkpoints
    from official.checkpoints import converter
    from official.export import jobs, kinds, options

    assert tuple(jobs.EXPORT_TYPES) == options.EXPORT_TYPES
    assert tuple(kinds.KINDS) == options.FINETUNED_TYPES
    assert tuple(converter.FORMATS) == checkpoints.FORMAT_NAMES
