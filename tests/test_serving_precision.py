"""export_saved_model --serving_dtype (official/export/precision.py, cpu_units.py): every export
type with a model, in float32 and in bfloat16, on one tiny model's weights.

Each bfloat16 export is served by tests/export_client.py in a fresh process that imports only
tensorflow and tensorflow_text, and compared with the float32 serving module of the same options
(what the float32 export saves, called in this process). The bfloat16 export has its signatures
(the same inputs and outputs, dtypes and shapes), outputs within bfloat16's rounding of its
outputs (tolerances below) and not equal to them, its weights rounded to the nearest bfloat16 (a
numpy rounding of the bits, not TensorFlow's cast), and every matrix product in its serving
graph multiplies bfloat16 operands (float32 in the module's). A bad --serving_dtype is one line
before TensorFlow loads.
"""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from data_prep.conll import LABELS as NER_LABELS
from official.checkpoints import tf1
from official.configs import BertConfig
from official.export import cpu_units, jobs
from official.modeling.encoder import build_encoder
from official.modeling.models import (
    BertClassifier,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from official.peft import methods
from official.sentence_settings import SentenceSettings
from official.tasks.classification import ClassificationTask
from official.tasks.long_doc_settings import LongDocSettings
from official.tasks.ner import NerTask
from official.tasks.squad_settings import SquadSettings
from official.text.tokenizer import FullTokenizer
from tests.cli import outputs, refused, serve_requests, start
from tests.peft_helpers import write_base, write_run
from tests.test_export_saved_model import VOCAB, _write_finetuned
from tests.test_startup import run_without_tensorflow

SEQ = 16
CONFIG = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=64, max_position_embeddings=64)
TEXTS = ["The cat sat on the mat.", "Zoë lives in Zürich, near the lake.", "",
         "a much longer text that needs more than one window " * 3]
PAIRS = {"text_a": TEXTS, "text_b": ["A cat sits.", "", "only b", "short"]}
SQUAD_INPUTS = {"question": ["Who sat on the mat?", "Where does Zoë live?"],
                "context": ["The cat sat on the mat, said Steve Smith in 1999.",
                            "Zoë lives in Zürich, near the lake, since 2001."]}
# bfloat16 keeps 8 significant bits (relative rounding 2^-9 per operand): through two layers of
# this width a value moves by a few 2^-8 of its scale. The bounds: |difference| / the float32
# outputs' largest magnitude, per output.
RELATIVE_TOLERANCE = 0.05
MATMULS = ("MatMul", "BatchMatMulV2", "BatchMatMulV3", "_FusedMatMul")


