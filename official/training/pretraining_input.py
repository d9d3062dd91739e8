"""The tf.data pipeline of run_pretraining: pretraining TFRecords in, batches of model inputs out.

The records are those of google-research/bert's `create_pretraining_data.py` and of this repo's
`data_prep/`: the format of official/pretraining_records.py, which the writers share.

Each element is a dict of
    input_word_ids        int32   [batch, max_seq_length]           (the records' input_ids)
    input_mask            int32   [batch, max_seq_length]
    input_type_ids        int32   [batch, max_seq_length]           (the records' segment_ids)
    masked_lm_positions   int32   [batch, max_predictions_per_seq]
    masked_lm_ids         int32   [batch, max_predictions_per_seq]
    masked_lm_weights     float32 [batch, max_predictions_per_seq]
    next_sentence_labels  int32   [batch]

(for the left-to-right objective the three masked_lm_* are [batch, max_seq_length - 1], every
position's next token: `next_token_batch`).

Unlike the original's input_fn the pipeline is deterministic (seeded shuffles, ordered
interleave, stateless random ops), so a seed reproduces a run, and the iterator can be saved in a
`tf.train.Checkpoint` and resumed at the same batch.

Example (two files of ten records each, max_seq_length 8 and max_predictions_per_seq 2, written
here record by record; the iterator, saved in a checkpoint as training saves it beside the model,
resumes at the same batch):
    >>> import os, shutil, tempfile
    >>> def record(token_id):
    ...     ints = {"input_ids": [101, token_id, 102, 0, 0, 0, 0, 0],
    ...             "input_mask": [1, 1, 1, 0, 0, 0, 0, 0], "segment_ids": [0] * 8,
    ...             "masked_lm_positions": [1, 0], "masked_lm_ids": [token_id, 0],
    ...             "next_sentence_labels": [token_id % 2]}
    ...     feature = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    ...                for name, values in ints.items()}
    ...     feature["masked_lm_weights"] = tf.train.Feature(
    ...         float_list=tf.train.FloatList(value=[1.0, 0.0]))
    ...     example = tf.train.Example(features=tf.train.Features(feature=feature))
    ...     return example.SerializeToString()
    >>> folder = tempfile.mkdtemp()
    >>> for name, first_id in (("wiki_0.tfrecord", 1000), ("books_0.tfrecord", 2000)):
    ...     with tf.io.TFRecordWriter(os.path.join(folder, name)) as writer:
    ...         for token_id in range(first_id, first_id + 10):
    ...             writer.write(record(token_id))
    >>> from official.pretraining_shards import expand_input_files
    >>> files = expand_input_files(f"{folder}/wiki_*.tfrecord,{folder}/books_*.tfrecord")
    >>> [os.path.basename(path) for path in files]
    ['books_0.tfrecord', 'wiki_0.tfrecord']
    >>> dataset = pretraining_dataset(files, max_seq_length=8, max_predictions_per_seq=2,
    ...                               batch_size=4, is_training=True, seed=12345)
    >>> iterator = iter(dataset)
    >>> for name, tensor in next(iterator).items():
    ...     print(f"{name:21} {tensor.dtype.name:7} {tensor.shape}")
    input_word_ids        int32   (4, 8)
    input_mask            int32   (4, 8)
    input_type_ids        int32   (4, 8)
    masked_lm_positions   int32   (4, 2)
    masked_lm_ids         int32   (4, 2)
    masked_lm_weights     float32 (4, 2)
    next_sentence_labels  int32   (4,)
    >>> checkpoint = tf.train.Checkpoint(iterator=iterator)
    >>> saved = checkpoint.write(os.path.join(folder, "ckpt"))
    >>> expected = next(iterator)["input_word_ids"]
    >>> status = checkpoint.read(saved)
    >>> bool(tf.reduce_all(next(iterator)["input_word_ids"] == expected))
    True
    >>> shutil.rmtree(folder)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import struct
from typing import Sequence

import tensorflow as tf
from google.protobuf import message

from official import pretraining_records
from official.training.record_errors import checked_token_ids

# At most this many files are read at once in training. Records of several files are mixed before
# the shuffle buffer sees them (files are written in corpus order, within a shard or a chunk), and
# parallel reads hide storage latency; each open file costs only its read buffer.
_MAX_FILES_READ_AT_ONCE = 8

# The record shuffle buffer of training. The original used 100; 1,000 records mix across the
# files being read and across many batches, while its fill at start-up stays instant. The buffer
# is part of the iterator's checkpoint, so it is not made larger: a record is ~0.9 KB serialised
# at 128 tokens (~3 KB at 512), so it adds ~1 MB (~3 MB) per pipeline to each checkpoint.
# Records are already shuffled when written, so the buffer is for the remaining locality.
_SHUFFLE_BUFFER_RECORDS = 1000

# A first record longer than this is a misread length (records are a few KB).
_MAX_RECORD_BYTES = 1 << 26

# A file's fingerprint digests this many bytes at each end: dozens of records, two reads a file.
_FINGERPRINT_BYTES = 1 << 16


@dataclasses.dataclass(frozen=True)
class DynamicMasking:
    """RoBERTa-style re-masking at read time from the stored token ids.

    Each batch gets fresh masked positions and replacements, drawn as the original's
    `create_masked_lm_predictions` draws them, instead of the masks fixed at data generation
    (where `--dupe_factor` copies are the only variety). Tokens are chosen one by one, the
    original's default: its `--do_whole_word_mask` would need the vocabulary's "##" pieces.
    `masking_mix` is (MASK, SAME, RANDOM), as create_pretraining_data's --masking_mix
    (official/pretraining_records.py).
    """
    vocab_size: int
    mask_id: int                    # [MASK]
    special_ids: tuple[int, ...]    # never masked: [CLS], [SEP], padding 0
    masked_lm_prob: float = 0.15
    masking_mix: tuple[float, float, float] = pretraining_records.ORIGINAL_MASKING_MIX


def pretraining_dataset(input_files: Sequence[str], *, max_seq_length: int,
                        max_predictions_per_seq: int, batch_size: int, is_training: bool,
                        seed: int = 0, input_context: tf.distribute.InputContext | None = None,
                        dynamic_masking: DynamicMasking | None = None,
                        next_token: bool = False,
                        vocab_size: int | None = None) -> tf.data.Dataset:
    """Batches of pretraining inputs (see the module docstring) from TFRecord files.

    Training: the files are shuffled once per epoch and repeated forever, read
    `min(#files, 8)` at a time with an interleave of fixed order, their records shuffled in a
    1,000-record buffer, batched with the remainder dropped (static batch shape). Evaluation: the
    files in the order given, each record once, not shuffled, the last batch possibly smaller.
    Both batch first and parse the whole batch with one `tf.io.parse_example`.

    Under a `tf.distribute` input context of n > 1 input pipelines (one per worker of a
    multi-worker run):
      - training: every pipeline makes the batches one pipeline would, of the global batch
        (`batch_size` x the replicas in sync), with the same seed and masks, and keeps its rows:
        pipeline i the i-th n-th of each, cut into its replicas' batches. So the global batches
        are those of a one-process run, whatever the cluster's shape, and a multi-worker run
        reaches a one-process run's weights. The cost: every worker reads and parses every
        record (n times the reading, ~1 MB a step at BERT-Base's 1,024 x 128; small beside the
        step's compute);
      - evaluation: each pipeline reads its own part, by file when there are at least as many
        files as pipelines (pipeline i reads files i, i + n, i + 2n, ...), else by record
        (every pipeline reads every file and keeps records i, i + n, ...); every record is
        scored once, and the metrics, sums, do not depend on the split.

    Args:
      input_files: TFRecord paths (`expand_input_files` of the flag).
      max_seq_length, max_predictions_per_seq: the lengths the records were written with.
      batch_size: the batch of this pipeline: the per-replica batch under a strategy.
      is_training: the training behaviour above, or the evaluation one.
      seed: seeds the file and record shuffles and the dynamic masks. tf.data's shuffles also
        mix in TensorFlow's global seed when the program sets one (`tf.random.set_seed`,
        `keras.utils.set_random_seed`), so a run is repeated by the same seed and global seed.
        A restored iterator carries its shuffle state and depends on neither.
      input_context: from `strategy.distribute_datasets_from_function` (its
        `num_replicas_in_sync` a multiple of its `num_input_pipelines`); None for one pipeline.
      dynamic_masking: re-mask every batch at read time (see `mask_batch`); None keeps the masks
        stored in the records.
      next_token: left-to-right language-model batches instead (`next_token_batch`): the
        masking undone, every position predicting the next token; takes no dynamic_masking.
      vocab_size: the model's; a batch holding a token id at or above it fails when read
        (official/training/record_errors.py names the error). None: unchecked.

    Raises:
      ValueError: no files, or a file whose first record does not fit the spec (one line naming
        the file and what is wrong).
    """
    if next_token and dynamic_masking is not None:
        raise ValueError("next-token batches are not masked: give no dynamic_masking")
    check_records(input_files, max_seq_length, max_predictions_per_seq, vocab_size)
    spec = pretraining_records.parse_spec(max_seq_length, max_predictions_per_seq)
    if dynamic_masking is not None and max_predictions_per_seq > max_seq_length:
        raise ValueError(f"max_predictions_per_seq={max_predictions_per_seq} exceeds "
                         f"max_seq_length={max_seq_length}")

    if is_training and input_context is not None and input_context.num_input_pipelines > 1:
        whole = pretraining_dataset(
            input_files, max_seq_length=max_seq_length,
            max_predictions_per_seq=max_predictions_per_seq,
            batch_size=batch_size * input_context.num_replicas_in_sync, is_training=True,
            seed=seed, dynamic_masking=dynamic_masking, next_token=next_token,
            vocab_size=vocab_size)
        return _rows_of_pipeline(whole, input_context, batch_size)

    files, num_pipelines, pipeline_id = list(input_files), 1, 0
    if input_context is not None:
        num_pipelines, pipeline_id = (input_context.num_input_pipelines,
                                      input_context.input_pipeline_id)
    shard_by_file = len(files) >= num_pipelines
    if shard_by_file:
        files = files[pipeline_id::num_pipelines]

    filenames = tf.data.Dataset.from_tensor_slices(files)
    if is_training:
        filenames = filenames.shuffle(len(files), seed=seed, reshuffle_each_iteration=True)
        records = filenames.repeat().interleave(
            tf.data.TFRecordDataset, cycle_length=min(len(files), _MAX_FILES_READ_AT_ONCE),
            num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    else:
        records = tf.data.TFRecordDataset(filenames)
    if not shard_by_file:
        records = records.shard(num_pipelines, pipeline_id)
    if is_training:
        records = records.shuffle(_SHUFFLE_BUFFER_RECORDS, seed=seed)

    # Pipelines must not share masks: their base seed folds in the pipeline id; each batch then
    # folds in its index, so a batch's masks depend on (seed, pipeline, index) alone.
    base_seed = tf.constant([seed, pipeline_id], tf.int64)

    def parse(index: tf.Tensor, serialized: tf.Tensor) -> dict[str, tf.Tensor]:
        features = _to_model_inputs(tf.io.parse_example(serialized, spec))
        if vocab_size is not None:
            features = checked_token_ids(features, vocab_size,
                                         ("input_word_ids", "masked_lm_ids"))
        if next_token:
            return next_token_batch(features)
        if dynamic_masking is None:
            return features
        batch_seed = tf.random.experimental.stateless_fold_in(base_seed, index)
        return mask_batch(features, dynamic_masking, batch_seed)

    dataset = (records.batch(batch_size, drop_remainder=is_training)
               .enumerate()
               .map(parse, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
               .prefetch(tf.data.AUTOTUNE))
    options = tf.data.Options()
    options.deterministic = True
    return dataset.with_options(options)


def _rows_of_pipeline(global_batches: tf.data.Dataset, context: tf.distribute.InputContext,
                      batch_size: int) -> tf.data.Dataset:
    """Pipeline i's rows of each global batch, [i * r * b, (i + 1) * r * b), as r batches of
    `batch_size` b for its r replicas (consecutive elements go to consecutive local replicas)."""
    replicas = context.num_replicas_in_sync // context.num_input_pipelines
    start = context.input_pipeline_id * replicas * batch_size

    def rows(features: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        return {name: tf.reshape(value[start:start + replicas * batch_size],
                                 [replicas, batch_size, *value.shape[1:]])
                for name, value in features.items()}

    return global_batches.map(rows).unbatch()


def mask_batch(features: dict[str, tf.Tensor], masking: DynamicMasking,
               seed: tf.Tensor) -> dict[str, tf.Tensor]:
    """Draws new masked-LM predictions for a parsed batch; a pure function of `seed`.

    1. The stored masking is undone: masked_lm_ids go back into input_word_ids at
       masked_lm_positions wherever masked_lm_weights > 0.
    2. As the original's `create_masked_lm_predictions`: a row of n real tokens (input_mask 1,
       [CLS] and [SEP] included) gets min(max_predictions, max(1, round(n * masked_lm_prob)))
       predictions (Python's round: halves to even, as tf.round), at most its number of
       candidates (real tokens not in special_ids), chosen uniformly among them: the candidates
       with the largest of one uniform key each. Each chosen token becomes [MASK] 80% of the
       time, stays 10%, becomes a uniform id in [0, vocab_size) 10%. Positions are sorted
       ascending and padded with position 0, id 0, weight 0. (Another masking_mix: [MASK],
       the same token and a random id in its shares.)

    Random numbers come from stateless ops: tensorflow-text's `MaskValuesChooser` (and so
    `mask_language_model`) draws with the stateful `tf.random.uniform`, which makes the tf.data
    iterator refuse to be checkpointed ("RandomUniform is stateful") and restarts its draws on
    restore; `RandomItemSelector` also counts predictions another way (ceil of the candidates,
    no minimum of one) than the original.

    Args:
      features: the pipeline's dict, [batch, seq_len] and [batch, max_predictions] tensors.
      masking: the vocabulary facts and rate.
      seed: int [2], the stateless seed of this batch.
    Returns:
      `features` with input_word_ids and the three masked_lm_* tensors replaced.
    """
    ids = unmasked_ids(features)                                      # [B, S]
    stored_positions = features["masked_lm_positions"]                # [B, P]
    max_predictions = stored_positions.shape[-1]
    batch, seq_len = tf.shape(ids)[0], tf.shape(ids)[1]
    # (row, column) pairs for scatter updates at [B, P] positions.
    rows = tf.broadcast_to(tf.range(batch)[:, None], tf.shape(stored_positions))

    real = features["input_mask"] > 0
    special = tf.reduce_any(ids[:, :, None] == tf.constant(masking.special_ids, tf.int32), -1)
    candidates = real & ~special                                      # [B, S]
    num_tokens = tf.reduce_sum(tf.cast(real, tf.float64), axis=1)
    # float64, as the original's Python float: 0.15 * n must round as it does there.
    wanted = tf.maximum(tf.constant(1.0, tf.float64), tf.round(num_tokens * masking.masked_lm_prob))
    num_candidates = tf.reduce_sum(tf.cast(candidates, tf.int32), axis=1)
    num_to_predict = tf.minimum(tf.minimum(tf.cast(wanted, tf.int32), max_predictions),
                                num_candidates)                       # [B]

    key_seed, choice_seed, random_id_seed = tf.unstack(
        tf.random.experimental.stateless_split(seed, 3))
    keys = tf.where(candidates, tf.random.stateless_uniform([batch, seq_len], key_seed), -1.0)
    _, by_key = tf.math.top_k(keys, k=max_predictions)                # [B, P]
    chosen = tf.range(max_predictions)[None, :] < num_to_predict[:, None]
    positions = tf.sort(tf.where(chosen, by_key, seq_len), axis=-1)  # unused ones sort last
    chosen = positions < seq_len
    positions = tf.where(chosen, positions, 0)
    originals = tf.where(chosen, tf.gather(ids, positions, batch_dims=1), 0)

    draw = tf.random.stateless_uniform([batch, max_predictions], choice_seed)
    random_ids = tf.random.stateless_uniform([batch, max_predictions], random_id_seed,
                                             minval=0, maxval=masking.vocab_size, dtype=tf.int32)
    below_mask, below_same = pretraining_records.replacement_thresholds(masking.masking_mix)
    replacements = tf.where(draw < below_mask, masking.mask_id,
                            tf.where(draw < below_same, originals, random_ids))
    indices = tf.stack([rows, positions], axis=-1)
    masked_ids = tf.tensor_scatter_nd_update(ids, tf.boolean_mask(indices, chosen),
                                             tf.boolean_mask(replacements, chosen))
    return {**features,
            "input_word_ids": masked_ids,
            "masked_lm_positions": positions,
            "masked_lm_ids": originals,
            "masked_lm_weights": tf.cast(chosen, tf.float32)}


def unmasked_ids(features: dict[str, tf.Tensor]) -> tf.Tensor:
    """The text before masking: input_word_ids [batch, seq_len] with masked_lm_ids put back at
    masked_lm_positions wherever masked_lm_weights > 0 (padded predictions are left alone:
    they point at position 0, [CLS])."""
    positions = features["masked_lm_positions"]                       # [B, P]
    rows = tf.broadcast_to(tf.range(tf.shape(positions)[0])[:, None], tf.shape(positions))
    stored = features["masked_lm_weights"] > 0
    indices = tf.stack([rows, positions], axis=-1)                    # [B, P, 2]
    return tf.tensor_scatter_nd_update(features["input_word_ids"],
                                       tf.boolean_mask(indices, stored),
                                       tf.boolean_mask(features["masked_lm_ids"], stored))


def next_token_batch(features: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """A parsed batch as left-to-right language-model inputs (run_pretraining --objective=ltr).

    The masking is undone (`unmasked_ids`), so the model reads the text itself; then every
    position but the last predicts the token after it, through the masked-LM features the
    pretrainer and the pretraining task already read:

        masked_lm_positions  int32   [batch, seq_len - 1]  0, 1, ..., seq_len - 2
        masked_lm_ids        int32   [batch, seq_len - 1]  input_word_ids[:, 1:]
        masked_lm_weights    float32 [batch, seq_len - 1]  input_mask[:, 1:]

    so the masked-LM loss is the next-token cross-entropy: [CLS] predicts the first token, the
    last real token ([SEP]) predicts nothing (the padding after it has weight 0). Causal
    attention (BertConfig.causal_attention) is what keeps a position from seeing its answer.
    input_type_ids and next_sentence_labels pass unchanged; the second-sentence label is not
    trained on (official/tasks/pretraining.py).
    """
    ids = unmasked_ids(features)
    batch, seq_len = tf.shape(ids)[0], ids.shape[1]
    return {**features,
            "input_word_ids": ids,
            "masked_lm_positions": tf.broadcast_to(tf.range(seq_len - 1)[None, :],
                                                   [batch, seq_len - 1]),
            "masked_lm_ids": ids[:, 1:],
            "masked_lm_weights": tf.cast(features["input_mask"][:, 1:] > 0, tf.float32)}


def _to_model_inputs(parsed: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """Parsed features ([batch, ...] int64) to the model's names and int32 (TPU/GPU friendly)."""
    def as_int32(name: str) -> tf.Tensor:
        return tf.cast(parsed[name], tf.int32)

    return {
        "input_word_ids": as_int32("input_ids"),
        "input_mask": as_int32("input_mask"),
        "input_type_ids": as_int32("segment_ids"),
        "masked_lm_positions": as_int32("masked_lm_positions"),
        "masked_lm_ids": as_int32("masked_lm_ids"),
        "masked_lm_weights": parsed["masked_lm_weights"],
        "next_sentence_labels": tf.squeeze(as_int32("next_sentence_labels"), axis=-1),
    }


