"""Code-switching augmentation of tagged training sentences (CoSDA-ML, Qin et al. 2020): words
of the training language replaced by their translation in another language, so fine-tuning on
one language also sees the words of the languages a model will be used on, in the same
contexts and with the same tags.

    read_dictionary(path)   a bilingual word list: `word<TAB>translation` a line (the word in
                            the training language, lower case; several lines for several
                            translations) -> {word: (translation, ...)}
    CodeSwitching(dictionaries, rate, seed, epochs)
        .switch(sentences, copy)  each sentence's words, every word a dictionary has replaced
                                  with probability `rate` by a translation: a language drawn
                                  evenly among those whose dictionary has the word, then one of
                                  its translations evenly; the tags stay the word's
        .apply(sentences)         `copies` (ceil(epochs)) independently switched copies of the
                                  sentences, one after another: the training set a run of
                                  `epochs` epochs reads, every epoch switching anew (CoSDA-ML
                                  re-samples the replacements for every batch; a fresh draw per
                                  epoch is the same rule for data written ahead of training)
        .key()                    what the records made with it depend on (data_prep/conll.py
                                  caches them under it)

A word is looked up lower-cased; a translation replacing a word written with a capital first
letter gets one too (German nouns already have theirs). Multiword translations do not occur:
the dictionaries hold single words (../shared/data/crosslingual/PROVENANCE.md), and a line whose
translation has a space is refused, since a tagger's one tag per word would not fit it.
The draws are seeded by (seed, copy): the same flags give the same sentences.

Example (two languages; "dog" in both dictionaries, "the" in neither):
    >>> from data_prep.conll import Sentence
    >>> switching = CodeSwitching({"de": {"dog": ("Hund",)}, "es": {"dog": ("perro",)}},
    ...                           rate=1.0, seed=0, epochs=2.5)
    >>> sentence = Sentence(("The", "dog", "barks"), ("DET", "NOUN", "VERB"), 0, 1)
    >>> switched = switching.switch([sentence], copy=0)[0]
    >>> switched.words[0], switched.words[1] in ("Hund", "perro"), switched.tags == sentence.tags
    ('The', True, True)
    >>> switching.copies, len(switching.apply([sentence]))
    (3, 3)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
from typing import TYPE_CHECKING, Mapping, Sequence

from data_prep.input_errors import InputError, utf8_lines

if TYPE_CHECKING:  # run_ner reads the dictionaries before TensorFlow loads
    from data_prep.conll import Sentence


class DictionaryError(InputError):
    """A bilingual word list that cannot be read; the message is "path:line: problem"."""


def read_dictionary(path: str) -> dict[str, tuple[str, ...]]:
    """{word (lower case): its translations, in file order, each once} of a word-pair file.

    Raises:
      DictionaryError: a missing or non-UTF-8 file, a line without exactly one tab, an empty
        side, a translation with a space in it, or a file without pairs.
    """
    found: dict[str, list[str]] = {}
    for number, line in utf8_lines(path, DictionaryError):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise DictionaryError(f"{path}:{number}: {len(fields) - 1} tabs, expected one "
                                  "(word<TAB>translation)")
        word, translation = (field.strip() for field in fields)
        if not word or not translation:
            raise DictionaryError(f"{path}:{number}: an empty word or translation")
        if any(character.isspace() for character in translation):
            raise DictionaryError(f"{path}:{number}: translation {translation!r} is several "
                                  "words; a tagged word is replaced by one")
        translations = found.setdefault(word.lower(), [])
        if translation not in translations:
            translations.append(translation)
    if not found:
        raise DictionaryError(f"{path}: no word pairs")
    return {word: tuple(translations) for word, translations in found.items()}


@dataclasses.dataclass(frozen=True)
class CodeSwitching:
    """The augmentation's settings (the module docstring).

    Attributes:
      dictionaries: {language: {word: translations}}, read_dictionary's.
      rate: the probability that a word some dictionary has is replaced, in (0, 1].
      seed: the draws' seed.
      epochs: the training run's epochs (a copy of the sentences for each, the last one whole).
    """
    dictionaries: Mapping[str, Mapping[str, tuple[str, ...]]]
    rate: float
    seed: int
    epochs: float = 1.0

    def __post_init__(self):
        if not 0 < self.rate <= 1:
            raise ValueError(f"--code_switch_rate={self.rate}: must be above 0 and at most 1")
        if not self.dictionaries:
            raise ValueError("code-switching needs at least one dictionary")

    @property
    def copies(self) -> int:
        return max(1, math.ceil(self.epochs))

    def key(self) -> dict:
        """The settings and the dictionaries' digest: equal keys, equal sentences."""
        digest = hashlib.sha256(json.dumps(
            {language: sorted(words.items()) for language, words in self.dictionaries.items()},
            sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
        return {"code_switching": {"rate": self.rate, "seed": self.seed,
                                   "copies": self.copies, "dictionaries_sha256": digest}}

    def _replacement(self, word: str, rng: random.Random) -> str:
        key = word.lower()
        languages = [language for language in sorted(self.dictionaries)
                     if key in self.dictionaries[language]]
        if not languages or rng.random() >= self.rate:
            return word
        translation = rng.choice(self.dictionaries[rng.choice(languages)][key])
        if word[:1].isupper() and translation[:1].islower():
            translation = translation[:1].upper() + translation[1:]
        return translation

    def switch(self, sentences: Sequence[Sentence], copy: int) -> list[Sentence]:
        """The sentences with words switched by the draws of (seed, copy)."""
        rng = random.Random(f"{self.seed}:{copy}")
        return [dataclasses.replace(sentence, words=tuple(self._replacement(word, rng)
                                                          for word in sentence.words))
                for sentence in sentences]

    def apply(self, sentences: Sequence[Sentence]) -> list[Sentence]:
        """`copies` switched copies of `sentences`, copy 0 first."""
        return [switched for copy in range(self.copies)
                for switched in self.switch(sentences, copy)]