def _sharpen_heads(model):
    """Heads with weights of scale 1 (not 0.02), so the tags and labels compared are decided by
    margins larger than bfloat16's rounding: a random tiny model's logits otherwise tie."""
    rng = np.random.default_rng(5)
    for head in model.checkpoint_heads.values():
        for variable in head.trainable_variables:
            variable.assign(rng.normal(0, 1.0, variable.shape).astype(np.float32))


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """{export name: {dtype: path}} and the client's results on each."""
    root = tmp_path_factory.mktemp("precision")
    keras.utils.set_random_seed(11)
    pretrained = root / "pretrained"
    tf1.write(tf1.weights_of(BertPretrainer(build_encoder(CONFIG))),
              str(pretrained / "bert_model.ckpt"))
    CONFIG.to_json_file(str(pretrained / "bert_config.json"))
    for name, model in (("classifier", BertClassifier(build_encoder(CONFIG), 2)),
                        ("ner", BertTokenClassifier(build_encoder(CONFIG), len(NER_LABELS))),
                        ("squad", BertSpanLabeler(build_encoder(CONFIG)))):
        _sharpen_heads(model)
        _write_finetuned(model, str(root / name), CONFIG)
    base = write_base(CONFIG, root / "base")
    write_run(base, methods.from_flags(adapter_size=4), root / "sst",
              ClassificationTask("SST-2", ["0", "1"]))
    write_run(base, methods.from_flags(lora_rank=2), root / "tagger", NerTask(NER_LABELS))

    common = dict(vocab_file=VOCAB, max_seq_length=SEQ)
    kinds = {
        "classifier": dict(export_type="classifier", init_checkpoint=str(root / "classifier"),
                           labels=["0", "1"], pair=True),
        "windows": dict(export_type="classifier", init_checkpoint=str(root / "classifier"),
                        labels=["0", "1"], window_batch_size=2,
                        long_doc=LongDocSettings("windows", doc_stride=4,
                                                 window_pool="mean_cls")),
        "ner": dict(export_type="ner", init_checkpoint=str(root / "ner"), labels=NER_LABELS),
        "squad": dict(export_type="squad", init_checkpoint=str(root / "squad"),
                      squad=SquadSettings(max_seq_length=SEQ, doc_stride=8, max_query_length=8)),
        "encoder": dict(export_type="encoder", init_checkpoint=str(pretrained)),
        "sentence_encoder": dict(export_type="sentence_encoder", init_checkpoint=str(pretrained),
                                 sentence=SentenceSettings(max_seq_length=SEQ)),
        "multitask": dict(export_type="multitask", max_seq_length=SEQ,
                          peft_checkpoints=[str(root / "sst"), f"tagger={root / 'tagger'}"]),
    }
    # The classifier's bfloat16 export through the entry point (its flag), meanwhile the rest.
    cli = start("run_scripts.export_saved_model", "--export_type=classifier",
                "--task_name=MRPC", f"--vocab_file={VOCAB}", f"--max_seq_length={SEQ}",
                f"--init_checkpoint={root / 'classifier'}", "--serving_dtype=bfloat16",
                f"--export_dir={root / 'serving' / 'classifier'}")
    # Each bfloat16 export, and its float32 serving module in this process: what the float32
    # export would save (its signatures, variables and graphs), called here.
    tokenizer = FullTokenizer(VOCAB)
    paths, references, signatures = {}, {}, {}
    for name, options in kinds.items():
        references[name] = jobs.serving_module(jobs.ExportOptions(
            export_dir="", serving_dtype="float32", **{**common, **options}), tokenizer)
        signatures[name] = references[name].signatures()  # traced once, for every test
        if name != "classifier":
            paths[name] = jobs.export(jobs.ExportOptions(
                export_dir=str(root / "serving" / name), serving_dtype="bfloat16",
                **{**common, **options}))
    done = outputs(cli)
    assert done.returncode == 0, done.stderr[-3000:]
    paths["classifier"] = done.stdout.strip().splitlines()[-1]

    calls = {"classifier": ("classifier", "serving_default", PAIRS),
             "windows": ("windows", "serving_default", {"text_a": TEXTS}),
             "ner": ("ner", "serving_default", {"text": TEXTS}),
             "squad": ("squad", "serving_default", SQUAD_INPUTS),
             "sentence_encoder": ("sentence_encoder", "serving_default", {"text": TEXTS}),
             "multitask": ("multitask", "sst_2", {"text_a": TEXTS}),
             "multitask_tagger": ("multitask", "tagger", {"text": TEXTS})}
    requests, expected = [], {}
    for name, (export, signature, kwargs) in calls.items():
        requests.append({"name": name, "path": paths[export],
                         "method": f"signatures.{signature}", "args": [], "kwargs": kwargs})
        function = signatures[export][signature]
        expected[name] = function(**{k: tf.constant(v) for k, v in kwargs.items()})
    inputs = {"input_word_ids": [[101, 1996, 4937, 102, 0, 0], [101, 2054, 102, 0, 0, 0]],
              "input_mask": [[1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0]],
              "input_type_ids": [[0] * 6, [0] * 6]}
    mlm_inputs = dict(inputs, masked_lm_positions=[[1, 2], [1, 1]])
    requests.append({"name": "encoder", "path": paths["encoder"], "method": "",
                     "args": [inputs], "kwargs": {}})
    requests.append({"name": "mlm", "path": paths["encoder"], "method": "mlm",
                     "args": [mlm_inputs], "kwargs": {}})
    hub = references["encoder"]
    expected["encoder"] = hub({k: tf.constant(v) for k, v in inputs.items()})
    expected["mlm"] = hub.mlm({k: tf.constant(v) for k, v in mlm_inputs.items()})
    return {"paths": paths, "references": references, "signatures": signatures,
            "stderr": done.stderr,
            "results": serve_requests(requests, root),
            "expected": {name: _as_lists(value) for name, value in expected.items()}}


def _as_lists(value):
    """A module's outputs as the client reports them (lists, strings decoded)."""
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    value = value.numpy().tolist()
    return tf.nest.map_structure(
        lambda x: x.decode("utf-8", "backslashreplace") if isinstance(x, bytes) else x, value)


def _pair(exports, name):
    """(the float32 module's outputs, the bfloat16 export's as served)."""
    served = exports["results"][name]
    assert "error" not in served, served
    return exports["expected"][name], served


def _close(reference, served, name):
    reference, served = np.asarray(reference, np.float64), np.asarray(served, np.float64)
    scale = np.abs(reference).max()
    difference = np.abs(served - reference).max()
    assert difference <= RELATIVE_TOLERANCE * scale, (name, difference, scale)
    return difference