def check_records(files: Sequence[str], max_seq_length: int, max_predictions_per_seq: int,
                  vocab_size: int | None = None, config_file: str | None = None) -> None:
    """Reads the first record of each file and checks it against the spec (and its token ids
    against `vocab_size`), before training starts.

    A mismatch would otherwise surface as an opaque parse error after the model is built, or
    late, when the file's turn comes. A wrong length names the flag it contradicts, since the
    usual cause is data made with another --max_seq_length or --max_predictions_per_seq. The
    other records' ids are checked as they are read (`pretraining_dataset`'s vocab_size).

    Raises:
      ValueError: "<file>: <what is wrong>", or no file holds a record.
    """
    if not files:
        raise ValueError("no input files")
    spec = pretraining_records.parse_spec(max_seq_length, max_predictions_per_seq)
    length_flag = {"input_ids": "max_seq_length", "input_mask": "max_seq_length",
                   "segment_ids": "max_seq_length", "masked_lm_positions":
                   "max_predictions_per_seq", "masked_lm_ids": "max_predictions_per_seq",
                   "masked_lm_weights": "max_predictions_per_seq"}
    any_record = False
    for path in files:
        record = _first_record(path)
        if record is None:
            continue
        any_record = True
        try:
            features = tf.train.Example.FromString(record).features.feature
        except message.DecodeError:
            raise ValueError(f"{path}: its first record is not a tf.train.Example") from None
        for name, feature_spec in spec.items():
            kind = "float_list" if feature_spec.dtype == tf.float32 else "int64_list"
            if name not in features:
                raise ValueError(f"{path}: lacks the feature {name}")
            if features[name].WhichOneof("kind") != kind:
                raise ValueError(f"{path}: {name} is a {features[name].WhichOneof('kind')}, "
                                 f"expected a {kind}")
            found = len(getattr(features[name], kind).value)
            expected = feature_spec.shape[0]
            if found != expected:
                flag = length_flag.get(name)
                what = f"{flag}={expected}" if flag else str(expected)
                raise ValueError(f"{path}: {name} has {found} values, expected {what}")
        if vocab_size is not None:
            largest = max(max(features[name].int64_list.value, default=0)
                          for name in ("input_ids", "masked_lm_ids"))
            if largest >= vocab_size:
                raise ValueError(f"{path}: its first record holds token id {largest}, but "
                                 f"{config_file or 'the config'} says vocab_size={vocab_size}: "
                                 f"were the records made with another vocab?")
    if not any_record:
        raise ValueError(f"none of the {len(files)} input files holds a record")


