"""Translate TVM's lowered device TIR (target ``vulkan``) into a GLSL 4.50 compute shader.

The TVM wheel has no Vulkan codegen, so the SPIR-V a Vulkan user would get is reproduced by
writing the device PrimFunc (after TVM's default pipeline and the host/device split) as GLSL and
compiling that with glslang. What matters downstream is that the shader performs exactly the TIR's
memory accesses, barriers and control flow:

- every buffer load and store is emitted once, in program order, at the TIR's element index into
  the buffer as declared; vector accesses to scalar buffers become one scalar access per lane, in
  lane order (as TVM's SPIR-V codegen scalarizes them); a vector-typed buffer (``float16x4``)
  keeps one access per element;
- ``tvm_storage_sync("shared")`` is ``barrier()``, ``("warp")`` is ``subgroupBarrier()``, exactly
  where TIR has them; every loop (``unroll`` and ``vectorized`` ones too) and branch is kept;
- a load TIR evaluates conditionally (a branch of ``if_then_else``) stays behind an ``if``; loads
  TIR evaluates unconditionally (both operands of ``&&``, ``||`` and ``Select``, which TVM's
  SPIR-V codegen evaluates eagerly) are evaluated unconditionally, and ``For`` bounds once;
- integer ``Div`` is GLSL's truncating ``/``; ``Mod``, ``FloorDiv`` and ``FloorMod`` on signed
  integers go through small pure helper functions (glslang compiles ``%`` to ``OpSMod``, whose sign
  follows the divisor, so C's ``%`` cannot be written as ``%``).

Buffers: each handle parameter is a ``std430`` block at set 0, binding = its index among the
handle parameters; a view of it under another element type is one more block at the same binding
(member ``<param>_as_<dtype>``). Shared allocations are ``shared`` arrays at global scope, local
ones function-local arrays; a shared or local buffer re-viewed under another element type is
rejected (type punning of workgroup memory is not modelled). GLSL cannot index with a 64-bit
integer: an ``int64`` index is written ``int(index)``.

Anything not modelled raises :class:`KernelraceError` naming the construct and the kernel.
"""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass
from typing import Any

from analyzer.errors import KernelraceError

__all__ = ["translate"]


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

# Expression node kinds (type(node).__name__) and their operands, for the generic walks.
_BINARY = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Mod": "%", "FloorDiv": None,
           "FloorMod": None, "Min": None, "Max": None, "EQ": "==", "NE": "!=", "LT": "<",
           "LE": "<=", "GT": ">", "GE": ">=", "And": "&&", "Or": "||"}
_VEC_CMP = {"EQ": "equal", "NE": "notEqual", "LT": "lessThan", "LE": "lessThanEqual",
            "GT": "greaterThan", "GE": "greaterThanEqual"}
_LOAD_KINDS = ("TensorLoad", "BufferLoad")

# Pure float intrinsics with a GLSL built-in of the same arity (component-wise on vectors).
_FLOAT_FUNCS = {
    "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
    "rsqrt": "inversesqrt", "fabs": "abs", "pow": "pow", "tanh": "tanh", "sinh": "sinh",
    "cosh": "cosh", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
    "atan": "atan", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "floor": "floor",
    "ceil": "ceil", "trunc": "trunc", "round": "roundEven", "nearbyint": "roundEven",
    "atan2": "atan", "fma": "fma", "isnan": "isnan", "isinf": "isinf",
}
# C math library names LowerIntrin's default rules call through `call_pure_extern`.
_C_MATH = {"exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
           "pow": "pow", "tanh": "tanh", "sin": "sin", "cos": "cos", "tan": "tan",
           "fabs": "abs", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "fmin": "min",
           "fmax": "max", "sinh": "sinh", "cosh": "cosh", "asin": "asin", "acos": "acos",
           "atan": "atan", "atan2": "atan", "nearbyint": "roundEven", "rint": "roundEven"}
# Intrinsics that only carry a hint: the value is their first argument.
_IDENTITY_CALLS = ("tvm_thread_invariant", "likely", "assume")
_ATTR_PASS = ("reduce_scope", "storage_alignment", "pragma_unroll_explicit",
              "pragma_auto_unroll_max_step", "pragma_vectorize", "compute_scope", "device_scope")


def _op_name(call) -> str:
    op = getattr(call, "op", None)
    return str(getattr(op, "name", op))


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _children(e) -> list:
    """Sub-expressions of a TIR expression, in evaluation order."""
    kind = type(e).__name__
    if kind in _BINARY or kind in ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "LShift", "RShift"):
        return [e.a, e.b]
    if kind == "Not":
        return [e.a]
    if kind in ("Cast", "Broadcast"):
        return [e.value]
    if kind == "Select":
        return [e.condition, e.true_value, e.false_value]
    if kind == "Ramp":
        return [e.base, e.stride]
    if kind == "Let":
        return [e.value, e.body]
    if kind == "Call":
        return [a for a in e.args if type(a).__name__ not in ("StringImm", "String", "str")]
    if kind in _LOAD_KINDS:
        return list(e.indices)
    if kind == "Shuffle":
        return list(e.vectors)
    if kind == "BitwiseNot":
        return [e.a]
    return []


def _has_load(e, memo: dict) -> bool:
    key = e.__chandle__() if hasattr(e, "__chandle__") else id(e)
    if key in memo:
        return memo[key]
    found = type(e).__name__ in _LOAD_KINDS or any(_has_load(c, memo) for c in _children(e))
    memo[key] = found
    return found


