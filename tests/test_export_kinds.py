"""official/export/kinds.py: the task kinds' rows rebuild the tasks their specs name, make their
options from their own flags' values, and load without TensorFlow."""

import os
import subprocess
import sys

import pytest

from official.export.kinds import KINDS
from official.tasks.squad_settings import SquadSettings
from tests.cli import ENV, PATIENCE, REPO

# A spec per kind as its task's serving_spec() writes it (written out by hand), with the
# max_seq_length an export adds.
SPECS = {
    "classifier": {"export_type": "classifier", "task_name": "mrpc", "labels": ["0", "1"],
                   "pair": True, "long_doc": {"long_doc": "head_tail", "head_tokens": 4}},
    "ner": {"export_type": "ner", "task_name": "ner", "labels": ["O", "B-PER", "I-PER"]},
    "squad": {"export_type": "squad", "task_name": "squad",
              "squad": {"max_seq_length": 64, "doc_stride": 16, "max_query_length": 8,
                        "n_best_size": 5, "max_answer_length": 10,
                        "version_2_with_negative": True, "null_score_diff_threshold": 0.5}},
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_a_kinds_task_records_the_spec_it_was_rebuilt_from(name):
    spec = SPECS[name]
    task = KINDS[name].task(dict(spec, max_seq_length=16))
    recorded = task.serving_spec()
    if name == "classifier":  # the reading of long documents, resolved against the length
        assert recorded.pop("long_doc")["head_tokens"] == 4
        spec = {k: v for k, v in spec.items() if k != "long_doc"}
    assert recorded == spec


def test_every_task_kind_is_named_by_its_row():
    assert sorted(KINDS) == sorted(SPECS)
    assert all(name == kind.name for name, kind in KINDS.items())


def test_the_classifier_takes_its_labels_from_the_data_side_of_its_task_name():
    asked = []

    def labels_of(task_name, data_dir):
        asked.append((task_name, data_dir))
        return ["a", "b"], True

    values = {"max_seq_length": 64, "task_name": "tsv", "data_dir": "/data"}
    assert KINDS["classifier"].options(values, labels_of) == {"labels": ["a", "b"], "pair": True}
    assert asked == [("tsv", "/data")]
    with pytest.raises(ValueError, match="--export_type=classifier needs --task_name"):
        KINDS["classifier"].options(dict(values, task_name=None), labels_of)


def test_squad_and_ner_options_are_their_flags_values():
    values = {"max_seq_length": 96, "doc_stride": 32, "max_query_length": 16, "n_best_size": 3,
              "max_answer_length": 7, "version_2_with_negative": True,
              "null_score_diff_threshold": -1.0}
    assert [f.name for f in KINDS["squad"].flags] == [name for name in values
                                                       if name != "max_seq_length"]
    assert KINDS["squad"].options(values, None) == {"squad": SquadSettings(**values)}
    with pytest.raises(ValueError, match="doc_stride must be positive"):
        KINDS["squad"].options(dict(values, doc_stride=0), None)
    assert KINDS["ner"].options({"max_seq_length": 8, "ner_labels": ["O", "B-X"]}, None) == {
        "labels": ["O", "B-X"]}


def test_the_table_and_the_options_load_without_tensorflow():
    blocked = os.path.join(REPO, "tests", "without_tensorflow")
    env = dict(ENV, PYTHONPATH=os.pathsep.join([blocked, ENV["PYTHONPATH"]]))
    result = subprocess.run(
        [sys.executable, "-c", "import official.export.kinds, official.export.options"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("export_type", ["classifier", "multitask"])
def test_window_batch_size_reaches_every_export_that_serves_a_classifier(export_type):
    """--window_batch_size is a serving setting of every classifier served: a multitask
    export's runs too, not only export_type=classifier's. (In a process of its own: the entry
    point's flags would clash with other tests' in this one.)"""
    script = ("import sys; from absl import flags; from run_scripts import export_saved_model; "
              "flags.FLAGS(sys.argv); print(export_saved_model.options_from_flags()"
              ".window_batch_size)")
    result = subprocess.run(
        [sys.executable, "-c", script, f"--export_type={export_type}", "--export_dir=/tmp/x",
         "--window_batch_size=4", "--task_name=MRPC"],
        cwd=REPO, env=ENV, capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["4"]
