"""Whether this machine's CPU multiplies bfloat16 matrices in hardware, read without TensorFlow.

    bfloat16_units(cpuinfo)   True (x86: AVX512_BF16 or AMX-BF16; Arm: BF16), False, or None
                              where the CPU's flags cannot be read (no /proc/cpuinfo)
    bfloat16_note(cpuinfo)    export_saved_model's one line for a bfloat16 export made on a CPU
                              without them, else None

Without those units oneDNN emulates bfloat16 products with conversions, and a bfloat16 export
served there is slower than the float32 one: 0.75x-0.89x on an AVX2-only CPU, 0.38x-0.48x with
oneDNN held to AVX-512 without BF16 on a Zen 4 (bench/serving_precision.py). The export is still
made: it is usually served on another machine than the one that makes it.
"""

from __future__ import annotations

CPUINFO = "/proc/cpuinfo"
# /proc/cpuinfo's flags (x86 "flags", Arm "Features") of bfloat16 matrix instructions.
_BF16_FLAGS = {"avx512_bf16", "amx_bf16", "bf16"}


def bfloat16_units(cpuinfo: str = CPUINFO) -> bool | None:
    """Whether the CPU's flags name a bfloat16 matrix instruction; None without the file."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            lines = [line for line in f if line.split(":")[0].strip() in ("flags", "Features")]
    except OSError:
        return None
    if not lines:
        return None
    return bool(_BF16_FLAGS & set(lines[0].split(":", 1)[1].split()))


def bfloat16_note(cpuinfo: str = CPUINFO) -> str | None:
    """One line when this CPU has no bfloat16 units (or cannot be read), else None."""
    units = bfloat16_units(cpuinfo)
    if units:
        return None
    said = "has no" if units is False else "may lack (its flags cannot be read)"
    return (f"this CPU {said} bfloat16 matrix units (AVX512_BF16, AMX-BF16, Arm BF16): served "
            "on such a CPU the bfloat16 export runs at 0.4x-0.9x the float32 one's speed "
            "(bench/serving_precision.py); it is for a CPU that has them")
