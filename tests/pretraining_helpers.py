"""The pretraining records' model at one layer, for the end-to-end runs of run_pretraining whose
claims (flags, refusals, signals, resuming, eval figures) do not depend on how many layers the
encoder stacks: test_encoder and the checkpoint tests check the layers themselves.

A run's CPU is mostly its fixed cost (tracing the update and optimising its graph), which grows
with the layers: about 8 s of CPU a run at conftest.pretraining_records' two layers, 6 s at one.
"""

import dataclasses
import os

from official.configs import BertConfig


def one_layer(records: dict, folder) -> dict:
    """`records` (conftest.pretraining_records) with a bert_config_file of the same model at
    one layer, written in `folder`."""
    config = BertConfig.from_json_file(records["bert_config_file"])
    path = os.path.join(str(folder), "bert_config_one_layer.json")
    dataclasses.replace(config, num_hidden_layers=1).to_json_file(path)
    return dict(records, bert_config_file=path)
