"""The digest of a training pipeline's first batches, printed by a process of its own:
tests/test_pretraining_input.py's test_same_seed_same_batches_in_separate_runs starts two and
compares what they print.

    python -m tests.pipeline_digest FILE...

Prints the sha256 of 8 training batches (shuffles and dynamic masks, every feature in name
order) of the record files given, at that test module's sizes and masking, seed 3.
"""

import hashlib
import sys

from official.training import pretraining_input as pi
from tests.test_pretraining_input import MASKING, PREDICTIONS, SEQ


def main(files: list[str]) -> None:
    dataset = pi.pretraining_dataset(files, max_seq_length=SEQ, batch_size=4, seed=3,
                                     max_predictions_per_seq=PREDICTIONS, is_training=True,
                                     dynamic_masking=MASKING)
    digest = hashlib.sha256()
    for batch in dataset.take(8):
        for name in sorted(batch):
            digest.update(batch[name].numpy().tobytes())
    print(digest.hexdigest())


if __name__ == "__main__":
    main(sys.argv[1:])
