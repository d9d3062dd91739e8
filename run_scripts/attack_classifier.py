r"""Attacks a classifier export with word substitutions (TextFooler, BAE), offline.

    python -m run_scripts.attack_classifier --export_dir=exports/sst2 \
      --input_file=$GLUE_DIR/SST-2/dev.tsv --recipe=textfooler \
      --synonyms_file=ppdb_synonyms.txt --antonyms_files=ppdb_antonyms.txt,wordnet_antonyms.txt \
      --similarity_export_dir=exports/minilm --pos_tagger_export_dir=exports/upos \
      --output_file=/tmp/attack.jsonl

For each text the export classifies correctly, its words are ranked by how much deleting each
lowers the gold class's probability (TextFooler's eq. 2; BAE's plain drop), then replaced in
that order with candidates until the prediction flips (official/robustness/attack.py says
exactly how). Candidates:
  --recipe=textfooler  synonyms from --synonyms_file (counter-fitting's PPDB pairs; pairs in
                       --antonyms_files dropped) and/or the nearest neighbours in
                       --word_vectors_file (static vectors, build_static_embeddings' word2vec
                       files, best counter-fitted to the same lists by counter_fit_vectors as
                       TextFooler's were; cosine at least --min_cos_sim);
  --recipe=bae         a masked-LM head's top words for the masked word (BAE-R): the
                       checkpoint --masked_lm_checkpoint, which must have the head.
Stop words are never replaced. TextFooler's two filters, each with its export, drop a
candidate before it is classified (without the export there is no such filter, said in the
log):
  --similarity_export_dir  a sentence_encoder export (all-MiniLM-L6-v2's): the window of
                           --similarity_window words around the swap (TextFooler's 15; a
                           shorter text is not checked) must keep a cosine of at least
                           --similarity_threshold with the same window before the swap
                           (default cos(0.5 rad) = 0.878: TextFooler's angular similarity
                           0.840845057 as a cosine); with --similarity_window=0, the whole text
                           with the original (this project's earlier rule);
                           official/robustness/similarity_window.py;
  --pos_tagger_export_dir  a UPOS tagger (run_ner --data_format=conllu on UD English EWT,
                           exported with export_saved_model --export_type=ner and the tags as
                           B- labels): the replacement's tag in its new text must be the word's
                           in the original, a noun and a verb interchangeable with
                           --pos_noun_verb_swap (TextFooler's code; the default);
                           official/robustness/part_of_speech.py and tagger.py.
Every classifier, encoder, tagger and masked-LM call is a batch.

--input_file is a TSV file with a header naming `sentence` and `label` columns (GLUE's SST-2
dev.tsv, a tsv task's files); every label must be one of the export's. Writes --output_file, one
JSON line per example (status, label, original, perturbed, changes, queries, similarity, the
gold probability before and after), and beside it <output_file stem>.summary.json: TextAttack's
summary (successful / failed / skipped attacks, original accuracy, accuracy under attack, attack
success rate, average perturbed word %, words per input, queries) and how many texts were cut to
--max_words (a text's memory grows with its words: every candidate is a copy of it), also
printed. An interrupted
attack (ctrl-C, SIGTERM, SIGKILL) keeps the examples it finished in <stem>.progress.jsonl: the
same command goes on from there (data_prep/attack_data.py).
`run_classifier --augment_with=<output_file>` trains on the successful attacks' texts.
The halves: data_prep/attack_data.py (the files), official/robustness/ (the attack).
"""

import hashlib
import json
import os
from typing import NamedTuple

from absl import flags, logging

from data_prep.attack_data import (
    AttackProgress,
    cut_to_words,
    read_labelled_texts,
    summary_path,
)
from data_prep.record_cache import sha256_of_file
from official import command_line
from official.atomic_files import open_atomically
from official.embeddings.word2vec_files import read_word2vec
from official.output_paths import check_output_file
from official.robustness.attack import AttackSettings
from official.robustness.candidates import read_word_pairs
from official.robustness.similarity_window import SIMILARITY_THRESHOLD, WINDOW_SIZE
from official.training.options import check_checkpoint_path
from run_scripts import common_flags

RECIPES = ("textfooler", "bae")

flags.DEFINE_string("export_dir", None, "The classifier export attacked (export_saved_model "
                    "--export_type=classifier, single texts): its export_dir or a version.")
