"""The files of an attack: the labelled texts it attacks, and its output read back as training
rows (`run_classifier --augment_with`).

    read_labelled_texts("dev.tsv")          -> [LabelledText(line=2, text=..., label="1"), ...]
    cut_to_words(texts, max_words)          -> (the texts, each cut to its first max_words
                                                words; how many were cut)
    read_adversarial_examples("attack.jsonl", labels=["0", "1"])  -> [InputExample, ...]
    summary_path("out/attack.jsonl")        -> "out/attack.summary.json", the summary beside it
    progress = AttackProgress("out/attack.jsonl", key)   the attacks done so far, kept as they
                                                         finish, for an interrupted run to go on

Labelled texts are a TSV file with a header naming a `sentence` and a `label` column (any
order, other columns ignored), the layout of GLUE's SST-2 and of run_classifier's task tsv, so
a task's dev.tsv is attacked as it is. The attack's output is JSON lines, one example a line
(run_scripts/attack_classifier.py writes them): the rows whose `status` is "successful" give
their `perturbed` text with their `label`, the adversarial examples a fine-tuning adds to its
training rows; an output with none is an error (there is nothing to add).

While it runs, an attack appends each example's line to `<output stem>.progress.jsonl`, whose
first line is the run's key (a hash of everything its results depend on). A rerun with the same
key takes the complete lines as done and goes on from there; a different key, or a line that is
not whole (a run killed mid-write), starts over from the last whole line or from nothing. The
output file itself is written at the end, atomically, and the progress file removed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from typing import Sequence

from data_prep.glue import InputExample
from data_prep.input_errors import TsvError, utf8_lines
from official.atomic_files import disk_full, open_atomically
from official.robustness.text_words import WordText

TEXT_COLUMN, LABEL_COLUMN = "sentence", "label"


def summary_path(output_file: str) -> str:
    return os.path.splitext(output_file)[0] + ".summary.json"


class AttackProgress:
    """The progress file of the module docstring, for the output `output_file`."""

    def __init__(self, output_file: str, key: str):
        self.path = os.path.splitext(output_file)[0] + ".progress.jsonl"
        self._key = key

    def done(self) -> list[dict]:
        """The whole records a run with the same key left (none if there was no such run)."""
        records = []
        if os.path.isfile(self.path):
            with open(self.path, encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
            try:
                same = json.loads(lines[0]).get("key") == self._key
            except (ValueError, AttributeError):
                same = False
            for line in lines[1:-1] if same else []:  # the last piece lacks its newline
                try:
                    records.append(json.loads(line))
                except ValueError:
                    break
        return records

    def start(self, records: list[dict]) -> None:
        """The file made anew: the key, then `records` (those taken as done)."""
        with open_atomically(self.path) as f:
            f.write(json.dumps({"key": self._key}) + "\n")
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)

    def add(self, record: dict) -> None:
        """Appends `record`'s line whole or not at all: a write that fails (a full disk, named
        with this file) or is interrupted is cut back to the lines before it."""
        line = memoryview((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            end = os.lseek(descriptor, 0, os.SEEK_END)
            try:
                while line:  # unbuffered: nothing is left for a close to write after a failure
                    line = line[os.write(descriptor, line):]
            except BaseException as e:
                with contextlib.suppress(OSError):
                    os.ftruncate(descriptor, end)
                full = disk_full(e, self.path)
                if full is not None:
                    raise full from None
                raise
        finally:
            os.close(descriptor)

    def remove(self) -> None:
        os.remove(self.path)


@dataclasses.dataclass(frozen=True)
class LabelledText:
    line: int
    text: str
    label: str


def read_labelled_texts(path: str) -> list[LabelledText]:
    """See the module docstring.

    Raises:
      TsvError: "path:line: ..." for a header without both columns, a row too short or with
        an empty text or label; "path: ..." for no such file or no rows.
    """
    lines = utf8_lines(path, TsvError)
    rows = []
    for number, line in lines:
        header = line.split("\t")
        missing = [c for c in (TEXT_COLUMN, LABEL_COLUMN) if c not in header]
        if missing:
            raise TsvError(f"{path}:{number}: the header has no {' and no '.join(missing)} "
                           f"column (it has {', '.join(header)})")
        text_at, label_at = header.index(TEXT_COLUMN), header.index(LABEL_COLUMN)
        for number, line in lines:
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) <= max(text_at, label_at):
                raise TsvError(f"{path}:{number}: {len(fields)} columns, the header has "
                               f"{len(header)}")
            text, label = fields[text_at].strip(), fields[label_at].strip()
            if not text or not label:
                raise TsvError(f"{path}:{number}: an empty {'text' if not text else 'label'}")
            rows.append(LabelledText(number, text, label))
        break
    if not rows:
        raise TsvError(f"{path}: no labelled text (a header, then one text and label a line)")
    return rows


def cut_to_words(texts: Sequence[LabelledText], max_words: int
                 ) -> tuple[list[LabelledText], int]:
    """Each text longer than `max_words` words (official/robustness/text_words.py's words) cut
    after its `max_words`-th word; how many were cut. An attack's memory and time grow with a
    text's words (every candidate is a copy of it), while a classifier reads only its first
    max_seq_length pieces, so the words past a bound well beyond that cannot move it."""
    kept, cut = [], 0
    for row in texts:
        words = WordText(row.text)
        if len(words) > max_words:
            row = dataclasses.replace(row, text=words.first(max_words).text)
            cut += 1
        kept.append(row)
    return kept, cut


def read_adversarial_examples(path: str, labels: Sequence[str]) -> list[InputExample]:
    """The successful attacks of an attack's output as training examples (see the module
    docstring), each checked to carry one of the task's `labels`.

    Raises:
      TsvError: "path:line: ..." for a line that is not an attack's JSON object or a label the
        task does not have; "path: ..." for no such file or no successful attack in it.
    """
    examples = []
    for number, line in utf8_lines(path, TsvError):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            status, label, perturbed = row["status"], row["label"], row["perturbed"]
        except (ValueError, TypeError, KeyError):
            raise TsvError(f"{path}:{number}: not a line of an attack's output (a JSON object "
                           "with status, label and perturbed)") from None
        if status != "successful":
            continue
        if label not in labels:
            raise TsvError(f"{path}:{number}: label {label!r} is not one of the task's "
                           f"{', '.join(labels)}")
        examples.append(InputExample(f"adversarial-{number}", perturbed, None, label))
    if not examples:
        raise TsvError(f"{path}: no successful attack in it: nothing to add to the training data")
    return examples
