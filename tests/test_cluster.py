"""Tests for official/training/cluster.py: TF_CONFIG as TensorFlow's multi-worker documentation
lays it out, and each way it can be wrong answered in one line naming TF_CONFIG."""

import json

import pytest

from official.training.cluster import check_tf_config

TWO_WORKERS = {"worker": ["host0:2222", "host1:2222"]}


@pytest.mark.parametrize("config", [
    {"cluster": TWO_WORKERS, "task": {"type": "worker", "index": 1}},
    {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"]},
     "task": {"type": "chief", "index": 0}},
], ids=["worker", "chief"])
def test_the_documented_layouts_pass(config):
    check_tf_config(json.dumps(config))


@pytest.mark.parametrize("text", [None, "", "  "], ids=["unset", "empty", "blank"])
def test_no_tf_config_is_a_run_on_this_host(text):
    check_tf_config(text)


@pytest.mark.parametrize("text, expected", [
    ("{cluster: worker}", "TF_CONFIG is not JSON"),
    ("[1, 2]", "TF_CONFIG must be a JSON object"),
    (json.dumps({"task": {"type": "worker", "index": 0}}), "TF_CONFIG has no \"cluster\""),
    (json.dumps({"cluster": {"ps": ["h:1"]}, "task": {"type": "ps", "index": 0}}),
     "TF_CONFIG: cluster task type 'ps' is not one of chief, worker"),
    (json.dumps({"cluster": {"worker": "h0:1,h1:1"}, "task": {"type": "worker", "index": 0}}),
     "TF_CONFIG: cluster 'worker' must be a list of \"host:port\" addresses"),
    (json.dumps({"cluster": {"worker": ["h0"]}, "task": {"type": "worker", "index": 0}}),
     "TF_CONFIG: cluster 'worker' must be a list"),
    (json.dumps({"cluster": TWO_WORKERS}), "TF_CONFIG has no \"task\""),
    (json.dumps({"cluster": TWO_WORKERS, "task": {"type": "chief", "index": 0}}),
     "TF_CONFIG: task type 'chief' is not in its cluster (worker)"),
    (json.dumps({"cluster": TWO_WORKERS, "task": {"type": "worker", "index": 2}}),
     "TF_CONFIG: task worker 2 is outside its cluster, which has 2 workers (0-1)"),
    (json.dumps({"cluster": TWO_WORKERS, "task": {"type": "worker", "index": -1}}),
     "TF_CONFIG: task worker -1 is outside its cluster"),
    (json.dumps({"cluster": TWO_WORKERS, "task": {"type": "worker", "index": "1"}}),
     "TF_CONFIG: task worker '1' is outside its cluster"),
], ids=["not_json", "not_an_object", "no_cluster", "parameter_servers", "addresses_as_text",
        "address_without_port", "no_task", "task_type_not_in_cluster", "index_past_the_end",
        "negative_index", "index_as_text"])
def test_a_bad_tf_config_is_one_line_naming_it(text, expected):
    with pytest.raises(ValueError) as raised:
        check_tf_config(text)
    message = str(raised.value)
    assert message.startswith("TF_CONFIG") and expected in message and "\n" not in message
