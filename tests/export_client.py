"""A serving client that knows nothing of this project: loads exports, runs requests, reports.

    python tests/export_client.py requests.json results.json

It imports only tensorflow and tensorflow_text (whose ops the exports use), as a TF Serving
user's or TF Hub user's process would; test_export_saved_model.py writes the requests and
compares the results with the project's in-process models.

A request: {"name", "path" (a SavedModel directory), "method" (attribute path on the loaded
object: "" for the object itself, "tokenize", "bert_pack_inputs", "mlm",
"signatures.serving_default", ...), "args", "kwargs"}. Argument values: a JSON value (made a
tensor: strings -> tf.string, ints -> int32, floats -> float32), {"bytes": [latin-1 strings]}
for raw bytes, {"ref": name} for an earlier request's result, {"python": value} for a value
passed as is, and lists of those for a list argument ({"list": [...]}). A request that raises
records {"error": type, "message"}; the next requests still run (a bad request must not take
the serving process down).
"""

import json
import sys
from collections.abc import KeysView

import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the exports use)


def _value(spec, results):
    if isinstance(spec, dict):
        if "ref" in spec:
            return results[spec["ref"]]
        if "python" in spec:
            return spec["python"]
        if "bytes" in spec:
            return tf.constant([s.encode("latin-1") for s in spec["bytes"]])
        if "list" in spec:
            return [_value(x, results) for x in spec["list"]]
        return {k: _value(v, results) for k, v in spec.items()}
    flat = tf.nest.flatten(spec)
    if flat and all(isinstance(x, str) for x in flat) or spec == []:
        return tf.constant(spec, tf.string)
    if flat and all(isinstance(x, int) for x in flat):
        return tf.constant(spec, tf.int32)
    return tf.constant(spec, tf.float32)


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, KeysView)):  # a signatures mapping's keys, too
        return [_jsonable(v) for v in value]
    if isinstance(value, tf.RaggedTensor):
        return {"ragged": _jsonable(value.to_list())}
    if isinstance(value, (tf.Tensor, tf.Variable)):
        value = value.numpy()
        return _jsonable(value.tolist() if hasattr(value, "tolist") else value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return value


def main(request_file: str, result_file: str) -> None:
    with open(request_file, encoding="utf-8") as f:
        requests = json.load(f)
    loaded, results, report = {}, {}, {}
    for request in requests:
        try:
            if request["path"] not in loaded:
                loaded[request["path"]] = tf.saved_model.load(request["path"])
            target = loaded[request["path"]]
            for part in filter(None, request["method"].split(".")):
                target = getattr(target, part) if hasattr(target, part) else target[part]
            args = [_value(a, results) for a in request.get("args", [])]
            kwargs = {k: _value(v, results) for k, v in request.get("kwargs", {}).items()}
            results[request["name"]] = target(*args, **kwargs) if callable(target) else target
            report[request["name"]] = _jsonable(results[request["name"]])
        except Exception as e:  # noqa: BLE001  (recorded: the test checks which requests fail)
            report[request["name"]] = {"error": type(e).__name__, "message": str(e)[:2000]}
    report["modules"] = sorted(m.split(".")[0] for m in sys.modules
                               if m.split(".")[0] in ("official", "data_prep", "keras"))
    with open(result_file, "w", encoding="utf-8") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
