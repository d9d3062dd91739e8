"""BERT from Python, as a Keras user: any checkpoint in one call, raw text inside the model.

    load_encoder(path, config)    the `BertEncoder` of any checkpoint `--init_checkpoint` takes
                                  (an original TF1 release, a TF2 checkpoint or training
                                  output_dir, a Hugging Face or keras-hub folder), weights
                                  loaded, its config read from beside it (or `config`)
    load_preprocessor(path, seq_length, pair)
                                  a `TextPreprocessor` with the checkpoint's vocab (or a vocab
                                  file): raw strings (or pairs) -> the encoder's inputs
    BertTextClassifier, BertTextTokenClassifier, BertTextSpanLabeler, BertTextSentenceEncoder
                                  the task models on raw text (the preprocessor inside):
                                  `.from_checkpoint(path, ...)`, then compile / fit / evaluate /
                                  predict on lists, numpy arrays or a tf.data.Dataset (a
                                  classifier's labels checked to be class ids);
                                  `.adapt(settings)` (adapters, LoRA, BitFit, IA3),
                                  `.save("x.keras")`,
                                  `.export(dir)` (export_saved_model's serving SavedModel)
    optimizer(model, ...)         the original's AdamWeightDecay: warmup, linear decay, no decay
                                  on LayerNorm and biases, clipping at global norm 1
    save_checkpoint(model, dir, format)
                                  the weights as a tf1, tf2, hf or keras_hub checkpoint (an
                                  adapted model's method folded in when it folds)
    example_checkpoint(folder)    a tiny random release, for examples and tests
    ner_tags(path)                a run_ner output's tags in output order (its tagger.json's,
                                  else CoNLL-2003's), for a token classifier and its export

A text model keeps the task model of official/modeling/models.py as `.model`, so everything the
command line does with a model works on it; its `.keras` file carries the vocab, and loads in a
process that imported `keras` and then `official` (official/__init__.py). A file whose encoder
config has a setting this version lacks, or builds weights of other shapes than it holds, is
refused in one line before Keras reads the weights.

    >>> import tempfile, numpy as np, official.api
    >>> path = official.api.example_checkpoint(tempfile.mkdtemp())  # a tiny random TF1 release
    >>> classifier = official.BertTextClassifier.from_checkpoint(path, num_classes=2,
    ...                                                          seq_length=16)
    >>> classifier.predict(np.array(["a good film", "a bad film"]), verbose=0).shape
    (2, 2)
"""

from __future__ import annotations

import collections
import dataclasses
import os
import shutil
from typing import Sequence

import keras
import numpy as np
import tensorflow as tf

from official import checkpoints
from official.checkpoints import converter, tf1
from official.checkpoints.errors import CheckpointError
from official.configs import BertConfig
from official.export import ner_kind, packing, saving
from official.export.kinds import KINDS
from official.export.options import ExportOptions
from official.export.sentence_encoder import SentenceEncoderExport
from official.export.versions import newest_version
from official.modeling import models
from official.modeling.encoder import BertEncoder, build_encoder, encoder_of
from official.peft import merging, methods
from official.peft.method import PeftSettings
from official.tasks.squad_settings import SquadSettings
from official.text import vocab
from official.text.tokenizer import FullTokenizer
from official.training.optimization import create_optimizer, decay_exempt_variables

VOCAB_FILE = "vocab.txt"


def load_encoder(path: str, config: BertConfig | str | None = None) -> BertEncoder:
    """The encoder of the checkpoint at `path`, weights loaded (official/checkpoints).

    config: the checkpoint's `BertConfig` or the path of its bert_config.json (the command
      line's --bert_config_file); None: the one beside the checkpoint, or a folder format's own.

    Raises:
      CheckpointError: no checkpoint there (a SavedModel export, a .keras file, an empty folder,
        some other file), no config, or weights that do not fit it (one line naming the path).
    """
    return _loaded(path, _read(path, config), lambda encoder: encoder)


def _read(path: str, config: BertConfig | str | None) -> tuple[BertConfig, tf1.Weights]:
    """(config, weights) of the checkpoint at `path` (`checkpoints.read`: `config` if given,
    else a folder format's own, else the bert_config.json beside it), once it is named for what
    it is when it is clearly no checkpoint."""
    _check_is_checkpoint(path)
    return checkpoints.read(path, config, remedy="pass config= (a BertConfig or its "
                                                 "bert_config.json)")


