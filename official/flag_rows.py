"""A flag as data: a row that a table of plug-ins (a PEFT method, an adaptation kind, a task's
export) holds, and that run_scripts/common_flags.py's `define_flag_rows` defines on the entry
points taking it, so a new plug-in needs no entry-point code.

    Flag(name, kind, default, help)

No TensorFlow and no absl: the tables are read by an entry point's checks before TensorFlow
loads, and by the library, which never reads flags.
"""

from __future__ import annotations

import dataclasses
from typing import Any

KINDS = (int, float, str, bool, list)


@dataclasses.dataclass(frozen=True)
class Flag:
    """One flag. `kind` is its type, one of KINDS (list: a comma-separated list); `default` its
    value when not given (None: "not given", for the settings to tell apart)."""
    name: str
    kind: type
    default: Any
    help: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise TypeError(f"--{self.name}: a flag's kind is one of "
                            f"{', '.join(k.__name__ for k in KINDS)}, not {self.kind!r}")
