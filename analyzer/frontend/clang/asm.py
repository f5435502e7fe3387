"""Inline PTX (`asm volatile("...")`) in CUDA kernels, read instruction by instruction.

clang 21+ gives an asm statement's template and its operands (libclang's `getGCCAssembly*`), so
what each instruction does is read from the PTX itself, even when a macro wraps the statement:
- `cp.async.{ca,cg}.shared.global [dst], [src], n`: a read of n bytes at src and a write of n bytes
  at dst in shared memory, placed at the copy. The copy completes at the issuing thread's
  `cp.async.wait_*`, before the barrier that publishes it; a kernel that issues copies and never
  waits for them is `unknown` (the write could land after any barrier).
- `ld`/`st` with a memory operand: a read or write of the instruction's width through the pointer;
  `ldmatrix` a 16-byte read of its row address (each thread gives one), `stmatrix` a 16-byte write.
- `mma`, `mov`, `cvt`, arithmetic, `shfl`, fences and the other register-only instructions: no
  access; every output operand gets an unknown value.
- anything else (`bar`, `atom`, `red`, bulk copies, ...) makes the kernel `unknown`, naming it.
A shared-space address as PTX takes it (`__cvta_generic_to_shared(p)`, a 32-bit integer) is the
pointer itself, counted in bytes, so `base + i * sizeof(half)` names the bytes it names.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import replace

import clang.cindex as ci

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Pointer, Scalar, Vector

_lib = ci.conf.lib
_S = ci._CXString
_API = False


def _bind() -> bool:
    global _API
    if _API:
        return True
    if not hasattr(_lib, "clang_Cursor_getGCCAssemblyTemplate"):
        return False
    _lib.clang_Cursor_getGCCAssemblyTemplate.argtypes = [ci.Cursor]
    _lib.clang_Cursor_getGCCAssemblyTemplate.restype = _S
    for n in ("NumOutputs", "NumInputs"):
        f = getattr(_lib, f"clang_Cursor_getGCCAssembly{n}")
        f.argtypes, f.restype = [ci.Cursor], ctypes.c_uint
    for n in ("Input", "Output"):
        f = getattr(_lib, f"clang_Cursor_getGCCAssembly{n}")
        f.argtypes = [ci.Cursor, ctypes.c_uint, ctypes.POINTER(_S), ctypes.POINTER(ci.Cursor)]
        f.restype = ctypes.c_uint
    _API = True
    return True


def asm_parts(c) -> tuple[str, list[tuple[str, object]], list[tuple[str, object]]] | None:
    """(template, outputs, inputs) of a GCC-style asm statement, each operand (constraint, cursor);
    None where this libclang cannot say."""
    if not _bind():
        return None
    text = _S.from_result(_lib.clang_Cursor_getGCCAssemblyTemplate(c))

    def operands(kind: str) -> list:
        out = []
        for i in range(getattr(_lib, f"clang_Cursor_getGCCAssemblyNum{kind}s")(c)):
            s, e = _S(), ci.Cursor()
            if not getattr(_lib, f"clang_Cursor_getGCCAssembly{kind}")(c, i, ctypes.byref(s), ctypes.byref(e)):
                return None
            e._tu = c._tu   # (what the bindings set on the cursors they make)
            out.append((_S.from_result(s), e))
        return out
    outs, ins = operands("Output"), operands("Input")
    if outs is None or ins is None:
        return None
    return text, outs, ins


# Instructions that read and write registers only (their root, before the first dot).
REGISTER_ONLY = frozenset("""mov cvt add sub mul mad fma div rem abs neg min max and or xor not cnot shl shr shf setp
set selp slct prmt lop3 bfe bfi bfind popc clz brev rcp sqrt rsqrt ex2 lg2 sin cos tanh mma wgmma.fence dp4a dp2a
copysign testp fns shfl vote activemask match redux membar fence nanosleep mul24 mad24 sad cvta isspacep""".split())
_TYPE_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
_ELEM = {1: "char", 2: "short", 4: "int", 8: "int2", 16: "int4"}
_MEM = re.compile(r"\[\s*\$(\d+)\s*(?:\+\s*(-?\d+))?\s*\]")


def instructions(template: str) -> list[tuple[str, list[str]]]:
    """(opcode, operands) of each PTX instruction: declarations, braces, labels and predicates off."""
    out = []
    for raw in re.split(r"[;\n]", re.sub(r"//[^\n]*", "", template)):
        s = raw.strip().strip("{}").strip()
        if not s or s.startswith(".") or s.endswith(":"):
            continue
        s = re.sub(r"^@!?\$?\w+\s+", "", s)
        op, _, rest = s.partition(" ")
        depth, cur, parts = 0, "", []
        for ch in rest:
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur.strip())
                cur = ""
            else:
                cur += ch
        if cur.strip():
            parts.append(cur.strip())
        out.append((op.strip(), parts))
    return out


def access_width(op: str) -> int | None:
    """Bytes an `ld`/`st` moves: its vector count times its type's width (`ld.global.v4.f32`: 16)."""
    words = op.split(".")
    vec = next((int(w[1:]) for w in words if re.fullmatch(r"v[248]", w)), 1)
    bits = next((w[1:] for w in reversed(words) if re.fullmatch(r"[bsuf](8|16|32|64|128)", w)), None)
    return vec * _TYPE_BYTES[bits] if bits in _TYPE_BYTES else None


