"""TextFooler's part-of-speech filter: a replacement must be the same part of speech, in its new
text, as the word it replaces was in the original.

    tagger(["a good movie", ...])     -> [["DET", "ADJ", "NOUN"], ...]  a tag per word
    same_part_of_speech("NOUN", "VERB", noun_verb_swap=True)   -> True

A tagger is any `tagger(texts) -> [[tag or None per word of WordText(text)] per text]`, tags
from Universal Dependencies' 17 UPOS tags (`official/robustness/tagger.py` reads one from a
UPOS tagger this project trained: run_ner --data_format=conllu, exported). None is a word the
tagger gave no tag (it had no word piece): it matches nothing.

TextFooler's paper (sec. 3.2, step 2) keeps candidates "with the same POS" as the word; its code
and TextAttack's recipe (`PartOfSpeech(allow_verb_noun_swap=True)`) also let a noun and a verb
stand for each other, since a tagger often disagrees with itself on words such as "work" or
"love" from one text to the next, and both are content words of the same slot. The default
here is the code's (`noun_verb_swap=True`); False is the paper's words.
"""

from __future__ import annotations

NOUN_VERB = frozenset(("NOUN", "VERB"))


def same_part_of_speech(original: str | None, replacement: str | None,
                        noun_verb_swap: bool = True) -> bool:
    """Whether a word tagged `replacement` in its new text may replace one tagged `original`."""
    if original is None or replacement is None:
        return False
    if original == replacement:
        return True
    return noun_verb_swap and {original, replacement} <= NOUN_VERB

