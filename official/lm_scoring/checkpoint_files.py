"""The checkpoint a language-model scorer reads and the files beside it, checked without
TensorFlow (each entry point's `prepare`: score_minimal_pairs, bias_report's CrowS-Pairs).

    language_model_files(init_checkpoint, config_file, vocab_file, max_seq_length)
        -> (config_file, vocab_file): the flags' files, else those beside the checkpoint
"""

from __future__ import annotations

from official import checkpoints
from official.checkpoints.variable_names import has_masked_lm_head
from official.configs import BertConfig
from official.text import vocab
from official.training.options import check_checkpoint_path


def language_model_files(init_checkpoint: str, config_file: str | None, vocab_file: str | None,
                         max_seq_length: int) -> tuple[str | None, str | None]:
    """The config and vocab of `init_checkpoint` (the given files, else bert_config.json and
    vocab.txt beside it; None where neither is), after checking that the checkpoint is there with
    its masked-LM head, that `max_seq_length` fits the config and that the vocab fits it.

    Raises:
      ValueError: the first problem, in one line naming the checkpoint or the file.
    """
    check_checkpoint_path(init_checkpoint)
    if "://" not in init_checkpoint and not has_masked_lm_head(init_checkpoint):
        raise ValueError(f"{init_checkpoint}: has no masked-LM head (cls/predictions/*): give a "
                         "pretraining checkpoint (an original release, a run_pretraining "
                         "output_dir), not an encoder or a fine-tuned model")
    config_file = config_file or checkpoints.beside(init_checkpoint, checkpoints.CONFIG_FILE)
    vocab_file = vocab_file or checkpoints.beside(init_checkpoint, checkpoints.VOCAB_FILE)
    if config_file:
        config = BertConfig.from_json_file(config_file)
        config.check_seq_length(max_seq_length, config_file)
        if vocab_file:
            vocab.check_fits(vocab_file, config.vocab_size, config_file)
    elif vocab_file:
        vocab.load_vocab(vocab_file)
    return config_file, vocab_file
