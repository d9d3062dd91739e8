"""Converts BERT weights between formats through our model, which validates every variable.

    read(format, path)  ->  Bundle(config, weights, vocab_file)
    write(format, bundle, output_dir)

Formats, the entries of `FORMATS` (name -> its reader and writer): "tf1" (the original's
name-based checkpoint), "tf2" (this project's, see tf2.py, and the training checkpoints of
run_pretraining, see training.py), "hf" (Hugging Face directory), "keras_hub" (keras-hub preset).
Writing loads the weights into a model first (all encoder variables present with the right
shapes, or an error listing them) and writes only what the source had: a converter never
invents a head. A parameter-efficient run whose method cannot fold (official/peft/merging.py)
comes as a bundle that says what its method inserted (`Inserted`): its layers are inserted into
the model the weights are checked through, their variables kept under the names those layers
give them by the formats that hold any name (tf1, tf2, `Format.holds_inserted`) and refused by
the others.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from typing import Callable

import keras
from absl import logging

from official import checkpoints, records
from official.checkpoints import extended_vocab, hf, sentence_transformers, tf1, tf2, training
from official.checkpoints.errors import CheckpointError
from official.checkpoints.reading import FOLDER_FORMATS
from official.configs import BertConfig
from official.modeling.encoder import BertEncoder, build_encoder
from official.modeling.models import BertPretrainer

CONFIG_FILE, VOCAB_FILE = checkpoints.CONFIG_FILE, checkpoints.VOCAB_FILE
CHECKPOINT_NAME = "bert_model.ckpt"


@dataclasses.dataclass(frozen=True)
class Inserted:
    """What a parameter-efficient method inserted into the encoder, its variables unfolded.

    Attributes:
      name: what the layers are, in messages (the method's name).
      insert: inserts the method's layers into a fresh encoder (then the weights fit it).
    """
    name: str
    insert: Callable[[BertEncoder], None]


@dataclasses.dataclass
class Bundle:
    """What a model directory holds: the config, original-named weights, and the vocab if any;
    `inserted` when the weights hold a method's unfolded variables (None: plain BERT)."""
    config: BertConfig
    weights: tf1.Weights
    vocab_file: str | None = None
    inserted: Inserted | None = None


def read(input_format: str, path: str, bert_config_file: str | None = None,
         vocab_file: str | None = None) -> Bundle:
    """Reads weights of any format. For checkpoints (tf1, tf2) the config and vocab default to
    `bert_config.json` and `vocab.txt` beside them, as in the original releases."""
    return _format(input_format).read(path, bert_config_file, vocab_file)


def _read_checkpoint(input_format: str, path: str, bert_config_file: str | None,
                     vocab_file: str | None) -> Bundle:
    prefix = checkpoints.resolve_checkpoint(path)  # a missing checkpoint is named first
    bert_config_file = bert_config_file or checkpoints.beside(path, CONFIG_FILE)
    if not bert_config_file:
        raise CheckpointError(f"{path}: no {CONFIG_FILE} beside the checkpoint; "
                              "pass --bert_config_file")
    weights = checkpoints.read_weights(path)
    # A training checkpoint (run_pretraining's output_dir) is this project's too.
    found = tf2.is_tf2_checkpoint(prefix) or training.is_training_checkpoint(prefix)
    if found != (input_format == "tf2"):
        raise CheckpointError(f"{path}: a {'tf2' if found else 'tf1'} checkpoint, "
                              f"not {input_format}")
    return Bundle(BertConfig.from_json_file(bert_config_file), weights,
                  vocab_file or checkpoints.beside(path, VOCAB_FILE))


def _read_tf1(path: str, bert_config_file: str | None, vocab_file: str | None) -> Bundle:
    return _read_checkpoint("tf1", path, bert_config_file, vocab_file)


def _read_tf2(path: str, bert_config_file: str | None, vocab_file: str | None) -> Bundle:
    return _read_checkpoint("tf2", path, bert_config_file, vocab_file)


def _folder_reader(name: str) -> Callable[[str, str | None, str | None], Bundle]:
    """The reader of the folder format `name` (reading.FOLDER_FORMATS): its own config is the
    config, its vocab the vocab unless one is given."""
    def read(path: str, bert_config_file: str | None, vocab_file: str | None) -> Bundle:
        del bert_config_file
        config, weights, found_vocab = FOLDER_FORMATS[name].read(path)
        return Bundle(config, weights, vocab_file or found_vocab)
    return read


def build_model(bundle: Bundle, source: str) -> keras.Model:
    """The encoder (with pretraining heads when the weights have any, with the layers
    `bundle.inserted` says a method inserted) holding `bundle.weights`."""
    encoder = build_encoder(bundle.config)
    has_heads = any(name.startswith("cls/") for name in bundle.weights)
    model = BertPretrainer(encoder) if has_heads else encoder
    if bundle.inserted is not None:
        bundle.inserted.insert(encoder)
    tf1.assign(model, bundle.weights, source)
    return model


def write(output_format: str, bundle: Bundle, output_dir: str, source: str = "input",
          do_lower_case: bool = True) -> list[str]:
    """Validates `bundle` through a model and writes it to `output_dir` in `output_format`.

    The files are made in a temporary folder beside `output_dir` and moved in when complete (the
    checkpoint index last), so an interrupted run leaves no half-written model. Returns the paths.
    """
    check_holds(output_format, None if bundle.inserted is None else bundle.inserted.name, source)
    writer = _format(output_format).write
    model = build_model(bundle, source)
    weights = {k: v for k, v in tf1.weights_of(model).items() if k in bundle.weights}
    os.makedirs(output_dir, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".convert-", dir=output_dir)
    try:
        writer(staging, bundle, weights, do_lower_case)
        return _move_into(staging, output_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def check_vocab(output_format: str, bundle: Bundle, source: str) -> None:
    """Raises CheckpointError when `output_format` is one whose readers tokenize with the vocab
    beside the weights (transformers, for Hugging Face's: without one its tokenizer reads every
    word as [UNK]) and `bundle` has none."""
    if _format(output_format).needs_vocab and not bundle.vocab_file:
        raise CheckpointError(
            f"{source}: no {VOCAB_FILE} beside it, and {_format(output_format).title} needs one "
            f"(transformers' tokenizer would read every word as [UNK]): pass --vocab_file, the "
            f"vocab the model was trained with")


def check_holds(output_format: str, inserted: str | None, source: str) -> None:
    """Raises CheckpointError when weights that hold a method's unfolded variables (`inserted`
    names them, the method's name; None: none) go to a format with no place for them: one whose
    names are a fixed architecture's."""
    if inserted and not _format(output_format).holds_inserted:
        raise CheckpointError(
            f"{source} has {inserted}, and {_format(output_format).title} has no place for them "
            f"(they cannot be folded into the base's matrices): write tf1 or tf2 (their "
            f"variables under their own names), or serve the run with export_saved_model")


def _copy_vocab(bundle: Bundle, folder: str) -> None:
    if bundle.vocab_file:
        shutil.copyfile(bundle.vocab_file, os.path.join(folder, VOCAB_FILE))


def _write_tf1(folder: str, bundle: Bundle, weights: tf1.Weights, do_lower_case: bool) -> None:
    del do_lower_case  # The original release layout records no tokenizer setting.
    if bundle.config.hidden_act not in tf1.ORIGINAL_ACTIVATIONS:
        logging.warning("the tf1 %s keeps hidden_act %r, which the original code cannot run (its "
                        "modeling.get_activation knows %s; its gelu is the tanh form, so writing "
                        "that would change the model); this project reads the checkpoint",
                        CONFIG_FILE, bundle.config.hidden_act,
                        ", ".join(tf1.ORIGINAL_ACTIVATIONS))
    tf1.write(weights, os.path.join(folder, CHECKPOINT_NAME))
    bundle.config.to_json_file(os.path.join(folder, CONFIG_FILE))
    _copy_vocab(bundle, folder)


def _write_tf2(folder: str, bundle: Bundle, weights: tf1.Weights, do_lower_case: bool) -> None:
    del do_lower_case  # As tf1's layout.
    tf2.write(weights, os.path.join(folder, CHECKPOINT_NAME))
    bundle.config.to_json_file(os.path.join(folder, CONFIG_FILE))
    _copy_vocab(bundle, folder)


def _write_hf(folder: str, bundle: Bundle, weights: tf1.Weights, do_lower_case: bool) -> None:
    hf.write(folder, bundle.config, weights)
    if bundle.vocab_file:
        hf.write_tokenizer(folder, bundle.config, bundle.vocab_file, do_lower_case)


def _write_keras_hub(folder: str, bundle: Bundle, weights: tf1.Weights,
                     do_lower_case: bool) -> None:
    from official.checkpoints import keras_hub  # keras-hub takes seconds to import
    # The preset holds its own copy of the vocab, in its tokenizer's assets.
    keras_hub.write(folder, bundle.config, weights, bundle.vocab_file, do_lower_case)


@dataclasses.dataclass(frozen=True)
class Format:
    """How one format is read and written.

    Attributes:
      read: (path, bert_config_file or None, vocab_file or None) -> Bundle.
      write: (folder, bundle, the validated weights, do_lower_case): writes every file of the
        format (config and vocab included) into the empty `folder`.
      title: the format's name in messages.
      holds_inserted: it can hold the variables a method inserted, under the names their layers
        give them (a name-based format can; a fixed architecture's cannot).
      needs_vocab: its readers tokenize with the vocab written beside the weights, and read
        every word as unknown without it (`check_vocab`).
    """
    read: Callable[[str, str | None, str | None], Bundle]
    write: Callable[[str, Bundle, tf1.Weights, bool], None]
    title: str
    holds_inserted: bool = False
    needs_vocab: bool = False


# Every format, by its --input_format / --output_format name: adding one is an entry here (and,
# for a folder with its own config, in reading.FOLDER_FORMATS, which `--init_checkpoint` reads).
FORMATS = {
    "tf1": Format(_read_tf1, _write_tf1, "the original TF1 checkpoint", holds_inserted=True),
    "tf2": Format(_read_tf2, _write_tf2, "this project's TF2 checkpoint", holds_inserted=True),
    "hf": Format(_folder_reader("hf"), _write_hf, FOLDER_FORMATS["hf"].title, needs_vocab=True),
    "keras_hub": Format(_folder_reader("keras_hub"), _write_keras_hub,
                        FOLDER_FORMATS["keras_hub"].title),
}


def _format(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; known: {', '.join(FORMATS)}") from None


def _move_into(staging: str, output_dir: str) -> list[str]:
    # Readers look for a checkpoint's .index; it goes last so it never names missing data.
    names = sorted(os.listdir(staging), key=lambda n: (n.endswith(".index"), n))
    written = []
    for name in names:
        target = os.path.join(output_dir, name)
        if os.path.isdir(target):
            shutil.rmtree(target)
        os.replace(os.path.join(staging, name), target)
        written.append(target)
    return written


def convert(input_format: str, input_path: str, output_dir: str, output_format: str = "tf2",
            bert_config_file: str | None = None, vocab_file: str | None = None,
            do_lower_case: bool = True, extend_vocab: str | None = None) -> list[str]:
    """Reads `input_path` in `input_format` and writes it to `output_dir` in `output_format`;
    a sentence-transformers folder's pooling goes along as `sentence_encoder.json`
    (official/checkpoints/sentence_transformers.py). With `extend_vocab` (a vocab that extends
    the checkpoint's), the weights are grown to it first and its record written beside them
    (official/checkpoints/extended_vocab.py).

    Raises:
      CheckpointError: unreadable input, or no vocab for a format that needs one; ValueError
        (before anything is written): an `extend_vocab` that does not extend the checkpoint's
        vocab.
    """
    bundle = read(input_format, input_path, bert_config_file, vocab_file)
    extension = None
    if extend_vocab:
        bundle, extension = _extended(bundle, extend_vocab, input_path)
    check_vocab(output_format, bundle, input_path)
    sentence = sentence_transformers.settings_of(input_path)
    written = write(output_format, bundle, output_dir, source=input_path,
                    do_lower_case=do_lower_case)
    if sentence is not None:
        written.append(sentence_transformers.write_record(output_dir, sentence))
    if extension is not None:
        record = os.path.join(output_dir, extended_vocab.RECORD_FILE)
        records.write(record, extension)
        written.append(record)
    return written


def _extended(bundle: Bundle, vocab_file: str,
              source: str) -> tuple[Bundle, extended_vocab.ExtendedVocab]:
    """`bundle` grown to the extended vocab `vocab_file`, and the extension's record."""
    if not bundle.vocab_file:
        raise CheckpointError(f"{source}: no {VOCAB_FILE} beside it, and --extend_vocab needs "
                              f"the checkpoint's own vocab: pass --vocab_file")
    plan = extended_vocab.plan_extension(bundle.vocab_file, vocab_file,
                                         bundle.config.vocab_size, source)
    config = dataclasses.replace(bundle.config, vocab_size=plan.vocab_size)
    return Bundle(config, extended_vocab.extend_weights(bundle.weights, plan), vocab_file), plan
