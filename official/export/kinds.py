"""The fine-tuning task kinds an export serves, one row each (official/export/task_kind.py):
adding a task's export is its serving module, its row module and one line here.

    KINDS   export_type -> TaskKind: classifier, ner, squad

export_saved_model defines each row's flags and makes its options; official/export/options.py
names the types; official/export/jobs.py builds each from its task's serving spec, and
official/api.py's text models serve through the same rows. No TensorFlow is imported here.
"""

from __future__ import annotations

from official.export import classifier_kind, ner_kind, squad_kind
from official.export.task_kind import TaskKind

KINDS: dict[str, TaskKind] = {kind.name: kind for kind in (
    classifier_kind.KIND,
    ner_kind.KIND,
    squad_kind.KIND,
)}
