"""GLSL vocabulary for the TIR translator: data types, reserved words, extensions, expression text.

Separate from the translator's methods because every one of them (and the shader assembly)
speaks it; it knows nothing of TIR beyond its data type names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# --------------------------------------------------------------------------------------------
# Types

_SCALAR = {
    ("float", 32): ("float", "vec"),
    ("float", 16): ("float16_t", "f16vec"),
    ("float", 64): ("double", "dvec"),
    ("int", 32): ("int", "ivec"),
    ("int", 64): ("int64_t", "i64vec"),
    ("int", 16): ("int16_t", "i16vec"),
    ("int", 8): ("int8_t", "i8vec"),
    ("uint", 32): ("uint", "uvec"),
    ("uint", 64): ("uint64_t", "u64vec"),
    ("uint", 16): ("uint16_t", "u16vec"),
    ("uint", 8): ("uint8_t", "u8vec"),
    ("bool", 1): ("bool", "bvec"),
}
_DTYPE_RE = re.compile(r"^(float|int|uint|bool)(\d*)(?:x(\d+))?$")
_SWIZZLE = "xyzw"


@dataclass(frozen=True)
class _Type:
    code: str   # float, int, uint, bool
    bits: int
    lanes: int

    @property
    def scalar(self) -> _Type:
        return _Type(self.code, self.bits, 1)

    def with_lanes(self, lanes: int) -> _Type:
        return _Type(self.code, self.bits, lanes)

    @property
    def is_float(self) -> bool:
        return self.code == "float"

    @property
    def is_signed_int(self) -> bool:
        return self.code == "int"

    @property
    def is_int(self) -> bool:
        return self.code in ("int", "uint")

    @property
    def is_bool(self) -> bool:
        return self.code == "bool"

    @property
    def glsl(self) -> str:
        scalar, vec = _SCALAR[(self.code, self.bits)]
        return scalar if self.lanes == 1 else f"{vec}{self.lanes}"

    @property
    def tir(self) -> str:
        base = "bool" if self.code == "bool" else f"{self.code}{self.bits}"
        return base if self.lanes == 1 else f"{base}x{self.lanes}"


def _parse_dtype(dtype: Any) -> _Type | None:
    m = _DTYPE_RE.match(str(dtype))
    if not m:
        return None
    code, bits, lanes = m.group(1), m.group(2), m.group(3)
    nbits = 1 if code == "bool" else int(bits or 32)
    t = _Type(code, nbits, int(lanes or 1))
    if (t.code, t.bits) not in _SCALAR or not 1 <= t.lanes <= 4:
        return None
    return t


# GLSL keywords, reserved words and the built-in functions a TIR name must not hide.
_RESERVED = set("""
attribute const uniform varying buffer shared coherent volatile restrict readonly writeonly
atomic_uint layout centroid flat smooth noperspective patch sample break continue do for while
switch case default if else subroutine in out inout float double int void bool true false
invariant precise discard return lowp mediump highp precision struct main params Params
common partition active asm class union enum typedef template this resource goto inline noinline
public static extern external interface long short half fixed unsigned superp input output
filter sizeof cast namespace using sampler image texture
abs acos acosh all any asin asinh atan atanh barrier bitCount bitfieldExtract bitfieldInsert
bitfieldReverse ceil clamp cos cosh cross degrees determinant distance dot equal exp exp2
faceforward findLSB findMSB floatBitsToInt floatBitsToUint floor fma fract frexp greaterThan
greaterThanEqual intBitsToFloat inverse inversesqrt isinf isnan ldexp length lessThan
lessThanEqual log log2 max memoryBarrier min mix mod modf normalize not notEqual outerProduct
pow radians reflect refract round roundEven sign sin sinh smoothstep sqrt step tan tanh
transpose trunc uaddCarry uintBitsToFloat umulExtended usubBorrow imulExtended packHalf2x16
unpackHalf2x16 subgroupBarrier groupMemoryBarrier memoryBarrierShared memoryBarrierBuffer
float16_t float32_t float64_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
doubleBitsToInt64 doubleBitsToUint64 int64BitsToDouble uint64BitsToDouble float16BitsToInt16
float16BitsToUint16 int16BitsToFloat16 uint16BitsToFloat16
""".split())  # noqa: SIM905
for _s, _v in _SCALAR.values():
    _RESERVED.add(_s)
    for _n in (2, 3, 4):
        _RESERVED.add(f"{_v}{_n}")
for _m in ("mat", "dmat", "f16mat", "f32mat", "f64mat"):
    for _n in ("2", "3", "4", "2x2", "2x3", "2x4", "3x2", "3x3", "3x4", "4x2", "4x3", "4x4"):
        _RESERVED.add(f"{_m}{_n}")

_EXT_F16 = "GL_EXT_shader_explicit_arithmetic_types_float16"
_EXT_I8 = "GL_EXT_shader_explicit_arithmetic_types_int8"
_EXT_I16 = "GL_EXT_shader_explicit_arithmetic_types_int16"
_EXT_I64 = "GL_EXT_shader_explicit_arithmetic_types_int64"
_EXT_S16 = "GL_EXT_shader_16bit_storage"
_EXT_S8 = "GL_EXT_shader_8bit_storage"
_EXT_SUBGROUP = "GL_KHR_shader_subgroup_basic"
_EXT_ORDER = (_EXT_F16, _EXT_I8, _EXT_I16, _EXT_I64, _EXT_S16, _EXT_S8, _EXT_SUBGROUP)


def _strip(s: str) -> str:
    """Drop one pair of parentheses enclosing the whole expression text."""
    if not (s.startswith("(") and s.endswith(")")):
        return s
    depth = 0
    for i, ch in enumerate(s):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and i != len(s) - 1:
                return s
    return s[1:-1]
