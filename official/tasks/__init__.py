"""The jobs' tasks: what a fine-tuning task is (`base.py`), the three that ship
(classification, squad, ner: model, loss, metrics, prediction files, serving spec), their
metrics and decoding, and pretraining's loss."""
