"""A checkpoint grown to an extended vocab: new rows the mean of their old pieces' rows (numpy),
old rows bit for bit, the result computing as before in keras-hub and restoring by name in TF1
code; the first steps of continued pretraining train only the new rows; bad inputs one line."""

import json
import os

import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from official import checkpoints
from official.checkpoints import converter, extended_vocab, tf1
from official.configs import BertConfig
from official.modeling.encoder import build_encoder
from tests.checkpoint_helpers import original_weights
from tests.cli import failed, run_module, succeeded

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
EMBEDDINGS, BIAS = "bert/embeddings/word_embeddings", "cls/predictions/output_bias"


def write_vocab(path, tokens):
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def vocabs(tmp_path):
    """An old vocab of 20 tokens (5 special, 3 unused, words and pieces) and an extension that
    fills two unused lines and appends one token."""
    old = SPECIAL + ["[unused0]", "[unused1]", "[unused2]", "a", "b", "c", "ab", "##a", "##b",
                     "##c", "ca", "the", ".", "##s", "x"]
    new = list(old)
    new[5], new[6] = "abc", "##bc"
    new.append("cabs")
    return (write_vocab(tmp_path / "old.txt", old), write_vocab(tmp_path / "new.txt", new),
            old, new)


def test_new_rows_are_the_mean_of_their_old_pieces_and_old_rows_stay(vocabs):
    old_file, new_file, old, _ = vocabs
    plan = extended_vocab.plan_extension(old_file, new_file, len(old), "ckpt")
    i = {token: n for n, token in enumerate(old)}
    # Greedy longest match under the old vocab, by hand: abc = ab ##c; ##bc = ##b ##c;
    # cabs = ca ##b ##s.
    assert plan.new_ids == (5, 6, 20)
    assert plan.old_pieces == ((i["ab"], i["##c"]), (i["##b"], i["##c"]),
                               (i["ca"], i["##b"], i["##s"]))
    rng = np.random.default_rng(0)
    weights = {EMBEDDINGS: rng.normal(size=(20, 4)).astype("float32"),
               BIAS: rng.normal(size=20).astype("float32"),
               "bert/pooler/dense/bias": rng.normal(size=4).astype("float32")}
    grown = extended_vocab.extend_weights(weights, plan)
    for name in (EMBEDDINGS, BIAS):
        rows = weights[name]
        assert grown[name].shape[0] == 21
        keep = [n for n in range(20) if n not in (5, 6)]
        np.testing.assert_array_equal(grown[name][keep], rows[keep])
        np.testing.assert_allclose(grown[name][5], (rows[i["ab"]] + rows[i["##c"]]) / 2, 1e-6)
        np.testing.assert_allclose(grown[name][6], (rows[i["##b"]] + rows[i["##c"]]) / 2, 1e-6)
        np.testing.assert_allclose(
            grown[name][20], (rows[i["ca"]] + rows[i["##b"]] + rows[i["##s"]]) / 3, 1e-6)
    assert grown["bert/pooler/dense/bias"] is weights["bert/pooler/dense/bias"]


def tiny(vocab_size):
    return BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=64, max_position_embeddings=16,
                      type_vocab_size=2)


@pytest.fixture
def old_checkpoint(tmp_path, vocabs):
    """A TF1 checkpoint of the old vocab's size, heads included, its config and vocab beside."""
    old_file, _, old, _ = vocabs
    folder = tmp_path / "old"
    folder.mkdir()
    tf1.write(original_weights(tiny(len(old))), str(folder / "bert_model.ckpt"))
    tiny(len(old)).to_json_file(str(folder / "bert_config.json"))
    (folder / "vocab.txt").write_text(open(old_file).read())
    return str(folder)


def test_the_extended_checkpoint_computes_as_before_in_keras_hub_and_loads_in_tf1_code(
        tmp_path, vocabs, old_checkpoint):
    _, new_file, old, new = vocabs
    converter.convert("tf1", old_checkpoint, str(tmp_path / "hub"), "keras_hub",
                      extend_vocab=new_file)
    converter.convert("tf1", old_checkpoint, str(tmp_path / "tf1"), "tf1", extend_vocab=new_file)
    ours = build_encoder(tiny(len(old)))
    checkpoints.load_init_checkpoint(old_checkpoint, ours)
    backbone = keras_hub.models.BertBackbone.from_preset(str(tmp_path / "hub"))
    assert backbone.vocabulary_size == len(new)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, len(old), (3, 12)).astype("int32")  # no new token
    ids[ids == 5] = 8
    ids[ids == 6] = 8
    mask, types = np.ones_like(ids), np.zeros_like(ids)
    expected = ours({"input_word_ids": ids, "input_mask": mask, "input_type_ids": types})
    actual = backbone({"token_ids": ids, "padding_mask": mask, "segment_ids": types})
    np.testing.assert_allclose(actual["sequence_output"], expected["sequence_output"], atol=1e-5)
    # The original restores by name: the grown variables have the new vocab's rows.
    weights = tf1.read(str(tmp_path / "tf1" / "bert_model.ckpt"))
    graph = tf.Graph()
    with graph.as_default():
        # Zeros: the restore sets them (and op determinism, on in a worker after a training
        # test, refuses an unseeded random initialiser).
        variables = {n: tf.compat.v1.get_variable(n, shape=v.shape,
                                                  initializer=tf.compat.v1.zeros_initializer())
                     for n, v in weights.items()}
        with tf.compat.v1.Session() as session:
            tf.compat.v1.train.Saver(variables).restore(session,
                                                        str(tmp_path / "tf1" / "bert_model.ckpt"))
            restored = session.run(variables)
    assert restored[EMBEDDINGS].shape == (len(new), 32) and restored[BIAS].shape == (len(new),)
    assert json.loads((tmp_path / "tf1" / "bert_config.json").read_text())["vocab_size"] == 21
    assert open(tmp_path / "tf1" / "vocab.txt").read() == open(new_file).read()


