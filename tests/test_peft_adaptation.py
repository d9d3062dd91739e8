"""official/peft/adaptation.py: a parameter-efficient fine-tuning through the generic run, and
the flags reconciled with what an output_dir holds.

The runs are `finetuning.run` on tests/test_finetuning.py's toy data side, in-process; each
method's run on BERT-Tiny is made once (`finished_runs`) for the tests that read a finished run.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from official.adaptation import Adaptation
from official.checkpoints import tf1
from official.checkpoints.errors import CheckpointError
from official.configs import preset
from official.modeling.encoder import build_encoder
from official.peft import adaptation, artifact, methods
from official.tasks.classification import ClassificationTask
from official.training import finetuning
from tests.peft_helpers import write_base
from tests.test_finetuning import LoggedData, options

TASK = ClassificationTask("tsv", ["0", "1"])


class Spy(Adaptation):
    """The run's adaptation, keeping the model it adapted (to look at after training)."""

    def __init__(self, inner):
        self.inner, self.model = inner, None

    def adapt(self, model):
        self.inner.adapt(model)
        self.model = model

    def files(self):
        return self.inner.files()


def run(opts, settings, data):
    """finetuning.run with the adaptation `resolve` makes of `settings`, spied on."""
    opts, adapt = adaptation.resolve(settings, opts, TASK)
    spy = Spy(adapt)
    finetuning.run(opts, TASK, data, [spy])
    return spy.model


RUNS = {"adapters with the pooler": methods.from_flags(adapter_size=64, train_pooler=True),
        "lora": methods.from_flags(lora_rank=8)}


@pytest.fixture(scope="module")
def finished_runs(tmp_path_factory):
    """{RUNS' name: (its settings, base, output_dir, the model it trained)}: each method's run
    on a random BERT-Tiny base (vocab 30,522: the sizes an artifact is measured against),
    trained, evaluated and predicted once for the tests that read a finished run; the vocab is
    conftest's `files`' 100 tokens."""
    root = tmp_path_factory.mktemp("peft_runs")
    config = preset("tiny", vocab_size=30522)
    files = {"bert_config_file": str(root / "bert_config.json"),
             "vocab_file": str(root / "vocab.txt")}
    config.to_json_file(files["bert_config_file"])
    (root / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                                              + [f"w{i}" for i in range(95)]) + "\n")
    runs = {}
    for name, settings in RUNS.items():
        folder = root / name.replace(" ", "_")
        base, out = write_base(config, folder / "base"), folder / "out"
        # (Adapters under a strategy of its own: what it places, the method's variables
        # included.)
        strategy = "mirrored" if settings.method == "adapters" else "default"
        model = run(options(files, out, do_train=True, do_eval=True, do_predict=True,
                            init_checkpoint=base, distribution_strategy=strategy), settings,
                    LoggedData(str(folder)))
        runs[name] = (settings, base, out, model)
    return {"config": config, "files": files, "runs": runs}


