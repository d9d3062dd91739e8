"""A base WordPiece vocab extended with a domain's pieces (data_prep/vocab_extension.py).

    python -m data_prep.extend_vocab --vocab_file=data/vocab/uncased_vocab.txt \\
        --input_file=chemprot/train.txt --text_field=text --max_new_tokens=500 \\
        --min_count=10 --strategy=unused --output_dir=chemprot_vocab

writes `vocab.txt` (the base's lines, the new tokens over its [unusedN] lines or after its last)
and `vocab_extension.json` (the base vocab and its sha256, the new tokens with their ids, the
pieces each saved, and the text's pieces per word before and after), then prints the two fits.
No existing token changes its id. A checkpoint for the new vocab:

    python -m run_scripts.convert_checkpoint --input_format=tf1 --input=$BERT_DIR \\
        --extend_vocab=chemprot_vocab/vocab.txt --output_dir=bert_chemprot

Bad input (a vocab with a duplicate line, more --max_new_tokens than [unusedN] lines with
--strategy=unused, a glob matching nothing) is one line on stderr and exit status 1, checked
before the text is read; the files appear only when complete.
"""

import hashlib
import json
import os

from absl import flags, logging

from data_prep.corpus_shards import expand_input_files
from data_prep.domain_text import read_texts
from data_prep.input_errors import InputError
from data_prep.vocab_extension import STRATEGIES, layout, unused_slots
from official import command_line
from official.atomic_files import open_atomically
from official.output_paths import check_output_dir
from official.text.python_tokenizer import PythonTokenizer

VOCAB_FILE, RECORD_FILE = "vocab.txt", "vocab_extension.json"

flags.DEFINE_string("vocab_file", None, "The base vocab (the checkpoint's vocab.txt).")
flags.DEFINE_string("input_file", None, "The domain's text, a comma-separated list of files and "
                    "globs: one text a line, or JSON lines with --text_field.")
flags.DEFINE_string("text_field", None, "Read the input as JSON lines and take this field of "
                    "each as its text (the SciBERT tasks' files: text).")
flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents (uncased vocabs).")
flags.DEFINE_integer("max_new_tokens", 500, "The most tokens to add.")
flags.DEFINE_integer("min_count", 10, "A new token's words must occur at least this often in "
                     "the text (and the learner's count threshold goes no lower).")
flags.DEFINE_enum("strategy", "unused", STRATEGIES,
                  "unused: over the [unusedN] lines (the embedding matrix keeps its shape); "
                  "append: after the last line (vocab_size grows).")
flags.DEFINE_string("output_dir", None, "Where vocab.txt and vocab_extension.json go.")
FLAGS = flags.FLAGS


def _checked_base() -> list[str]:
    """The base vocab's lines, once every flag that needs no text is checked."""
    if FLAGS.max_new_tokens < 1:
        raise InputError(f"--max_new_tokens={FLAGS.max_new_tokens}: must be at least 1")
    if FLAGS.min_count < 1:
        raise InputError(f"--min_count={FLAGS.min_count}: must be at least 1")
    base = PythonTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case).vocab  # duplicates refused
    tokens = list(base)
    slots = len(unused_slots(tokens))
    if FLAGS.strategy == "unused" and FLAGS.max_new_tokens > slots:
        raise InputError(f"--max_new_tokens={FLAGS.max_new_tokens}: {FLAGS.vocab_file} has "
                         f"only {slots} [unusedN] lines for --strategy=unused; use "
                         f"--strategy=append or at most {slots}")
    check_output_dir(FLAGS.output_dir)
    return tokens


def prepare() -> tuple[list[str], list[str]]:
    """The flags, the base vocab and the output place checked; (the base's tokens, the input
    files)."""
    for name in ("vocab_file", "input_file", "output_dir"):
        if not FLAGS[name].value:
            raise InputError(f"--{name}: required")
    return _checked_base(), expand_input_files(FLAGS.input_file)


def job(plan: tuple[list[str], list[str]]) -> None:
    record, fits = _extend(*plan)
    print("\n".join(fit.table() for fit in fits))
    logging.info("added %d tokens (%s): %s", len(record["tokens"]), FLAGS.strategy,
                 os.path.join(FLAGS.output_dir, VOCAB_FILE))


def _extend(base_tokens: list[str], files: list[str]) -> tuple[dict, list]:
    """Learns, chooses and writes; returns the record and the fits before and after."""
    from data_prep import vocab_fit
    from data_prep.vocab_extension import candidates, choose

    base = PythonTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case)
    counts = vocab_fit.word_counts(base, read_texts(files, FLAGS.text_field))
    if not counts:
        raise InputError(f"{FLAGS.input_file}: no words")
    pool = candidates(counts, base.vocab, FLAGS.min_count)
    logging.info("%d candidate pieces from %d distinct words", len(pool), len(counts))
    chosen = choose(counts, base.vocab, pool, FLAGS.max_new_tokens, FLAGS.min_count)
    if not chosen:
        raise InputError(f"{FLAGS.input_file}: no piece the base vocab lacks saves pieces on "
                         f"words seen --min_count={FLAGS.min_count} times or more")
    tokens = layout(base_tokens, [c.token for c in chosen], FLAGS.strategy)
    id_of = {token: i for i, token in enumerate(tokens)}
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    vocab_path = os.path.join(FLAGS.output_dir, VOCAB_FILE)
    with open_atomically(vocab_path, "w") as f:
        f.writelines(token + "\n" for token in tokens)
    extended = PythonTokenizer(vocab_path, FLAGS.do_lower_case)
    fits = [vocab_fit.measure(tokenizer, counts, top_k=10) for tokenizer in (base, extended)]
    with open(FLAGS.vocab_file, "rb") as f:
        base_sha256 = hashlib.sha256(f.read()).hexdigest()
    record = {
        "base_vocab_file": FLAGS.vocab_file, "base_vocab_sha256": base_sha256,
        "strategy": FLAGS.strategy, "min_count": FLAGS.min_count,
        "input_file": FLAGS.input_file, "text_field": FLAGS.text_field,
        "do_lower_case": FLAGS.do_lower_case,
        "pieces_per_word": {"before": fits[0].pieces_per_word, "after": fits[1].pieces_per_word},
        "tokens": [{"token": c.token, "id": id_of[c.token], "saved_pieces": c.saved_pieces,
                    "uses": c.uses} for c in chosen]}
    with open_atomically(os.path.join(FLAGS.output_dir, RECORD_FILE), "w") as f:
        json.dump(record, f, indent=1, ensure_ascii=False)
    return record, fits


if __name__ == "__main__":
    # TensorFlow (under the learner's package) loads once the flags are known to be usable.
    command_line.main("extend_vocab", prepare, job,
                      left=lambda: f"nothing written to {FLAGS.output_dir}")
