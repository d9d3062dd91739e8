#!/usr/bin/env bash
# Phase 1 of pretrain_bert_base_8gpu.sh on a Cloud TPU, with the original's TPU flags (a v3-8 or
# larger; the path is thin and untested here: TPUStrategy from --tpu_name, nothing else changes).
# A TPU reads and writes Cloud Storage only: the records and the output go to gs://.
#
# Needs: a TPU VM or a TPU reachable by TPU_NAME; BUCKET, a gs:// path holding records_128/
# (copied with `gsutil -m cp -r $WORK/records_128 $BUCKET/`) and the bert_config.json.
# Time (estimate, see README.md): phase 1 ~5 h on a v3-32 (the original: 4 days on 4 to 16
# Cloud TPUs for all 1M steps, v2 chips).
set -euo pipefail
: "${TPU_NAME:?name of the Cloud TPU}" "${BUCKET:?gs://your-bucket/bert}"

python -m run_scripts.run_pretraining --use_tpu --tpu_name="$TPU_NAME" \
  --input_file="$BUCKET/records_128/*.tfrecord" --output_dir="$BUCKET/phase1_tpu" \
  --bert_config_file="$BUCKET/bert_config.json" --do_train --do_eval \
  --train_batch_size=256 --max_seq_length=128 --max_predictions_per_seq=20 \
  --num_train_steps=900000 --num_warmup_steps=10000 --learning_rate=1e-4 --dtype=bfloat16 \
  --save_checkpoints_steps=10000 --iterations_per_loop=1000 --keep_checkpoint_max=3
