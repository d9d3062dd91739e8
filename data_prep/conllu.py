"""Universal Dependencies treebanks (CoNLL-U): the words of each sentence with their tags and tree.

CoNLL-U (universaldependencies.org/format.html) has one word a line in 10 tab-separated columns,
ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC, sentences ended by a blank line and
comments starting with "#". What probing reads of it (official/probing/):

- The syntactic words: lines whose ID is an integer. A multiword token's line (ID "1-2", the
  surface "don't" over the words "do" and "n't") and an empty node (ID "8.1", enhanced graphs
  only) are skipped: the basic tree is over the words, as Hewitt & Manning's and Tenney et al.'s
  probes use it. A word's text is its FORM.
- HEAD: the word's head as a 1-based word index, 0 for the root; the heads must form one tree
  (every word reaches the root, one root) or the sentence is an error at its first line.
- UPOS: one of UD's 17 universal parts of speech (UPOS_LABELS), in every treebank of any
  language; another value is an error at its line (a probe or tagger would otherwise learn a
  label no other treebank has, from a typo).
- DEPREL: the universal relation, its language-specific subtype dropped ("obl:tmod" -> "obl"),
  so the label set is UD's 37 relations (UD_RELATIONS) whatever the treebank's subtypes; a
  relation outside them is an error at its line.

    read_conllu(path) -> [TreebankSentence], each with words, upos, xpos, heads, relations and
    the line its first word is on; an error is "path:line: problem".

Example (a two-sentence file; the second's "don't" is a multiword token):
    >>> import os, shutil, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> rows = ["# text = Dogs bark.",
    ...         "1\\tDogs\\tdog\\tNOUN\\tNNS\\t_\\t2\\tnsubj\\t_\\t_",
    ...         "2\\tbark\\tbark\\tVERB\\tVBP\\t_\\t0\\troot\\t_\\t_",
    ...         "3\\t.\\t.\\tPUNCT\\t.\\t_\\t2\\tpunct\\t_\\t_", "",
    ...         "1-2\\tdon't\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\t_",
    ...         "1\\tdo\\tdo\\tAUX\\tVBP\\t_\\t3\\taux\\t_\\t_",
    ...         "2\\tn't\\tnot\\tPART\\tRB\\t_\\t3\\tadvmod\\t_\\t_",
    ...         "3\\tgo\\tgo\\tVERB\\tVB\\t_\\t0\\troot\\t_\\t_", ""]
    >>> with open(os.path.join(folder, "tiny.conllu"), "w") as f:
    ...     _ = f.write("\\n".join(rows))
    >>> first, second = read_conllu(os.path.join(folder, "tiny.conllu"))
    >>> first.words, first.upos, first.heads, first.relations, first.line
    (('Dogs', 'bark', '.'), ('NOUN', 'VERB', 'PUNCT'), (2, 0, 2), ('nsubj', 'root', 'punct'), 2)
    >>> second.words, second.line
    (('do', "n't", 'go'), 7)
    >>> shutil.rmtree(folder)
"""

from __future__ import annotations

import dataclasses

from data_prep.input_errors import InputError, utf8_lines
from official.tasks.ner_metrics import UPOS_LABELS

_COLUMNS = 10
# Universal Dependencies' 37 universal relations (universaldependencies.org/u/dep), the part of a
# DEPREL before its subtype's ":".
UD_RELATIONS = ("acl", "advcl", "advmod", "amod", "appos", "aux", "case", "cc", "ccomp", "clf",
                "compound", "conj", "cop", "csubj", "dep", "det", "discourse", "dislocated",
                "expl", "fixed", "flat", "goeswith", "iobj", "list", "mark", "nmod", "nsubj",
                "nummod", "obj", "obl", "orphan", "parataxis", "punct", "reparandum", "root",
                "vocative", "xcomp")
_UPOS = frozenset(UPOS_LABELS)
_RELATIONS = frozenset(UD_RELATIONS)


