"""Tests for official.training.pretraining_input: what the pipeline reads, how it shards, its file
checks, dynamic masking, and that a seed and an iterator checkpoint reproduce the batches."""

import numpy as np
import pytest
import tensorflow as tf

from data_prep import pretraining_examples as pe
from official.training import pretraining_input as pi
from tests.cli import outputs, start
from tests.reference_bert import original_parse_spec

SEQ, PREDICTIONS = 16, 4
PAD, CLS, SEP, MASK = 0, 1, 2, 3
VOCAB_SIZE = 500
MASKING = pi.DynamicMasking(vocab_size=VOCAB_SIZE, mask_id=MASK, special_ids=(PAD, CLS, SEP))


def random_instances(rng, count, seq=SEQ, predictions=PREDICTIONS, min_length=6):
    """`count` instances as the original masks them, each as (Example, unmasked ids [length]).

    [CLS] A [SEP] B [SEP] of random word ids; min(predictions, max(1, round(0.15 * length)))
    word positions hold [MASK], their ids in masked_lm_ids.
    """
    instances = []
    for _ in range(count):
        length = int(rng.integers(min_length, seq + 1))
        a_len = int(rng.integers(1, length - 3))
        ids = rng.integers(MASK + 1, VOCAB_SIZE, length)
        ids[[0, a_len + 1, length - 1]] = CLS, SEP, SEP
        segments = [0] * (a_len + 2) + [1] * (length - a_len - 2)
        words = np.flatnonzero((ids != CLS) & (ids != SEP))
        num = min(predictions, max(1, round(0.15 * length)))
        positions = np.sort(rng.choice(words, num, replace=False))
        stored = ids.copy()
        stored[positions] = MASK
        example = pe.make_example(stored.tolist(), segments, positions.tolist(),
                                  ids[positions].tolist(), int(rng.integers(2)),
                                  max_seq_length=seq, max_predictions_per_seq=predictions)
        instances.append((example, ids))
    return instances


def write_files(tmp_path, records_per_file, seed=0, **lengths):
    """One TFRecord file per entry of `records_per_file`; returns (paths, unmasked ids per record
    in file order)."""
    rng = np.random.default_rng(seed)
    paths, originals = [], []
    for i, count in enumerate(records_per_file):
        path = str(tmp_path / f"part-{i:02d}.tfrecord")
        with pe.open_shard(path) as shard:
            for example, ids in random_instances(rng, count, **lengths):
                shard.write(example)
                originals.append(ids)
        paths.append(path)
    return paths, originals


def dataset(files, *, is_training, batch_size=4, seq=SEQ, predictions=PREDICTIONS, **kwargs):
    return pi.pretraining_dataset(files, max_seq_length=seq, max_predictions_per_seq=predictions,
                                  batch_size=batch_size, is_training=is_training, **kwargs)


def concat(batches):
    """A list of batches as one dict of numpy arrays."""
    return {k: np.concatenate([b[k].numpy() for b in batches]) for k in batches[0]}


def rows(batches):
    """Each record's input_word_ids as a hashable tuple (random ids make them unique)."""
    return [tuple(r) for r in concat(batches)["input_word_ids"]]


def context(pipeline_id, num_pipelines=2):
    return tf.distribute.InputContext(num_input_pipelines=num_pipelines,
                                      input_pipeline_id=pipeline_id,
                                      num_replicas_in_sync=num_pipelines)


def test_eval_reads_each_record_once_in_order_as_the_original_parses_it(tmp_path):
    files, _ = write_files(tmp_path, [5, 6])
    batches = list(dataset(files, is_training=False, batch_size=4))
    assert [b["input_word_ids"].shape[0] for b in batches] == [4, 4, 3]  # remainder kept
    ours = concat(batches)

    records = tf.stack(list(tf.data.TFRecordDataset(files)))
    reference = tf.io.parse_example(records, original_parse_spec(SEQ, PREDICTIONS))
    renamed = {"input_word_ids": "input_ids", "input_type_ids": "segment_ids"}
    for name, value in ours.items():
        expected = reference[renamed.get(name, name)].numpy()
        if name == "next_sentence_labels":
            expected = expected[:, 0]
        np.testing.assert_array_equal(value, expected, err_msg=name)
        assert value.dtype == (np.float32 if name == "masked_lm_weights" else np.int32), name


def test_training_batches_have_static_shapes_and_repeat(tmp_path):
    files, _ = write_files(tmp_path, [5, 5])
    ds = dataset(files, is_training=True, batch_size=4)
    assert ds.options().deterministic
    expected_shapes = {"input_word_ids": [4, SEQ], "input_mask": [4, SEQ],
                       "input_type_ids": [4, SEQ], "masked_lm_positions": [4, PREDICTIONS],
                       "masked_lm_ids": [4, PREDICTIONS], "masked_lm_weights": [4, PREDICTIONS],
                       "next_sentence_labels": [4]}
    assert {k: s.shape.as_list() for k, s in ds.element_spec.items()} == expected_shapes
    # 100 rows of 10 records. The shuffle buffer holds many epochs of so small a set, so epochs
    # mix and counts vary, but every record comes, and again.
    seen = rows(list(ds.take(25)))
    assert set(seen) == set(rows(list(dataset(files, is_training=False))))
    assert len(seen) == 100