flags.DEFINE_string("input_file", None, "TSV with a header naming `sentence` and `label` "
                    "columns: the texts attacked and their gold labels.")
flags.DEFINE_string("output_file", None, "Each example's attack, as JSON lines; the summary "
                    "goes beside it (<stem>.summary.json).")
flags.DEFINE_enum("recipe", "textfooler", list(RECIPES), "Where candidates come from: synonym "
                  "lists and word vectors (textfooler) or a masked-LM head (bae).")
flags.DEFINE_string("synonyms_file", None, "textfooler: synonym pairs, `word1 word2` a line.")
flags.DEFINE_list("antonyms_files", [], "Antonym pairs (same format): never candidates of "
                  "each other.")
flags.DEFINE_string("word_vectors_file", None, "textfooler: static word vectors (word2vec "
                    "text format) whose nearest neighbours are candidates.")
flags.DEFINE_float("min_cos_sim", 0.5, "textfooler: the least cosine of a neighbour in "
                   "--word_vectors_file.")
flags.DEFINE_string("masked_lm_checkpoint", None, "bae: a checkpoint with its masked-LM head "
                    "(an original release, a run_pretraining output_dir); --bert_config_file "
                    "and --vocab_file default to the files beside it.")
flags.DEFINE_integer("max_candidates", 50, "Candidates tried per word.")
flags.DEFINE_integer("max_queries", 2000, "Texts classified per example, the original "
                     "included (TextAttack's query budget).")
flags.DEFINE_string("similarity_export_dir", None, "A sentence_encoder export measuring how "
                    "close a perturbed text stays to the original.")
flags.DEFINE_float("similarity_threshold", SIMILARITY_THRESHOLD,
                   "The least cosine between a swap's window and the same window before it "
                   "(with --similarity_export_dir). Default cos(0.5 rad): TextFooler's angular "
                   "similarity 1 - angle / pi of at least 0.840845057.")
flags.DEFINE_integer("similarity_window", WINDOW_SIZE, "Words around a swap the sentence "
                     "encoder compares (TextFooler's 15); a text of fewer words is not "
                     "checked. 0: the whole text, against the original.")
flags.DEFINE_string("pos_tagger_export_dir", None, "A UPOS tagger export (run_ner "
                    "--data_format=conllu, export_type=ner): a replacement must keep the "
                    "word's part of speech.")
flags.DEFINE_bool("pos_noun_verb_swap", True, "With --pos_tagger_export_dir: a noun may replace "
                  "a verb and back (TextFooler's code and TextAttack; its paper asks for the "
                  "same tag).")
flags.DEFINE_integer("max_examples", 0, "Attack the first N texts only (0: all).")
flags.DEFINE_integer("max_words", 1000, "A longer text is cut to its first N words before it is "
                     "attacked (the classifier reads only its first --max_seq_length pieces, so "
                     "later words cannot move it, and each candidate is a copy of the text); "
                     "the summary counts the texts cut.")
flags.DEFINE_integer("batch_size", 64, "Texts per classifier or encoder call.")
common_flags.define_bert_config_flag(extra_help=" bae: default, the one beside "
                                     "--masked_lm_checkpoint.")
common_flags.define_tokenizer_flags()
common_flags.define_max_seq_length_flag()
flags.adopt_module_key_flags(common_flags)
FLAGS = flags.FLAGS


class Plan(NamedTuple):
    """What the flags say, checked, and the files read."""
    settings: AttackSettings
    texts: list
    summary_file: str
    synonyms: list  # (word, word) pairs of --synonyms_file
    antonyms: list  # of every --antonyms_files
    vectors: dict | None  # --word_vectors_file's {word: vector}
    cut: int  # texts cut to --max_words


def _pairs(flag: str, path: str) -> list[tuple[str, str]]:
    if not os.path.isfile(path):
        raise ValueError(f"--{flag}: {path}: no such file")
    return read_word_pairs(path)


