r"""Does pretraining learn? A BERT-Tiny pretrains on real text and prints its curve.

    python -m bench.pretraining_curve [--steps=600] [--work_dir=/tmp/pretraining_curve]

Makes TFRecords from ../shared/data/pretraining_text/gutenberg_sentences.txt (Project Gutenberg
sentences; see its PROVENANCE.md) with the fast generator and the repo's uncased vocab, then runs
run_pretraining's library half on an L2/H128 model and prints masked-LM loss and accuracy and
next-sentence accuracy from the TensorBoard events, against the two chance levels: ln(vocab_size)
for the masked-LM loss and 50% for next-sentence accuracy. Finishes with run_pretraining's eval,
which (as the original's) reads the first batches of the same files.
"""

import argparse
import math
import os

from data_prep import fast_generation
from data_prep.pretraining_options import PretrainingDataOptions
from official import pretraining_shards
from official.configs import BertConfig
from official.training import pretraining
from official.training.summaries import read_scalars

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "..", "shared", "data", "pretraining_text", "gutenberg_sentences.txt")
VOCAB = os.path.join(REPO, "data", "vocab", "uncased_vocab.txt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--work_dir", default="/tmp/pretraining_curve")
    args = parser.parse_args()

    records = os.path.join(args.work_dir, "records")
    if not os.path.exists(os.path.join(records, pretraining_shards.SUMMARY_FILE)):
        fast_generation.generate([CORPUS], records, VOCAB, True,
                                 PretrainingDataOptions(dupe_factor=2), num_shards=4,
                                 num_workers=2)
    config = BertConfig(vocab_size=30522, hidden_size=128, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=512)
    config_file = os.path.join(args.work_dir, "bert_config.json")
    config.to_json_file(config_file)
    output_dir = os.path.join(args.work_dir, f"out_{args.steps}")
    results = pretraining.run(pretraining.PretrainingOptions(
        bert_config_file=config_file, input_file=os.path.join(records, "*.tfrecord"),
        output_dir=output_dir, do_train=True, do_eval=True, train_batch_size=args.batch_size,
        eval_batch_size=64, learning_rate=args.learning_rate, num_train_steps=args.steps,
        num_warmup_steps=args.steps // 10, log_steps=max(args.steps // 12, 1),
        steps_per_loop=max(args.steps // 12, 1), save_checkpoints_steps=args.steps,
        max_eval_steps=20))

    print(f"\nBERT L2/H128 on {os.path.basename(CORPUS)}, batch {args.batch_size}, "
          f"lr {args.learning_rate}; chance: masked-LM loss ln(30522) = {math.log(30522):.2f}, "
          f"next-sentence accuracy 0.50")
    print(f"{'step':>6} {'mlm loss':>9} {'mlm acc':>8} {'nsp loss':>9} {'nsp acc':>8} "
          f"{'examples/s':>11}")
    for step, values in sorted(read_scalars(os.path.join(output_dir, "train")).items()):
        print(f"{step:>6} {values['masked_lm_loss']:>9.3f} {values['masked_lm_accuracy']:>8.3f} "
              f"{values['next_sentence_loss']:>9.3f} {values['next_sentence_accuracy']:>8.3f} "
              f"{values['examples_per_second']:>11.1f}")
    print("eval:", {k: round(v, 4) for k, v in results["eval"].items()})


if __name__ == "__main__":
    main()