class ConlluError(InputError):
    """A file that is not a CoNLL-U treebank; the message is "path:line: problem"."""


@dataclasses.dataclass(frozen=True)
class TreebankSentence:
    """One sentence's words, one entry per word in every field.

    Attributes:
      words: FORM.
      upos, xpos: the universal and the treebank's part of speech.
      heads: each word's head, a 1-based word index; 0 for the root.
      relations: DEPREL without its subtype (after ":").
      line: the 1-based line of the first word.
    """
    words: tuple[str, ...]
    upos: tuple[str, ...]
    xpos: tuple[str, ...]
    heads: tuple[int, ...]
    relations: tuple[str, ...]
    line: int


def _check_tree(heads: list[int], path: str, line: int) -> None:
    """One root, and every word reaches it (no cycle)."""
    roots = [i for i, h in enumerate(heads) if h == 0]
    if len(roots) != 1:
        raise ConlluError(f"{path}:{line}: the sentence has {len(roots)} roots (HEAD 0), "
                          "expected one")
    for start in range(len(heads)):
        word, steps = start, 0
        while heads[word] != 0:
            word, steps = heads[word] - 1, steps + 1
            if steps > len(heads):
                raise ConlluError(f"{path}:{line}: the heads of word {start + 1} go round "
                                  "in a cycle, not to the root")


def _sentence(rows: list[tuple[int, list[str]]], path: str) -> TreebankSentence:
    first = rows[0][0]
    for position, (number, fields) in enumerate(rows, start=1):
        if fields[0] != str(position):
            raise ConlluError(f"{path}:{number}: word ID {fields[0]!r}, expected {position} "
                              "(IDs count 1, 2, ... in each sentence)")
        head = fields[6]
        if not head.isdigit() or int(head) > len(rows):
            raise ConlluError(f"{path}:{number}: HEAD {head!r} is not 0 or a word of the "
                              f"sentence (1..{len(rows)})")
        if fields[3] not in _UPOS:
            raise ConlluError(f"{path}:{number}: UPOS {fields[3]!r} is not one of UD's 17 "
                              f"universal parts of speech ({', '.join(UPOS_LABELS)})")
        if fields[7].split(":")[0] not in _RELATIONS:
            raise ConlluError(f"{path}:{number}: DEPREL {fields[7]!r} is not one of UD's 37 "
                              "universal relations (universaldependencies.org/u/dep), with or "
                              "without a subtype after ':'")
    heads = [int(fields[6]) for _, fields in rows]
    _check_tree(heads, path, first)
    return TreebankSentence(
        words=tuple(f[1] for _, f in rows), upos=tuple(f[3] for _, f in rows),
        xpos=tuple(f[4] for _, f in rows), heads=tuple(heads),
        relations=tuple(f[7].split(":")[0] for _, f in rows), line=first)


def read_conllu(path: str) -> list[TreebankSentence]:
    """The sentences of a CoNLL-U file, in file order (see the module docstring).

    Raises:
      ConlluError: "path:line: problem" for a missing or non-UTF-8 file, a word line without
        10 tab-separated columns, IDs out of order, a HEAD outside the sentence, a UPOS or
        DEPREL outside UD's sets, heads that are not one tree, or a file without sentences.
    """
    sentences, rows = [], []
    for number, line in utf8_lines(path, ConlluError):
        if not line.strip():
            if rows:
                sentences.append(_sentence(rows, path))
                rows = []
            continue
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != _COLUMNS:
            raise ConlluError(f"{path}:{number}: {len(fields)} tab-separated columns, expected "
                              f"{_COLUMNS} (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC)")
        if "-" in fields[0] or "." in fields[0]:
            continue  # a multiword token or an empty node: not a word of the basic tree
        rows.append((number, fields))
    if rows:
        sentences.append(_sentence(rows, path))
    if not sentences:
        raise ConlluError(f"{path}: no sentences")
    return sentences
