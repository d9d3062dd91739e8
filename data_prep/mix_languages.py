r"""Several languages' text -> one pretraining corpus, each language's share smoothed as mBERT's
(data_prep/language_mix.py: p_l proportional to q_l^0.7, passages drawn in seeded shuffles).

    python -m data_prep.mix_languages \
        --languages='en=text/en/*.txt*,de=text/de/*.txt*,es=text/es/*.txt*' \
        --output_file=corpus/en_de_es.txt [--smoothing=0.7] [--total_words=3000000] \
        [--report_file=corpus/en_de_es.json]

The corpus is in the pretraining format (one line a sentence or paragraph, a blank line after each
passage), for build_vocab (a multilingual vocab: --nodo_lower_case keeps case and accents, as
mBERT's cased vocab; CJK characters are split one per token whatever the setting) and
create_pretraining_data. Input files may be gzip-compressed (.gz). Each language's words, share,
smoothed share, words written and passes over its text are printed, and with --report_file kept
as JSON. The same flags give the same bytes.

Bad input (a language given twice or without files, a glob matching nothing, a language whose
files hold no words, an --output_file that cannot be written) ends the run with one line on
stderr and exit status 1 before anything is written; the corpus appears only when complete.
"""

import dataclasses
import json

from absl import flags

from data_prep.corpus_shards import expand_input_files
from data_prep.input_errors import InputError
from data_prep.language_mix import SMOOTHING, mix, read_passages
from official import command_line, settings_parsing
from official.atomic_files import open_atomically
from official.output_paths import check_output_file

flags.DEFINE_string("languages", None, "language=files pairs, comma-separated; files is a glob "
                    "(e.g. en=text/en/*.txt.gz).")
flags.DEFINE_string("output_file", None, "The corpus to write.")
flags.DEFINE_float("smoothing", SMOOTHING, "The exponent S of the languages' shares (p ~ q^S): "
                   "mBERT's 0.7; 1 keeps the data's shares, 0 makes them equal.")
flags.DEFINE_integer("total_words", None, "Words to write in all (default: as many as the "
                     "languages' text holds together).")
flags.DEFINE_integer("passage_words", 200, "The most words of a passage, the unit drawn (a "
                     "document's consecutive lines).")
flags.DEFINE_integer("seed", 0, "The draws' seed.")
flags.DEFINE_string("report_file", None, "Also write each language's part as JSON here.")
FLAGS = flags.FLAGS


def prepare() -> dict[str, list[str]]:
    """The flags checked and the output places too; {language: its files}."""
    for name in ("languages", "output_file"):
        if not FLAGS[name].value:
            raise InputError(f"--{name}: required")
    if not 0 <= FLAGS.smoothing <= 1:
        raise InputError(f"--smoothing={FLAGS.smoothing}: must be 0 to 1")
    for name in ("total_words", "passage_words"):
        if FLAGS[name].value is not None and FLAGS[name].value < 1:
            raise InputError(f"--{name}={FLAGS[name].value}: must be at least 1")
    check_output_file(FLAGS.output_file, "output_file")
    if FLAGS.report_file:
        check_output_file(FLAGS.report_file, "report_file")
    return {language: expand_input_files(pattern) for language, pattern
            in settings_parsing.named_values(FLAGS.languages, "--languages").items()}


def job(files: dict[str, list[str]]) -> None:
    made = mix({language: read_passages(paths, FLAGS.passage_words)
                for language, paths in files.items()},
               FLAGS.smoothing, FLAGS.total_words, FLAGS.seed)
    with open_atomically(FLAGS.output_file) as f:
        for passage in made.passages:
            f.write("\n".join(passage.lines) + "\n\n")
    parts = {language: dataclasses.asdict(share) for language, share in made.languages.items()}
    if FLAGS.report_file:
        with open_atomically(FLAGS.report_file) as f:
            json.dump({"smoothing": FLAGS.smoothing, "languages": parts}, f, indent=2)
            f.write("\n")
    print("language  words in text  share  smoothed  words written  passes")
    for language, share in made.languages.items():
        print(f"{language:<8}  {share.words:>13,}  {share.share:.3f}  {share.smoothed_share:.3f}"
              f"     {share.words_written:>13,}  {share.passes:>6}")


if __name__ == "__main__":
    command_line.main("mix_languages", prepare, job, tensorflow=False,
                      left=lambda: f"{FLAGS.output_file} not written")
