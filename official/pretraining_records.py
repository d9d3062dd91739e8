"""The pretraining TFRecord format: one `tf.train.Example` per instance, as the original has it.

Feature names, dtypes, lengths and padding are those of google-research/bert's
`create_pretraining_data.py` (writer) and `run_pretraining.py` (reader), so files made by this
repo's generators and by the original are interchangeable in both directions:

    input_ids             int64   [max_seq_length]           token ids, 0-padded
    input_mask            int64   [max_seq_length]           1 for real tokens, 0 for padding
    segment_ids           int64   [max_seq_length]           0 = [CLS] A [SEP], 1 = B [SEP];
                                                             0 padding
    masked_lm_positions   int64   [max_predictions_per_seq]  where the predicted tokens are,
                                                             0-padded
    masked_lm_ids         int64   [max_predictions_per_seq]  the original token there, 0-padded
    masked_lm_weights     float32 [max_predictions_per_seq]  1.0 per real prediction, 0.0 padding
    next_sentence_labels  int64   [1]                        the second-sentence label

Padded predictions point at position 0 with weight 0.0: the loss multiplies them away.

What input_ids holds at a predicted position is the masking mix's choice, drawn per prediction:
[MASK], the same token, or a uniformly random vocab id, in the shares (MASK, SAME, RANDOM) of
`--masking_mix`; the original's are ORIGINAL_MASKING_MIX, 80/10/10 (the BERT paper, section
3.1 and appendix C.2: [MASK] never occurs in fine-tuning, so not every prediction shows it; a
kept token biases the representation towards the word actually seen; a random one keeps the
model from trusting any input token; Table 8 compares other mixes). A random id may be the
same token or [MASK] (1/vocab_size of the RANDOM share each). The fast generator
(data_prep/fast_instances.py) and dynamic masking (official/training/pretraining_input.py) both
draw it with `replacement_thresholds`.

Defined here, in the library, because both sides read it: the writers in data_prep
(`pretraining_examples.make_example`, and `fast_generation` through `example_bytes`) and the
input pipeline (`official/training/pretraining_input.py`), which must not import data_prep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tensorflow as tf

INT_FEATURES = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions", "masked_lm_ids",
                "next_sentence_labels")
FLOAT_FEATURES = ("masked_lm_weights",)

# (MASK, SAME, RANDOM): the shares of predictions shown as [MASK], kept, or a random id.
ORIGINAL_MASKING_MIX = (0.8, 0.1, 0.1)


def replacement_thresholds(mix: tuple[float, float, float]) -> tuple[float, float]:
    """(below_mask, below_same) for a uniform draw u in [0, 1) per prediction: [MASK] when
    u < below_mask, the same token when below_mask <= u < below_same, a random id otherwise.

    below_same is 1 - RANDOM rather than MASK + SAME: for the original's mix that is exactly 0.9
    (0.8 + 0.1 is 0.9000000000000001 in floating point), the constant the fast generator and
    dynamic masking compared with before the mix was a setting, so the default makes the same
    bytes as they did.
    """
    return mix[0], 1.0 - mix[2]


def parse_spec(max_seq_length: int,
               max_predictions_per_seq: int) -> dict[str, tf.io.FixedLenFeature]:
    """The original run_pretraining.py's `name_to_features`:
    `tf.io.parse_example(records, parse_spec(128, 20))`."""
    import tensorflow as tf  # here: the writers use the names above and run without it

    seq, predictions = [max_seq_length], [max_predictions_per_seq]
    return {
        "input_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "input_mask": tf.io.FixedLenFeature(seq, tf.int64),
        "segment_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "masked_lm_positions": tf.io.FixedLenFeature(predictions, tf.int64),
        "masked_lm_ids": tf.io.FixedLenFeature(predictions, tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature(predictions, tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }
