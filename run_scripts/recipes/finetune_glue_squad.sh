#!/usr/bin/env bash
# BERT-Base fine-tuned on GLUE and SQuAD v1.1 with the original README's hyperparameters, and the
# MRPC model exported as a SavedModel that serves raw text.
#
# Needs: BERT_DIR, a checkpoint directory with vocab.txt and bert_config.json (phase 2 of
# pretrain_bert_base_8gpu.sh plus the vocab, or the released uncased_L-12_H-768_A-12, which
# works as it is); GLUE_DIR, GLUE's download (download_glue_data.py's layout: $GLUE_DIR/MRPC/...);
# SQUAD_DIR with train-v1.1.json, dev-v1.1.json; OUT for the results. One GPU.
# Expected (the original README, BERT-Base uncased): MRPC dev accuracy ~84.5% (it varies by a
# few points between runs), SQuAD v1.1 dev F1 ~88.5, EM ~81. Time: MRPC a few minutes on one
# GPU; the GLUE tasks from minutes (RTE) to hours (MNLI, QQP); SQuAD ~1 h on a V100.
set -euo pipefail
: "${BERT_DIR:?checkpoint directory}" "${GLUE_DIR:?GLUE data}" "${SQUAD_DIR:?SQuAD data}"
: "${OUT:?output directory}"
model=(--vocab_file="$BERT_DIR/vocab.txt" --bert_config_file="$BERT_DIR/bert_config.json"
       --init_checkpoint="$BERT_DIR" --do_lower_case=true)

for task in CoLA SST-2 MRPC STS-B QQP MNLI QNLI RTE WNLI; do
  python -m run_scripts.run_classifier --task_name="$task" --data_dir="$GLUE_DIR/$task" \
    "${model[@]}" --output_dir="$OUT/glue/$task" --do_train --do_eval --do_predict \
    --max_seq_length=128 --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0
done

python -m run_scripts.run_squad "${model[@]}" --output_dir="$OUT/squad" \
  --train_file="$SQUAD_DIR/train-v1.1.json" --predict_file="$SQUAD_DIR/dev-v1.1.json" \
  --do_train --do_predict --train_batch_size=12 --learning_rate=3e-5 --num_train_epochs=2.0 \
  --max_seq_length=384 --doc_stride=128

python -m run_scripts.export_saved_model --export_type=classifier --task_name=MRPC \
  --init_checkpoint="$OUT/glue/MRPC" --vocab_file="$BERT_DIR/vocab.txt" --do_lower_case=true \
  --max_seq_length=128 --export_dir="$OUT/serving/mrpc"
