"""The functions the IR leaves uninterpreted (`ir.Call`): float arithmetic, conversions, vector
construction and lanes, math builtins, evaluated on concrete values. A name not listed here cannot
be run: the interpreter says so rather than guess."""

from __future__ import annotations

import re
import struct
import zlib

import numpy as np

from analyzer import ir

from analyzer.dynamic.values import F16, F32, F64, INT, InterpretError, as_kind, is_float, kind_of

_LITERAL = re.compile(r"^([-+]?[0-9.]+(?:[eE][-+]?\d+)?|[-+]?inf|[-+]?nan)([fFhHlL]*)$")


def literal(text: str, lang: str):
    """A float literal as written: `1.5f` a float, `1.5` a double in C (a float in WGSL)."""
    t = text.strip()
    if t.lower().startswith("0x"):
        return np.float32(float.fromhex(t.rstrip("fF")))
    m = _LITERAL.match(t.replace("+inf", "inf"))
    if not m:
        raise InterpretError(f"the float literal {text!r}")
    suffix = m.group(2).lower()
    kind = F16 if "h" in suffix else F32 if ("f" in suffix or lang in ("wgsl", "spirv", "metal")) else F64
    return as_kind(float(m.group(1)), kind)


def _float(x):
    """A float operand: integers take the other operand's type in C, float32 is as good here."""
    return x if is_float(x) else np.float32(x) if abs(x) < 2**24 else np.float64(x)


def _unary(np_fn):
    def run(x):
        x = _float(x)
        with np.errstate(all="ignore"):
            return type(x)(np_fn(x))
    return run


_MATH = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "fabs": np.abs, "tanh": np.tanh, "tan": np.tan, "sin": np.sin,
    "cos": np.cos, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.round,
    "rint": np.rint, "erf": None, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "atan": np.arctan,
    "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh, "cosh": np.cosh, "expm1": np.expm1,
    "log1p": np.log1p, "inversesqrt": lambda x: 1 / np.sqrt(x),
}


def _math_name(fn: str) -> str:
    """`__expf`, `expf`, `hexp2`, `metal::exp`, `fast::exp2`, `Exp2` (GLSL.std.450) -> the plain name."""
    name = fn.split("::")[-1]
    name = name.lstrip("_")
    if name.startswith("h") and name[1:] in _MATH:
        name = name[1:]
    if name.endswith("f") and name[:-1] in _MATH:
        name = name[:-1]
    low = name[0].lower() + name[1:] if name else name
    return low if low in _MATH else name.lower() if name.lower() in _MATH else name


def _cvt(ty: str, args: tuple):
    if len(args) != 1:
        return tuple(_cvt(ty, (a,)) for a in args)
    x = args[0]
    if isinstance(x, tuple):
        if len(x) == 1:
            x = x[0]
        else:
            return tuple(_cvt(ty, (c,)) for c in x)
    t = re.sub(r"\d+$", "", ty.strip()) if re.search(r"(float|half|int|uint|bool|double)\d$", ty.strip()) else ty
    if t.strip() == "bool":
        return int(bool(x))
    kind = kind_of(t)
    if kind == INT:
        unsigned = t.strip().startswith(("u", "unsigned"))
        size = 8 if ("64" in t or "long" in t) else 2 if "short" in t else 1 if "char" in t else 4
        return as_kind(x, INT, size, not unsigned)
    return as_kind(x, kind)


def _bits(x, to: str):
    """Reinterpret 32-bit (or 16-bit) patterns: `as_type<uint>(f)`, `__float_as_int`, `bitcast<f32>`."""
    kind = kind_of(to)
    if is_float(x):
        raw = x.tobytes() if isinstance(x, np.generic) else struct.pack("<f", x)
    else:
        raw = struct.pack("<I" if kind != F16 else "<H", int(x) & (0xFFFFFFFF if kind != F16 else 0xFFFF))
    if kind in (F32, F16, F64):
        return np.frombuffer(raw, {F32: np.float32, F16: np.float16, F64: np.float64}[kind])[0]
    value = int.from_bytes(raw, "little")
    signed = not to.strip().startswith(("u", "unsigned"))
    return value - (1 << 8 * len(raw)) if signed and value >> (8 * len(raw) - 1) else value