def _check_recipe() -> None:
    if FLAGS.recipe == "textfooler":
        if not FLAGS.synonyms_file and not FLAGS.word_vectors_file:
            raise ValueError("--recipe=textfooler needs --synonyms_file, --word_vectors_file "
                             "or both: where its candidates come from")
        if FLAGS.masked_lm_checkpoint:
            raise ValueError("--masked_lm_checkpoint is bae's: --recipe=textfooler takes its "
                             "candidates from --synonyms_file and --word_vectors_file")
    else:
        if not FLAGS.masked_lm_checkpoint:
            raise ValueError("--recipe=bae needs --masked_lm_checkpoint (a checkpoint with its "
                             "masked-LM head)")
        if FLAGS.synonyms_file or FLAGS.word_vectors_file:
            raise ValueError("--synonyms_file and --word_vectors_file are textfooler's: "
                             "--recipe=bae takes its candidates from the masked-LM head")
        check_checkpoint_path(FLAGS.masked_lm_checkpoint)
    if not -1.0 <= FLAGS.min_cos_sim <= 1.0:
        raise ValueError(f"--min_cos_sim={FLAGS.min_cos_sim}: must be a cosine, in [-1, 1]")


def prepare() -> Plan:
    """Every check that needs no TensorFlow (official/command_line.py): the flags, the
    candidates' files and the texts read and checked, the output writable."""
    settings = AttackSettings(FLAGS.max_candidates, FLAGS.max_queries,
                              FLAGS.similarity_threshold,
                              importance="drop" if FLAGS.recipe == "bae" else "textfooler",
                              window_size=FLAGS.similarity_window,
                              noun_verb_swap=FLAGS.pos_noun_verb_swap)
    settings.check()
    if FLAGS.max_examples < 0 or FLAGS.batch_size < 1:
        raise ValueError("--max_examples must be 0 (all) or more, --batch_size at least 1")
    if FLAGS.max_words < 1:
        raise ValueError(f"--max_words={FLAGS.max_words}: must be at least 1")
    _check_recipe()
    for flag in ("export_dir", "similarity_export_dir", "pos_tagger_export_dir"):
        if FLAGS[flag].value and not os.path.isdir(FLAGS[flag].value):
            raise ValueError(f"--{flag}: {FLAGS[flag].value}: no such folder")
    synonyms = _pairs("synonyms_file", FLAGS.synonyms_file) if FLAGS.synonyms_file else []
    antonyms = [pair for path in FLAGS.antonyms_files for pair in _pairs("antonyms_files", path)]
    vectors = read_word2vec(FLAGS.word_vectors_file) if FLAGS.word_vectors_file else None
    texts = read_labelled_texts(FLAGS.input_file)
    if FLAGS.max_examples:
        texts = texts[:FLAGS.max_examples]
    texts, cut = cut_to_words(texts, FLAGS.max_words)
    check_output_file(FLAGS.output_file)
    check_output_file(summary_path(FLAGS.output_file))
    return Plan(settings, texts, summary_path(FLAGS.output_file), synonyms, antonyms, vectors,
                cut)


def _candidates(plan: Plan) -> tuple[object, str]:
    """The recipe's candidate source (official/robustness/candidates.py), and what identifies
    it for the progress key: the masked-LM's weights, or the files' hashes."""
    from official.robustness import candidates

    if FLAGS.recipe == "bae":
        from official.lm_scoring.masked_lm import MaskedLanguageModel
        from official.peft.artifact import fingerprint
        masked_lm = MaskedLanguageModel.load(
            FLAGS.masked_lm_checkpoint, FLAGS.bert_config_file, FLAGS.vocab_file,
            FLAGS.do_lower_case)
        identity = fingerprint(masked_lm.pretrainer) + sha256_of_file(
            masked_lm.tokenizer.vocab_file)
        return candidates.MaskedLMCandidates(masked_lm, FLAGS.max_seq_length), identity
    sources = []
    if FLAGS.synonyms_file:
        sources.append(candidates.SynonymCandidates(plan.synonyms, plan.antonyms))
    if plan.vectors is not None:
        sources.append(candidates.VectorCandidates(plan.vectors, FLAGS.min_cos_sim,
                                                   plan.antonyms))
    files = [FLAGS.synonyms_file, FLAGS.word_vectors_file, *FLAGS.antonyms_files]
    return candidates.CombinedCandidates(sources), ",".join(
        sha256_of_file(path) for path in files if path)


