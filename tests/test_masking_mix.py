"""--masking_mix=MASK,SAME,RANDOM: what a masked-LM prediction is shown as, in the fast generator
(data_prep/fast_instances.py) and in dynamic masking (official/training/pretraining_input.py).

Each of the BERT paper's Table 8 mixes is checked by counting, over thousands of predictions,
what stands at each predicted position: [MASK], the token itself, or another. A random id is
uniform over the vocab, so it is [MASK] or the token itself 1/vocab_size of the time each; with
that, each count is binomial, and must lie within four standard deviations of its mean (a share
of 0 or 1 must be met exactly). The default mix must make the very bytes it made before the mix
was a setting: digests taken from the code before the change. --reproduce_original refuses any
other mix, and a bad mix is one line naming the flag, before TensorFlow loads.
"""

import hashlib
import json
import math
import os

import numpy as np
import pytest
import tensorflow as tf

from data_prep import fast_generation, original_instances
from data_prep.fast_instances import SpecialIds, TokenizedChunk, build_instances
from data_prep.pretraining_options import OptionsError, PretrainingDataOptions
from official.settings_parsing import shares
from official.training import pretraining_input as pi
from official.training.options import PretrainingOptions
from tests.cli import ENV, REPO, refused, run_modules

VOCAB_SIZE = 1000
PAD, CLS, SEP, MASK = 0, 1, 2, 3
SPECIAL = SpecialIds(cls=CLS, sep=SEP, mask=MASK, vocab_size=VOCAB_SIZE,
                     continues_word=np.arange(VOCAB_SIZE) % 4 == 0)
# The BERT paper's Table 8: (MASK, SAME, RANDOM) of every row.
TABLE_8 = [(0.8, 0.1, 0.1), (1.0, 0.0, 0.0), (0.8, 0.0, 0.2), (0.8, 0.2, 0.0),
           (0.0, 0.2, 0.8), (0.0, 0.0, 1.0)]
ROW_IDS = [",".join(f"{share:g}" for share in mix) for mix in TABLE_8]
SAMPLE = os.path.join(REPO, "tests", "data", "pretraining_sample.txt")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")
WITHOUT_TENSORFLOW = dict(ENV, PYTHONPATH=os.pathsep.join(
    [os.path.join(REPO, "tests", "without_tensorflow"), ENV["PYTHONPATH"]]))


def documents_chunk(seed, num_docs=30):
    """Random documents of word ids 10 .. VOCAB_SIZE - 1 (never a special id)."""
    rng = np.random.default_rng(seed)
    lengths = [rng.integers(1, 30, rng.integers(1, 12)) for _ in range(num_docs)]
    sentence_lengths = np.concatenate(lengths)
    ids = rng.integers(10, VOCAB_SIZE, sentence_lengths.sum()).astype(np.int32)
    return TokenizedChunk(ids=ids,
                          sentence_starts=np.concatenate([[0], np.cumsum(sentence_lengths)]),
                          doc_starts=np.concatenate([[0], np.cumsum([len(d) for d in lengths])]))


