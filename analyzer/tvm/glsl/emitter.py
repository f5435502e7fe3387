"""The translator's bookkeeping: errors and fresh names, data types in use, output lines and scopes,
literals and the pure helper functions the shader declares.

Separate from the translation of buffers, expressions and statements, which all build on it.
"""

from __future__ import annotations

import contextlib
import math
import re

from analyzer.errors import KernelraceError
from analyzer.tvm.glsl.syntax import (
    _EXT_F16, _EXT_I8, _EXT_I16, _EXT_I64, _EXT_S8, _EXT_S16, _Type, _parse_dtype, _strip)


class EmitterMixin:
    """Errors, names, types, emission, literals and helpers of a `_Translator`."""

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
