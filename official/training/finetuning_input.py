"""tf.data over one fine-tuning TFRecord file (the original's feature names) for the model.

    record_dataset(path, spec, batch_size, is_training, ...) -> batches of feature dicts

Records are shuffled as serialised bytes (small, so a large buffer is cheap and the iterator's
checkpoint stays small), batched, then parsed a whole batch at a time. The model's input names
replace the original's (`input_ids` -> `input_word_ids`, `segment_ids` -> `input_type_ids`),
integers become int32 and one-value features scalars; every other feature keeps its name.

A document's windows (--long_doc=windows: `tf.io.RaggedFeature`s of rows, [batch, (windows),
seq_len] as parsed) become the model's rows, [windows, seq_len], every document's together, with
`window_document` int32 [windows] naming each row's document in the batch
(official/modeling/window_pooling.py); the one-value features stay one per document.
"""

from __future__ import annotations

from typing import Mapping

import tensorflow as tf

# Records in the shuffle buffer: several epochs of GLUE's small sets, a good mix of the big ones.
SHUFFLE_BUFFER = 10000
_MODEL_NAMES = {"input_ids": "input_word_ids", "segment_ids": "input_type_ids"}


def record_dataset(path: str, spec: Mapping[str, tf.io.FixedLenFeature | tf.io.RaggedFeature],
                   batch_size: int,
                   is_training: bool, seed: int = 0,
                   input_context: tf.distribute.InputContext | None = None) -> tf.data.Dataset:
    """Batches of `spec`'s features from the TFRecord file `path`.

    Args:
      spec: the file's parse spec (data_prep's `parse_spec` of its format).
      batch_size: rows per batch (per replica under a strategy).
      is_training: shuffle (seeded), repeat forever and drop the last partial batch; otherwise
        one pass in file order, the last batch partial.
      input_context: under a strategy, each input pipeline reads its own share of the records.
    Returns:
      {name: [batch, ...] tensor}: int32 for integer features, float32 for float ones.
    """
    dataset = tf.data.TFRecordDataset(path)
    if input_context is not None and input_context.num_input_pipelines > 1:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    if is_training:
        dataset = dataset.shuffle(SHUFFLE_BUFFER, seed=seed, reshuffle_each_iteration=True)
        dataset = dataset.repeat()
    dataset = dataset.batch(batch_size, drop_remainder=is_training)
    dataset = dataset.map(lambda records: to_model_features(tf.io.parse_example(records, spec),
                                                            spec),
                          num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return dataset.prefetch(tf.data.AUTOTUNE)


def to_model_features(parsed: Mapping[str, tf.Tensor | tf.RaggedTensor],
                      spec: Mapping[str, tf.io.FixedLenFeature | tf.io.RaggedFeature]
                      ) -> dict[str, tf.Tensor]:
    """Parsed [batch, ...] features -> the model's names, int32, one-value features as scalars,
    documents' windows as rows with their `window_document`."""
    features = {}
    for name, value in parsed.items():
        if isinstance(value, tf.RaggedTensor):
            features["window_document"] = tf.cast(value.value_rowids(), tf.int32)
            value = value.values
        elif list(spec[name].shape) == [1]:
            value = tf.squeeze(value, axis=-1)
        if value.dtype == tf.int64:
            value = tf.cast(value, tf.int32)
        features[_MODEL_NAMES.get(name, name)] = value
    return features