def _check_is_checkpoint(path: str) -> None:
    """Names what `path` is when it is clearly no checkpoint, with what to do instead.

    Raises:
      CheckpointError: nothing there, a SavedModel export (or the export_dir of its versions),
        a .keras file, an empty folder, or a file that is no checkpoint's prefix.
    """
    if os.path.exists(path + ".index"):
        return  # a checkpoint's prefix (no file of that name)
    if not os.path.exists(path):
        raise CheckpointError(f"{path}: no such file or folder")
    if os.path.isdir(path):
        names = os.listdir(path)
        if not names:
            raise CheckpointError(f"{path}: an empty folder, no checkpoint in it")
        if "checkpoint" in names or any(name.endswith(".index") for name in names):
            return  # checkpoints, whatever else the folder holds
        try:
            export = newest_version(path)
        except ValueError:
            return  # a folder format, or one resolve_checkpoint names what it lacks
        raise CheckpointError(f"{path}: a SavedModel export, not a checkpoint: load it with "
                              f"tf.saved_model.load({export!r}), or pass the checkpoint it was "
                              "exported from")
    if path.endswith(".keras"):
        raise CheckpointError(f"{path}: a .keras file, not a checkpoint: load it with "
                              f"keras.models.load_model({path!r})")
    raise CheckpointError(f"{path}: a file, not a checkpoint: pass a checkpoint's folder or its "
                          "prefix (bert_model.ckpt for bert_model.ckpt.index)")


def _loaded(path: str, read: tuple[BertConfig, tf1.Weights], build) -> keras.Model:
    """`build(encoder)` for the checkpoint's config, `read` from `path`, its weights assigned
    (the heads it lacks keep their initialisation)."""
    config, weights = read
    model = build(build_encoder(config))
    tf1.assign(model, weights, source=path)
    return model


def _vocab_of(path: str) -> str:
    """A vocab file itself, or the vocab.txt beside (or in) a checkpoint."""
    if os.path.isfile(path) and not path.endswith(".index"):
        return path
    found = checkpoints.beside(path, VOCAB_FILE)
    if found is None:
        raise CheckpointError(f"{path}: no {VOCAB_FILE} beside it; pass the vocab file")
    return found


@keras.saving.register_keras_serializable(package="official")
class TextPreprocessor(keras.layers.Layer):
    """Raw text -> the encoder's inputs, with the project's exact tokenizer (official/text) and
    the original's packing: [CLS] a [SEP] (b [SEP]), a pair too long cut longest text first.

    Call args:
      inputs: string [batch], or for `pair` a pair (text_a, text_b) of string [batch] (a tuple,
        a list, or a dict with those keys).
    Returns:
      {"input_word_ids", "input_mask", "input_type_ids"}: int32 [batch, seq_length] each.

    In a `.keras` file the vocab is an asset of the file, so a loaded model tokenizes as the
    saved one did without the original vocab file.
    """

    def __init__(self, vocab_file: str | None = None, seq_length: int = 128,
                 do_lower_case: bool = True, pair: bool = False, **kwargs):
        super().__init__(**kwargs)
        if seq_length < 3:
            raise ValueError(f"seq_length must be at least 3, got {seq_length}")
        self.seq_length, self.do_lower_case, self.pair = seq_length, do_lower_case, pair
        self._tokenizer = None
        if vocab_file is not None:
            self._use_vocab(vocab_file)

    def _use_vocab(self, vocab_file: str) -> None:
        self._tokenizer = FullTokenizer(vocab_file, self.do_lower_case)
        self._cls_id, self._sep_id = self._tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])

    @property
    def tokenizer(self) -> FullTokenizer:
        return self._tokenizer

    @property
    def vocab_file(self) -> str:
        return self._tokenizer.vocab_file

    def __call__(self, inputs, *args, **kwargs):
        # A Keras layer takes tensors only: Python lists of strings become tensors first.
        return super().__call__(_texts(inputs), *args, **kwargs)

    def call(self, inputs):
        if self.pair:
            text_a, text_b = (inputs["text_a"], inputs["text_b"]) if isinstance(inputs, dict) \
                else inputs
            segments = [self._tokenizer.tokenize_tf(_strings(text_a)),
                        self._tokenizer.tokenize_tf(_strings(text_b))]
        else:
            segments = [self._tokenizer.tokenize_tf(_strings(inputs))]
        return packing.pack_inputs(segments, self.seq_length, self._cls_id, self._sep_id)

    def compute_output_spec(self, inputs):
        batch = (inputs["text_a"] if isinstance(inputs, dict) else
                 inputs[0] if self.pair else inputs).shape[0]
        return {name: keras.KerasTensor((batch, self.seq_length), dtype="int32")
                for name in ("input_word_ids", "input_mask", "input_type_ids")}

    def save_assets(self, dir_path: str) -> None:
        shutil.copyfile(self.vocab_file, os.path.join(dir_path, VOCAB_FILE))

    def load_assets(self, dir_path: str) -> None:
        self._use_vocab(os.path.join(dir_path, VOCAB_FILE))

    def get_config(self):
        config = super().get_config()
        config.update(seq_length=self.seq_length, do_lower_case=self.do_lower_case,
                      pair=self.pair)
        return config