def test_the_first_steps_train_only_the_new_rows(tmp_path, pretraining_records):
    """run_pretraining --train_only_new_embeddings_steps=2 from an extended checkpoint, under a
    MirroredStrategy with LAMB and two micro-batches: after step 2 every old row and every other
    weight is as loaded (weight decay included: LAMB's sits inside its update), the new rows
    moved; after step 3 the rest moved too."""
    records = pretraining_records
    vocab = open(records["vocab_file"], encoding="utf-8").read().splitlines()
    config = BertConfig.from_json_file(records["bert_config_file"])
    folder = tmp_path / "old"
    folder.mkdir()
    initial = original_weights(config)
    tf1.write(initial, str(folder / "bert_model.ckpt"))
    config.to_json_file(str(folder / "bert_config.json"))
    write_vocab(folder / "vocab.txt", vocab)
    new = list(vocab)
    new[1:3] = ["phosphorylation", "##ylation"]  # [unused0], [unused1]
    new_file = write_vocab(tmp_path / "new.txt", new)
    converter.convert("tf1", str(folder), str(tmp_path / "ext"), "tf1", extend_vocab=new_file)
    out = tmp_path / "out"
    succeeded(run_module(
        "run_scripts.run_pretraining", f"--input_file={records['input_file']}",
        f"--output_dir={out}", f"--bert_config_file={tmp_path / 'ext' / 'bert_config.json'}",
        f"--init_checkpoint={tmp_path / 'ext'}", "--max_seq_length=32",
        "--max_predictions_per_seq=5", "--train_batch_size=8", "--learning_rate=1e-2",
        "--num_warmup_steps=0", "--do_train", "--num_train_steps=3",
        "--train_only_new_embeddings_steps=2", "--save_checkpoints_steps=1",
        "--keep_checkpoint_max=3", "--distribution_strategy=mirrored", "--optimizer=lamb",
        "--gradient_accumulation_steps=2"))
    start = checkpoints.read_weights(str(tmp_path / "ext"))
    at_2 = checkpoints.read_weights(str(out / "model.ckpt-2"))
    at_3 = checkpoints.read_weights(str(out / "model.ckpt-3"))
    old_rows = [i for i in range(len(vocab)) if i not in (1, 2)]
    for name in (EMBEDDINGS, BIAS):
        np.testing.assert_array_equal(at_2[name][old_rows], start[name][old_rows])
        assert not np.array_equal(at_2[name][[1, 2]], start[name][[1, 2]])
    others = [n for n in start if n not in (EMBEDDINGS, BIAS)]
    for name in others:
        np.testing.assert_array_equal(at_2[name], start[name], err_msg=name)
    moved = [n for n in others if not np.array_equal(at_3[n], start[n])]
    assert "cls/predictions/transform/dense/kernel" in moved
    assert "bert/encoder/layer_0/attention/self/query/kernel" in moved


def test_bad_inputs_are_one_line_and_write_nothing(tmp_path, vocabs, old_checkpoint):
    old_file, new_file, old, _ = vocabs
    moved = list(old)
    moved[9], moved[10] = moved[10], moved[9]
    moved_file = write_vocab(tmp_path / "moved.txt", moved)
    with pytest.raises(ValueError, match=f"^{moved_file}: line 10 is 'c' where {old_file} has "
                                         f"'b': an extension keeps every old token at its id"):
        extended_vocab.plan_extension(old_file, moved_file, len(old), "ckpt")
    duplicate = write_vocab(tmp_path / "dup.txt", old + ["a"])
    out = tmp_path / "out"
    convert = ("run_scripts.convert_checkpoint", "--input_format=tf1",
               f"--input={old_checkpoint}", f"--output_dir={out}")
    assert failed(run_module(*convert, f"--extend_vocab={duplicate}")) == (
        f"convert_checkpoint: {duplicate}: line 21: duplicate token 'a' (first on line 9)")
    short = write_vocab(tmp_path / "short.txt", old[:-1])  # not the checkpoint's vocab
    assert failed(run_module(*convert, f"--extend_vocab={new_file}",
                             f"--vocab_file={short}")) == (
        f"convert_checkpoint: {short} has 19 tokens but {old_checkpoint} has vocab_size=20: "
        f"not this checkpoint's vocab")
    assert not out.exists() or not os.listdir(out)
    no_record = ("run_scripts.run_pretraining", f"--input_file={old_file}",
                 f"--output_dir={tmp_path / 'pt'}", f"--init_checkpoint={old_checkpoint}",
                 f"--bert_config_file={old_checkpoint}/bert_config.json", "--do_train",
                 "--train_only_new_embeddings_steps=2", "--num_train_steps=3",
                 "--max_seq_length=16")
    assert failed(run_module(*no_record)) == (
        f"run_pretraining: {old_checkpoint}: no extended_vocab.json beside it, so no new vocab "
        f"rows to train first (convert_checkpoint --extend_vocab writes one)")
