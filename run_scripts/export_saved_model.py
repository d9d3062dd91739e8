r"""Exports SavedModels that TF Serving serves from raw text, and TF Hub encoder/preprocessor pairs.

    python -m run_scripts.export_saved_model --export_type=classifier --task_name=MRPC \
      --init_checkpoint=/tmp/mrpc_output --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --do_lower_case --max_seq_length=128 --export_dir=/tmp/mrpc_serving

--export_type:
  classifier    a run_classifier output_dir (its best/ when kept; --task_name gives the labels
                and whether texts come in pairs, with --data_dir for task tsv): text_a
                (, text_b) -> probabilities, label (or score for STS-B); a run with
                --long_doc=head_tail cuts texts as it did, one with --long_doc=windows serves
                texts of any length (windows in the graph, --window_batch_size at a time,
                pooled as in training; also num_windows)
  ner           a run_ner output_dir: text -> entities (text, type, character offsets), words
                and tags (tags: --ner_labels, else the run's tagger.json, else CoNLL-2003's)
  squad         a run_squad output_dir: question, context -> answer, score, character offsets
                (the --doc_stride ... --null_score_diff_threshold flags as run_squad's)
  encoder       any --init_checkpoint: TF Hub's BERT encoder (with .mlm when the checkpoint has
                the masked-LM head)
  sentence_encoder  any --init_checkpoint (a sentence-transformers folder too): text -> one
                vector per text, --pooling (mean, cls, max) and --normalize; a folder's own
                pooling, normalisation and max_seq_length (or the record convert_checkpoint
                left of them) unless the flags say otherwise
  preprocessor  no model: TF Hub's BERT preprocessor (strings -> input_word_ids, input_mask,
                input_type_ids; .tokenize, .bert_pack_inputs)
  multitask     --peft_checkpoints=mrpc_out,sst2_out: parameter-efficient runs (adapters, LoRA)
                of one base in one SavedModel, the base stored once, one signature per run
                named by its task (or NAME=PATH): each as that task's export alone

A parameter-efficient run exports as any other run (LoRA folded into the base's matrices,
adapters in the graph): --init_checkpoint=<its output_dir> finds its base through its record,
or --init_checkpoint=<base> --peft_checkpoint=<its output_dir>.

--serving_dtype=bfloat16 (any export with a model) computes the matrix products on bfloat16
weights, with the same inputs and float32 outputs: faster on CPUs with bfloat16 units
(AVX512_BF16, AMX), slower on those without, which the command says in one line
(official/export/precision.py; bench/serving_precision.py measures both).

--bert_config_file defaults to the bert_config.json a training output_dir holds. Each export is
written to --export_dir/<version>/ (the Unix time), the layout TF Serving watches. Loading one
needs `import tensorflow_text` (its ops); saved_model_cli's `run` too, e.g.

    python -c "import sys, tensorflow_text; from tensorflow.python.tools.saved_model_cli \
      import main; sys.exit(main())" run --dir /tmp/mrpc_serving/1700000000 --tag_set serve \
      --signature_def serving_default --input_exprs 'text_a=["a"];text_b=["b"]'
"""

from absl import flags, logging

from data_prep import glue
from official import command_line
from official.export import cpu_units
from official.export.kinds import KINDS
from official.export.options import EXPORT_TYPES, ExportOptions, check_files
from official.sentence_settings import SentenceSettings
from run_scripts import common_flags

flags.DEFINE_enum("export_type", None, EXPORT_TYPES, "What to export.")
flags.DEFINE_string("export_dir", None,
                    "Versions are written to <export_dir>/<Unix time>/ (TF Serving's layout).")
common_flags.define_model_flags()
common_flags.define_tokenizer_flags()
_DEFAULT_MAX_SEQ_LENGTH = 128
flags.DEFINE_integer("max_seq_length", None,
                     "The fine-tuning's max_seq_length (the preprocessor's default seq_length). "
                     "Default " + ", ".join(f"{kind.name} {kind.max_seq_length}"
                                            for kind in KINDS.values())
                     + "; multitask: each run's own; sentence_encoder: the checkpoint's "
                     f"sentence-transformers setting, else {_DEFAULT_MAX_SEQ_LENGTH}; encoder, "
                     f"preprocessor: {_DEFAULT_MAX_SEQ_LENGTH}.")
