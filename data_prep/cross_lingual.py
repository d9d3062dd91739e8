"""Zero-shot cross-lingual evaluation's data: a multilingual task (XNLI, PAWS-X) trained in one
language and scored, unchanged, in others.

    data = CrossLingualData(english, {"de": german, "zh": chinese}, splits=("dev", "test"))
    data.evaluation_sets        # ("de-dev", "de-test", "zh-dev", "zh-test")
    finetuning.run(options, task, data)
    data.by_language(results, "eval_accuracy")
                                # {"de": {"dev_accuracy": ..., "dev_examples": ..., ...}, ...}

`CrossLingualData` is the run's `TaskData` (official/tasks/base.py): its train, dev and test
splits are the training language's, and each evaluation language's dev (and test) set is one of
its further labelled sets, named "<language>-<split>". The run reads and checks them with the
splits, before any record is written (a language the data lacks stops it before training), and
scores them by the checkpoint it keeps, which the training language's dev set alone chooses: no
target-language data picks the model, as in the zero-shot transfer of Wu and Dredze (2019) and
the original's multilingual README. Each language's records are its own task data's (for
run_classifier, `ClassifierData` of "xnli-de", ...), cached in output_dir as any split's.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from official.tasks.base import Records, TaskData


def set_name(language: str, split: str) -> str:
    """The evaluation set of `language`'s `split` ("de-dev")."""
    return f"{language}-{split}"


class CrossLingualData:
    """The training language's data plus each evaluation language's sets (`TaskData`).

    Args:
      data: the task's data in the training language (train, and dev, which picks best/).
      languages: {language: the same task's data in that language}, in the order reported.
      splits: each language's splits scored ("dev", and "test" when it is labelled and asked
        for), in the order reported.
    """

    def __init__(self, data: TaskData, languages: Mapping[str, TaskData],
                 splits: Sequence[str]):
        self._data = data
        self._languages = dict(languages)
        self._sets = {set_name(language, split): (language, split)
                      for language in languages for split in splits}
        self.evaluation_sets = tuple(self._sets)
        self._examples: dict[str, int] = {}

    def source(self, split: str) -> str:
        if split in self._sets:
            language, own = self._sets[split]
            return self._languages[language].source(own)
        return self._data.source(split)

    def read(self, splits: Sequence[str]) -> int | None:
        count = self._data.read([split for split in splits if split not in self._sets])
        for language, data in self._languages.items():
            wanted = [own for name, (of, own) in self._sets.items()
                      if of == language and name in splits]
            if wanted:
                data.read(wanted)
        return count

    def records(self, split: str) -> Records:
        if split not in self._sets:
            return self._data.records(split)
        language, own = self._sets[split]
        made = self._languages[language].records(own)
        self._examples[split] = made.num_examples
        return made

    def by_language(self, results: Mapping[str, Mapping[str, float]], metric: str
                    ) -> dict[str, dict[str, float | int]]:
        """{language: {"<split>_<metric>": score, "<split>_examples": count}} of the sets the
        run scored (`results`: the run's, {set name: metrics}; `metric`: the key reported, its
        "eval_" prefix dropped in the names: "dev_accuracy")."""
        table: dict[str, dict[str, float | int]] = {language: {} for language in self._languages}
        name = metric.removeprefix("eval_")
        for set_, (language, split) in self._sets.items():
            if set_ in results:
                table[language][f"{split}_{name}"] = results[set_][metric]
                table[language][f"{split}_examples"] = self._examples[set_]
        return table
