"""Shared fixtures (a tiny BERT config and Hub-convention inputs for it, pretraining records) and
the quick tier (`pytest --quick`)."""

import multiprocessing.process
import os
import re
import subprocess

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from official.configs import BertConfig  # noqa: E402


@pytest.fixture
def tiny_config():
    keras.utils.set_random_seed(0)  # fixed weights: the mixed-precision tolerances were measured
    return BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=64, type_vocab_size=2)


@pytest.fixture
def files(tiny_config, tmp_path):
    """The tiny config and a vocab of its 100 tokens as files: the `bert_config_file` and
    `vocab_file` of a fine-tuning's options (tests/test_finetuning.py's `options`)."""
    config_file = tmp_path / "bert_config.json"
    tiny_config.to_json_file(str(config_file))
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                                    + [f"w{i}" for i in range(95)]) + "\n")
    return {"bert_config_file": str(config_file), "vocab_file": str(vocab_file)}


@pytest.fixture
def make_inputs(tiny_config):
    """`make_inputs(batch, seq_len)`: random ids, both segments, every row's tail padded."""

    def make(batch=2, seq_len=8, seed=0):
        rng = np.random.default_rng(seed)
        lengths = rng.integers(1, seq_len + 1, size=batch)
        lengths[0] = seq_len  # at least one row without padding
        mask = (np.arange(seq_len)[None, :] < lengths[:, None]).astype("int32")
        return {
            "input_word_ids": rng.integers(0, tiny_config.vocab_size, (batch, seq_len),
                                           dtype="int32"),
            "input_mask": mask,
            "input_type_ids": rng.integers(0, tiny_config.type_vocab_size, (batch, seq_len),
                                           dtype="int32"),
        }

    return make


@pytest.fixture(scope="session")
def pretraining_records(tmp_path_factory):
    """Pretraining TFRecords (seq 32, 5 predictions) made by data_prep from the shipped sample,
    with a matching tiny bert_config.json: {"dir", "input_file", "bert_config_file", "vocab_file"}.
    """
    from data_prep import fast_generation
    from data_prep.pretraining_options import PretrainingDataOptions

    root = tmp_path_factory.mktemp("pretraining_records")
    here = os.path.dirname(__file__)
    vocab = os.path.join(here, "..", "data", "vocab", "uncased_vocab.txt")
    options = PretrainingDataOptions(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1)
    fast_generation.generate([os.path.join(here, "data", "pretraining_sample.txt")],
                             str(root / "data"), vocab, True, options, num_shards=2)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    config.to_json_file(str(root / "bert_config.json"))
    return {"dir": str(root), "input_file": str(root / "data" / "*.tfrecord"),
            "bert_config_file": str(root / "bert_config.json"), "vocab_file": vocab}


# The quick tier (`make quick`, `pytest --quick`): the tests that start no process and take no
# more than a few seconds, for the inner loop; `make test` runs every test. A test module that
# starts processes (tests/cli.py's runners, subprocess, multiprocessing) is left out whole, and
# so are the tests in SLOW_TESTS; in the quick tier a test that starts a process anyway fails,
# naming the rule, so the tier stays what it says.
STARTS_PROCESSES = re.compile(r"\b(subprocess|multiprocessing|sys\.executable|run_modules?|"
                              r"BackgroundRun|serve_requests|cli\.start)\b|^from tests\.cli import"
                              r"[^\n]*\bstart\b", re.MULTILINE)
# Tests that start no process but take seconds (node id prefixes; a module fixture's cost counts
# to its module's first test), measured with `pytest --quick --durations=0` on 2 cores.
SLOW_TESTS: tuple[str, ...] = ()


def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true",
                     help="the quick tier: no test that starts a process or takes seconds")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: starts processes or takes seconds; not in --quick")
    if config.getoption("--quick"):
        _refuse_processes()


def _refuse_processes() -> None:
    """The quick tier's guard, for the whole session (session fixtures included): starting a
    process fails the test that does it."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"{os.environ.get('PYTEST_CURRENT_TEST')} starts a process: add "
                             "it to tests/conftest.py's SLOW_TESTS (--quick starts none)")

    subprocess.Popen.__init__ = refuse
    multiprocessing.process.BaseProcess.start = refuse
    os.fork = refuse
    os.posix_spawn = refuse


def pytest_collection_modifyitems(config, items):
    sources: dict[str, bool] = {}
    for item in items:
        path = str(item.path)
        if path not in sources:
            with open(path, encoding="utf-8") as f:
                sources[path] = bool(STARTS_PROCESSES.search(f.read()))
        if sources[path] or item.nodeid.startswith(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
    if config.getoption("--quick"):
        kept = [item for item in items if not item.get_closest_marker("slow")]
        config.hook.pytest_deselected(items=[item for item in items
                                             if item.get_closest_marker("slow")])
        items[:] = kept
