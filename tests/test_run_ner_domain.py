"""run_ner on a domain's entity types, as a user runs it: the tags are the training file's, recorded
in tagger.json, and the export reads them back.

The data is test_run_ner's toy with BC5CDR's types and layout: its persons are chemicals, its
places diseases, its organisations untagged, in "word<TAB>tag" lines, IOB2 (as BC5CDR is given
by Crichton et al.'s collection). One run trains, evaluates and predicts; the scores are checked
against seqeval, the export in this process against the run's own predictions.
"""

import dataclasses
import json

import pytest
import seqeval.metrics

from tests.cli import run_module, succeeded
from tests.test_run_ner import command, read_predictions, results, toy, toy_sentence  # noqa: F401

TYPES = {"PER": "Chemical", "LOC": "Disease", "ORG": None}
TAGS = ["O", "B-Chemical", "I-Chemical", "B-Disease", "I-Disease"]  # tag_set's order, by hand


def as_domain(rows):
    """A toy sentence's rows with BC5CDR's types (an organisation's words tagged O)."""
    renamed = []
    for word, tag in rows:
        kind = TYPES.get(tag[2:]) if tag != "O" else None
        renamed.append((word, f"{tag[:2]}{kind}" if kind else "O"))
    return renamed


@pytest.fixture(scope="module")
def domain_run(toy):  # noqa: F811 (test_run_ner's fixture)
    import random

    rng = random.Random(2)
    data = toy["root"] / "bc5cdr"
    data.mkdir()
    parts = {name: [as_domain(toy_sentence(rng)) for _ in range(count)]
             for name, count in (("train.tsv", 240), ("devel.tsv", 30), ("test.tsv", 30))}
    for name, sentences in parts.items():
        lines = [line for rows in sentences for line in [f"{w}\t{t}" for w, t in rows] + [""]]
        (data / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = toy["root"] / "bc5cdr_out"
    log = succeeded(run_module(*command(
        toy, out, "--do_train", "--do_eval", "--do_predict", "--train_file=train.tsv",
        "--dev_file=devel.tsv", "--test_file=test.tsv", data_dir=data))).stderr
    return {"out": out, "log": log, "test": parts["test.tsv"]}


def test_a_domain_run_tags_its_training_files_types_and_records_them(domain_run):
    out = domain_run["out"]
    for folder in (out, out / "best"):
        assert json.loads((folder / "tagger.json").read_text()) == {"labels": TAGS,
                                                                    "mix_layers": False}
    dev = results(out / "eval_results.txt")
    assert {"Chemical_f1", "Disease_f1"} <= dev.keys() and "PER_f1" not in dev
    assert dev["f1"] > 0.6, dev

    predicted = read_predictions(out / "test_predictions.txt")
    assert [[(w, g) for w, g, _ in s] for s in predicted] == domain_run["test"]
    gold = [[g for _, g, _ in s] for s in predicted]
    tags = [[p for _, _, p in s] for s in predicted]
    assert {tag for sentence in tags for tag in sentence} <= set(TAGS)
    test = results(out / "test_results.txt")
    assert test["f1"] == pytest.approx(seqeval.metrics.f1_score(gold, tags), abs=1e-6)
    assert test["f1"] > 0.6, test


def test_its_export_reads_the_recorded_tags(toy, domain_run):  # noqa: F811
    """export_type=ner without --ner_labels serves the run's types: each word's tag is the one
    the run predicted; the flag naming another number of tags is refused. The API reads the
    same tags."""
    import tensorflow as tf

    from official import api
    from official.export import jobs
    from official.text.tokenizer import FullTokenizer

    vocab, out = str(toy["root"] / "vocab.txt"), str(domain_run["out"])
    options = jobs.ExportOptions(export_type="ner", export_dir="", vocab_file=vocab,
                                 do_lower_case=False, max_seq_length=32, init_checkpoint=out)
    export = jobs.serving_module(options, FullTokenizer(vocab, do_lower_case=False))
    predicted = read_predictions(domain_run["out"] / "test_predictions.txt")[:8]
    served = export.signatures()["serving_default"](
        text=tf.constant([" ".join(w for w, _, _ in s) for s in predicted]))
    for i, sentence in enumerate(predicted):
        count = int(served["num_words"][i])
        assert [t.decode() for t in served["tags"][i, :count].numpy()] == \
            [p for _, _, p in sentence]
    types = {t.decode() for t in served["entity_type"].numpy().ravel()} - {""}
    assert types and types <= {"Chemical", "Disease"}
    assert api.ner_tags(out) == TAGS  # what the Python API reads of the run

    with pytest.raises(ValueError, match=r"^--ner_labels names 3 tags; the run's .*tagger\.json "
                                         r"records 5: O,B-Chemical,I-Chemical,B-Disease,"
                                         r"I-Disease$"):
        jobs.serving_module(dataclasses.replace(options, labels=["O", "B-PER", "I-PER"]),
                            FullTokenizer(vocab, do_lower_case=False))
