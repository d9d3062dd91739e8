"""Offline data making: text corpora and task files in, the TFRecords and features training reads
out."""
