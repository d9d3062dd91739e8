"""A multi-worker run's cluster, as TF_CONFIG says it, checked before TensorFlow loads.

    check_tf_config(text)   raises one ValueError naming TF_CONFIG when the text is not JSON,
                            lacks its cluster or task, or names a task outside its cluster

TensorFlow's MultiWorkerMirroredStrategy reads the environment variable TF_CONFIG on every host:

    {"cluster": {"worker": ["host0:2222", "host1:2222"]}, "task": {"type": "worker", "index": 1}}

the same cluster everywhere, each host its own task (worker 0, or a "chief" when the cluster
names one, writes the checkpoints). A mistake there shows, in TensorFlow, as a parse error deep
in the strategy's start, or as a worker waiting forever for a peer that is not coming; checked
here it is one line before any work. (Without TF_CONFIG the strategy runs on this host alone.)

No TensorFlow here: official/training/options.py's `check_files` calls it from an entry point's
checks.
"""

from __future__ import annotations

import json

# The task types a MultiWorkerMirroredStrategy cluster holds.
_TASK_TYPES = ("chief", "worker")


def check_tf_config(text: str | None) -> None:
    """Checks TF_CONFIG's text (None: unset, a one-host run); see the module docstring.

    Raises:
      ValueError: "TF_CONFIG: <what is wrong>", e.g. "TF_CONFIG: task worker 2 is outside its
        cluster, which has 2 workers (0-1)".
    """
    if text is None or not text.strip():
        return
    try:
        config = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"TF_CONFIG is not JSON ({e}): {text[:80]!r}") from None
    if not isinstance(config, dict):
        raise ValueError("TF_CONFIG must be a JSON object with \"cluster\" and \"task\"")
    cluster, task = config.get("cluster"), config.get("task")
    if not isinstance(cluster, dict) or not cluster:
        raise ValueError("TF_CONFIG has no \"cluster\": {\"worker\": [\"host:port\", ...]}")
    for task_type, addresses in cluster.items():
        if task_type not in _TASK_TYPES:
            raise ValueError(f"TF_CONFIG: cluster task type {task_type!r} is not one of "
                             f"{', '.join(_TASK_TYPES)}")
        if (not isinstance(addresses, list) or not addresses
                or not all(isinstance(a, str) and ":" in a for a in addresses)):
            raise ValueError(f"TF_CONFIG: cluster {task_type!r} must be a list of "
                             f"\"host:port\" addresses, got {addresses!r}")
    if not isinstance(task, dict) or "type" not in task or "index" not in task:
        raise ValueError("TF_CONFIG has no \"task\": {\"type\": \"worker\", \"index\": N}, "
                         "this host's place in its cluster")
    task_type, index = task["type"], task["index"]
    if task_type not in cluster:
        raise ValueError(f"TF_CONFIG: task type {task_type!r} is not in its cluster "
                         f"({', '.join(cluster)})")
    count = len(cluster[task_type])
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
        raise ValueError(f"TF_CONFIG: task {task_type} {index!r} is outside its cluster, which "
                         f"has {count} {task_type}{'s' if count != 1 else ''} (0-{count - 1})")