@pytest.mark.parametrize("name", RUNS)
def test_a_run_trains_only_its_method_and_keeps_only_that(finished_runs, name):
    settings, base, out, model = finished_runs["runs"][name]

    base_weights = tf1.read(os.path.join(base, "bert_model.ckpt"))
    trained = {name for name, v in tf1.original_names(model).items() if v.trainable}
    changed = {name for name, value in tf1.weights_of(model).items()
               if name in base_weights and not np.array_equal(value, base_weights[name])}
    assert changed <= trained  # every frozen weight bit-identical to the base's
    assert {name.split("/")[1] for name in changed} == (
        {"embeddings", "encoder", "pooler"} if settings.method == "adapters" else set())
    assert all(value.any() for name, value in tf1.weights_of(model).items()
               if name.endswith(("lora_B", "adapters/biases2")))  # zero at the start

    # The optimiser holds slots (m and v) for what trains alone.
    newest = tf.train.latest_checkpoint(str(out))
    slots = sum(int(np.prod(shape)) for name, shape in tf.train.list_variables(newest)
                if name.startswith("optimizer/_variables/") and len(shape))
    assert slots == 2 * sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    # best/ holds the record and the trained variables alone, no optimiser slot.
    assert artifact.read_record(str(out / "best")).settings == settings
    saved = [name for name, _ in tf.train.list_variables(
        tf.train.latest_checkpoint(str(out / "best")))]
    assert not [name for name in saved if name.startswith("optimizer")]
    assert {name.split("/")[0] for name in saved} == {
        "_CHECKPOINTABLE_OBJECT_GRAPH", "encoder_trained", "heads", "step"}

    # Reloaded on its base, the artifact predicts what the model that trained it does.
    again = TASK.build_model(build_encoder(finished_runs["config"]))
    artifact.restore(again, str(out))
    inputs = {"input_word_ids": np.array([[2, 7, 9, 11, 3]] * 2, "int32"),
              "input_mask": np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], "int32"),
              "input_type_ids": np.zeros((2, 5), "int32")}
    np.testing.assert_array_equal(again(inputs), model(inputs))


def checkpoint_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder)
               if ".index" in name or ".data-" in name)


@pytest.mark.parametrize("name", RUNS)
def test_an_artifact_is_under_5_percent_of_its_base(finished_runs, name):
    """BERT-Tiny (vocab 30,522), adapters of 64 with the pooler or LoRA of rank 8: best/
    against the base checkpoint, both written."""
    _, base, out, _ = finished_runs["runs"][name]
    ratio = checkpoint_bytes(out / "best") / checkpoint_bytes(base)
    assert ratio <= 0.05, ratio


def test_the_flags_must_agree_with_the_run_in_output_dir(finished_runs, tmp_path):
    """On the adapters' finished run (`finished_runs`: read, never written)."""
    adapters, base, out, _ = finished_runs["runs"]["adapters with the pooler"]
    files = finished_runs["files"]
    before = sorted(os.listdir(out))

    with pytest.raises(ValueError, match=r"peft_config.json \(the run in .*\) and the flags "
                                         r"differ in adapter_size \(64 vs 8\):"):
        adaptation.resolve(methods.from_flags(adapter_size=8, train_pooler=True),
                           options(files, out, do_train=True, init_checkpoint=base), TASK)
    with pytest.raises(ValueError, match="holds a parameter-efficient run .*: pass its flags"):
        adaptation.resolve(None, options(files, out, do_train=True, init_checkpoint=base), TASK)
    # Predicting alone needs no flags: the record gives the method and the base.
    resolved, adapt = adaptation.resolve(None, options(files, out, do_predict=True), TASK)
    assert adapt.settings == adapters and resolved.init_checkpoint == base
    # A rerun on another base is refused once that base is loaded, before any data is read.
    other = write_base(finished_runs["config"], tmp_path / "other", seed=3)
    data = LoggedData(str(tmp_path))
    with pytest.raises(CheckpointError, match=f"{other} is not the base of the "
                                              "parameter-efficient run"):
        run(options(files, out, do_train=True, init_checkpoint=other), adapters, data)
    assert data.log == []
    assert sorted(os.listdir(out)) == before


def test_a_full_fine_tuning_and_a_peft_run_never_share_an_output_dir(files, tiny_config,
                                                                     tmp_path):
    base = write_base(tiny_config, tmp_path / "base")
    finetuning.run(options(files, tmp_path / "full", do_train=True, init_checkpoint=base),
                   TASK, LoggedData(str(tmp_path)))
    with pytest.raises(ValueError, match="holds a full fine-tuning's checkpoints"):
        adaptation.resolve(methods.from_flags(lora_rank=2),
                           options(files, tmp_path / "full", do_train=True,
                                   init_checkpoint=base), TASK)
    with pytest.raises(ValueError, match="needs --init_checkpoint: the base it adapts"):
        adaptation.resolve(methods.from_flags(lora_rank=2),
                           options(files, tmp_path / "new", do_train=True), TASK)