def _texts(x):
    """Texts (a list or numpy array of str, or a pair of them as a tuple or dict) as string
    tensors; anything else (a tf.data.Dataset, tensors) as it is."""
    if isinstance(x, tuple):
        return tuple(_texts(part) for part in x)
    if isinstance(x, dict):
        return {key: _texts(part) for key, part in x.items()}
    if isinstance(x, (list, np.ndarray)):
        return tf.constant(x, tf.string)
    return x


def _labels(y, num_classes: int | None):
    """Labels given as a list or numpy array, as a numpy array; when `num_classes` is given
    (a classifier's), checked first: class ids 0..num_classes-1, or finite scores for
    num_classes=1 (regression). Other labels (tensors, a tf.data.Dataset's) go to Keras as they
    are.

    Raises:
      ValueError: the first label that is not one (a string, NaN, 1.5, -1, num_classes), with
        its index: Keras would fail deep in its data adapter, or cast NaN to an integer.
    """
    if not isinstance(y, (list, np.ndarray)):
        return y
    labels = np.asarray(y)
    if num_classes is None:
        return labels
    # Each label as given (numpy would make [1, "a"] two strings), a number as a float, any
    # other value as NaN: one test then finds the first bad label of any kind.
    given = labels if labels.dtype.kind in "biuf" else np.asarray(y, dtype=object)
    values = given.astype(np.float64) if given.dtype != object else np.array(
        [float(v) if isinstance(v, (int, float, np.integer, np.floating)) else np.nan
         for v in given.flat]
    ).reshape(given.shape)
    bad = ~np.isfinite(values)
    if num_classes > 1:
        ids = np.where(bad, 0.0, values)
        bad |= (ids != np.round(ids)) | (ids < 0) | (ids >= num_classes)
    if not bad.any():
        return labels
    index = np.unravel_index(int(np.argmax(bad)), bad.shape)
    value = given[index]
    value = value.item() if isinstance(value, np.generic) else value
    rule = (f"labels must be class ids 0..{num_classes - 1} (num_classes={num_classes})"
            if num_classes > 1 else
            "labels of num_classes=1 (a regression) must be finite numbers")
    where = int(index[0]) if len(index) == 1 else tuple(int(i) for i in index)
    raise ValueError(f"y: {value!r} at index {where} is not a valid label: {rule}")


def _strings(texts) -> tf.Tensor:
    """[batch] strings from a tensor of [batch] or [batch, 1] (Keras' fit adds the 1)."""
    texts = tf.convert_to_tensor(texts, tf.string)
    return tf.reshape(texts, [-1])


def load_preprocessor(path: str, seq_length: int = 128, pair: bool = False,
                      do_lower_case: bool = True) -> TextPreprocessor:
    """The `TextPreprocessor` of a checkpoint (its vocab.txt) or of a vocab file.

    Raises:
      CheckpointError: no vocab there.
    """
    return TextPreprocessor(_vocab_of(path), seq_length, do_lower_case, pair)