def _first_record(path: str) -> bytes | None:
    """The first record of a TFRecord file; None when it has none.

    Read by hand from the framing (uint64 length, uint32 checksum, the bytes, uint32 checksum;
    little-endian) because building a tf.data pipeline per file costs far more than reading a
    record, and a run may be given thousands of shards, all checked before training starts.
    Checksums are left to the pipeline itself; garbage fails here as a length beyond the end of
    the file or as bytes that are no Example.

    Raises:
      ValueError: the file cannot be opened or ends inside its first record.
    """
    cut_short = ValueError(f"{path}: not a TFRecord file (its first record is cut short)")
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            header = f.read(12)
            if not header:
                return None
            if len(header) < 12:
                raise cut_short
            (length,) = struct.unpack("<Q", header[:8])
            if length > _MAX_RECORD_BYTES:  # do not try to allocate it
                raise cut_short
            record = f.read(length)
    except tf.errors.OpError as error:
        raise ValueError(f"{path}: cannot be read ({error.message})") from None
    if len(record) < length:
        raise cut_short
    return record


def fingerprint(files: Sequence[str]) -> str:
    """The record files as a saved input iterator finds them: JSON {path: [bytes, digest]},
    the digest a sha256 of the file's first and last 64 KiB.

    A restored iterator reads on at its saved place in each file (an offset, the records in its
    shuffle buffer) whatever the file holds now, so records regenerated under a saved iterator
    read as damaged; the training loop saves this beside the iterator and compares it before
    restoring one (official/training/trainer.py's SavedInput). Two reads a file keep it cheap
    for thousands of shards and still tell a regeneration apart (another seed, corpus or
    dupe_factor changes the first records); the same command rerun writes the same bytes.
    """
    described = {}
    for path in files:
        with tf.io.gfile.GFile(path, "rb") as f:
            size = f.size()
            digest = hashlib.sha256(f.read(_FINGERPRINT_BYTES))
            if size > _FINGERPRINT_BYTES:
                f.seek(max(size - _FINGERPRINT_BYTES, _FINGERPRINT_BYTES))
                digest.update(f.read())
        described[path] = [size, digest.hexdigest()]
    return json.dumps(described, sort_keys=True)


def changed_files(saved: str, files: Sequence[str]) -> list[str]:
    """What differs between the `saved` fingerprint and `files` now, one entry a file: "<path>:
    N bytes then, M now", "<path>: rewritten, same size", "<path>: no longer read" or "<path>:
    not read then"; [] when they are the same."""
    then, now = json.loads(saved), json.loads(fingerprint(files))
    changed = []
    for path in sorted(then.keys() | now.keys()):
        if path not in now:
            changed.append(f"{path}: no longer read")
        elif path not in then:
            changed.append(f"{path}: not read then")
        elif then[path][0] != now[path][0]:
            changed.append(f"{path}: {then[path][0]} bytes then, {now[path][0]} now")
        elif then[path][1] != now[path][1]:
            changed.append(f"{path}: rewritten, same size")
    return changed