@pytest.mark.parametrize("name", ["classifier", "windows", "multitask"])
def test_classifier_probabilities_are_within_bfloat16s_rounding(exports, name):
    reference, served = _pair(exports, name)
    assert _close(reference["probabilities"], served["probabilities"], name) > 0
    assert served["label"] == reference["label"]
    if name == "windows":
        assert served["num_windows"] == reference["num_windows"] and \
            max(reference["num_windows"]) > 1


def test_squad_answers_and_scores(exports):
    reference, served = _pair(exports, "squad")
    assert served["answer"] == reference["answer"]
    assert served["answer_start"] == reference["answer_start"]
    assert served["answer_end"] == reference["answer_end"]
    assert _close(reference["score"], served["score"], "score") > 0


@pytest.mark.parametrize("name", ["ner", "multitask_tagger"])
def test_ner_tags_agree(exports, name):
    reference, served = _pair(exports, name)
    assert served["words"] == reference["words"]
    tags = [(r, s) for rs, ss in zip(reference["tags"], served["tags"])
            for r, s in zip(rs, ss) if r]
    agree = sum(r == s for r, s in tags) / len(tags)
    assert len(tags) > 20 and agree >= 0.9, (agree, tags)


def test_sentence_vectors_point_the_same_way(exports):
    reference, served = _pair(exports, "sentence_encoder")
    a, b = (np.asarray(x["embeddings"], np.float64) for x in (reference, served))
    cosine = (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    assert cosine.min() >= 0.999 and _close(a, b, "embeddings") > 0


def test_the_hub_encoder_and_its_masked_lm(exports):
    reference, served = _pair(exports, "encoder")
    for key in ("pooled_output", "sequence_output", "encoder_outputs"):
        assert _close(reference[key], served[key], key) > 0
    reference, served = _pair(exports, "mlm")
    assert _close(reference["mlm_logits"], served["mlm_logits"], "mlm_logits") > 0


@pytest.fixture(scope="module")
def graphs(exports):
    """{export name: {dtype: (its signatures' input and output specs, the dtypes of the matrix
    products in their graphs)}}: bfloat16 the export's, as its saved_model.pb holds them (what a
    loader restores: the client loaded each), float32 the module's."""
    return {name: {"float32": _graph(exports["signatures"][name]),
                   "bfloat16": _saved_graph(path)}
            for name, path in exports["paths"].items()}


def _spec(value):
    return (tf.dtypes.as_dtype(value.dtype).name, tuple(value.shape))


def _matmul_dtypes(nodes):
    return {tf.dtypes.as_dtype(n.attr["T"].type).name for n in nodes if n.op in MATMULS}


def _graph(signatures):
    specs, dtypes = {}, set()
    for name, function in signatures.items():
        if not isinstance(function, tf.types.experimental.ConcreteFunction):
            function = function.get_concrete_function()
        # Inputs by name: the module's function takes them by position.
        inputs = {spec.name: _spec(spec)
                  for spec in tf.nest.flatten(function.structured_input_signature)}
        specs[name] = (inputs, tf.nest.map_structure(_spec, function.structured_outputs))
        graph = function.graph.as_graph_def()
        dtypes |= _matmul_dtypes(list(graph.node) + [n for f in graph.library.function
                                                     for n in f.node_def])
    return specs, dtypes


def _saved_graph(path):
    """`_graph` of an export's signatures, read from its saved_model.pb: each signature's specs
    (its SignatureDef), and the matrix products of every function its outputs call, followed
    through the function library."""
    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    graph = saved.meta_graphs[0].graph_def
    library = {f.signature.name: f for f in graph.library.function}
    nodes = {n.name: n for n in graph.node}

    def callees(node):
        for attr in node.attr.values():
            yield from ([attr.func.name] if attr.func.name else [])
            yield from (f.name for f in attr.list.func)

    specs, dtypes = {}, set()
    for name, signature in saved.meta_graphs[0].signature_def.items():
        if name == "__saved_model_init_op":
            continue
        specs[name] = tuple({key: (tf.dtypes.as_dtype(info.dtype).name,
                                   tuple(tf.TensorShape(info.tensor_shape)))
                             for key, info in tensors.items()}
                            for tensors in (signature.inputs, signature.outputs))
        called = [nodes[info.name.split(":")[0]] for info in signature.outputs.values()]
        seen, pending = set(), [c for node in called for c in callees(node)]
        dtypes |= _matmul_dtypes(called)
        while pending:
            function = pending.pop()
            if function in seen:
                continue
            seen.add(function)
            dtypes |= _matmul_dtypes(library[function].node_def)
            pending += [c for node in library[function].node_def for c in callees(node)]
    return specs, dtypes


@pytest.mark.parametrize("name", ["classifier", "windows", "ner", "squad", "encoder",
                                  "sentence_encoder", "multitask"])
def test_signatures_are_unchanged(graphs, name):
    assert graphs[name]["bfloat16"][0] == graphs[name]["float32"][0]


def _round_to_bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 -> the nearest bfloat16 (ties to even), as float32: on the bits."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def _weights(path):
    """{index in the export's `variables` list: (dtype, value)} of its float weights."""
    folder = os.path.join(path, "variables", "variables")
    reader = tf.train.load_checkpoint(folder)
    dtypes = reader.get_variable_to_dtype_map()
    return {int(name.split("/")[1]): (dtypes[name], reader.get_tensor(name)) for name in dtypes
            if name.startswith("variables/") and dtypes[name].is_floating}


@pytest.mark.parametrize("name", ["classifier", "encoder", "multitask"])
def test_weights_are_the_float32_ones_rounded(exports, name):
    reference = {i: v.numpy() for i, v in enumerate(exports["references"][name].variables)
                 if v.dtype.is_floating}
    served = _weights(exports["paths"][name])
    assert served.keys() == reference.keys()  # multitask: the shared base still stored once
    kept = []
    for key, (dtype, values) in served.items():
        if dtype == tf.float32:  # never autocast: LayerNorms' gamma and beta, the MLM bias
            kept.append(values.shape)
            np.testing.assert_array_equal(values, reference[key])
            continue
        assert dtype == tf.bfloat16, key
        np.testing.assert_array_equal(values.astype(np.float32),
                                      _round_to_bfloat16(reference[key]), err_msg=str(key))
    hidden, layer_norms = CONFIG.hidden_size, 1 + 2 * CONFIG.num_hidden_layers
    if name == "multitask":  # each task's LayerNorms are its own (they train)
        assert kept and set(kept) == {(hidden,)}
    else:  # gamma and beta of each LayerNorm (+ the masked-LM head's transform and bias)
        heads = [(hidden,), (hidden,), (CONFIG.vocab_size,)] if name == "encoder" else []
        assert sorted(kept) == sorted([(hidden,)] * 2 * layer_norms + heads)


@pytest.mark.parametrize("name", ["classifier", "windows", "ner", "squad", "encoder",
                                  "sentence_encoder", "multitask"])
def test_every_matrix_product_multiplies_bfloat16(graphs, name):
    assert graphs[name]["float32"][1] == {"float32"}
    assert graphs[name]["bfloat16"][1] == {"bfloat16"}


def test_the_command_says_when_this_cpu_has_no_bfloat16_units(exports):
    said = "bfloat16 matrix units" in exports["stderr"]
    assert said == (cpu_units.bfloat16_units() is not True), exports["stderr"]


def test_bfloat16_units_are_read_from_the_cpus_flags(tmp_path):
    zen4 = tmp_path / "zen4"
    zen4.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 avx512_vnni\n\n"
                    "processor\t: 1\nflags\t\t: fpu avx2 avx512f avx512_bf16 avx512_vnni\n")
    skylake = tmp_path / "skylake"
    skylake.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_vnni\n")
    graviton = tmp_path / "graviton3"
    graviton.write_text("processor\t: 0\nFeatures\t: fp asimd sve bf16 i8mm\n")
    sapphire = tmp_path / "sapphire"
    sapphire.write_text("flags\t\t: avx512f amx_bf16 amx_tile amx_int8\n")
    assert [cpu_units.bfloat16_units(str(p)) for p in (zen4, skylake, graviton, sapphire)] == \
        [True, False, True, True]
    assert cpu_units.bfloat16_units(str(tmp_path / "absent")) is None
    assert cpu_units.bfloat16_note(str(zen4)) is None
    assert "has no bfloat16 matrix units" in cpu_units.bfloat16_note(str(skylake))
    assert "flags cannot be read" in cpu_units.bfloat16_note(str(tmp_path / "absent"))


@pytest.mark.parametrize("flags, expected", [
    (["--export_type=encoder", "--serving_dtype=float16"],
     "--serving_dtype must be one of float32, bfloat16, got 'float16'"),
    (["--export_type=encoder", "--serving_dtype=int8"],
     "--serving_dtype=int8 is not built: TensorFlow's CPU int8 matrix products are slower"),
    (["--export_type=preprocessor", "--serving_dtype=bfloat16"],
     "--serving_dtype=bfloat16: export_type=preprocessor has no model to compute in it"),
])
def test_a_bad_serving_dtype_is_one_line_before_tensorflow(tmp_path, flags, expected):
    result = run_without_tensorflow("run_scripts.export_saved_model", *flags,
                                    f"--export_dir={tmp_path / 'out'}", f"--vocab_file={VOCAB}")
    refused(result, "export_saved_model: ", expected)
    assert not (tmp_path / "out").exists()
