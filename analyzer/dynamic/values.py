"""Concrete values as the kernel's dialect computes them: integers as Python ints, floats as NumPy
scalars of the element type (so `half + half` rounds to half), bf16 as float32 rounded to bf16's 8
significant bits, vectors as tuples. Inputs are drawn from a seed, element by element, so a buffer
needs no declared size: an element never written reads the same random value in every run."""

from __future__ import annotations

import math
import struct
import zlib

import numpy as np


class InterpretError(Exception):
    """The interpreter cannot run this: a construct it does not model, or a bound it would exceed."""


F16, BF16, F32, F64, INT = "f16", "bf16", "f32", "f64", "int"
_NP = {F16: np.float16, BF16: np.float32, F32: np.float32, F64: np.float64}


def kind_of(type_name: str) -> str:
    """The arithmetic of a declared element type (C, Metal, WGSL or SPIR-V spelling)."""
    t = type_name.lower().replace("const", "").strip()
    if "bf16" in t or "bfloat" in t:
        return BF16
    if "half" in t or "f16" in t or "float16" in t:
        return F16
    if "double" in t or "f64" in t or "float64" in t:
        return F64
    if "float" in t or "f32" in t:
        return F32
    return INT


def _bf16(x) -> np.float32:
    """float32 rounded to the nearest bf16 (ties to even), kept as float32."""
    bits = struct.unpack("<I", struct.pack("<f", float(np.float32(x))))[0]
    if (bits & 0x7F800000) != 0x7F800000:   # NaN and inf stay as they are
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return np.float32(struct.unpack("<f", struct.pack("<I", bits))[0])


def as_kind(v, kind: str, size: int = 4, signed: bool = True):
    """`v` converted as a store to an element of `kind` (and byte size, for integers) converts it."""
    if isinstance(v, tuple):
        raise InterpretError("a vector stored into one element")
    if kind == INT:
        if isinstance(v, (float, np.floating)):
            if not math.isfinite(float(v)):
                return 0
            v = int(float(v))   # C truncates toward zero
        v = int(v)
        bits = 8 * size
        v &= (1 << bits) - 1
        if signed and v >> (bits - 1):
            v -= 1 << bits
        return v
    if kind == BF16:
        return _bf16(v)
    with np.errstate(all="ignore"):
        return _NP[kind](v)


def initial(seed: int, buffer: str, index: int, kind: str):
    """The input value of element `index` of `buffer`: floats in [-2, 2), integers in [0, 4) (small,
    so data-dependent loop bounds and indices stay small)."""
    h = (seed * 0x9E3779B97F4A7C15 + zlib.crc32(buffer.encode()) * 0xBF58476D1CE4E5B9 + index) & (2**64 - 1)
    h ^= h >> 31
    h = (h * 0x94D049BB133111EB) & (2**64 - 1)
    h ^= h >> 29
    if kind == INT:
        return h % 4
    return as_kind((h % 4096) / 1024.0 - 2.0, kind)


def is_float(v) -> bool:
    return isinstance(v, (float, np.floating))


def same(a, b) -> bool:
    """Bit-for-bit the same value (NaN equal to NaN)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(map(same, a, b))
    if is_float(a) and is_float(b):
        fa, fb = float(a), float(b)
        return fa == fb or (math.isnan(fa) and math.isnan(fb))
    return a == b


def show(v) -> str:
    if isinstance(v, tuple):
        return "(" + ", ".join(map(show, v)) + ")"
    if is_float(v):
        return f"{float(v):.6g}"
    return str(v)


def view_kind(kind: str, size: int) -> str:
    """The type a reinterpreting access (`((float*)half_buf)[i]`) reads: of the buffer's family (float
    or integer), of the access's component size."""
    if kind == INT:
        return INT
    return {2: BF16 if kind == BF16 else F16, 4: F32, 8: F64}.get(size, INT)


def encode(v, kind: str, size: int) -> bytes:
    """The bytes of `v` stored as a `size`-byte element of `kind` (little-endian)."""
    if kind == INT:
        x = int(float(v)) if is_float(v) else int(v)
        return (x & ((1 << 8 * size) - 1)).to_bytes(size, "little")
    if kind == BF16:
        return struct.pack("<f", float(_bf16(v)))[2:]
    return np.asarray(as_kind(v, kind)).tobytes()


def decode(raw: bytes, kind: str, signed: bool = True):
    if kind == INT:
        return int.from_bytes(raw, "little", signed=signed)
    if kind == BF16:
        return np.float32(struct.unpack("<f", b"\0\0" + raw)[0])
    return np.frombuffer(raw, {F16: np.float16, F32: np.float32, F64: np.float64}[kind])[0]
