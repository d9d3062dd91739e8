"""`InputError`: input data the generators cannot use; the one-line message names the file. And
`utf8_lines`, how every line-based task reader reads its file, with those errors."""

import codecs
import gzip
import zlib
from typing import Iterator


class InputError(ValueError):
    """Bad input data (a glob matching nothing, an empty corpus, an unusable file)."""


class TsvError(InputError):
    """A task file (TSV or JSON lines) that does not have its task's layout; the message is
    "path:line: problem"."""


def utf8_lines(path: str, error: type[InputError] = InputError) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of each line of a UTF-8 file, gzip-compressed if its name
    ends in ".gz".

    Lines end at "\\n" only (a "\\r" before it is dropped too), so a stray "\\r" or U+2028
    inside a text stays text instead of breaking the line. A byte-order mark at the start is
    dropped. Raises `error` as "path: no such file", "path:line: not UTF-8 (byte N of the
    line)" or "path: damaged gzip data after line N: ...".
    """
    try:
        f = gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    with f:
        number = 0
        while True:
            try:
                raw = f.readline()
            except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
                raise error(f"{path}: damaged gzip data after line {number}: {e}") from None
            if not raw:
                return
            number += 1
            if number == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
            try:
                yield number, raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
            except UnicodeDecodeError as e:
                raise error(f"{path}:{number}: not UTF-8 (byte {e.start} of the line)") from None