def stored_batch(seed, rows=64, seq=32, predictions=5):
    """(the text [rows, seq], parsed features of records storing 2 masked positions a row)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(5, seq + 1, rows)
    real = np.arange(seq)[None, :] < lengths[:, None]
    ids = np.where(real, rng.integers(10, VOCAB_SIZE, (rows, seq)), PAD)
    ids[:, 0] = CLS
    ids[np.arange(rows), lengths - 1] = SEP
    positions = np.zeros((rows, predictions), np.int64)
    labels = np.zeros((rows, predictions), np.int64)
    weights = np.zeros((rows, predictions), np.float32)
    stored = ids.copy()
    for r in range(rows):
        picked = np.sort(rng.choice(np.arange(1, lengths[r] - 1), 2, replace=False))
        positions[r, :2], labels[r, :2], weights[r, :2] = picked, ids[r, picked], 1.0
        stored[r, picked] = MASK
    return ids, {"input_word_ids": stored, "input_mask": real.astype(np.int32),
                 "input_type_ids": np.zeros((rows, seq), np.int32),
                 "masked_lm_positions": positions, "masked_lm_ids": labels,
                 "masked_lm_weights": weights, "next_sentence_labels": rng.integers(0, 2, rows)}


def as_tensors(features):
    return {name: tf.constant(value, tf.float32 if value.dtype == np.float32 else tf.int32)
            for name, value in features.items()}


def masking(mix):
    return pi.DynamicMasking(vocab_size=VOCAB_SIZE, mask_id=MASK, special_ids=(PAD, CLS, SEP),
                             masking_mix=mix)


def digest(arrays):
    h = hashlib.sha256()
    for name in sorted(arrays):
        h.update(name.encode())
        h.update(np.ascontiguousarray(arrays[name]).tobytes())
    return h.hexdigest()


def assert_shares(shown, originals, mix):
    """`shown`, the ids at the predicted positions, against `originals`, the tokens there:
    [MASK] / the same token / another within four binomial standard deviations of the mix's
    shares, a random id counting as [MASK] or the same 1/VOCAB_SIZE of the time each."""
    mask, same, random = mix
    expected = {"mask": mask + random / VOCAB_SIZE, "same": same + random / VOCAB_SIZE,
                "other": random * (1 - 2 / VOCAB_SIZE)}
    counts = {"mask": np.sum(shown == MASK), "same": np.sum(shown == originals),
              "other": np.sum((shown != MASK) & (shown != originals))}
    n = len(shown)
    assert n > 4000
    for kind, p in expected.items():
        bound = 4 * math.sqrt(n * p * (1 - p))
        assert abs(counts[kind] - n * p) <= bound, (kind, counts[kind], n * p, bound)


@pytest.mark.parametrize("mix", TABLE_8, ids=ROW_IDS)
def test_the_fast_generator_shows_each_table_8_mix_in_its_shares(mix):
    options = PretrainingDataOptions(max_seq_length=64, max_predictions_per_seq=10,
                                     dupe_factor=8, masking_mix=mix)
    batch = build_instances(documents_chunk(3, num_docs=60), options, SPECIAL,
                            np.random.default_rng(4))
    valid = batch.masked_lm_weights > 0
    rows = np.nonzero(valid)[0]
    shown = batch.input_ids[rows, batch.masked_lm_positions[valid]]
    assert_shares(shown, batch.masked_lm_ids[valid], mix)
    # The summary's counts are the draws': a share of 0 is never drawn.
    drawn = (batch.replaced_with_mask, batch.kept, batch.replaced_with_random)
    assert sum(drawn) == len(shown)
    assert [count == 0 for count in drawn] == [share == 0 for share in mix]


@pytest.mark.parametrize("mix", TABLE_8, ids=ROW_IDS)
def test_dynamic_masking_shows_each_table_8_mix_in_its_shares(mix):
    text, features = stored_batch(5, rows=1500)
    out = pi.mask_batch(as_tensors(features), masking(mix), tf.constant([1, 2], tf.int64))
    out = {name: value.numpy() for name, value in out.items()}
    valid = out["masked_lm_weights"] > 0
    rows = np.nonzero(valid)[0]
    positions = out["masked_lm_positions"][valid]
    np.testing.assert_array_equal(out["masked_lm_ids"][valid], text[rows, positions])
    assert_shares(out["input_word_ids"][rows, positions], text[rows, positions], mix)


def test_the_default_mix_makes_the_bytes_it_made_before_it_was_a_setting(tmp_path):
    """Digests of the code before --masking_mix existed: the default draws and compares as it
    did (official/pretraining_records.replacement_thresholds)."""
    for whole_words, before in ((False, "6016b78730b84cd51537e02e83dcafb1"
                                        "dcd9c4bc9b1e0b907ffbefb658fdbeef"),
                                (True, "dc5f99b86939a34d51d7f5c2c9fa8616"
                                       "020925f248c578a1b2f9209ddf789c26")):
        options = PretrainingDataOptions(max_seq_length=48, max_predictions_per_seq=8,
                                         dupe_factor=2, do_whole_word_mask=whole_words)
        batch = build_instances(documents_chunk(1), options, SPECIAL, np.random.default_rng(2))
        assert digest({name: value for name, value in vars(batch).items()
                       if isinstance(value, np.ndarray)}) == before

    _, features = stored_batch(0)
    out = pi.mask_batch(as_tensors(features), masking((0.8, 0.1, 0.1)),
                        tf.constant([7, 9], tf.int64))
    assert digest({name: value.numpy() for name, value in out.items()}) == (
        "dc4a77b3e882e574193633b69ce28f28e0e2b1e3e7f12fb25df87807dec460f4")

    # A shard the command line makes from the shipped sample.
    options = PretrainingDataOptions(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=2)
    fast_generation.generate([SAMPLE], str(tmp_path), VOCAB, True, options)
    with open(tmp_path / "pretraining-00000-of-00001.tfrecord", "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == (
            "25d3059a4c7bf580bef3de48740f45c9228a9e7177d555afa765f6fa10ca4ca4")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["options"]["masking_mix"] == [0.8, 0.1, 0.1]


def test_the_summary_records_the_mix_and_what_was_drawn(tmp_path):
    options = PretrainingDataOptions(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1,
                                     masking_mix=(0.0, 0.2, 0.8))
    fast_generation.generate([SAMPLE], str(tmp_path), VOCAB, True, options)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["options"]["masking_mix"] == [0.0, 0.2, 0.8]
    assert summary["masking_split"]["mask"] == 0.0
    assert abs(summary["masking_split"]["random"] - 0.8) < 0.05


@pytest.mark.parametrize("text", ["0.8,0.1,0.1", "1,0,0", "0.8,0,0.2", "0.8,0.2,0", "0,0.2,0.8",
                                  "0,0,1", " 0.3333333, 0.3333333, 0.3333334"])
def test_table_8_and_hand_written_thirds_are_accepted(text):
    mix = shares(text, "--masking_mix", 3)
    assert PretrainingDataOptions(masking_mix=mix).masking_mix == mix
    assert PretrainingOptions(bert_config_file=None, output_dir="out", input_file="x",
                              do_train=True, dynamic_masking=True,
                              masking_mix=mix).masking_mix == mix


@pytest.mark.parametrize("text,message", [
    ("0.8,0.1", "--masking_mix=0.8,0.1: 3 comma-separated numbers are needed, got 2"),
    ("0.8,0.1,0.1,0", "--masking_mix=0.8,0.1,0.1,0: 3 comma-separated numbers are needed, got 4"),
    ("0.8,0.1,0.2", "--masking_mix=0.8,0.1,0.2: the shares must sum to 1, they sum to 1.1"),
    ("0.5,0.2,0.2", "--masking_mix=0.5,0.2,0.2: the shares must sum to 1, they sum to 0.9"),
    ("1.2,-0.1,-0.1", "--masking_mix=1.2,-0.1,-0.1: the shares must not be negative, got -0.1"),
    ("a,b,c", "--masking_mix=a,b,c: not 3 comma-separated numbers"),
    ("0.8,,0.2", "--masking_mix=0.8,,0.2: not 3 comma-separated numbers"),
    ("nan,0,1", "--masking_mix=nan,0,1: the shares must be finite numbers, got nan, 0.0, 1.0"),
    ("inf,0,-inf", "--masking_mix=inf,0,-inf: the shares must be finite numbers"),
])
def test_a_bad_mix_is_one_line_naming_the_flag(text, message):
    with pytest.raises(ValueError) as raised:
        shares(text, "--masking_mix", 3)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_options_made_in_code_are_checked_too():
    with pytest.raises(OptionsError, match="masking_mix: the shares must sum to 1"):
        PretrainingDataOptions(masking_mix=(0.5, 0.5, 0.5))
    with pytest.raises(OptionsError, match=r"masking_mix must be 3 shares"):
        PretrainingDataOptions(masking_mix=(0.5, 0.5))
    with pytest.raises(ValueError, match="--masking_mix=1.0,0.0,0.0 needs --dynamic_masking"):
        PretrainingOptions(bert_config_file=None, output_dir="out", input_file="x",
                           do_train=True, masking_mix=(1.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="--masking_mix=1.0,0.0,0.0: --objective=ltr masks"):
        PretrainingOptions(bert_config_file=None, output_dir="out", input_file="x",
                           do_train=True, dynamic_masking=True, objective="ltr",
                           masking_mix=(1.0, 0.0, 0.0))


def test_reproduce_original_keeps_the_originals_mix():
    """The original's generator has 80/10/10 alone: another mix is refused by the options, by
    the generator itself, and by the command line before TensorFlow loads."""
    with pytest.raises(OptionsError, match="masking_mix must be the original's 0.8,0.1,0.1 to "
                                           "reproduce the original, got 1.0,0.0,0.0"):
        PretrainingDataOptions(masking_mix=(1.0, 0.0, 0.0)).check_original()
    PretrainingDataOptions(masking_mix=(0.8, 0.1, 0.1)).check_original()
    with pytest.raises(OptionsError, match="masking_mix must be the original's"):
        original_instances.create_training_instances(
            [], [], PretrainingDataOptions(masking_mix=(0.0, 0.0, 1.0)))


def test_the_command_lines_refuse_a_bad_mix_in_one_line_before_tensorflow(tmp_path):
    data = ["data_prep.create_pretraining_data", f"--input_file={SAMPLE}",
            f"--vocab_file={VOCAB}"]
    pretrain = ["run_scripts.run_pretraining", f"--input_file={SAMPLE}",
                f"--output_dir={tmp_path / 'out'}", "--do_train"]
    results = run_modules(
        [*data, "--reproduce_original", f"--output_file={tmp_path / 'x.tfrecord'}",
         "--masking_mix=1,0,0"],
        [*data, f"--output_dir={tmp_path / 'fast'}", "--masking_mix=0.8,0.1"],
        [*pretrain, "--masking_mix=0.8,0.1,0.2"],
        [*pretrain, "--masking_mix=0,0.2,0.8"],
        env=WITHOUT_TENSORFLOW)
    refused(results[0], "create_pretraining_data: masking_mix must be the original's "
            "0.8,0.1,0.1 to reproduce the original, got 1.0,0.0,0.0")
    refused(results[1], "create_pretraining_data: --masking_mix=0.8,0.1: 3 comma-separated "
            "numbers are needed, got 2")
    refused(results[2], "run_pretraining: --masking_mix=0.8,0.1,0.2: the shares must sum to 1")
    refused(results[3], "run_pretraining: --masking_mix=0.0,0.2,0.8 needs --dynamic_masking")
    assert not os.listdir(tmp_path)