def _minmax(pick, args):
    a, b = args
    if is_float(a) or is_float(b):
        a, b = _float(a), _float(b)
        if np.isnan(a):
            return b
        if np.isnan(b):
            return a
    return pick(a, b)


def _binary(op: str, a, b):
    a, b = _float(a), _float(b)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b
    if op == "%":
        return np.fmod(a, b)
    raise InterpretError(f"the float operator {op}")


_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


# SPIR-V instructions the front end leaves as calls, and GLSL.std.450's names, as this module's.
_SPIRV = {"OpFAdd": "f+", "OpFSub": "f-", "OpFMul": "f*", "OpFDiv": "f/", "OpFRem": "f%", "OpFMod": "f%",
          "OpFNegate": "fneg", "OpConvertSToF": "cvt:float", "OpConvertUToF": "cvt:float",
          "OpConvertFToS": "cvt:int", "OpConvertFToU": "cvt:uint", "OpFConvert": "cvt:float",
          "OpBitcast": "as_type<uint>", "FMax": "max", "FMin": "min", "NMax": "max", "NMin": "min",
          "FAbs": "fabs", "SAbs": "abs", "InverseSqrt": "rsqrt", "Fma": "fma", "FClamp": "clamp",
          "UClamp": "clamp", "SClamp": "clamp", "FMix": "mix", "Exp": "exp", "Exp2": "exp2", "Log": "log",
          "Log2": "log2", "Sqrt": "sqrt", "Pow": "pow", "Floor": "floor", "Ceil": "ceil", "Trunc": "trunc",
          "Round": "round", "RoundEven": "rint", "Tanh": "tanh", "Sin": "sin", "Cos": "cos",
          "OpBitCount": "__popc", "OpBitReverse": "__brev",   # (GLSL's bitCount, bitfieldReverse: 32-bit)
          # WGSL's conversions
          "f32": "cvt:float", "f16": "cvt:half", "i32": "cvt:int", "u32": "cvt:uint", "f64": "cvt:double",
          "i64": "cvt:int64_t", "u64": "cvt:uint64_t",
          # CUDA's conversion intrinsics (round to nearest unless _rz)
          "__float2half_rn": "cvt:half", "__float2half": "cvt:half", "__half2float": "cvt:float",
          "__float2bfloat16_rn": "cvt:bfloat16", "__float2bfloat16": "cvt:bfloat16", "__bfloat162float": "cvt:float",
          "__int2float_rn": "cvt:float", "__uint2float_rn": "cvt:float", "__float2int_rz": "cvt:int",
          "__float2uint_rz": "cvt:uint", "__int2half_rn": "cvt:half", "__half2int_rz": "cvt:int",
          "__float2int_rn": "rint_int", "__float2ll_rz": "cvt:int64_t", "__ll2float_rn": "cvt:float"}


def canonical(fn: str) -> str:
    """A function's name as this module reads it (SPIR-V's, WGSL's and CUDA's spellings mapped)."""
    return _SPIRV.get(fn, fn)


def _numbers(args) -> tuple:
    """Operands as plain floats, vectors flattened: the same texel reads as the same key."""
    return tuple(x for a in args for x in (_numbers(a) if isinstance(a, tuple) else (float(a),)))


