"""The probes: small Keras models trained on frozen word vectors, early-stopped on dev.

A probe reads one layer, or a learned mix of several (`ScalarMix`, Tenney et al. 2019), and
predicts

    a label per word      `--probe=linear`: one dense layer to the labels' logits; `mlp`: a
                          ReLU layer of `hidden_units` first (Hewitt & Liang 2019's MLP-1)
    tree distances        Hewitt & Manning's distance probe: B, a rank-k linear map, with
                          ||B(h_i - h_j)||^2 fitted to the tree distance of words i and j by
                          the L1 loss summed over the sentence's pairs / n^2
    tree depths           their depth probe: ||B h_i||^2 fitted to word i's depth, the L1 loss
                          summed over the sentence's words / n

Inputs are `ProbeInputs`: rows of the cached vectors [layers, words, hidden], for a label task
one row per word (or, for dependency labels, the word's and its head's vectors side by side,
a zero vector for the root's head), for a structural probe one sentence per example, padded.

Training (`train_label_probe`, `train_structural_probe`): Adam, `epochs` at most over the
training rows shuffled by `seed`, the dev score after every epoch; the run stops after
`patience` epochs without a better dev score and reports the dev and test scores of the best
epoch (the test split is predicted at each epoch and the best epoch's scores kept) with a copy
of that epoch's weights, by variable path (official/probing/report.py writes them out). Label
probes score by their task's metric; structural probes by the dev loss (Hewitt & Manning's
criterion), their UUAS, root accuracy and Spearman reported at that epoch. Given the same seed,
a probe's weights, and so its scores, are the same on CPU.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from official.modeling.scalar_mix import ScalarMix
from official.probing.settings import ProbeSettings


@dataclasses.dataclass
class ProbeInputs:
    """What a probe reads of one split.

    Attributes:
      vectors: float32 [all layers, words, hidden], the split's cached vectors.
      layers: the layers read, mixed when more than one.
      rows: int64 [examples, parts]: the words whose vectors make each example (parts 2 for a
        dependency label: the word and its head, -1 for the root's head, a zero vector).
      sentences: for a structural probe, [sentences + 1] offsets of each sentence's words.
    """
    vectors: np.ndarray
    layers: tuple[int, ...]
    rows: np.ndarray | None = None
    sentences: np.ndarray | None = None

    def gather(self, words: np.ndarray) -> np.ndarray:
        """float32 [len(words), len(layers), parts * hidden]: the examples' inputs."""
        rows = self.rows[words]  # [n, parts]
        flat = rows.reshape(-1)
        order = np.argsort(flat, kind="stable")  # memory maps read faster in order
        present = flat[order] >= 0
        picked = np.zeros((len(self.layers), len(flat), self.vectors.shape[2]), np.float32)
        for j, layer in enumerate(self.layers):
            picked[j, order[present]] = self.vectors[layer, flat[order][present]]
        picked = picked.reshape(len(self.layers), len(words), -1)  # parts side by side
        return picked.transpose(1, 0, 2)

    def padded(self, sentences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sentences' vectors, float32 [n, longest, len(layers), hidden], and their
        mask [n, longest]."""
        starts, ends = self.sentences[sentences], self.sentences[sentences + 1]
        longest = int((ends - starts).max())
        out = np.zeros((len(sentences), longest, len(self.layers), self.vectors.shape[2]),
                       np.float32)
        mask = np.zeros((len(sentences), longest), np.float32)
        for i, (a, b) in enumerate(zip(starts, ends)):
            for j, layer in enumerate(self.layers):
                out[i, :b - a, j] = self.vectors[layer, a:b]
            mask[i, :b - a] = 1
        return out, mask


class _Mixed(keras.layers.Layer):
    """[..., layers, dim] -> [..., dim]: the one layer, or the ScalarMix of several."""

    def __init__(self, num_layers: int, **kwargs):
        super().__init__(**kwargs)
        self.mix = ScalarMix(num_layers, name="scalar_mix") if num_layers > 1 else None

    def call(self, x):
        if self.mix is None:
            return x[..., 0, :]
        return self.mix(ops.moveaxis(x, -2, 0))


def label_probe(num_layers: int, dim: int, num_labels: int,
                settings: ProbeSettings) -> keras.Model:
    """[batch, num_layers, dim] -> float32 logits [batch, num_labels]."""
    inputs = keras.Input((num_layers, dim))
    x = _Mixed(num_layers, name="layers")(inputs)
    if settings.probe == "mlp":
        x = keras.layers.Dense(settings.hidden_units, activation="relu", name="hidden")(x)
    return keras.Model(inputs, keras.layers.Dense(num_labels, name="logits")(x))


def structural_probe(num_layers: int, dim: int, settings: ProbeSettings) -> keras.Model:
    """[sentences, words, num_layers, dim] -> B h, float32 [sentences, words, rank]."""
    inputs = keras.Input((None, num_layers, dim))
    x = _Mixed(num_layers, name="layers")(inputs)
    rank = min(settings.rank, dim)
    return keras.Model(inputs, keras.layers.Dense(rank, use_bias=False, name="B")(x))


def squared_distances(projected: tf.Tensor) -> tf.Tensor:
    """||B h_i - B h_j||^2, [sentences, words, words], of projected [sentences, words, rank]."""
    differences = projected[:, :, None, :] - projected[:, None, :, :]
    return tf.reduce_sum(differences * differences, axis=-1)


def structural_loss(projected: tf.Tensor, gold: tf.Tensor, mask: tf.Tensor,
                    kind: str) -> tf.Tensor:
    """Hewitt & Manning's L1 loss, averaged over the batch's sentences.

    Args:
      projected: [sentences, words, rank], B h.
      gold: [sentences, words, words] tree distances ("distance") or [sentences, words]
        depths ("depth"), 0 at padding.
      mask: [sentences, words], 1 at real words.
    """
    lengths = tf.reduce_sum(mask, axis=1)
    if kind == "distance":
        pairs = mask[:, :, None] * mask[:, None, :]
        error = tf.reduce_sum(tf.abs(squared_distances(projected) - gold) * pairs, axis=[1, 2])
        per_sentence = error / tf.square(lengths)
    else:
        depths = tf.reduce_sum(projected * projected, axis=-1)
        per_sentence = tf.reduce_sum(tf.abs(depths - gold) * mask, axis=1) / lengths
    return tf.reduce_mean(per_sentence)


@dataclasses.dataclass
class ProbeResult:
    """A trained probe's scores and weights at its best dev epoch."""
    dev: dict[str, float]
    test: dict[str, float]
    epoch: int  # 1-based
    mix_weights: list[float] | None = None  # softmax(w), for a mixed probe
    mix_scale: float | None = None  # gamma
    weights: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)  # by path


def _mix_of(model: keras.Model) -> tuple[list[float] | None, float | None]:
    mix = model.get_layer("layers").mix
    if mix is None:
        return None, None
    return mix.weights_softmax().tolist(), float(keras.ops.convert_to_numpy(mix.gamma))


class _Best:
    """The best epoch so far by a dev score (higher is better), and whether to stop."""

    def __init__(self, patience: int):
        self.patience, self.score, self.epoch, self.stale = patience, -np.inf, 0, 0
        self.dev: dict[str, float] = {}
        self.test: dict[str, float] = {}
        self.mix: tuple = (None, None)
        self.weights: dict[str, np.ndarray] = {}

    def update(self, epoch: int, score: float, dev: dict, test: dict,
               model: keras.Model) -> bool:
        """Records the epoch (its scores, the model's mix and a copy of its weights when it is
        the best yet); True when the run should stop."""
        if score > self.score:
            self.score, self.epoch, self.stale = score, epoch, 0
            self.dev, self.test, self.mix = dev, test, _mix_of(model)
            self.weights = {v.path: np.array(keras.ops.convert_to_numpy(v))
                            for v in model.weights}
        else:
            self.stale += 1
        return self.stale >= self.patience

    def result(self) -> ProbeResult:
        return ProbeResult(self.dev, self.test, self.epoch, *self.mix, weights=self.weights)


def train_label_probe(inputs: dict[str, ProbeInputs], labels: dict[str, np.ndarray],
                      num_labels: int, score: Callable[[str, np.ndarray], dict[str, float]],
                      metric: str, settings: ProbeSettings) -> ProbeResult:
    """A label probe trained on inputs["train"] to labels["train"] (int [examples]).

    Args:
      score: (split, predicted label ids) -> its scores, `metric` among them (picks the
        best epoch on dev).
    """
    keras.utils.set_random_seed(settings.seed)
    train = inputs["train"]
    model = label_probe(len(train.layers), train.gather(np.arange(1)).shape[-1], num_labels,
                        settings)
    model.compile(optimizer=keras.optimizers.Adam(settings.learning_rate),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    single = len(train.layers) == 1
    cached = {split: x.gather(np.arange(len(x.rows))) for split, x in inputs.items()} \
        if single else {}  # one layer's inputs fit in memory; a mix's are read per batch
    examples = len(train.rows)
    rng = np.random.default_rng(settings.seed)
    best = _Best(settings.patience)

    def batch(split: str, rows: np.ndarray) -> np.ndarray:
        return cached[split][rows] if single else inputs[split].gather(rows)

    def predict(split: str) -> np.ndarray:
        count = len(inputs[split].rows)
        return np.concatenate([
            np.argmax(model.predict_on_batch(batch(split, np.arange(a, min(a + 1024, count)))),
                      axis=-1) for a in range(0, count, 1024)])

    for epoch in range(1, settings.epochs + 1):
        order = rng.permutation(examples)
        for a in range(0, examples, settings.batch_size):
            rows = order[a:a + settings.batch_size]
            model.train_on_batch(batch("train", rows), labels["train"][rows])
        dev, test = score("dev", predict("dev")), score("test", predict("test"))
        if best.update(epoch, dev[metric], dev, test, model):
            break
    return best.result()


def train_structural_probe(inputs: dict[str, ProbeInputs], gold: dict[str, list[np.ndarray]],
                           kind: str,
                           score: Callable[[str, list[np.ndarray]], dict[str, float]],
                           settings: ProbeSettings) -> ProbeResult:
    """A distance or depth probe trained on inputs["train"] (sentences) to gold["train"] (per
    sentence, [n, n] distances or [n] depths).

    Args:
      score: (split, per sentence its predicted squared distances [n, n] or depths [n]) -> its
        scores; the dev loss ("loss") picks the best epoch.
    """
    keras.utils.set_random_seed(settings.seed)
    train = inputs["train"]
    model = structural_probe(len(train.layers), train.vectors.shape[2], settings)
    optimizer = keras.optimizers.Adam(settings.learning_rate)
    sentences_per_batch = max(1, settings.batch_size // 16)

    def padded_gold(split: str, sentences: np.ndarray, longest: int) -> np.ndarray:
        shape = (len(sentences), longest) + ((longest,) if kind == "distance" else ())
        out = np.zeros(shape, np.float32)
        for i, s in enumerate(sentences):
            g = gold[split][s]
            out[(i,) + tuple(slice(0, n) for n in g.shape)] = g
        return out

    @tf.function(reduce_retracing=True)
    def step(x, target, mask):
        with tf.GradientTape() as tape:
            loss = structural_loss(model(x, training=True), target, mask, kind)
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    @tf.function(reduce_retracing=True)
    def predict_batch(x, target, mask):
        projected = model(x, training=False)
        loss = structural_loss(projected, target, mask, kind)
        if kind == "distance":
            return squared_distances(projected), loss
        return tf.reduce_sum(projected * projected, axis=-1), loss

    def predict(split: str) -> tuple[list[np.ndarray], float]:
        count = len(inputs[split].sentences) - 1
        predicted, loss_sum = [], 0.0
        for a in range(0, count, sentences_per_batch):
            sentences = np.arange(a, min(a + sentences_per_batch, count))
            x, mask = inputs[split].padded(sentences)
            values, loss = predict_batch(x, padded_gold(split, sentences, x.shape[1]), mask)
            loss_sum += float(loss) * len(sentences)
            lengths = mask.sum(axis=1).astype(int)
            predicted += [v[:n, :n] if kind == "distance" else v[:n]
                          for v, n in zip(values.numpy(), lengths)]
        return predicted, loss_sum / count

    count = len(train.sentences) - 1
    rng = np.random.default_rng(settings.seed)
    best = _Best(settings.patience)
    for epoch in range(1, settings.epochs + 1):
        order = rng.permutation(count)
        for a in range(0, count, sentences_per_batch):
            sentences = order[a:a + sentences_per_batch]
            x, mask = train.padded(sentences)
            step(x, padded_gold("train", sentences, x.shape[1]), mask)
        scores = {}
        for split in ("dev", "test"):
            predicted, loss = predict(split)
            scores[split] = dict(score(split, predicted), loss=loss)
        if best.update(epoch, -scores["dev"]["loss"], scores["dev"], scores["test"], model):
            break
    return best.result()