class _TextModel(keras.Model):
    """A task model of official/modeling/models.py on raw text: `preprocessor`, then `model`.

    Subclasses name the task model (`task_model`) and what `from_checkpoint` builds.
    """

    task_model: type = None
    # True when the labels of fit / evaluate are class ids of the task model's `num_labels`.
    labels_are_class_ids = False

    def __init__(self, preprocessor: TextPreprocessor, model: keras.Model, **kwargs):
        super().__init__(**kwargs)
        self.preprocessor, self.model = preprocessor, model
        self.peft: PeftSettings | None = None

    def adapt(self, settings: PeftSettings) -> "_TextModel":
        """Inserts a parameter-efficient method into the encoder and freezes what it does not
        train (official/peft): the settings `run_classifier --adapter_size / --lora_rank /
        --bitfit / --ia3` builds, e.g. `official.peft.methods.from_flags(lora_rank=8)`. Returns
        self. After `fit`, compile again before fitting more: Keras refuses the optimizer it
        built for the variables that trained before ("recreate a new optimizer instance")."""
        methods.apply(self.model, settings)
        self.peft = settings
        # Keras traces fit's, evaluate's and predict's step into a function at its first use
        # and keeps it: one traced before the method would run the model without its layers,
        # and train the variables that trained then. None (as Keras starts) traces anew.
        self.train_function = self.test_function = self.predict_function = None
        return self

    def call(self, inputs, training=None):
        return self.model(self.preprocessor(inputs), training=training)

    @property
    def encoder(self) -> BertEncoder:
        return self.model.encoder

    # Keras' data adapters take no numpy string arrays: texts become string tensors first (and
    # labels given as a list, an array beside them, checked when they are class ids).
    def fit(self, x=None, y=None, *args, **kwargs):
        return super().fit(_texts(x), self._labels(y), *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        return super().evaluate(_texts(x), self._labels(y), *args, **kwargs)

    def _labels(self, y):
        return _labels(y, self.model.num_labels if self.labels_are_class_ids else None)

    def predict(self, x, *args, **kwargs):
        return super().predict(_texts(x), *args, **kwargs)

    @classmethod
    def _from_checkpoint(cls, path: str, seq_length: int, pair: bool, do_lower_case: bool,
                         vocab_file: str | None, config: BertConfig | str | None,
                         **head) -> "_TextModel":
        vocab_file = vocab_file or _vocab_of(path)
        read = _read(path, config)
        vocab.check_fits(vocab_file, read[0].vocab_size, path)
        read[0].check_seq_length(seq_length, path, flag="seq_length")
        model = _loaded(path, read, lambda encoder: cls.task_model(encoder, **head))
        return cls(TextPreprocessor(vocab_file, seq_length, do_lower_case, pair), model)

    def get_config(self):
        # A method's layers are not in the task model's config: its settings are, and loading
        # inserts it again before the weights are read. The weights' shapes let loading name a
        # config that does not fit them (Keras' own error names neither).
        return {"preprocessor": keras.layers.serialize(self.preprocessor),
                "model": keras.layers.serialize(self.model), "name": self.name,
                "peft": None if self.peft is None else self.peft.to_dict(),
                "weight_shapes": [list(weight.shape) for weight in self.weights]}

    @classmethod
    def from_config(cls, config):
        model = cls(keras.layers.deserialize(config["preprocessor"]),
                    keras.layers.deserialize(config["model"]), name=config.get("name"))
        if config.get("peft") is not None:
            model.adapt(methods.from_dict(config["peft"], "the .keras file's peft"))
        if "weight_shapes" in config:  # files saved before it was written have none
            _check_weight_shapes(model, config["weight_shapes"])
        return model

    def export(self, export_dir: str, **serving) -> str:
        """The serving SavedModel export_saved_model makes of this model (raw text in, the
        task's outputs out; official/export), as the next version in `export_dir`; returns its
        path. `serving`: the task's serving settings (labels, ...)."""
        module = self.serving_module(self.preprocessor.tokenizer, **serving)
        return saving.save(module, export_dir, module.signatures())

    def serving_module(self, tokenizer: FullTokenizer, **serving) -> tf.Module:
        raise NotImplementedError(f"{type(self).__name__} names its serving module")

    def _served(self, tokenizer: FullTokenizer, kind: str, **spec) -> tf.Module:
        """The serving module of the task kind `kind` (official/export/kinds.py) on this
        model, its serving spec `spec` at this preprocessor's seq_length, and the export's
        default options: export_saved_model's module of the same weights."""
        row = KINDS[kind]
        spec = {"export_type": kind, "max_seq_length": self.preprocessor.seq_length, **spec}
        return row.serving(self.model, tokenizer, spec,
                           ExportOptions(kind, export_dir="", vocab_file=tokenizer.vocab_file))

    def build_from_config(self, config):
        """Nothing to build: the task model is built when made, the preprocessor has no
        weights."""


def _check_weight_shapes(model: keras.Model, saved: list[list[int]]) -> None:
    """Refuses a model whose weights' shapes are not those a .keras file saved (a config edited,
    or read otherwise by this version): Keras would report objects it could not load, from the
    wrong paths. Compared as multisets, so a file Keras can load is never refused.

    Raises:
      ValueError: the first weight of the model's without a saved one of its shape, or the first
        saved shape without a weight.
    """
    saved = [tuple(shape) for shape in saved]
    built = collections.Counter(tuple(weight.shape) for weight in model.weights)
    extra, left_over = built - collections.Counter(saved), collections.Counter(saved) - built
    left = next((list(shape) for shape in saved if shape in left_over), None)
    if extra:
        weight = next(w for w in model.weights if tuple(w.shape) in extra)
        raise ValueError(f"the .keras file's config builds {weight.path} as {list(weight.shape)}, "
                         f"a shape none of its saved weights has (first left over: {left}): "
                         "the config does not fit the weights")
    if left_over:
        raise ValueError(f"the .keras file holds a weight of shape {left} that its config does "
                         "not build: the config does not fit the weights")


@keras.saving.register_keras_serializable(package="official")
class BertTextClassifier(_TextModel):
    """Text (or text pairs) -> class logits [batch, num_classes] (run_classifier's model); with
    num_classes=1, one regression score."""

    task_model = models.BertClassifier
    labels_are_class_ids = True

    @classmethod
    def from_checkpoint(cls, path: str, num_classes: int, seq_length: int = 128,
                        pair: bool = False, do_lower_case: bool = True,
                        vocab_file: str | None = None,
                        config: BertConfig | str | None = None) -> "BertTextClassifier":
        """The classifier with the encoder of the checkpoint at `path` and a fresh head
        (`config` as for `load_encoder`)."""
        return cls._from_checkpoint(path, seq_length, pair, do_lower_case, vocab_file, config,
                                    num_labels=num_classes)

    def serving_module(self, tokenizer, labels: Sequence[str] | None = None):
        """labels: the class names in output order (default "0", "1", ...)."""
        labels = labels or [str(i) for i in range(self.model.num_labels)]
        return self._served(tokenizer, "classifier", labels=list(labels),
                            pair=self.preprocessor.pair)


@keras.saving.register_keras_serializable(package="official")
class BertTextTokenClassifier(_TextModel):
    """Text -> logits per WordPiece position [batch, seq_length, num_classes] (run_ner's)."""

    task_model = models.BertTokenClassifier
    labels_are_class_ids = True  # [batch, seq_length]; a position left out weighs 0, not -1

    @classmethod
    def from_checkpoint(cls, path: str, num_classes: int, seq_length: int = 128,
                        do_lower_case: bool = True, vocab_file: str | None = None,
                        config: BertConfig | str | None = None) -> "BertTextTokenClassifier":
        return cls._from_checkpoint(path, seq_length, False, do_lower_case, vocab_file, config,
                                    num_labels=num_classes)

    def serving_module(self, tokenizer, labels: Sequence[str]):
        """labels: the tags in output order (B-PER, ...): entities are read from them."""
        return self._served(tokenizer, "ner", labels=list(labels))


def ner_tags(path: str) -> list[str]:
    """The tags of the run_ner output at `path` in output order, as its export reads them (its
    tagger.json's, else CoNLL-2003's): `BertTextTokenClassifier.from_checkpoint(path,
    num_classes=len(tags))`, `.export(export_dir, labels=tags)`."""
    return ner_kind.recorded_tagger(path)[0].tags()


@keras.saving.register_keras_serializable(package="official")
class BertTextSpanLabeler(_TextModel):
    """(question, context) -> start and end logits per position (run_squad's model)."""

    task_model = models.BertSpanLabeler

    @classmethod
    def from_checkpoint(cls, path: str, seq_length: int = 384, do_lower_case: bool = True,
                        vocab_file: str | None = None,
                        config: BertConfig | str | None = None) -> "BertTextSpanLabeler":
        return cls._from_checkpoint(path, seq_length, True, do_lower_case, vocab_file, config)

    def serving_module(self, tokenizer, settings: SquadSettings = SquadSettings()):
        """settings: run_squad's feature and decoding settings (its seq_length is this one's)."""
        return self._served(tokenizer, "squad", squad=dataclasses.asdict(settings))


@keras.saving.register_keras_serializable(package="official")
class BertTextSentenceEncoder(_TextModel):
    """Text -> one vector per text (mean, cls or max pooling; unit length if `normalize`)."""

    task_model = models.BertSentenceEncoder

    @classmethod
    def from_checkpoint(cls, path: str, pooling: str = "mean", normalize: bool = False,
                        seq_length: int = 128, do_lower_case: bool = True,
                        vocab_file: str | None = None,
                        config: BertConfig | str | None = None) -> "BertTextSentenceEncoder":
        return cls._from_checkpoint(path, seq_length, False, do_lower_case, vocab_file, config,
                                    pooling=pooling, normalize=normalize)

    def serving_module(self, tokenizer):
        return SentenceEncoderExport(self.model, tokenizer, self.preprocessor.seq_length)


def optimizer(model: keras.Model, learning_rate: float, num_train_steps: int,
              num_warmup_steps: int = 0, weight_decay_rate: float = 0.01
              ) -> keras.optimizers.Optimizer:
    """The original's optimizer for `model` (a text model or a task model): AdamWeightDecay
    with linear warmup then linear decay to 0 at `num_train_steps`, no weight decay on
    LayerNorms and biases, gradients clipped at global norm 1 (official/training/optimization)."""
    task_model = model.model if isinstance(model, _TextModel) else model
    return create_optimizer("adamw", learning_rate, num_train_steps, num_warmup_steps,
                            weight_decay_rate, decay_exempt_variables(task_model))


# The uncased vocab of the original's releases, the same bytes as data/vocab/uncased_vocab.txt,
# kept in the package (pyproject.toml's package-data) so that an installed package makes
# examples too: data/ is the checkout's, not the package's.
EXAMPLE_VOCAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "uncased_vocab.txt")