class ClangAsm:
    """Inline PTX; mixed into ClangLowering."""

    async_copies = None   # spans of this kernel's cp.async copies and whether it waits for them

    def asm(self, c) -> list[ir.Stmt]:
        if self.lang != "cuda":
            raise Unsupported(c, "inline asm (not modelled outside CUDA)")
        parts = asm_parts(c)
        if parts is None:
            raise Unsupported(c, "inline asm that this libclang cannot read (not modelled)")
        template, outs, ins = parts
        operands = outs + ins
        span = self.span(c)
        out: list[ir.Stmt] = []
        addresses = {int(i) for i in re.findall(r"\[\s*\$(\d+)", template)}
        for constraint, e in outs:   # a read-write operand (`"+f"(c[i])`) is read first
            if constraint.startswith("+"):
                val = self.rvalue(e)
                if isinstance(val, (Scalar, Vector)):
                    out.extend(self.flush([ir.Eval(self._scalar(val), span)]))
        for i, (constraint, e) in enumerate(ins):
            if len(outs) + i not in addresses:   # a value the asm reads: its reads happen here
                val = self.rvalue(e)
                if isinstance(val, (Scalar, Vector)):
                    out.extend(self.flush([ir.Eval(self._scalar(val), span)]))
        for op, args in instructions(template):
            out.extend(self._instruction(op, args, operands, c, span))
        for constraint, e in outs:   # what the instructions computed is not modelled: an unknown value
            out.extend(self.store(e, Scalar(self.opaque(f"the output of inline asm at line {span.line}"),
                                            self.note_type(e.type)), span))
        return self.flush(out)

    def _instruction(self, op: str, args: list[str], operands, c, span) -> list[ir.Stmt]:
        root = op.split(".")[0]
        mems = [(_MEM.search(a), a) for a in args]
        mems = [(int(m.group(1)), int(m.group(2) or 0)) for m, _ in mems if m]
        if op.startswith("cp.async."):
            return self._cp_async(op, args, mems, operands, c, span)
        if root in ("ld", "ldu", "st") and len(mems) == 1:
            width = access_width(op)
            if width is None or width not in _ELEM:
                raise Unsupported(c, f"inline asm '{op}' of a width not read")
            ptr = self._asm_pointer(operands, *mems[0], _ELEM[width], c, op)
            if root == "st":
                return [self._access_stmt(ptr, True, Scalar(self.opaque(f"a value stored by '{op}'"), "int"), span)]
            return [ir.Eval(self._scalar(self.load(ptr, span)), span)]
        if root in ("ldmatrix", "stmatrix") and len(mems) == 1:
            ptr = self._asm_pointer(operands, *mems[0], "int4", c, op)
            if ptr.space != ir.SHARED:
                raise Unsupported(c, f"inline asm '{op}' on memory that is not shared")
            if root == "stmatrix":
                return [self._access_stmt(ptr, True, Scalar(self.opaque(f"a value stored by '{op}'"), "int"), span)]
            return [ir.Eval(self._scalar(self.load(ptr, span)), span)]
        if (root in REGISTER_ONLY or op.startswith("wgmma.fence")) and not mems:
            return []
        raise Unsupported(c, f"inline asm '{op}' (may touch memory or synchronise; not modelled)")

    def _cp_async(self, op, args, mems, operands, c, span) -> list[ir.Stmt]:
        copies = self.async_copies
        if op.startswith(("cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all")):
            if "wait" in op:
                copies["waits"] = True
            return []
        if not op.startswith(("cp.async.ca.shared.global", "cp.async.cg.shared.global")) or len(mems) != 2 \
                or len(args) < 3:
            raise Unsupported(c, f"inline asm '{op}' (not modelled)")
        size = self._asm_const(args[2], operands)
        if size not in (4, 8, 16):
            raise Unsupported(c, f"inline asm '{op}' of a size that is not 4, 8 or 16 bytes")
        dst = self._asm_pointer(operands, *mems[0], _ELEM[size], c, op)
        src = self._asm_pointer(operands, *mems[1], _ELEM[size], c, op)
        if dst.space != ir.SHARED:
            raise Unsupported(c, f"inline asm '{op}' into memory that is not shared")
        copies["spans"].append(c)
        val = self.load(src, span)
        return self.flush([]) + [self._access_stmt(dst, True, val, span)]

    def pipeline_stmt(self, fn: str, args, c) -> list[ir.Stmt]:
        """<cuda_pipeline.h>'s primitives: `__pipeline_memcpy_async(dst, src, n)` a cp.async of n
        bytes, `__pipeline_wait_prior(k)` its wait, `__pipeline_commit()` nothing."""
        if fn == "__pipeline_commit":
            return []
        if fn == "__pipeline_wait_prior":
            self.async_copies["waits"] = True
            return []
        if fn != "__pipeline_memcpy_async" or len(args) not in (3, 4):
            raise Unsupported(c, f"'{fn}' (not modelled)")
        size = self.int_value(args[2])
        zfill = self.int_value(args[3]) if len(args) == 4 else 0
        if size not in (4, 8, 16) or zfill != 0:
            raise Unsupported(c, f"'{fn}' of a size that is not 4, 8 or 16 bytes, or with a zero fill")
        dst, src = self.rvalue(args[0]), self.rvalue(args[1])
        if not (isinstance(dst, Pointer) and isinstance(src, Pointer) and "?" not in (dst.buffer, src.buffer)):
            raise Unsupported(c, f"'{fn}' between places not known to be buffers")
        if dst.space != ir.SHARED:
            raise Unsupported(c, f"'{fn}' into memory that is not shared")
        self.async_copies["spans"].append(c)
        span = self.span(c)
        val = self.load(replace(src, elem=_ELEM[size], inner=()), span)
        return self.flush([]) + [self._access_stmt(replace(dst, elem=_ELEM[size], inner=()), True, val, span)]

    def _asm_const(self, arg: str, operands) -> int | None:
        m = re.fullmatch(r"\s*\$(\d+)\s*", arg)
        if m is None:
            return int(arg, 0) if re.fullmatch(r"\s*(0x[0-9a-fA-F]+|\d+)\s*", arg) else None
        i = int(m.group(1))
        return self.int_value(operands[i][1]) if i < len(operands) else None

    def _asm_pointer(self, operands, i: int, off: int, elem: str, c, op: str) -> Pointer:
        if i >= len(operands):
            raise Unsupported(c, f"inline asm '{op}' naming an operand it does not have")
        val = self.rvalue(operands[i][1])
        if not isinstance(val, Pointer) or val.buffer == "?":
            raise Unsupported(c, f"inline asm '{op}' through an address not known to point into a buffer")
        offset = val.offset if off == 0 else ir.BinOp("+", val.offset, ir.Const(off))
        return replace(val, elem=elem, offset=offset, inner=())

    def shared_address(self, args, c) -> Pointer:
        """`__cvta_generic_to_shared(p)`: p itself, as a byte address."""
        val = self.rvalue(args[0]) if len(args) == 1 else None
        if not isinstance(val, Pointer) or val.space != ir.SHARED:
            raise Unsupported(c, "__cvta_generic_to_shared of something not known to be shared memory")
        return replace(val, elem="char", inner=())

    def check_async_copies(self, fn) -> None:
        copies = self.async_copies
        if copies and copies["spans"] and not copies["waits"]:
            raise Unsupported(copies["spans"][0], "cp.async copies the kernel never waits for "
                                                  "(cp.async.wait_group/wait_all): when they land is not known")
