"""Sizes and shapes of the C-family types the front ends meet."""

from __future__ import annotations

import re

SCALAR_SIZES = {
    "bool": 1, "char": 1, "uchar": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "ushort": 2, "int16_t": 2, "uint16_t": 2,
    "half": 2, "__half": 2, "bfloat": 2, "bfloat16_t": 2, "__nv_bfloat16": 2, "nv_bfloat16": 2,
    "int": 4, "uint": 4, "unsigned": 4, "signed": 4, "int32_t": 4, "uint32_t": 4, "float": 4,
    "long": 8, "ulong": 8, "longlong": 8, "ulonglong": 8, "int64_t": 8, "uint64_t": 8,
    "double": 8, "size_t": 8, "ptrdiff_t": 8,
    # cuRAND's generator states (curand_kernel.h), opaque per-thread data of the library's sizes.
    "curandState": 48, "curandState_t": 48, "curandStateXORWOW": 48, "curandStateXORWOW_t": 48,
    "curandStatePhilox4_32_10": 64, "curandStatePhilox4_32_10_t": 64,
    "curandStateMRG32k3a": 72, "curandStateMRG32k3a_t": 72,
    "atomic_int": 4, "atomic_uint": 4, "atomic_float": 4, "atomic_bool": 1,   # Metal's atomic types
}
# Aliases TVM and CUDA use for half and bfloat16 vectors (TVM's preamble defines the 4- and 8-lane
# bfloat16 structs with x, y, z, w members).
VECTOR_ALIASES = {"__half2": ("half", 2), "half2": ("half", 2), "__nv_bfloat162": ("bfloat", 2),
                  "nv_bfloat162": ("bfloat", 2), "nv_bfloat164": ("bfloat", 4),
                  "__nv_bfloat164": ("bfloat", 4)}
_VEC = re.compile(r"^(u?char|u?short|u?int|u?long|u?longlong|float|double|half|bool|bfloat)([2348]|16)$")
# Metal's matrices (metal_stdlib's `__metal_float4x3` structs): a vector of all their lanes, column after
# column, a 3-lane column as long as a 4-lane one (C, R and the column's length: metal_matrices.py)
_MATRIX = re.compile(r"^__metal_(float|half)([234])x([234])$")
COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}


def vector_shape(ty: str) -> tuple[str, int] | None:
    """(element type, lanes) of a vector type, or None for a scalar."""
    if ty in VECTOR_ALIASES:
        return VECTOR_ALIASES[ty]
    if ty.startswith("__metal_"):
        shape = matrix_shape(ty)
        return (shape[0], shape[1] * shape[3]) if shape else None
    m = _VEC.match(ty)
    return (m.group(1), int(m.group(2))) if m else None


def matrix_shape(ty: str) -> tuple[str, int, int, int] | None:
    """(element type, columns, rows, a column's lanes in memory) of a Metal matrix, or None."""
    m = _MATRIX.match(ty)
    if not m:
        return None
    rows = int(m.group(3))
    return m.group(1), int(m.group(2)), rows, 4 if rows == 3 else rows


def size_of(ty: str) -> int | None:
    shape = vector_shape(ty)
    if shape:
        elem, n = shape
        return SCALAR_SIZES.get(elem, 4) * n
    return SCALAR_SIZES.get(ty)


def normalize(words: list[str]) -> str:
    """`unsigned long long` -> `ulonglong`, `unsigned` -> `uint`, `long long` -> `longlong`."""
    mods = [w for w in words if w in ("unsigned", "signed", "long", "short")]
    base = [w for w in words if w not in ("unsigned", "signed", "long", "short")]
    if not mods:
        return base[0] if base else "int"
    core = base[0] if base else "int"
    if "short" in mods:
        core = "short"
    elif mods.count("long") >= 2:
        core = "longlong"
    elif "long" in mods:
        core = "long"
    if "unsigned" in mods:
        return "u" + core if core in ("char", "short", "int", "long", "longlong") else "uint"
    return core