def example_checkpoint(folder: str, seed: int = 0, dropout: float = 0.1) -> str:
    """A tiny random BERT (L2/H32, the original's uncased vocab, `dropout` its dropout rates)
    written as an original TF1 release in `folder` (bert_model.ckpt, bert_config.json,
    vocab.txt); returns the folder. For examples and tests."""
    config = BertConfig(vocab_size=len(vocab.load_vocab(EXAMPLE_VOCAB)), hidden_size=32,
                        num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                        max_position_embeddings=128, hidden_dropout_prob=dropout,
                        attention_probs_dropout_prob=dropout)
    keras.utils.set_random_seed(seed)
    os.makedirs(folder, exist_ok=True)
    tf1.write(tf1.weights_of(build_encoder(config)), os.path.join(folder, "bert_model.ckpt"))
    config.to_json_file(os.path.join(folder, checkpoints.CONFIG_FILE))
    shutil.copyfile(EXAMPLE_VOCAB, os.path.join(folder, VOCAB_FILE))
    return folder


def save_checkpoint(model: keras.Model, output_dir: str, format: str = "tf1",
                    peft: PeftSettings | None = None) -> list[str]:
    """Writes the encoder of `model` (a text model, a task model or an encoder; with the
    masked-LM head of a pretrainer) with its config, and the vocab of a text model, in `format`:
    tf1 (the original's release layout), tf2, hf (Hugging Face) or keras_hub
    (official/checkpoints/converter.py). Returns the paths written.

    An adapted model is written as convert_checkpoint --peft_checkpoint writes a run
    (official/peft/merging.py): a method that folds (LoRA, IA3, BitFit) folded, a plain BERT
    checkpoint that loads anywhere; adapters with their variables under their own names (tf1,
    tf2). `peft`: the settings a task model or encoder was adapted with (`methods.apply`); a
    text model knows its own.

    Raises:
      CheckpointError: a format that has no place for the model's method (adapters in hf).
      ValueError: an adapted task model or encoder without its `peft`.
    """
    task_model = model.model if isinstance(model, _TextModel) else model
    vocab_file = model.preprocessor.vocab_file if isinstance(model, _TextModel) else None
    do_lower_case = model.preprocessor.do_lower_case if isinstance(model, _TextModel) else True
    settings = model.peft if isinstance(model, _TextModel) else peft
    encoder = encoder_of(task_model)
    if settings is None and encoder.adapted:
        raise ValueError(f"{type(model).__name__} is adapted by {encoder.adapted_by}: pass "
                         "peft=, the settings it was adapted with")
    weights = tf1.weights_of(task_model)
    bundle = (converter.Bundle(encoder.config, weights, vocab_file) if settings is None else
              merging.adapted_bundle(encoder.config, weights, vocab_file, settings))
    return converter.write(format, bundle, output_dir, source=type(model).__name__,
                           do_lower_case=do_lower_case)