def _needs_ordering(e, memo: dict) -> bool:
    """True when evaluating `e` as one GLSL expression would change which loads run, or their order:
    a load behind GLSL's lazy `?:`, `&&`, `||` that TIR evaluates eagerly, a `Let`, or a guarded
    `if_then_else` branch (emitted as an `if` before the expression)."""
    kind = type(e).__name__
    if kind == "Call" and _short(_op_name(e)) == "if_then_else":
        if _has_load(e.args[1], memo) or _has_load(e.args[2], memo):
            return True
    elif kind == "Select":
        if _has_load(e.true_value, memo) or _has_load(e.false_value, memo):
            return True
    elif kind in ("And", "Or"):
        if _has_load(e.b, memo):
            return True
    elif kind == "Let":
        return True
    return any(_needs_ordering(c, memo) for c in _children(e))


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


# --------------------------------------------------------------------------------------------
# Storage

@dataclass
class _Storage:
    kind: str          # "global", "shared", "local"
    name: str          # GLSL array identifier
    dtype: _Type       # element type
    root: int          # chandle of the underlying allocation (handle parameter or AllocBuffer)
    label: str         # TIR buffer name, for messages


class _Translator:
    def __init__(self, func, name: str):
        self.func = func
        self.kernel = name
        self.out: list[str] = []
        self.indent = 1
        self.scopes: list[dict[int, str]] = [{}]
        self.used: set[str] = set(_RESERVED)
        self.tmp_counter = 0
        self.ext: set[str] = set()
        self.helpers: dict[str, str] = {}
        self.shared_decls: list[str] = []
        self.storage: dict[int, _Storage] = {}
        self.local_size: dict[str, int] = {}
        self.grid: dict[str, str] = {}
        self.params: dict[int, str] = {}              # scalar parameter -> params.NAME
        self.handles: dict[int, tuple[str, _Type, int]] = {}   # handle -> (member, elem type, binding)
        self.handle_order: list[int] = []
        self.aliases: dict[tuple[int, str], str] = {}  # (handle, dtype) -> alias member name
        self.alias_order: list[tuple[int, _Type, str]] = []
        self.push: list[tuple[str, _Type]] = []
        self.memo: dict = {}
        self.hoist = False

    # ---------------------------------------------------------------- errors and names
    def fail(self, what: str) -> KernelraceError:
        what = " ".join(str(what).split())
        return KernelraceError(f"unsupported TIR construct in kernel {self.kernel}: {what}")

    def ident(self, base: str) -> str:
        s = re.sub(r"[^A-Za-z0-9_]", "_", str(base))
        s = re.sub(r"_+", "_", s) or "v"
        if s[0].isdigit() or s.startswith("gl_"):
            s = "v_" + s
        cand, k = s, 0
        while cand in self.used:
            k += 1
            cand = f"{s}_{k}"
        self.used.add(cand)
        return cand

    def fresh(self, base: str = "tmp") -> str:
        while True:
            cand = f"{base}{self.tmp_counter}"
            self.tmp_counter += 1
            if cand not in self.used:
                self.used.add(cand)
                return cand

    # ---------------------------------------------------------------- types
    def type_of(self, e) -> _Type:
        ty = getattr(e, "ty", None)
        dt = getattr(ty, "dtype", ty)
        return self.parse_type(dt, f"{type(e).__name__} of type {dt}")

    def parse_type(self, dtype, what: str) -> _Type:
        t = _parse_dtype(dtype)
        if t is None:
            raise self.fail(f"data type {dtype} ({what})")
        self.use_type(t)
        return t

    def use_type(self, t: _Type, storage: bool = False) -> None:
        if t.code == "float" and t.bits == 16:
            self.ext.add(_EXT_F16)
            if storage:
                self.ext.add(_EXT_S16)
        elif t.is_int and t.bits == 16:
            self.ext.add(_EXT_I16)
            if storage:
                self.ext.add(_EXT_S16)
        elif t.is_int and t.bits == 8:
            self.ext.add(_EXT_I8)
            if storage:
                self.ext.add(_EXT_S8)
        elif t.is_int and t.bits == 64:
            self.ext.add(_EXT_I64)

    # ---------------------------------------------------------------- emission helpers
    def emit(self, line: str) -> None:
        self.out.append("    " * self.indent + line)

    @contextlib.contextmanager
    def block(self):
        self.indent += 1
        self.scopes.append({})
        try:
            yield
        finally:
            self.scopes.pop()
            self.indent -= 1

    def bind(self, var, text: str) -> None:
        self.scopes[-1][var.__chandle__()] = text

    def lookup(self, var) -> str | None:
        key = var.__chandle__()
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return self.params.get(key)

    def named_temp(self, t: _Type, text: str, base: str) -> str:
        name = self.ident(base)
        self.emit(f"{t.glsl} {name} = {_strip(text)};")
        return name

    def temp(self, t: _Type, text: str, base: str = "tmp") -> str:
        name = self.fresh(base)
        self.emit(f"{t.glsl} {name} = {_strip(text)};")
        return name

    # ---------------------------------------------------------------- literals
    def int_lit(self, value: int, t: _Type) -> str:
        if t.is_bool:
            return "true" if value else "false"
        if t.code == "int" and t.bits == 32:
            if value == -(2 ** 31):
                return "(-2147483647 - 1)"
            return str(value) if value >= 0 else f"({value})"
        if t.code == "int" and t.bits == 64:
            if value == -(2 ** 63):
                return "(-9223372036854775807l - 1l)"
            return f"{value}l" if value >= 0 else f"({value}l)"
        if t.code == "uint" and t.bits == 32:
            return f"{value}u"
        if t.code == "uint" and t.bits == 64:
            return f"{value}ul"
        if t.is_float:
            return self.float_lit(float(value), t)
        return f"{t.glsl}({value})"

    def float_lit(self, value: float, t: _Type) -> str:
        if math.isnan(value) or math.isinf(value):
            bits = "0x7fc00000u" if math.isnan(value) else ("0x7f800000u" if value > 0 else "0xff800000u")
            text = f"uintBitsToFloat({bits})"
            return text if t.bits == 32 else f"{t.glsl}({text})"
        s = repr(float(value))
        if "e" not in s and "." not in s:
            s += ".0"
        if t.bits == 16:
            return f"float16_t({s})"
        if t.bits == 64:
            s += "lf"
        return f"({s})" if s.startswith("-") else s

    # ---------------------------------------------------------------- helpers (pure functions)
    def helper(self, name: str, t: _Type) -> str:
        key = f"{name}:{t.glsl}"
        if key in self.helpers:
            return name
        T = t.glsl
        z = f"{T}(0)"
        if t.lanes == 1:
            ne0, lt_r, lt_b = f"int(r != {z})", f"(r < {z})", f"(b < {z})"
            adj = f"{T}({ne0} * int({lt_r} != {lt_b}))"
        else:
            ivec = f"ivec{t.lanes}"
            adj = (f"{T}({ivec}(notEqual(r, {z})) * "
                   f"{ivec}(notEqual(lessThan(r, {z}), lessThan(b, {z}))))")
        if name == "tir_truncmod" and t.is_float:
            body = "    return a - b * trunc(a / b);"
        elif name == "tir_truncmod":
            body = "    return a - (a / b) * b;"
        elif name == "tir_floordiv":
            body = (f"    {T} q = a / b;\n    {T} r = a - q * b;\n"
                    f"    return q - {adj};")
        elif name == "tir_floormod":
            body = (f"    {T} r = a - (a / b) * b;\n"
                    f"    return r + b * {adj};")
        elif name == "tir_erf":
            if t.bits != 32:
                F = _Type("float", 32, t.lanes).glsl
                self.helper("tir_erf", _Type("float", 32, t.lanes))
                self.helpers[key] = f"{T} tir_erf({T} x) {{\n    return {T}(tir_erf({F}(x)));\n}}"
                return name
            body = ("    // Abramowitz-Stegun 7.1.26, |error| < 1.5e-7\n"
                    f"    {T} t = 1.0 / (1.0 + 0.3275911 * abs(x));\n"
                    f"    {T} p = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t"
                    " - 0.284496736) * t + 0.254829592) * t;\n"
                    f"    return sign(x) * (1.0 - p * exp(-x * x));")
            self.helpers[key] = f"{T} tir_erf({T} x) {{\n{body}\n}}"
            return name
        else:  # pragma: no cover - internal misuse
            raise self.fail(f"helper {name}")
        self.helpers[key] = f"{T} {name}({T} a, {T} b) {{\n{body}\n}}"
        return name

    # ---------------------------------------------------------------- buffers
    def storage_of(self, buf) -> _Storage:
        st = self.storage.get(buf.__chandle__())
        if st is None:
            raise self.fail(f"access to buffer {buf.name} that no DeclBuffer/AllocBuffer declares")
        return st

    def buffer_type(self, buf) -> _Type:
        return self.parse_type(buf.dtype, f"buffer {buf.name}")

    def check_plain(self, buf) -> None:
        off = buf.elem_offset
        if not (type(off).__name__ == "IntImm" and int(off.value) == 0):
            raise self.fail(f"buffer {buf.name} with elem_offset {off}")
        if len(list(buf.strides)) not in (0, 1):
            raise self.fail(f"strided buffer {buf.name}")

    def declare_view(self, buf, data) -> None:
        """A DeclBuffer: `buf` views the memory of `data` (a handle parameter or another buffer)."""
        self.check_plain(buf)
        t = self.buffer_type(buf)
        dk = type(data).__name__
        if dk == "Var" and data.__chandle__() in self.handles:
            root = data.__chandle__()
            base = None
        elif dk == "Call" and _short(_op_name(data)) == "buffer_data" and len(data.args) == 1:
            base = self.storage_of(data.args[0])
            root = base.root
        else:
            raise self.fail(f"DeclBuffer {buf.name} over {dk} {data}")
        if base is not None and base.kind != "global":
            if base.dtype != t:
                raise self.fail(
                    f"{base.kind} buffer {base.label} ({base.dtype.tir}) re-viewed as {t.tir} by {buf.name}"
                    " (type-punned shared/local memory is not modelled)")
            self.storage[buf.__chandle__()] = _Storage(base.kind, base.name, t, root, buf.name)
            self.emit(f"// {buf.name}: view of {base.kind} {base.name}")
            return
        member, elem, _ = self.handles[root]
        if t != elem:
            member = self.alias(root, t)
        self.storage[buf.__chandle__()] = _Storage("global", member, t, root, buf.name)
        self.emit(f"// {buf.name}: {t.tir} view of {self.handles[root][0]}")

    def alias(self, root: int, t: _Type) -> str:
        key = (root, t.tir)
        if key not in self.aliases:
            member = self.ident(f"{self.handles[root][0]}_as_{t.tir}")
            self.aliases[key] = member
            self.alias_order.append((root, t, member))
            self.use_type(t, storage=True)
        return self.aliases[key]

    def allocate(self, stmt) -> None:
        buf = stmt.buffer
        self.check_plain(buf)
        t = self.buffer_type(buf)
        scope = str(buf.ty.storage_scope)
        size = 1
        for d in buf.shape:
            if type(d).__name__ != "IntImm":
                raise self.fail(f"allocation {buf.name} of symbolic size {list(buf.shape)}")
            size *= int(d.value)
        if size <= 0:
            raise self.fail(f"allocation {buf.name} of size {size}")
        name = self.ident(buf.name)
        note = ""
        ann = getattr(stmt, "annotations", None)
        if ann is not None and len(ann):
            note = "  // " + ", ".join(f"{k}={v}" for k, v in ann.items())
        if scope in ("shared", "shared.dyn"):
            self.shared_decls.append(f"shared {t.glsl} {name}[{size}];{note}")
            self.storage[buf.__chandle__()] = _Storage("shared", name, t, buf.__chandle__(), buf.name)
            self.emit(f"// {buf.name}: {scope} {t.tir}[{size}], declared at global scope as {name}")
        elif scope == "local":
            self.storage[buf.__chandle__()] = _Storage("local", name, t, buf.__chandle__(), buf.name)
            self.emit(f"{t.glsl} {name}[{size}];{note}")
        else:
            raise self.fail(f"allocation {buf.name} in storage scope '{scope}'")

    def index_text(self, e) -> str:
        t = self.type_of(e)
        text = _strip(self.ex(e))
        # GLSL indexes with 32-bit integers only: a 64-bit TIR index is converted.
        return text if t.is_int and t.bits == 32 else f"int({text})"

    def lane_indices(self, index, lanes: int) -> list[str]:
        """Scalar element indices of a vector index expression, lane by lane."""
        if type(index).__name__ == "Ramp":
            t = self.type_of(index.base)
            base = self.ex(index.base)
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*|\(?-?\d+l?u?l?\)?", base):
                # Evaluated once (as TIR does), and readable: `A[i]`, `A[i + 1]`, ...
                base = self.temp(t, base, "idx")
            stride = index.stride
            out = []
            const_base = type(index.base).__name__ == "IntImm"
            for k in range(lanes):
                if k == 0:
                    text = base
                elif const_base and type(stride).__name__ == "IntImm":
                    text = self.int_lit(int(index.base.value) + int(stride.value) * k, t)
                elif type(stride).__name__ == "IntImm":
                    off = int(stride.value) * k
                    lit = self.int_lit(abs(off), t)
                    text = f"({base} {'+' if off >= 0 else '-'} {lit})"
                else:
                    s = self.ex(stride)
                    text = f"({base} + {self.int_lit(k, t)} * {s})"
                if t.bits == 64 or not t.is_int:
                    text = f"int({_strip(text)})"
                out.append(_strip(text))
            return out
        t = self.type_of(index)
        if t.lanes != lanes:
            raise self.fail(f"vector index of {t.lanes} lanes for {lanes} lanes")
        vec = self.ex(index)
        if not vec.isidentifier():
            vec = self.temp(t, vec)
        out = []
        for k in range(lanes):
            text = f"{vec}.{_SWIZZLE[k]}"
            if t.bits == 64 or not t.is_int:
                text = f"int({text})"
            out.append(text)
        return out

    def access(self, buf, indices, lanes_wanted: _Type, what: str):
        """(storage, list of element index texts, per-access type) for a load or store."""
        st = self.storage_of(buf)
        indices = list(indices)
        if len(indices) != 1:
            raise self.fail(f"{what} of buffer {buf.name} with {len(indices)} indices (not flattened)")
        index = indices[0]
        it = self.type_of(index)
        if it.lanes == 1:
            if lanes_wanted != st.dtype:
                raise self.fail(f"{what} of {lanes_wanted.tir} from buffer {buf.name} of {st.dtype.tir}")
            return st, [self.index_text(index)], st.dtype
        if st.dtype.lanes != 1:
            raise self.fail(f"vector-indexed {what} of vector-typed buffer {buf.name} ({st.dtype.tir})")
        if lanes_wanted != st.dtype.with_lanes(it.lanes):
            raise self.fail(f"{what} of {lanes_wanted.tir} from buffer {buf.name} of {st.dtype.tir}")
        return st, self.lane_indices(index, it.lanes), st.dtype

    # ---------------------------------------------------------------- expressions
    def ex(self, e) -> str:
        kind = type(e).__name__
        fn = getattr(self, f"ex_{kind}", None)
        if fn is None:
            raise self.fail(f"expression node {kind}")
        return fn(e)

    def ex_IntImm(self, e) -> str:
        return self.int_lit(int(e.value), self.type_of(e))

    def ex_FloatImm(self, e) -> str:
        return self.float_lit(float(e.value), self.type_of(e))

    def ex_StringImm(self, e) -> str:
        raise self.fail(f"string immediate {e} in an expression")

    def ex_Var(self, e) -> str:
        text = self.lookup(e)
        if text is None:
            if e.__chandle__() in self.handles:
                raise self.fail(f"handle parameter {e.name} used as a value")
            raise self.fail(f"free variable {e.name}")
        return text

    def ex_TensorLoad(self, e) -> str:
        t = self.type_of(e)
        st, idx, _ = self.access(e.source, e.indices, t, "load")
        if len(idx) == 1:
            text = f"{st.name}[{idx[0]}]"
        else:
            text = f"{t.glsl}(" + ", ".join(f"{st.name}[{i}]" for i in idx) + ")"
        if self.hoist:
            return self.temp(t, text)
        return text

    ex_BufferLoad = ex_TensorLoad

    def binary(self, e, op: str) -> str:
        a = self.ex(e.a)
        b = self.ex(e.b)
        return f"({a} {op} {b})"

    def ex_Add(self, e):
        return self.binary(e, "+")

    def ex_Sub(self, e):
        return self.binary(e, "-")

    def ex_Mul(self, e):
        return self.binary(e, "*")

    def ex_Div(self, e):
        return self.binary(e, "/")

    def ex_Mod(self, e):
        t = self.type_of(e)
        if t.code == "uint":
            return self.binary(e, "%")
        if t.is_bool:
            raise self.fail("Mod on bool")
        a, b = self.ex(e.a), self.ex(e.b)
        return f"{self.helper('tir_truncmod', t)}({_strip(a)}, {_strip(b)})"

    def ex_FloorDiv(self, e):
        t = self.type_of(e)
        if t.code == "uint":
            return self.binary(e, "/")
        a, b = self.ex(e.a), self.ex(e.b)
        if t.is_float:
            return f"floor({a} / {b})"
        if t.is_bool:
            raise self.fail("FloorDiv on bool")
        return f"{self.helper('tir_floordiv', t)}({_strip(a)}, {_strip(b)})"

    def ex_FloorMod(self, e):
        t = self.type_of(e)
        if t.code == "uint":
            return self.binary(e, "%")
        a, b = self.ex(e.a), self.ex(e.b)
        if t.is_float:
            return f"mod({_strip(a)}, {_strip(b)})"
        if t.is_bool:
            raise self.fail("FloorMod on bool")
        return f"{self.helper('tir_floormod', t)}({_strip(a)}, {_strip(b)})"

    def ex_Min(self, e):
        if self.type_of(e).is_bool:
            raise self.fail("Min on bool")
        return f"min({_strip(self.ex(e.a))}, {_strip(self.ex(e.b))})"

    def ex_Max(self, e):
        if self.type_of(e).is_bool:
            raise self.fail("Max on bool")
        return f"max({_strip(self.ex(e.a))}, {_strip(self.ex(e.b))})"

    def compare(self, e):
        kind = type(e).__name__
        a, b = self.ex(e.a), self.ex(e.b)
        if self.type_of(e).lanes > 1:
            return f"{_VEC_CMP[kind]}({_strip(a)}, {_strip(b)})"
        return f"({a} {_BINARY[kind]} {b})"

    ex_EQ = ex_NE = ex_LT = ex_LE = ex_GT = ex_GE = compare

    def logical(self, e):
        kind = type(e).__name__
        t = self.type_of(e)
        a = self.ex(e.a)
        b = self.ex(e.b)
        if t.lanes > 1:
            u = f"uvec{t.lanes}"
            op = "&" if kind == "And" else "|"
            return f"bvec{t.lanes}({u}({_strip(a)}) {op} {u}({_strip(b)}))"
        return f"({a} {_BINARY[kind]} {b})"

    ex_And = ex_Or = logical

    def ex_Not(self, e):
        t = self.type_of(e)
        a = self.ex(e.a)
        return f"not({_strip(a)})" if t.lanes > 1 else f"(!{a})"

    def bitwise(self, e, op: str):
        t = self.type_of(e)
        if not t.is_int:
            raise self.fail(f"bitwise {type(e).__name__} on {t.tir}")
        return self.binary(e, op)

    def ex_BitwiseAnd(self, e):
        return self.bitwise(e, "&")

    def ex_BitwiseOr(self, e):
        return self.bitwise(e, "|")

    def ex_BitwiseXor(self, e):
        return self.bitwise(e, "^")

    def ex_LShift(self, e):
        return self.bitwise(e, "<<")

    def ex_RShift(self, e):
        return self.bitwise(e, ">>")

    def ex_BitwiseNot(self, e):
        if not self.type_of(e).is_int:
            raise self.fail("BitwiseNot on a non-integer")
        return f"(~{self.ex(e.a)})"

    def ex_Select(self, e):
        c = self.ex(e.condition)
        a = self.ex(e.true_value)
        b = self.ex(e.false_value)
        if self.type_of(e.condition).lanes > 1:
            return f"mix({_strip(b)}, {_strip(a)}, {_strip(c)})"
        return f"({c} ? {a} : {b})"

    def ex_Cast(self, e):
        t = self.type_of(e)
        src = self.type_of(e.value)
        v = self.ex(e.value)
        if src == t:
            return v
        if src.lanes != t.lanes:
            raise self.fail(f"Cast from {src.tir} to {t.tir}")
        return f"{t.glsl}({_strip(v)})"

    def ex_Broadcast(self, e):
        t = self.type_of(e)
        v = self.ex(e.value)
        return f"{t.glsl}({_strip(v)})"

    def ex_Ramp(self, e):
        t = self.type_of(e)
        st = t.scalar
        base = self.ex(e.base)
        n = t.lanes
        if type(e.stride).__name__ == "IntImm":
            s = int(e.stride.value)
            offs = ", ".join(self.int_lit(k * s, st) for k in range(n))
            return f"({t.glsl}({_strip(base)}) + {t.glsl}({offs}))"
        stride = self.ex(e.stride)
        offs = ", ".join(self.int_lit(k, st) for k in range(n))
        return f"({t.glsl}({_strip(base)}) + {t.glsl}({offs}) * {stride})"

    def ex_Shuffle(self, e):
        t = self.type_of(e)
        lanes = []
        for v in e.vectors:
            vt = self.type_of(v)
            text = self.ex(v)
            if vt.lanes == 1:
                lanes.append(text)
                continue
            if not text.isidentifier():
                text = self.temp(vt, text)
            lanes.extend(f"{text}.{_SWIZZLE[k]}" for k in range(vt.lanes))
        picks = []
        for i in e.indices:
            if type(i).__name__ != "IntImm":
                raise self.fail("Shuffle with a non-constant index")
            picks.append(lanes[int(i.value)])
        if t.lanes == 1:
            return picks[0]
        return f"{t.glsl}({', '.join(picks)})"

    def ex_Let(self, e):
        vt = self.type_of(e.var)
        value = self.ex(e.value)
        name = self.ident(e.var.name)
        self.emit(f"{vt.glsl} {name} = {_strip(value)};")
        self.bind(e.var, name)
        return self.ex(e.body)

    def ex_Call(self, e):
        full = _op_name(e)
        name = _short(full)
        t = self.type_of(e)
        args = list(e.args)
        if name == "if_then_else":
            return self.if_then_else(e, t)
        if name in _IDENTITY_CALLS and args:
            return self.ex(args[0])
        if name in _FLOAT_FUNCS:
            ats = [self.type_of(a) for a in args]
            if not all(a.is_float for a in ats):
                raise self.fail(f"intrinsic {full} on {', '.join(a.tir for a in ats)}")
            vals = [_strip(self.ex(a)) for a in args]
            return f"{_FLOAT_FUNCS[name]}({', '.join(vals)})"
        if name == "erf":
            self.require_float(e, full)
            return f"{self.helper('tir_erf', t)}({_strip(self.ex(args[0]))})"
        if name == "sigmoid":
            self.require_float(e, full)
            one = self.float_lit(1.0, t.scalar)
            return f"({one} / ({one} + exp(-{self.ex(args[0])})))"
        if name in ("exp10", "log10"):
            self.require_float(e, full)
            x = self.ex(args[0])
            if name == "exp10":
                return f"exp2({self.float_lit(3.321928094887362, t.scalar)} * {x})"
            return f"(log2({_strip(x)}) * {self.float_lit(0.30102999566398120, t.scalar)})"
        if name == "log1p":
            self.require_float(e, full)
            return f"log({self.float_lit(1.0, t.scalar)} + {self.ex(args[0])})"
        if name in ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"):
            if not t.is_int:
                raise self.fail(f"intrinsic {full} on {t.tir}")
            op = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
                  "shift_left": "<<", "shift_right": ">>"}[name]
            return f"({self.ex(args[0])} {op} {self.ex(args[1])})"
        if name == "bitwise_not":
            if not t.is_int:
                raise self.fail(f"intrinsic {full} on {t.tir}")
            return f"(~{self.ex(args[0])})"
        if name == "popcount" and t.is_int and t.bits == 32:
            return f"{t.glsl}(bitCount({_strip(self.ex(args[0]))}))"
        if name == "reinterpret":
            return self.reinterpret(args[0], t, full)
        if name in ("call_pure_extern", "call_extern") and args and type(args[0]).__name__ == "StringImm":
            # LowerIntrin's default rules turn math intrinsics into C library calls (`log2f`).
            ext = str(args[0].value)
            base = ext[:-1] if ext.endswith("f") and ext[:-1] in _C_MATH else ext
            if name == "call_pure_extern" and base in _C_MATH:
                ats = [self.type_of(a) for a in args[1:]]
                if t.is_float and all(a.is_float for a in ats):
                    vals = [_strip(self.ex(a)) for a in args[1:]]
                    return f"{_C_MATH[base]}({', '.join(vals)})"
            raise self.fail(f"intrinsic {full}(\"{ext}\")")
        raise self.fail(f"intrinsic {full}")

    def require_float(self, e, full: str) -> None:
        if not self.type_of(e).is_float:
            raise self.fail(f"intrinsic {full} on {self.type_of(e).tir}")

    def reinterpret(self, arg, t: _Type, full: str) -> str:
        src = self.type_of(arg)
        v = _strip(self.ex(arg))
        if src == t:
            return v
        if src.bits != t.bits or src.lanes != t.lanes:
            raise self.fail(f"intrinsic {full} from {src.tir} to {t.tir}")
        if src.is_int and t.is_int:
            return f"{t.glsl}({v})"
        names = {
            (32, "float", "int"): "floatBitsToInt", (32, "float", "uint"): "floatBitsToUint",
            (32, "int", "float"): "intBitsToFloat", (32, "uint", "float"): "uintBitsToFloat",
            (16, "float", "int"): "float16BitsToInt16", (16, "float", "uint"): "float16BitsToUint16",
            (16, "int", "float"): "int16BitsToFloat16", (16, "uint", "float"): "uint16BitsToFloat16",
            (64, "float", "int"): "doubleBitsToInt64", (64, "float", "uint"): "doubleBitsToUint64",
            (64, "int", "float"): "int64BitsToDouble", (64, "uint", "float"): "uint64BitsToDouble",
        }
        fn = names.get((t.bits, src.code, t.code))
        if fn is None:
            raise self.fail(f"intrinsic {full} from {src.tir} to {t.tir}")
        if t.bits == 16:
            self.ext.add(_EXT_I16)
        return f"{fn}({v})"

    def if_then_else(self, e, t: _Type) -> str:
        cond, a, b = e.args
        ct = self.type_of(cond)
        if ct.lanes != 1:
            raise self.fail("if_then_else with a vector condition")
        c = self.ex(cond)
        if not (_has_load(a, self.memo) or _has_load(b, self.memo)):
            return f"({c} ? {self.ex(a)} : {self.ex(b)})"
        # A guarded load stays guarded: evaluate the branches under an `if`, into a temporary.
        name = self.fresh("ite")
        self.emit(f"{t.glsl} {name};")
        self.emit(f"if ({_strip(c)}) {{")
        with self.block():
            self.emit(f"{name} = {_strip(self.ex(a))};")
        self.emit("} else {")
        with self.block():
            self.emit(f"{name} = {_strip(self.ex(b))};")
        self.emit("}")
        return name

    def value(self, e) -> str:
        """Translate the expression of one statement, keeping its loads' evaluation faithful."""
        saved = self.hoist
        self.hoist = _needs_ordering(e, self.memo)
        try:
            return self.ex(e)
        finally:
            self.hoist = saved

    # ---------------------------------------------------------------- statements
    def st(self, s) -> None:
        kind = type(s).__name__
        fn = getattr(self, f"st_{kind}", None)
        if fn is None:
            raise self.fail(f"statement node {kind}")
        fn(s)
        body = getattr(s, "body", None) if kind in ("DeclBuffer", "AllocBuffer", "Bind", "LetStmt") else None
        if body is not None:
            self.st(body)

    def st_SeqStmt(self, s):
        for c in s.seq:
            self.st(c)

    def st_Bind(self, s):
        var = s.var
        ty = getattr(var, "ty", None)
        if type(ty).__name__ != "PrimType":
            raise self.fail(f"Bind of {var.name} of type {ty}")
        t = self.type_of(var)
        v = self.value(s.value)
        name = self.ident(var.name)
        self.emit(f"{t.glsl} {name} = {_strip(v)};")
        self.bind(var, name)

    st_LetStmt = st_Bind

    def st_DeclBuffer(self, s):
        self.declare_view(s.buffer, s.data)

    def st_AllocBuffer(self, s):
        self.allocate(s)

    def st_AttrStmt(self, s):
        key = str(s.attr_key)
        if key == "thread_extent":
            iv = s.node
            tag = str(iv.thread_tag)
            m = re.fullmatch(r"(threadIdx|blockIdx)\.([xyz])", tag)
            if not m:
                raise self.fail(f"thread_extent of '{tag}'")
            var = iv.var
            vt = self.type_of(var)
            builtin = "gl_LocalInvocationID" if m.group(1) == "threadIdx" else "gl_WorkGroupID"
            self.bind(var, f"{vt.glsl}({builtin}.{m.group(2)})")
            value = s.value
            if m.group(1) == "threadIdx":
                if type(value).__name__ != "IntImm":
                    raise self.fail(f"symbolic {tag} extent {value}")
                ext = int(value.value)
                if self.local_size.get(m.group(2), ext) != ext:
                    raise self.fail(f"{tag} launched with extents {self.local_size[m.group(2)]} and {ext}")
                self.local_size[m.group(2)] = ext
            else:
                self.grid[tag] = str(value)
            self.emit(f"// {tag}: extent {value}")
            self.st(s.body)
            return
        if key in _ATTR_PASS:
            self.emit(f"// attr {key}")
            self.st(s.body)
            return
        raise self.fail(f"AttrStmt '{key}'")

    def st_IfThenElse(self, s):
        c = self.value(s.condition)
        self.emit(f"if ({_strip(c)}) {{")
        with self.block():
            self.st(s.then_case)
        if s.else_case is not None:
            self.emit("} else {")
            with self.block():
                self.st(s.else_case)
        self.emit("}")

    def st_For(self, s):
        kinds = {0: "serial", 1: "parallel", 2: "vectorized", 3: "unrolled", 4: "thread_binding"}
        kind = kinds.get(int(s.kind), str(s.kind))
        if kind not in ("serial", "vectorized", "unrolled"):
            raise self.fail(f"{kind} For loop over {s.loop_var.name}")
        if getattr(s, "thread_binding", None) is not None:
            raise self.fail(f"For loop over {s.loop_var.name} bound to a thread")
        var = s.loop_var
        t = self.type_of(var)
        if not t.is_int or t.lanes != 1:
            raise self.fail(f"For loop over {var.name} of type {t.tir}")
        step = getattr(s, "step", None)
        step_text = "1"
        if step is not None:
            if type(step).__name__ != "IntImm" or int(step.value) <= 0:
                raise self.fail(f"For loop over {var.name} with step {step}")
            step_text = self.int_lit(int(step.value), t)
        name = self.ident(var.name)
        lo_e, ext_e = s.min, s.extent
        # TIR evaluates min and extent once, before the loop: keep loads there.
        lo = self.value(lo_e)
        if _has_load(lo_e, self.memo):
            lo = self.named_temp(t, lo, f"{name}_min")
        ext = self.value(ext_e)
        if _has_load(ext_e, self.memo):
            ext = self.named_temp(t, ext, f"{name}_extent")
        zero = type(lo_e).__name__ == "IntImm" and int(lo_e.value) == 0
        bound = _strip(ext) if zero else f"{lo} + {ext}"
        inc = f"++{name}" if step is None or int(step.value) == 1 else f"{name} += {step_text}"
        note = "" if kind == "serial" else f"  // {kind}"
        self.emit(f"for ({t.glsl} {name} = {_strip(lo)}; {name} < {bound}; {inc}) {{{note}")
        with self.block():
            self.bind(var, name)
            self.st(s.body)
        self.emit("}")

    def st_While(self, s):
        saved = self.out
        self.out = []
        self.indent += 1
        try:
            c = self.value(s.condition)
        finally:
            self.indent -= 1
            pre, self.out = self.out, saved
        if not pre:
            self.emit(f"while ({_strip(c)}) {{")
            with self.block():
                self.st(s.body)
            self.emit("}")
            return
        # The condition needs statements of its own: evaluate it at the top of every iteration.
        self.emit("while (true) {")
        with self.block():
            self.out.extend(pre)
            self.emit(f"if (!({_strip(c)})) {{")
            with self.block():
                self.emit("break;")
            self.emit("}")
            self.st(s.body)
        self.emit("}")

    def st_Break(self, s):
        self.emit("break;")

    def st_Continue(self, s):
        self.emit("continue;")

    def st_Evaluate(self, s):
        v = s.value
        if type(v).__name__ == "Call" and _short(_op_name(v)) == "tvm_storage_sync":
            args = list(v.args)
            scope = str(getattr(args[0], "value", args[0])) if args else ""
            if scope in ("shared", "shared.dyn"):
                self.emit("barrier();")
            elif scope == "warp":
                self.ext.add(_EXT_SUBGROUP)
                self.emit("subgroupBarrier();")
            else:
                raise self.fail(f"tvm_storage_sync(\"{scope}\")")
            return
        if type(v).__name__ in ("IntImm", "FloatImm"):
            self.emit(f"// T.evaluate({v})")
            return
        text = self.value(v)
        self.emit(f"{_strip(text)};")

    def st_BufferStore(self, s):
        buf = s.buffer
        vt = self.type_of(s.value)
        predicate = getattr(s, "predicate", None)
        if predicate is not None:
            raise self.fail(f"predicated store to {buf.name}")
        v = self.value(s.value)
        indices = list(s.indices)
        if len(indices) == 1 and self.type_of(indices[0]).lanes > 1 and not v.isidentifier():
            v = self.temp(vt, v)   # the whole value first, then the lane-by-lane stores
        saved = self.hoist
        self.hoist = any(_needs_ordering(i, self.memo) for i in s.indices)
        try:
            st, idx, _ = self.access(buf, s.indices, vt, "store")
        finally:
            self.hoist = saved
        if len(idx) == 1:
            self.emit(f"{st.name}[{idx[0]}] = {_strip(v)};")
            return
        if not v.isidentifier():
            v = self.temp(vt, v)
        for k, i in enumerate(idx):
            self.emit(f"{st.name}[{i}] = {v}.{_SWIZZLE[k]};")

    # ---------------------------------------------------------------- whole function
    def run(self) -> str:
        func = self.func
        binding = 0
        for p in func.params:
            ty = p.ty
            if type(ty).__name__ == "PointerType":
                elem = ty.element_type
                dt = getattr(elem, "dtype", None)
                t = _parse_dtype(dt)
                if t is None:
                    raise self.fail(f"handle parameter {p.name} to {elem}")
                if t.is_bool:
                    raise self.fail(f"handle parameter {p.name} to bool (storage layout of bool)")
                member = self.ident(p.name)
                self.use_type(t, storage=True)
                self.handles[p.__chandle__()] = (member, t, binding)
                self.handle_order.append(p.__chandle__())
                binding += 1
            elif type(ty).__name__ == "PrimType":
                t = _parse_dtype(ty.dtype)
                if t is None or t.lanes != 1:
                    raise self.fail(f"scalar parameter {p.name} of type {ty.dtype}")
                self.use_type(t, storage=True)
                member = re.sub(r"[^A-Za-z0-9_]", "_", p.name)
                if member in [m for m, _ in self.push] or member[0].isdigit() or member in _RESERVED:
                    member = f"p_{member}_{len(self.push)}"
                self.push.append((member, t))
                self.params[p.__chandle__()] = f"params.{member}"
            else:
                raise self.fail(f"parameter {p.name} of type {ty}")
        self.blocks = {root: self.ident(f"{self.handles[root][0]}_buf") for root in self.handle_order}

        self.st(func.body)
        return self.render()

    def render(self) -> str:
        lines = [f"// kernel {self.kernel}: GLSL translation of TVM's lowered device TIR (target vulkan)",
                 "// generated by kernelrace (analyzer/tvm/tir_glsl.py): every TIR buffer access, barrier,",
                 "// loop and branch is kept, in program order",
                 "#version 450"]
        for ext in _EXT_ORDER:
            if ext in self.ext:
                lines.append(f"#extension {ext} : require")
        if self.grid:
            lines.append("// grid: " + ", ".join(f"{k} = {v}" for k, v in sorted(self.grid.items())))
        x, y, z = (self.local_size.get(d, 1) for d in "xyz")
        lines.append(f"layout(local_size_x = {x}, local_size_y = {y}, local_size_z = {z}) in;")
        lines.append("")
        for root in self.handle_order:
            member, t, binding = self.handles[root]
            lines.append(f"layout(std430, set = 0, binding = {binding}) buffer {self.blocks[root]} "
                         f"{{ {t.glsl} {member}[]; }};")
            for r, at, amember in self.alias_order:
                if r == root:
                    lines.append(f"layout(std430, set = 0, binding = {binding}) buffer {amember}_buf "
                                 f"{{ {at.glsl} {amember}[]; }};")
        if self.push:
            members = " ".join(f"{t.glsl} {m};" for m, t in self.push)
            lines.append(f"layout(push_constant) uniform Params {{ {members} }} params;")
        if self.shared_decls:
            lines.append("")
            lines.extend(self.shared_decls)
        if self.helpers:
            lines.append("")
            lines.append("// pure helpers for TIR semantics GLSL lacks (no memory access)")
            lines.extend(self.helpers.values())
        lines.append("")
        lines.append("void main() {")
        lines.extend(self.out)
        lines.append("}")
        return "\n".join(lines) + "\n"


def translate(func, name: str) -> str:
    """GLSL compute shader source for one device PrimFunc (after TVM's default pipeline and host/device split)."""
    try:
        return _Translator(func, name).run()
    except KernelraceError:
        raise
    except RecursionError as exc:
        raise KernelraceError(f"kernel {name} is nested too deeply to translate") from exc
