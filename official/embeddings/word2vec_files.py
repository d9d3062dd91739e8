"""word2vec's text format, read and written without TensorFlow (an entry point's checks read
vectors before TensorFlow loads).

    write_word2vec_file(path, words, vectors)   "<words> <dim>", then "word v1 v2 ..." a line,
                                                float32 values written exactly ("%.9g"),
                                                atomically
    read_word2vec(path)                         -> {word: float32 [dim]}, in file order

gensim's `KeyedVectors.load_word2vec_format(path)` reads the same files.
"""

from __future__ import annotations

import numpy as np

from official.atomic_files import open_atomically


def write_word2vec_file(path: str, words: list[str], vectors: np.ndarray) -> None:
    """`words` and their float32 [words, dim] `vectors` (see the module docstring)."""
    with open_atomically(path) as f:
        f.write(f"{len(words)} {vectors.shape[1]}\n")
        for word, vector in zip(words, vectors):
            f.write(word + " " + " ".join("%.9g" % v for v in vector.tolist()) + "\n")


def read_word2vec(path: str) -> dict[str, np.ndarray]:
    """A word2vec text file -> {word: float32 vector}.

    Raises:
      ValueError: one line naming the file (and line): no such file, not UTF-8, no
        "<words> <dim>" header, a value that is not a number, or not the vectors the header says.
    """
    vectors = {}
    try:
        with open(path, encoding="utf-8") as f:
            header = f.readline().split()
            if len(header) != 2 or not all(field.isdigit() for field in header):
                raise ValueError(f"{path}:1: not word2vec's text format (a header "
                                 "\"<words> <dim>\" expected)")
            count, dim = (int(field) for field in header)
            for number, line in enumerate(f, start=2):
                word, *values = line.rstrip("\n").split(" ")
                try:
                    vectors[word] = np.array(values, np.float32)
                except ValueError:
                    raise ValueError(f"{path}:{number}: a value that is not a number") from None
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 (byte {e.start})") from None
    if len(vectors) != count or any(len(v) != dim for v in vectors.values()):
        raise ValueError(f"{path}: not the {count} vectors of {dim} values its header says")
    return vectors
