"""What a probing study is asked to do, checked without TensorFlow (probe_layers checks its flags
with it before TensorFlow loads).

    TASKS           the probing tasks: what each reads (a CoNLL-U treebank or CoNLL-2003 files),
                    what a probe predicts, and its score
    ProbeSettings   how each probe is built and trained (official/probing/probes.py)
    StudySettings   the study: the task, the layers, the probes run beside the per-layer ones
                    (the scalar mix, the cumulative mixes, the control task), the word vectors
"""

from __future__ import annotations

import dataclasses

SUBWORD_POOLS = ("first", "mean")
PROBES = ("linear", "mlp")
MIXES = ("none", "scalar")


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """A probing task.

    Attributes:
      kind: "label" (a label per word, from its vector), "pair" (a label per word, from its
        and its head's vectors side by side), "distance" or "depth" (structural probes).
      source: "conllu" (a UD treebank) or "conll2003".
      field: the label's field of the sentence (TreebankSentence.upos, ...; Sentence.tags).
      metric: the score that picks a probe's best epoch and heads the table.
    """
    kind: str
    source: str
    field: str | None
    metric: str
    title: str


TASKS = {
    "upos": TaskSpec("label", "conllu", "upos", "accuracy", "universal part of speech"),
    "xpos": TaskSpec("label", "conllu", "xpos", "accuracy", "treebank part of speech"),
    "deprel": TaskSpec("pair", "conllu", "relations", "accuracy",
                       "dependency relation to the head"),
    "conll_ner": TaskSpec("label", "conll2003", "tags", "f1", "named entities (IOB2)"),
    "distance": TaskSpec("distance", "conllu", None, "uuas", "tree distance (structural probe)"),
    "depth": TaskSpec("depth", "conllu", None, "root_accuracy", "tree depth (structural probe)"),
}


@dataclasses.dataclass(frozen=True)
class ProbeSettings:
    """How probes are built and trained.

    Attributes:
      probe: "linear" or "mlp" (one ReLU layer of hidden_units first), for label tasks.
      rank: the structural probes' k (at most the hidden size).
      epochs, patience: at most `epochs`; stop after `patience` without a better dev score.
      batch_size: words per step (a structural probe's steps take batch_size // 16 sentences).
    """
    probe: str = "linear"
    hidden_units: int = 256
    rank: int = 64
    epochs: int = 20
    patience: int = 3
    batch_size: int = 256
    learning_rate: float = 1e-3
    seed: int = 12345

    def check(self) -> None:
        if self.probe not in PROBES:
            raise ValueError(f"--probe: must be one of {', '.join(PROBES)}, got {self.probe!r}")
        for name in ("hidden_units", "rank", "epochs", "patience", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"--probe_{name}: must be positive, got {getattr(self, name)}")
        if not self.learning_rate > 0:
            raise ValueError(f"--probe_learning_rate: must be positive, got {self.learning_rate}")


@dataclasses.dataclass(frozen=True)
class StudySettings:
    """A probing study.

    Attributes:
      task: a key of TASKS.
      layers: the layers probed one by one (0 the embedding layer's output), None for all.
      mix: "scalar": also a probe of the learned mix of every layer (E_s, Tenney et al.).
      cumulative: also the mixes of layers 0..l for every l (the gains Delta_l, E_Delta).
      control_task: also each probe on Hewitt & Liang's control task (selectivity).
    """
    task: str
    layers: tuple[int, ...] | None = None
    mix: str = "none"
    cumulative: bool = False
    control_task: bool = False
    subword_pool: str = "first"
    probe: ProbeSettings = ProbeSettings()

    @property
    def spec(self) -> TaskSpec:
        return TASKS[self.task]

    def check(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"--task: must be one of {', '.join(TASKS)}, got {self.task!r}")
        if self.mix not in MIXES:
            raise ValueError(f"--mix: must be one of {', '.join(MIXES)}, got {self.mix!r}")
        if self.subword_pool not in SUBWORD_POOLS:
            raise ValueError(f"--subword_pool: must be one of {', '.join(SUBWORD_POOLS)}, "
                             f"got {self.subword_pool!r}")
        if self.control_task and self.spec.kind in ("distance", "depth"):
            raise ValueError(f"--control_task: Hewitt & Liang's control task relabels words; "
                             f"--task={self.task} predicts a tree, not labels")
        if self.layers is not None and any(layer < 0 for layer in self.layers):
            raise ValueError(f"--layers: layers count from 0 (the embedding layer), got "
                             f"{min(self.layers)}")
        self.probe.check()

    def check_layers(self, num_hidden_layers: int, source: str) -> tuple[int, ...]:
        """The layers probed, each checked against a model of `num_hidden_layers`."""
        if self.layers is None:
            return tuple(range(num_hidden_layers + 1))
        for layer in self.layers:
            if layer > num_hidden_layers:
                raise ValueError(f"--layers: layer {layer} is beyond the model ({source}: "
                                 f"{num_hidden_layers} layers, so 0..{num_hidden_layers})")
        return tuple(self.layers)
