#!/usr/bin/env bash
# The demo: contextual embeddings from a BERT-Tiny encoder (L2/H128, a released size) built from
# demo/bert_config.json, for the sentences in demo/sentences.txt (`a ||| b` is a sentence pair).
# The weights are random until the pretraining stages of the demo exist; the pipeline is real.
# Usage: bash demo/run_demo.sh OUTPUT_DIR   (run through `make demo`, which sets up .venv)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-demo_output}
py=.venv/bin/python
mkdir -p "$out"

echo "== extract_features on demo/sentences.txt (BERT-Tiny, uncased WordPiece vocab)"
$py -m run_scripts.extract_features \
  --input_file=demo/sentences.txt --output_file="$out/features.jsonl" \
  --vocab_file=data/vocab/uncased_vocab.txt --do_lower_case=true \
  --bert_config_file=demo/bert_config.json \
  --layers=-1,-2 --max_seq_length=64 --batch_size=8
$py -m demo.print_features "$out/features.jsonl"
