#!/usr/bin/env bash
# Phase 1 of pretrain_bert_base_8gpu.sh on several machines: run this same script on every
# host, each with its own TASK_INDEX, e.g. on two hosts:
#
#   h0$ HOSTS=h0:2222,h1:2222 TASK_INDEX=0 WORK=/shared/bert BERT_CONFIG=/shared/bert/bert_config.json \
#         bash run_scripts/recipes/pretrain_multi_host.sh
#   h1$ HOSTS=h0:2222,h1:2222 TASK_INDEX=1 WORK=/shared/bert BERT_CONFIG=/shared/bert/bert_config.json \
#         bash run_scripts/recipes/pretrain_multi_host.sh
#
# Synchronous data parallelism across all GPUs of all hosts (MultiWorkerMirroredStrategy, the
# cluster in TF_CONFIG, made here from HOSTS and TASK_INDEX). The global batch is a one-process
# run's: every worker reads the records (as one process would, with the same seed) and trains
# on its rows of each batch, so 4 hosts x 8 GPUs with --train_batch_size=1024 put 32 sequences
# on each GPU (4x phase 1's batch: 4x the learning rate and a quarter of the steps, or LAMB for
# larger batches still).
#
# Needs: the records of pretrain_bert_base_8gpu.sh on storage every host reads, and WORK on
# storage every host sees (worker 0 writes the checkpoints; the others must read them to resume);
# HOSTS, the workers' host:port list, the same on every host; TASK_INDEX, this host's place in it.
# Arguments after the script's name go to run_pretraining after the flags below (a later flag
# wins): tests/test_multi_host_pretraining.py runs this script as two workers on two ports of
# one machine, at a tiny size.
# Stopping: SIGTERM (a scheduler's preemption) or ctrl-C to any one worker has every worker save
# the same step's checkpoint and exit 143 (130); running the script again on every host resumes
# from it, its input restarted at that step.
# Time (estimate, see README.md): phase 1 ~1.2 h on 4 hosts x 8 A100s, plus the all-reduce.
set -euo pipefail
: "${HOSTS:?comma-separated host:port of every worker, e.g. h0:2222,h1:2222,h2:2222,h3:2222}"
: "${TASK_INDEX:?index of this host in HOSTS}"
: "${WORK:?shared working directory}" "${BERT_CONFIG:?bert_config.json}"

workers=$(printf '"%s",' ${HOSTS//,/ })
export TF_CONFIG="{\"cluster\": {\"worker\": [${workers%,}]}, \"task\": {\"type\": \"worker\", \"index\": $TASK_INDEX}}"

exec python -m run_scripts.run_pretraining --distribution_strategy=multi_worker_mirrored \
  --input_file="$WORK/records_128/*.tfrecord" --output_dir="$WORK/phase1_multi_host" \
  --bert_config_file="$BERT_CONFIG" --do_train --train_batch_size=1024 \
  --max_seq_length=128 --max_predictions_per_seq=20 --num_train_steps=225000 \
  --num_warmup_steps=2500 --learning_rate=4e-4 --dtype=bfloat16 --jit_compile \
  --save_checkpoints_steps=5000 --steps_per_loop=500 --log_steps=500 --keep_checkpoint_max=3 \
  "$@"
