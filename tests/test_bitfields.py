"""Bit fields as shifts and masks (analyzer/frontend/bitfields.py): WGSL's extractBits/insertBits
(a clamped field) and SPIR-V's OpBitField* (undefined past bit 31), checked against the 32-bit
values the specifications give, as the solver encodes them; and the front ends that use them."""

import random

import pytest
import z3

from analyzer import ir
from analyzer.analysis.decision.solver import Encoder
from analyzer.frontend import bitfields, lower_source
from analyzer.frontend.spirv_tools import compile_glsl, disassemble

E, NB, O, C = ir.Param("e"), ir.Param("n"), ir.Param("o"), ir.Param("c")


def _s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def wgsl_extract(e, offset, count, signed):
    o = min(offset, 32)
    c = min(count, 32 - o)
    if c == 0:
        return 0
    v = ((e & 0xFFFFFFFF) >> o) & ((1 << c) - 1)
    return v - (1 << c) if signed and v >> (c - 1) & 1 else v


def wgsl_insert(e, n, offset, count, signed):
    o = min(offset, 32)
    c = min(count, 32 - o)
    if c == 0:
        return e
    m = ((1 << c) - 1) << o
    r = ((e & 0xFFFFFFFF) & ~m | ((n << o) & m)) & 0xFFFFFFFF
    return _s32(r) if signed else r


def _cases(signed: bool, k: int, seed: int):
    rng = random.Random(seed)
    word = (lambda: rng.choice([rng.randint(-2**31, 2**31 - 1), -1, 0, -2**31, 2**31 - 1])) if signed else \
        (lambda: rng.choice([rng.randint(0, 2**32 - 1), 0, 2**32 - 1, 1 << 31]))
    field = lambda: rng.choice([rng.randint(0, 40), 0, 1, 31, 32, 33])  # noqa: E731
    return [(word(), word(), field(), field()) for _ in range(k)]


@pytest.mark.parametrize("signed", [False, True], ids=["u32", "i32"])
@pytest.mark.parametrize("symbolic", [False, True], ids=["constant-field", "symbolic-field"])
def test_wgsl_bit_fields_encode_the_specified_values(signed, symbolic):
    kernel = ir.Kernel("k", "k.wgsl", "wgsl", [], {}, [])
    # u32 operands over their whole range (a parameter is an i32 unless its range says otherwise)
    kernel.param_ranges.update({} if signed else {"e": (0, 2**32 - 1), "n": (0, 2**32 - 1)})
    enc = Encoder(kernel, 32)
    s = z3.Solver()
    e, n, o, c = z3.Ints("e n o c")
    for ev, nv, ov, cv in _cases(signed, 40, 7 + signed + 2 * symbolic):
        fo, fc = (O, C) if symbolic else (ir.Const(ov), ir.Const(cv))
        field = bitfields.wgsl_field(fo, fc)
        enc.collecting()
        terms = [enc.term(bitfields.extract(E, *field, signed), 1),
                 enc.term(bitfields.insert(E, NB, *field, signed), 1)]
        s.push()
        s.add(*enc.needed(), e == ev, n == nv, o == ov, c == cv)
        assert s.check() == z3.sat
        want = [wgsl_extract(ev, ov, cv, signed), wgsl_insert(ev, nv, ov, cv, signed)]
        for t, w in zip(terms, want):
            assert s.check(t != w) == z3.unsat, (ev, nv, ov, cv, w)
        s.pop()


def test_spirv_field_past_bit_31_is_undefined():
    undefined = ir.Opaque("undefined", 1)
    assert bitfields.spirv_defined(ir.Const(5), ir.Const(30), ir.Const(3), undefined) is undefined
    assert bitfields.spirv_defined(ir.Const(5), ir.Const(29), ir.Const(3), undefined) == ir.Const(5)
    sym = bitfields.spirv_defined(ir.Const(5), O, C, undefined)
    assert isinstance(sym, ir.Select) and sym.b is undefined


def test_wgsl_bit_fields_lower_to_shifts_and_masks_lane_by_lane():
    (k,) = lower_source("""
@group(0) @binding(0) var<storage, read_write> out : array<vec2<u32>>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid : u32) {
    out[lid] = insertBits(vec2<u32>(lid, 7u), vec2<u32>(1u, lid), 4u, 2u);
}""", "wgsl", "t.wgsl")
    (store,) = [s for s in ir.walk_stmts(k.body) if isinstance(s, ir.MemOp)]
    assert "insertBits" not in repr(store) and "Call" not in repr(store.access.offset)


def test_glsl_bit_fields_lower_to_shifts_and_masks():
    src = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint v[]; };
void main() { v[bitfieldInsert(gl_LocalInvocationIndex, 1u, 6, 1)] = bitfieldExtract(gl_LocalInvocationIndex, 2, 3); }
"""
    text = disassemble(compile_glsl(src, "t.comp"), "t.spv")
    assert "OpBitFieldInsert" in text and "OpBitFieldUExtract" in text
    (k,) = lower_source(text, "spirv", "t.spvasm")
    (store,) = [s for s in ir.walk_stmts(k.body) if isinstance(s, ir.MemOp)]
    assert "OpBitField" not in repr(store)