def _key(victim, similarity_export: str | None, tagger_export: str | None,
         candidates: str) -> str:
    """What an example's attack depends on, hashed: the exports, the candidates' source and
    the settings (not --max_examples: each example's attack is its own)."""
    from official.export.versions import digest

    facts = {name: FLAGS[name].value for name in (
        "recipe", "min_cos_sim", "do_lower_case", "max_seq_length", "max_candidates",
        "max_queries", "similarity_threshold", "similarity_window", "pos_noun_verb_swap",
        "batch_size")}
    facts.update(export=digest(victim.path), labels=victim.labels,
                 similarity=similarity_export and digest(similarity_export),
                 tagger=tagger_export and digest(tagger_export), candidates=candidates)
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def _resumed(records: list[dict], texts: list, labels: list[str]) -> list:
    """The results of `records` that are the first texts' attacks, in order."""
    from official.robustness.attack import AttackResult

    results = []
    for record, row in zip(records, texts):
        try:
            result = AttackResult.from_record(record, labels)
        except (KeyError, ValueError, TypeError):
            break
        if (result.original, record["label"]) != (row.text, row.label):
            break
        results.append(result)
    return results


def job(plan: Plan) -> dict:
    """The attack of every text; returns the summary."""
    from official.retrieval.encoder import SentenceEncoder
    from official.robustness.attack import WordSubstitutionAttack, summarize
    from official.robustness.classifier import single_text_classifier

    victim = single_text_classifier(FLAGS.export_dir, "--export_dir")
    for row in plan.texts:
        if row.label not in victim.labels:
            raise ValueError(f"{FLAGS.input_file}:{row.line}: label {row.label!r} is not one "
                             f"of the export's {', '.join(victim.labels)}")
    similarity = None
    if FLAGS.similarity_export_dir:
        try:
            encoder = SentenceEncoder(FLAGS.similarity_export_dir)
        except ValueError as e:
            raise ValueError(f"--similarity_export_dir: {e}") from None
        similarity = encoder  # a word's candidates are one batch, at most --max_candidates
    else:
        logging.warning("No --similarity_export_dir: perturbed texts are not checked for "
                        "staying close to the original")
    tagger = None
    if FLAGS.pos_tagger_export_dir:
        from official.robustness.tagger import ExportedTagger
        try:
            tagger = ExportedTagger(FLAGS.pos_tagger_export_dir, FLAGS.batch_size)
        except ValueError as e:
            raise ValueError(f"--pos_tagger_export_dir: {e}") from None
    else:
        logging.warning("No --pos_tagger_export_dir: replacements are not checked for keeping "
                        "the word's part of speech")
    candidates, identity = _candidates(plan)
    attack = WordSubstitutionAttack(
        lambda texts: victim.probabilities(texts, FLAGS.batch_size), candidates, plan.settings,
        similarity, tagger)
    progress = AttackProgress(FLAGS.output_file, _key(
        victim, similarity and os.path.abspath(encoder.path), tagger and tagger.path, identity))
    if plan.cut:
        logging.info("%d text(s) longer than --max_words=%d words cut to their first %d",
                     plan.cut, FLAGS.max_words, FLAGS.max_words)
    results = _resumed(progress.done(), plan.texts, victim.labels)
    progress.start([r.record(victim.labels) for r in results])
    if results:
        logging.info("Going on after the %d texts an interrupted run attacked (%s)",
                     len(results), progress.path)
    for count, row in enumerate(plan.texts[len(results):], start=len(results) + 1):
        result = attack.run(row.text, victim.labels.index(row.label))
        results.append(result)
        progress.add(result.record(victim.labels))
        if count % 50 == 0 or count == len(plan.texts):
            logging.info("attacked %d/%d: %s", count, len(plan.texts),
                         ", ".join(f"{s} {sum(r.status == s for r in results)}"
                                   for s in ("successful", "failed", "skipped")))
    with open_atomically(FLAGS.output_file) as f:
        f.writelines(json.dumps(r.record(victim.labels), ensure_ascii=False) + "\n"
                     for r in results)
    summary = summarize(results)
    summary[f"Texts cut to --max_words={FLAGS.max_words}"] = plan.cut
    with open_atomically(plan.summary_file) as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    progress.remove()
    width = max(map(len, summary))
    for name, value in summary.items():
        print(f"{name + ':':<{width + 1}} {value}")
    return summary


if __name__ == "__main__":
    command_line.main("attack_classifier", prepare, job,
                       required=["export_dir", "input_file", "output_file"])
