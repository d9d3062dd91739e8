"""A part-of-speech tagger this project trained, read from its export: texts in, a UPOS tag per
word of `WordText` out (the attack's part-of-speech filter, `part_of_speech`).

    tagger = ExportedTagger(export_dir)
    tagger(["a good movie"])      -> [["DET", "ADJ", "NOUN"]]

The tagger is `run_ner --data_format=conllu` (UD treebank words tagged with the 17 UPOS tags)
exported by `export_saved_model --export_type=ner` (official/export/ner.py): `serving_default
(text: string [batch]) -> words, tags: string [batch, max_words], num_words int32 [batch]`, the
words at the original tokenizer's boundaries. The export serves a UPOS run's tags as they are
(its tagger.json names them); a tagger exported with them as B- labels (`--ner_labels=B-ADJ,
...`) has the prefix dropped here.

Words. The export's words are cut at whitespace and every punctuation mark ("film's" is film '
s); `WordText`'s keep inner apostrophes and hyphens. Each export word is found in the text after
the one before it (the export's words are the text's own characters), and a `WordText` word
takes the tag of the export word that starts where it starts: its first part, as a UD
treebank's "film" of "film's". A word no export word starts at (the export drops a word with no
word piece) has no tag (None).
"""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text  # noqa: F401 -- registers the tokenizer's ops the export's graph uses

from official.export.restoring import load_export
from official.robustness.text_words import WordText

SIGNATURE = "serving_default"


def word_tags(text: str, words: list[str], tags: list[str]) -> list[str | None]:
    """A tag per word of `WordText(text)` from the export's `words` of `text` and their
    `tags` (see the module docstring)."""
    starts, cursor = {}, 0
    for word, tag in zip(words, tags):
        start = text.find(word, cursor)
        if start < 0:
            raise ValueError(f"the tagger's word {word!r} is not in {text!r} after character "
                             f"{cursor}")
        starts[start] = tag.split("-", 1)[-1]
        cursor = start + len(word)
    return [starts.get(start) for start, _ in WordText(text).spans]


class ExportedTagger:
    """The export at `export_dir` (see the module docstring), loaded and checked; called with
    texts, `batch_size` at a time."""

    def __init__(self, export_dir: str, batch_size: int = 64):
        self.path, loaded = load_export(export_dir)
        signature = loaded.signatures.get(SIGNATURE)
        outputs = {} if signature is None else signature.structured_outputs
        if not {"words", "tags", "num_words"} <= set(outputs):
            raise ValueError(f"{self.path}: no {SIGNATURE!r} signature with words, tags and "
                             "num_words: not a tagger (export_type=ner) export")
        self._loaded, self._signature = loaded, signature  # the signature needs its owner alive
        self._batch_size = batch_size

    def __call__(self, texts: list[str]) -> list[list[str | None]]:
        found = []
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start:start + self._batch_size]
            outputs = self._signature(text=tf.constant(batch))
            for text, words, tags, count in zip(batch, outputs["words"].numpy(),
                                                outputs["tags"].numpy(),
                                                outputs["num_words"].numpy()):
                found.append(word_tags(text, [w.decode("utf-8") for w in words[:count]],
                                       [t.decode("utf-8") for t in tags[:count]]))
        return found