def call(fn: str, args: tuple, lang: str):
    """The value of `fn(args)`; InterpretError for a function this module does not know."""
    fn = _SPIRV.get(fn, fn)
    if fn in ir.FENCES:   # a fence: one thread's order, nothing to compute (the interpreter runs in order)
        return 0
    if fn == "fbits":   # a SPIR-V float constant, kept as its double's bits: a float (32-bit) here
        return np.float32(struct.unpack("<d", struct.pack("<q", args[0]))[0])
    if fn in ir.BIT_INTRINSICS and len(args) == 1:
        return ir.bit_intrinsic(fn, int(args[0]))
    if fn == "rint_int":
        return int(np.rint(_float(args[0])))
    if fn == "mix" and len(args) == 3:
        a, b, w = (_float(x) for x in args)
        return a * (1 - w) + b * w
    if fn.startswith("float:"):
        return literal(fn[6:], lang)
    if fn == "vec":
        return tuple(args)
    if fn.startswith(ir.IMAGE_READ):   # a read-only image's contents: seeded, the same for the same texel
        return np.float32((zlib.crc32(repr((fn, _numbers(args))).encode()) % 4096) / 256)
    if fn.startswith("lane") and fn[4:].isdigit():
        (v,) = args
        i = int(fn[4:])
        if isinstance(v, tuple):
            if i >= len(v):
                raise InterpretError(f"lane {i} of a {len(v)}-vector")
            return v[i]
        if i == 0:
            return v
        raise InterpretError(f"lane {i} of a scalar")
    if fn.startswith(("cvt:", "ctor:")):
        return _cvt(fn.split(":", 1)[1], args)
    if fn.startswith("fcmp") and len(args) == 2:
        op = fn[4:]
        if op not in _CMP:
            raise InterpretError(f"the float comparison {op}")
        a, b = args
        return int(bool(_CMP[op](_float(a), _float(b))))
    if fn in ("f-", "fneg") and len(args) == 1:
        return -_float(args[0])
    if fn.startswith("f") and fn[1:] in ("+", "-", "*", "/", "%") and len(args) == 2:
        a, b = args
        if isinstance(a, tuple) or isinstance(b, tuple):   # component-wise, a scalar broadcast
            n = len(a) if isinstance(a, tuple) else len(b)
            a = a if isinstance(a, tuple) else (a,) * n
            b = b if isinstance(b, tuple) else (b,) * n
            if len(a) != len(b):
                raise InterpretError(f"vectors of {len(a)} and {len(b)} components")
            return tuple(_binary(fn[1:], x, y) for x, y in zip(a, b))
        return _binary(fn[1:], a, b)
    if fn.startswith(("as_type<", "bitcast<")) and fn.endswith(">"):
        to = fn[fn.index("<") + 1:-1]
        (x,) = args
        if isinstance(x, tuple):
            raise InterpretError(f"a vector reinterpreted as {to}")
        return _bits(x, to)
    name = _math_name(fn)
    if name in ("__float_as_int", "float_as_int", "float_as_int"):
        return _bits(args[0], "int")
    if name in ("float_as_uint",):
        return _bits(args[0], "uint")
    if name in ("int_as_float", "uint_as_float"):
        return _bits(args[0], "float")
    if name in ("max", "fmax", "fmaxf", "umax", "imax", "hmax", "smax"):
        return _minmax(max, args)
    if name in ("min", "fmin", "fminf", "umin", "imin", "hmin", "smin"):
        return _minmax(min, args)
    if name in ("abs", "iabs") and len(args) == 1 and not is_float(args[0]):
        return abs(args[0])
    if name in ("abs",):
        return _unary(np.abs)(args[0])
    if name in ("fma", "fmaf", "mad") and len(args) == 3:
        a, b, c = (_float(x) for x in args)
        with np.errstate(all="ignore"):
            return type(a)(a * b + c)
    if name in ("pow", "powr") and len(args) == 2:
        a, b = _float(args[0]), _float(args[1])
        with np.errstate(all="ignore"):
            return type(a)(np.power(a, b))
    if name in ("fdividef", "fdivide", "divide") and len(args) == 2:
        return _binary("/", *args)
    if name == "select" and len(args) == 3:   # WGSL select(f, t, cond); Metal select(a, b, c)
        return args[1] if args[2] else args[0]
    if name in ("clamp",) and len(args) == 3:
        return _minmax(min, (_minmax(max, args[:2]), args[2]))
    if name == "erf":
        import math
        x = _float(args[0])
        return type(x)(math.erf(float(x)))
    if name in _MATH and len(args) == 1:
        if isinstance(args[0], tuple):
            return tuple(_unary(_MATH[name])(c) for c in args[0])
        return _unary(_MATH[name])(args[0])
    raise InterpretError(f"the function {fn}")
