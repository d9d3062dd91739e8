"""The kinds of adaptation, one row each (official/adaptation.py's `AdaptationKind`): a new kind
is its package and one line here.

    KINDS   name -> AdaptationKind, in the order a run checks and resolves them:
            distillation (official/distillation/kind.py: every training run, its student
            trained whole) and the parameter-efficient methods (official/peft/kind.py:
            fine-tuning runs; their own table is official/peft/methods.py)

run_scripts/common_flags.py defines each kind's flags on the entry points that take it, reads
its settings from their values and resolves it, naming none. The table loads without
TensorFlow (an entry point checks the flags first); a row's resolve imports its method when
called.
"""

from official.adaptation import AdaptationKind
from official.distillation import kind as distillation
from official.peft import kind as peft

KINDS: dict[str, AdaptationKind] = {k.name: k for k in (distillation.KIND, peft.KIND)}
