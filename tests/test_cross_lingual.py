"""Tests for data_prep.cross_lingual: the training language's splits and each evaluation
language's sets are read, made and named by the data they belong to, and the run's scores come
back by language."""

from data_prep.cross_lingual import CrossLingualData, set_name
from official.tasks.base import Records


class LanguageData:
    """A TaskData that records what it is asked and answers with its own language's records."""

    def __init__(self, language, sizes):
        self.language, self.sizes, self.read_calls = language, sizes, []

    def source(self, split):
        return f"{self.language}/{split}.tsv"

    def read(self, splits):
        self.read_calls.append(list(splits))
        return self.sizes["train"] if "train" in splits else None

    def records(self, split):
        return Records(f"{self.language}-{split}.tf_record", {}, self.sizes[split],
                       self.sizes[split], self.source(split))


def make():
    english = LanguageData("en", {"train": 100, "dev": 10, "test": 20})
    languages = {"de": LanguageData("de", {"dev": 7, "test": 9}),
                 "zh": LanguageData("zh", {"dev": 5, "test": 6})}
    return english, languages, CrossLingualData(english, languages, ("dev", "test"))


def test_each_language_reads_and_makes_its_own_sets():
    english, languages, data = make()
    assert data.evaluation_sets == ("de-dev", "de-test", "zh-dev", "zh-test")
    assert set_name("de", "dev") == "de-dev"
    # The run asks for its splits and the sets (here without de's test) in one call.
    assert data.read(["train", "dev", "de-dev", "zh-dev", "zh-test"]) == 100
    assert english.read_calls == [["train", "dev"]]
    assert languages["de"].read_calls == [["dev"]]
    assert languages["zh"].read_calls == [["dev", "test"]]
    assert data.records("dev").path == "en-dev.tf_record"
    assert data.records("zh-test").path == "zh-test.tf_record"
    assert data.source("de-dev") == "de/dev.tsv" and data.source("train") == "en/train.tsv"


def test_scores_come_back_by_language_with_their_counts():
    _, _, data = make()
    for name in ("de-dev", "zh-dev", "zh-test"):
        data.records(name)
    results = {"dev": {"eval_accuracy": 0.9}, "de-dev": {"eval_accuracy": 0.5, "eval_loss": 2.0},
               "zh-dev": {"eval_accuracy": 0.4}, "zh-test": {"eval_accuracy": 0.25}}
    assert data.by_language(results, "eval_accuracy") == {
        "de": {"dev_accuracy": 0.5, "dev_examples": 7},
        "zh": {"dev_accuracy": 0.4, "dev_examples": 5, "test_accuracy": 0.25,
               "test_examples": 6}}