@pytest.mark.parametrize("records_per_file", [[4, 4, 4, 4, 4], [10]], ids=["by_file", "by_record"])
def test_evaluation_pipelines_read_disjoint_covering_parts(tmp_path, records_per_file):
    files, _ = write_files(tmp_path, records_per_file)
    everything = set(rows(list(dataset(files, is_training=False))))
    parts = [set(rows(list(dataset(files, is_training=False, input_context=context(i)))))
             for i in range(2)]
    assert not parts[0] & parts[1]
    assert parts[0] | parts[1] == everything
    if len(files) > 1:  # by file: pipeline i reads files i, i + 2, ...
        first_files = set(rows(list(dataset(files[0::2], is_training=False))))
        assert parts[0] == first_files


@pytest.mark.parametrize("masking", [None, MASKING], ids=["stored_masks", "dynamic_masking"])
@pytest.mark.parametrize("replicas", [2, 4])
def test_training_pipelines_split_the_global_batches_of_one_pipeline(tmp_path, masking,
                                                                      replicas):
    """Two pipelines (workers) of `replicas` in all: each global batch of 8 rows is one
    pipeline's batch of 8, masks included, pipeline 0 holding its first rows, then pipeline 1;
    each of a pipeline's elements is one replica's batch, of 8 / replicas rows."""
    files, _ = write_files(tmp_path, [7, 9, 6])
    per_replica = 8 // replicas
    whole = list(dataset(files, is_training=True, batch_size=8, seed=5,
                         dynamic_masking=masking).take(5))
    parts = [list(dataset(files, is_training=True, batch_size=per_replica, seed=5,
                          dynamic_masking=masking,
                          input_context=tf.distribute.InputContext(2, i, replicas))
                  .take(5 * replicas // 2)) for i in range(2)]
    assert {b["input_word_ids"].shape[0] for part in parts for b in part} == {per_replica}
    per_step = replicas // 2
    split = [{name: tf.concat([b[name] for part in parts
                               for b in part[step * per_step:(step + 1) * per_step]], 0)
              for name in whole[0]} for step in range(5)]
    assert_same_batches(whole, split)


def test_bad_files_are_named(tmp_path):
    files, _ = write_files(tmp_path, [2])
    (tmp_path / "long").mkdir()
    long_files, _ = write_files(tmp_path / "long", [2], seq=2 * SEQ)
    with pytest.raises(ValueError, match=f"{long_files[0]}: input_ids has 32 values, "
                                         f"expected max_seq_length=16"):
        dataset([files[0], long_files[0]], is_training=True)
    with pytest.raises(ValueError, match="masked_lm_positions has 4 values, "
                                         "expected max_predictions_per_seq=5"):
        dataset(files, is_training=True, predictions=5)

    example = random_instances(np.random.default_rng(0), 1)[0][0]
    del example.features.feature["next_sentence_labels"]
    missing = str(tmp_path / "missing.tfrecord")
    with pe.open_shard(missing) as shard:
        shard.write(example)
    with pytest.raises(ValueError, match="missing.tfrecord: lacks the feature next_sentence_lab"):
        dataset(files + [missing], is_training=False)

    garbage = tmp_path / "garbage.tfrecord"
    garbage.write_bytes(b"this is not a TFRecord file at all")
    with pytest.raises(ValueError, match="garbage.tfrecord: not a TFRecord file"):
        dataset([str(garbage)], is_training=False)
    with pytest.raises(ValueError, match="absent.tfrecord: cannot be read"):
        dataset(files + [str(tmp_path / "absent.tfrecord")], is_training=False)
    with pytest.raises(ValueError, match="no input files"):
        dataset([], is_training=True)


def test_dynamic_masking_statistics(tmp_path):
    seq, predictions = 128, 20
    files, originals = write_files(tmp_path, [3000], seq=seq, predictions=predictions,
                                   min_length=64)
    out = concat(list(dataset(files, is_training=False, batch_size=500, seq=seq,
                              predictions=predictions, dynamic_masking=MASKING)))
    positions, weights = out["masked_lm_positions"], out["masked_lm_weights"]
    chosen = weights > 0
    counts = chosen.sum(axis=1)
    lengths = np.array([len(ids) for ids in originals])
    # As the original: min(max_predictions, max(1, round(0.15 * length))) (halves to even).
    np.testing.assert_array_equal(counts, np.minimum(predictions,
                                                     np.maximum(1, np.rint(0.15 * lengths))))
    assert set(np.unique(weights)) == {0.0, 1.0}
    assert np.all(chosen[:, :-1] >= chosen[:, 1:])  # real predictions first, then padding
    assert np.all(positions[~chosen] == 0) and np.all(out["masked_lm_ids"][~chosen] == 0)

    replaced = {"mask": 0, "kept": 0, "random": 0}
    relative_ranks, stored_again = [], 0
    stored = concat(list(dataset(files, is_training=False, batch_size=500, seq=seq,
                                 predictions=predictions)))["masked_lm_positions"]
    for row, ids in enumerate(originals):
        picked = positions[row, chosen[row]]
        assert np.all(np.diff(picked) > 0) and picked[-1] < len(ids)
        assert np.all((ids[picked] != CLS) & (ids[picked] != SEP))
        np.testing.assert_array_equal(out["masked_lm_ids"][row, chosen[row]], ids[picked])
        masked = out["input_word_ids"][row]
        untouched = np.setdiff1d(np.arange(len(ids)), picked)
        np.testing.assert_array_equal(masked[untouched], ids[untouched])
        assert np.all(masked[len(ids):] == PAD)
        replaced["mask"] += np.sum(masked[picked] == MASK)
        replaced["kept"] += np.sum(masked[picked] == ids[picked])
        replaced["random"] += np.sum((masked[picked] != MASK) & (masked[picked] != ids[picked]))
        words = np.flatnonzero((ids != CLS) & (ids != SEP))
        relative_ranks.extend(np.searchsorted(words, picked) / len(words))
        stored_again += np.array_equal(picked, stored[row, :len(picked)])

    total = counts.sum()
    assert abs(total / sum(len(ids) - 3 for ids in originals) - 0.15) < 0.01
    # ~58k predictions: 3 standard deviations of a 10% share are < 0.4%.
    assert abs(replaced["mask"] / total - 0.8) < 0.01
    assert abs(replaced["kept"] / total - 0.1) < 0.01  # a random id may equal the original:
    assert abs(replaced["random"] / total - 0.1) < 0.01  # 1/500 of 10%, inside the tolerance
    quarters = np.histogram(relative_ranks, bins=4, range=(0, 1))[0] / total
    np.testing.assert_allclose(quarters, 0.25, atol=0.01)  # uniform over the candidates
    assert stored_again < 10  # fresh masks, not the stored ones


def test_dynamic_masks_differ_per_batch_and_pipeline(tmp_path):
    files, _ = write_files(tmp_path, [8])  # the same 8 records, read twice
    batches = list(dataset(files + files, is_training=False, batch_size=8,
                           dynamic_masking=MASKING))
    assert not np.array_equal(batches[0]["masked_lm_positions"], batches[1]["masked_lm_positions"])
    other_pipeline = next(iter(dataset(files + files, is_training=False, batch_size=8,
                                       dynamic_masking=MASKING, input_context=context(1))))
    first_pipeline = next(iter(dataset(files + files, is_training=False, batch_size=8,
                                       dynamic_masking=MASKING, input_context=context(0))))
    assert not np.array_equal(first_pipeline["masked_lm_positions"],
                              other_pipeline["masked_lm_positions"])


def assert_same_batches(first, second):
    assert len(first) == len(second)
    for a, b in zip(first, second):
        for name in a:
            np.testing.assert_array_equal(a[name].numpy(), b[name].numpy(), err_msg=name)


@pytest.mark.parametrize("masking", [None, MASKING], ids=["stored_masks", "dynamic_masking"])
def test_same_seed_same_batches(tmp_path, masking):
    files, _ = write_files(tmp_path, [7, 9, 6])
    take = lambda seed: list(dataset(files, is_training=True, seed=seed,  # noqa: E731
                                     dynamic_masking=masking).take(8))
    assert_same_batches(take(3), take(3))
    assert rows(take(3)) != rows(take(4))


def test_same_seed_same_batches_in_separate_runs(tmp_path):
    """Two processes of tests/pipeline_digest.py, side by side (two cores), print the same
    digest of 8 training batches (shuffles and dynamic masks)."""
    files, _ = write_files(tmp_path, [7, 9, 6])
    runs = [start("tests.pipeline_digest", *files) for _ in range(2)]
    results = [outputs(run) for run in runs]
    assert [result.returncode for result in results] == [0, 0], results[0].stderr[-3000:]
    digests = [result.stdout.strip() for result in results]
    assert len(digests[0]) == 64 and digests[0] == digests[1]


@pytest.mark.parametrize("masking", [None, MASKING], ids=["stored_masks", "dynamic_masking"])
def test_iterator_checkpoint_resumes_at_the_same_batch(tmp_path, masking):
    files, _ = write_files(tmp_path, [7, 9, 6])
    make = lambda: dataset(files, is_training=True, seed=5, dynamic_masking=masking)  # noqa: E731
    iterator = iter(make())
    checkpoint = tf.train.Checkpoint(iterator=iterator)
    for _ in range(5):
        next(iterator)
    path = checkpoint.save(str(tmp_path / "ckpt" / "input"))
    expected = [next(iterator) for _ in range(6)]

    restored = iter(make())
    tf.train.Checkpoint(iterator=restored).restore(path).assert_consumed()
    assert_same_batches(expected, [next(restored) for _ in range(6)])
