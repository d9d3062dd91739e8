#!/usr/bin/env bash
# BERT-Base pretrained from a Wikipedia dump on one machine with 8 GPUs, the original's way:
# phase 1, 900k steps at sequence length 128; phase 2, 100k steps at 512 from phase 1's weights.
# Global batch 256 (8 GPUs x 32), learning rate 1e-4, bfloat16 with XLA.
#
# Needs: WIKI_TEXT, a glob of text files in the pretraining format (one sentence per line, a
# blank line between articles), e.g. a dump extracted with WikiExtractor and split into sentences
# (about 2,500M words, ~13 GB); VOCAB, a WordPiece vocab (the released uncased_L-12_H-768_A-12's,
# or `python -m data_prep.build_vocab --input_file="$WIKI_TEXT" --vocab_size=30522 ...`);
# a bert_config.json of that vocab size; WORK, a disk with ~400 GB free.
# Time (estimate, see README.md): records ~2 h on 32 cores per phase; phase 1 ~4.5 h on 8 A100s
# (~13 h on 8 V100s), phase 2 ~2 h (~6 h). The original took 4 days on 4 to 16 Cloud TPUs.
set -euo pipefail
: "${WIKI_TEXT:?a glob of one-sentence-per-line text files}"
: "${VOCAB:?vocab.txt}" "${BERT_CONFIG:?bert_config.json (vocab_size = lines of the vocab)}"
: "${WORK:?a working directory}"

for phase in "128 20" "512 80"; do
  set -- $phase
  python -m data_prep.create_pretraining_data --input_file="$WIKI_TEXT" \
    --output_dir="$WORK/records_$1" --vocab_file="$VOCAB" --do_lower_case=true \
    --max_seq_length="$1" --max_predictions_per_seq="$2" --masked_lm_prob=0.15 \
    --dupe_factor=5 --random_seed=12345 --num_shards=1000 --num_workers="$(nproc)"
done

python -m run_scripts.run_pretraining --distribution_strategy=mirrored --num_gpus=8 \
  --input_file="$WORK/records_128/*.tfrecord" --output_dir="$WORK/phase1" \
  --bert_config_file="$BERT_CONFIG" --do_train --do_eval --train_batch_size=256 \
  --max_seq_length=128 --max_predictions_per_seq=20 --num_train_steps=900000 \
  --num_warmup_steps=10000 --learning_rate=1e-4 --dtype=bfloat16 --jit_compile \
  --save_checkpoints_steps=10000 --steps_per_loop=1000 --log_steps=1000 --keep_checkpoint_max=3

# Phase 2 starts from phase 1's weights (the optimiser starts afresh, as in the original).
python -m run_scripts.run_pretraining --distribution_strategy=mirrored --num_gpus=8 \
  --input_file="$WORK/records_512/*.tfrecord" --output_dir="$WORK/phase2" \
  --init_checkpoint="$WORK/phase1" --bert_config_file="$BERT_CONFIG" --do_train --do_eval \
  --train_batch_size=256 --max_seq_length=512 --max_predictions_per_seq=80 \
  --num_train_steps=100000 --num_warmup_steps=10000 --learning_rate=1e-4 --dtype=bfloat16 \
  --jit_compile --save_checkpoints_steps=10000 --steps_per_loop=1000 --log_steps=1000 \
  --keep_checkpoint_max=3
# $WORK/phase2 is now an --init_checkpoint for run_classifier, run_squad, run_ner,
# extract_features and export_saved_model (finetune_glue_squad.sh).
