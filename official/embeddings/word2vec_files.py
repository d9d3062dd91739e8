"""word2vec's text format, read and written without TensorFlow (an entry point's checks read
vectors before TensorFlow loads).

    write_word2vec_file(path, words, vectors)   "<words> <dim>", then "word v1 v2 ..." a line,
                                                float32 values written exactly ("%.9g"),
                                                atomically
    read_word2vec(path)                         -> {word: float32 [dim]}, in file order
    check_finite(words, vectors, where)         every vector finite, or the first word that is not

gensim's `KeyedVectors.load_word2vec_format(path)` reads the same files.

Every value is finite, both ways. A vector holding a nan or an inf has no direction: its
cosine with any word is nan, so a neighbour search silently never proposes the word nor finds
it any, and counter-fitting spreads the nan to the word's synonyms. A reader refuses such a
value where it stands, and a writer writes nothing rather than such a vector. A word is one
vector: a second line for the same word is refused too (a dict would keep the last one without
a word).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from official.atomic_files import open_atomically


def check_finite(words: Sequence[str], vectors: np.ndarray, where: str) -> None:
    """Raises ValueError "<where>: the vector of '<word>' holds nan, ..." for the first word
    whose vector holds a nan or an inf; row i of float [words, dim] `vectors` is words[i]'s."""
    finite = np.isfinite(vectors).all(axis=1)
    if not finite.all():
        row = int(np.argmin(finite))
        value = vectors[row][~np.isfinite(vectors[row])][0]
        raise ValueError(f"{where}: the vector of {words[row]!r} holds {value}, not a finite "
                         "number")


def write_word2vec_file(path: str, words: list[str], vectors: np.ndarray) -> None:
    """`words` and their float32 [words, dim] `vectors` (see the module docstring); nothing is
    written if a vector is not finite."""
    check_finite(words, vectors, f"{path}: not written")
    with open_atomically(path) as f:
        f.write(f"{len(words)} {vectors.shape[1]}\n")
        for word, vector in zip(words, vectors):
            f.write(word + " " + " ".join("%.9g" % v for v in vector.tolist()) + "\n")


def read_word2vec(path: str) -> dict[str, np.ndarray]:
    """A word2vec text file -> {word: float32 vector}.

    Raises:
      ValueError: one line naming the file (and line): no such file, not UTF-8, no
        "<words> <dim>" header, a value that is not a number or not a finite float32 (nan, inf,
        1e39), a word met twice, or not the vectors the header says.
    """
    vectors, first_line = {}, {}
    try:
        # A value beyond float32's range becomes inf, refused below: numpy's warning is noise.
        with open(path, encoding="utf-8") as f, np.errstate(over="ignore"):
            header = f.readline().split()
            if len(header) != 2 or not all(field.isdigit() for field in header):
                raise ValueError(f"{path}:1: not word2vec's text format (a header "
                                 "\"<words> <dim>\" expected)")
            count, dim = (int(field) for field in header)
            for number, line in enumerate(f, start=2):
                word, *values = line.rstrip("\n").split(" ")
                if word in first_line:
                    raise ValueError(f"{path}:{number}: the word {word!r} again (first on line "
                                     f"{first_line[word]}): one vector a word")
                try:
                    vector = np.array(values, np.float32)
                except ValueError:
                    raise ValueError(f"{path}:{number}: a value that is not a number") from None
                finite = np.isfinite(vector)
                if not finite.all():
                    raise ValueError(f"{path}:{number}: the vector of {word!r} holds "
                                     f"{values[int(np.argmin(finite))]!r}, not a finite float32")
                vectors[word] = vector
                first_line[word] = number
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 (byte {e.start})") from None
    if len(vectors) != count or any(len(v) != dim for v in vectors.values()):
        raise ValueError(f"{path}: not the {count} vectors of {dim} values its header says")
    return vectors
