"""The tf.distribute strategy that a `--distribution_strategy` flag names.

    default                 one device: the first GPU if there is one, else the CPU
    mirrored                every local GPU (`num_gpus` of them), synchronous all-reduce
    multi_worker_mirrored   several machines, each mirrored; the cluster comes from TF_CONFIG
                            (checked before TensorFlow loads: official/training/cluster.py)
    tpu                     a Cloud TPU, reached through `tpu_address` (a name or grpc:// address)
"""

from __future__ import annotations

import tensorflow as tf

STRATEGIES = ("default", "mirrored", "multi_worker_mirrored", "tpu")


def get_strategy(name: str, num_gpus: int = 0,
                 tpu_address: str | None = None) -> tf.distribute.Strategy:
    """Builds the named strategy; call before any variable is created.

    Args:
      num_gpus: GPUs for "mirrored"; 0 mirrors over the CPU alone (a one-replica run of the same
        code path, which is how it is tested here).
      tpu_address: for "tpu", the `--tpu_name` of the original (a TPU name, or "local").
    Raises:
      ValueError: an unknown name, or "tpu" without an address.
    """
    if name == "default":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        devices = [f"/gpu:{i}" for i in range(num_gpus)] or ["/cpu:0"]
        return tf.distribute.MirroredStrategy(devices)
    if name == "multi_worker_mirrored":
        return tf.distribute.MultiWorkerMirroredStrategy()
    if name == "tpu":
        if not tpu_address:
            raise ValueError("distribution_strategy=tpu needs --tpu_name")
        # A thin path: this is the documented TF2 way to reach a TPU; it cannot run here.
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu_address)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    raise ValueError(f"distribution_strategy must be one of {', '.join(STRATEGIES)}, "
                     f"got {name!r}")


def worker_count(strategy: tf.distribute.Strategy) -> int:
    """The processes that train together: the cluster's chief and workers (1 without one)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None:
        return 1
    cluster = resolver.cluster_spec().as_dict()
    return max(1, sum(len(cluster.get(job, ())) for job in ("chief", "worker")))


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """True on the worker that writes checkpoints, summaries and results (task 0, or alone)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.cluster_spec().as_dict():
        return True
    return resolver.task_type in (None, "chief") or (
        resolver.task_type == "worker" and resolver.task_id == 0
        and "chief" not in resolver.cluster_spec().as_dict())