# A serving setting of every classifier a model serves: an export_type=classifier's and each
# of a multitask export's.
flags.DEFINE_integer("window_batch_size", 32,
                     "classifier of a --long_doc=windows run (its long_documents.json): the "
                     "windows the encoder runs at a time, what bounds the memory a long text "
                     "takes.")


def _define_kind_flags() -> None:
    """Each task kind's own flags, as its row declares them (official/export/kinds.py)."""
    for kind in KINDS.values():
        common_flags.define_flag_rows(kind.flags)


_define_kind_flags()
flags.DEFINE_string("serving_dtype", "float32",
                    "What the model computes in: float32, or bfloat16 (every export with a model: "
                    "matrix products on bfloat16 weights, softmax, LayerNorm statistics and "
                    "pooling in float32; the same inputs and float32 outputs). Faster on CPUs "
                    "with bfloat16 units (AVX512_BF16, AMX), slower on others.")
flags.DEFINE_bool("jit_compile", False,
                  "classifier, sentence_encoder: compile the model's part with XLA.")
common_flags.define_pooling_flag("sentence_encoder: default the checkpoint's record "
                                 "(sentence_encoder.json) or sentence-transformers settings, "
                                 "else mean.")
flags.DEFINE_bool("normalize", None, "sentence_encoder: unit-length vectors (default: the "
                  "checkpoint's sentence-transformers settings, else false).")
flags.DEFINE_string("peft_checkpoint", None,
                    f"{', '.join(KINDS)}: the output_dir of a parameter-efficient run "
                    "(--adapter_size, --lora_rank) to export on the base --init_checkpoint.")
flags.DEFINE_list("peft_checkpoints", [],
                  "multitask: parameter-efficient runs of one base, PATH or NAME=PATH each "
                  "(NAME: the signature; default the run's task name). Their base: "
                  "--init_checkpoint, else the one their records name.")
FLAGS = flags.FLAGS


def _task_labels(task_name: str, data_dir: str | None) -> tuple[list[str] | None, bool]:
    """The labels of a run_classifier --task_name and whether its texts come in pairs, as its
    data side reads them (data_prep/glue.py); None labels for a regression."""
    processor = glue.get_processor(task_name, data_dir)
    return processor.get_labels(), processor.is_pair


def options_from_flags() -> ExportOptions:
    """The flags as ExportOptions; a task kind's fields from its own flags (its labels from
    data_prep)."""
    kind = KINDS.get(FLAGS.export_type)
    max_seq_length = FLAGS.max_seq_length or (
        kind.max_seq_length if kind else _DEFAULT_MAX_SEQ_LENGTH)
    own = {} if kind is None else kind.options(
        {"max_seq_length": max_seq_length, **{f.name: FLAGS[f.name].value for f in kind.flags}},
        _task_labels)
    return ExportOptions(
        export_type=FLAGS.export_type, export_dir=FLAGS.export_dir, vocab_file=FLAGS.vocab_file,
        do_lower_case=FLAGS.do_lower_case, max_seq_length=max_seq_length,
        bert_config_file=FLAGS.bert_config_file, init_checkpoint=FLAGS.init_checkpoint,
        jit_compile=FLAGS.jit_compile, peft_checkpoint=FLAGS.peft_checkpoint,
        peft_checkpoints=FLAGS.peft_checkpoints,
        sentence=SentenceSettings(FLAGS.pooling, FLAGS.normalize, FLAGS.max_seq_length),
        serving_dtype=FLAGS.serving_dtype, window_batch_size=FLAGS.window_batch_size, **own)


def prepare() -> ExportOptions:
    """Every check that needs no TensorFlow (official/command_line.py)."""
    options = options_from_flags()
    check_files(options)
    if options.serving_dtype == "bfloat16" and (note := cpu_units.bfloat16_note()):
        logging.warning("--serving_dtype=bfloat16: %s", note)
    return options


def job(options: ExportOptions) -> None:
    """The export built, loaded and saved; its path printed."""
    from official.export.jobs import export

    path = export(options)
    logging.info("Exported %s to %s", options.export_type, path)
    print(path)


if __name__ == "__main__":
    command_line.main("export_saved_model", prepare, job,
                       required=["export_type", "export_dir", "vocab_file"])
