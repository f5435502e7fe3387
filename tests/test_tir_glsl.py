"""The Vulkan path: TVM's device TIR for the corpus, translated to GLSL by analyzer/tvm/tir_glsl.py,
compiles with glslang, validates with spirv-val, and keeps exactly the TIR's memory accesses and
barriers (counted independently in the TIR and in the SPIR-V glslang emits)."""

import re
import subprocess
from collections import Counter

import pytest
import tvm
from tvm.script import tirx as T

from analyzer.errors import KernelraceError
from analyzer.tvm.builders import device_functions
from analyzer.tvm.corpus import MERGE_STATE, builders
from analyzer.tvm.tir_glsl import translate

_DEVICE: dict = {}


def device(spec, params):
    """Each builder is built (for vulkan, up to the host/device split) once per session."""
    key = (spec, repr(sorted(params.items())))
    if key not in _DEVICE:
        _DEVICE[key] = device_functions(spec, params)
    return _DEVICE[key]


def _short(spec):
    return spec.split(":")[1]


# ---------------------------------------------------------------------------------------------
# Independent counts: TIR side (a walk of its own, not the translator's) and SPIR-V side.

_TIR_FIELDS = ("seq", "body", "then_case", "else_case", "condition", "value", "min", "extent",
               "a", "b", "true_value", "false_value", "base", "stride", "args", "indices", "vectors")
_SPACE = {"global": "StorageBuffer", "shared": "Workgroup", "shared.dyn": "Workgroup"}


def _lanes(expr) -> int:
    m = re.search(r"x(\d+)$", str(expr.ty.dtype))
    return int(m.group(1)) if m else 1


def walk_tir(node, visit) -> None:
    """Pre-order walk over TIR statements and expressions, operands in evaluation order."""
    visit(node)
    for field in _TIR_FIELDS:
        child = getattr(node, field, None)
        if child is None:
            continue
        items = list(child) if type(child).__name__ == "Array" else [child]
        for item in items:
            if hasattr(item, "__chandle__") and type(item).__name__ not in ("String", "StringImm", "IterVar", "Map"):
                walk_tir(item, visit)


def tir_counts(func) -> Counter:
    """Static counts of the accesses to device and shared memory (one per lane) and of barriers."""
    counts = Counter()

    def visit(node):
        kind = type(node).__name__
        if kind in ("TensorLoad", "BufferLoad"):
            space = _SPACE.get(str(node.source.ty.storage_scope))
            if space:
                counts[("load", space)] += _lanes(node.indices[0])
        elif kind == "BufferStore":
            space = _SPACE.get(str(node.buffer.ty.storage_scope))
            if space:
                counts[("store", space)] += _lanes(node.indices[0])
        elif kind == "Call" and str(node.op.name).endswith("tvm_storage_sync"):
            counts["barrier"] += 1

    walk_tir(func.body, visit)
    return counts


def spirv_counts(disassembly: str) -> Counter:
    """Static counts of OpLoad/OpStore through StorageBuffer/Workgroup pointers, and barriers."""
    space: dict[str, str] = {}
    counts = Counter()
    for line in disassembly.splitlines():
        tok = line.split()
        if len(tok) >= 5 and tok[1] == "=" and tok[2] == "OpVariable":
            space[tok[0]] = tok[4]
        elif len(tok) >= 5 and tok[1] == "=" and tok[2] in ("OpAccessChain", "OpInBoundsAccessChain"):
            if tok[4] in space:
                space[tok[0]] = space[tok[4]]
        elif len(tok) >= 5 and tok[1] == "=" and tok[2] == "OpLoad":
            if space.get(tok[4]) in ("StorageBuffer", "Workgroup"):
                counts[("load", space[tok[4]])] += 1
        elif tok and tok[0] == "OpStore":
            if space.get(tok[1]) in ("StorageBuffer", "Workgroup"):
                counts[("store", space[tok[1]])] += 1
        elif tok and tok[0] == "OpControlBarrier":
            counts["barrier"] += 1
    return counts


def compile_glsl(source: str, path) -> str:
    """glslang -> spirv-val -> spirv-dis; returns the disassembly."""
    comp, spv = path.with_suffix(".comp"), path.with_suffix(".spv")
    comp.write_text(source)
    r = subprocess.run(["glslangValidator", "-V", "--target-env", "vulkan1.2", "-g", str(comp), "-o", str(spv)],
                       check=False, capture_output=True, text=True)
    assert r.returncode == 0, f"glslang rejected {comp}:\n{r.stdout}{r.stderr}"
    r = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(spv)], check=False, capture_output=True, text=True)
    assert r.returncode == 0, f"spirv-val rejected {spv}:\n{r.stdout}{r.stderr}"
    r = subprocess.run(["spirv-dis", str(spv)], check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def check_kernel(name, func, tmp_path) -> str:
    source = translate(func, name)
    assert source == translate(func, name), "translation is not deterministic"
    dis = compile_glsl(source, tmp_path / name)
    assert spirv_counts(dis) == tir_counts(func), f"{name}: SPIR-V accesses/barriers differ from the TIR's"
    return source


# ---------------------------------------------------------------------------------------------
# The corpus at head_dim 128, and the merge-state seed at every head_dim.

# The seed's merge_state and the cumsum in the default run; the rest of the corpus in the slow set.
@pytest.mark.parametrize("spec,params", [pytest.param(s, p, id=_short(s), marks=[] if any(
    k in s for k in ("merge_state", "cumsum")) else [pytest.mark.slow]) for s, p in builders(128)])
def test_corpus_kernel_compiles_and_keeps_every_access(spec, params, tmp_path):
    kernels = device(spec, params)
    assert kernels
    for name, func in kernels:
        check_kernel(name, func, tmp_path)


@pytest.mark.parametrize("head_dim", [64, 128, 256, 512])
def test_merge_state_seed(head_dim, tmp_path):
    params = dict(builders(head_dim))[MERGE_STATE]
    (name, func), = device(MERGE_STATE, params)
    source = check_kernel(name, func, tmp_path)
    # threadIdx.x covers head_dim / 4 lanes of 4 halves; 32 heads over blockIdx.y and threadIdx.y.
    assert re.search(rf"local_size_x = {head_dim // 4}, local_size_y = \d+, local_size_z = 1", source)
    assert "int(gl_LocalInvocationID.x)" in source


def test_merge_state_glsl_text_matches_tir():
    """In the GLSL itself: one `barrier();` per storage sync, one `X[` per access lane of each buffer."""
    (name, func), = device(MERGE_STATE, dict(builders(128))[MERGE_STATE])
    source = translate(func, name)
    body = source[source.index("void main()"):]
    counts = tir_counts(func)
    assert body.count("barrier();") == counts["barrier"]
    per_buffer = Counter()

    def visit(node):
        kind = type(node).__name__
        if kind in ("TensorLoad", "BufferStore"):
            buf = node.source if kind == "TensorLoad" else node.buffer
            per_buffer[buf.name] += _lanes(node.indices[0])

    walk_tir(func.body, visit)
    # S, S_other, V, V_other are the DeclBuffer views of S_ptr, ... (the GLSL buffer members).
    for buf in ("S", "S_other", "V", "V_other"):
        member = f"{buf}_ptr"
        assert len(re.findall(rf"\b{member}\[", body)) == per_buffer[buf], member
    # merge-state reads S, then writes it: 2 S accesses, 8 V lanes (4 read, 4 written), no barrier.
    assert per_buffer["S"] == 2 and per_buffer["V"] == 8 and counts["barrier"] == 0
    lines = [ln.strip() for ln in body.splitlines()]
    first_read = next(i for i, ln in enumerate(lines) if re.search(r"= S_ptr\[", ln))
    write = next(i for i, ln in enumerate(lines) if ln.startswith("S_ptr["))
    assert first_read < write


# ---------------------------------------------------------------------------------------------
# Semantics the race analysis depends on, on small hand-written kernels.

@T.prim_func
def _guarded(A: T.handle("float32", "global"), B: T.handle("int32", "global"), n: T.int32):
    T.func_attr({"tirx.noalias": True})
    Ab = T.decl_buffer((n,), "float32", data=A)
    Bb = T.decl_buffer((n,), "int32", data=B)
    Bf = T.decl_buffer((n,), "float32", data=B)
    bx = T.launch_thread("blockIdx.x", n)
    tx = T.launch_thread("threadIdx.x", 64)
    S = T.alloc_shared((64,), "float32")
    S[tx] = T.if_then_else(bx * 64 + tx < n, Ab[bx * 64 + tx], T.float32(0))
    T.tvm_storage_sync("shared")
    for k in T.unroll(2):
        if tx < 32 and Bb[tx] > 0:
            Ab[bx * 64 + tx + k] = S[63 - tx] + Bf[tx]
    Bb[tx] = T.truncmod(tx - 100, 7) + T.floordiv(tx - 100, 7) + T.floormod(tx - 100, -7) + T.truncdiv(tx - 100, 7)
    Ab[T.Ramp(tx * 4, 1, 4)] = Ab[T.Ramp(tx * 4 + 1, 1, 4)] + T.Broadcast(Ab[tx], 4)
    T.tvm_storage_sync("warp")


def test_guarded_loads_eager_operands_and_integer_semantics(tmp_path):
    source = check_kernel("guarded", _guarded, tmp_path)
    lines = source.splitlines()
    # The load TIR guards with if_then_else stays inside an `if` on the guard.
    load = next(i for i, ln in enumerate(lines) if re.search(r"= A\[", ln))
    guard = max(i for i in range(load) if lines[i].lstrip().startswith("if ("))
    assert "< params.n" in lines[guard]
    assert len(lines[load]) - len(lines[load].lstrip()) > len(lines[guard]) - len(lines[guard].lstrip())
    # TIR's `and` evaluates both operands (TVM's SPIR-V uses OpLogicalAnd): the load of B is not
    # behind GLSL's short-circuit `&&`.
    cond = next(ln for ln in lines if "&&" in ln)
    assert "B[" not in cond
    # C's truncating % and floor division/modulo go through the pure helpers; / is truncating.
    for helper in ("tir_truncmod(", "tir_floordiv(", "tir_floormod("):
        assert helper in source
    assert "% " not in source[source.index("void main()"):]
    # Vector accesses are scalarized lane by lane, addresses as in the TIR; barriers stay in place.
    tx = "int(gl_LocalInvocationID.x)"
    tail = [ln.strip() for ln in lines[-9:-2]]
    assert tail == [
        f"int idx3 = ({tx} * 4) + 1;",
        f"vec4 tmp4 = vec4(A[idx3], A[idx3 + 1], A[idx3 + 2], A[idx3 + 3]) + vec4(A[{tx}]);",
        f"int idx5 = {tx} * 4;",
        "A[idx5] = tmp4.x;", "A[idx5 + 1] = tmp4.y;", "A[idx5 + 2] = tmp4.z;", "A[idx5 + 3] = tmp4.w;"]
    assert lines[-2].strip() == "subgroupBarrier();" and source.count("barrier();") == 1
    assert "GL_KHR_shader_subgroup_basic" in source
    # A pointer viewed with another element type gets an aliasing block at the same binding.
    assert "layout(std430, set = 0, binding = 1) buffer B_as_float32_buf { float B_as_float32[]; };" in source
    assert "for (int k = 0; k < 2; ++k) {  // unrolled" in source


@T.prim_func
def _intrinsics(A: T.handle("float32", "global"), H: T.handle("float16", "global"),
                I: T.handle("int64", "global"), U: T.handle("uint32", "global"), n: T.int32, f: T.float16):
    T.func_attr({"tirx.noalias": True})
    Ab = T.decl_buffer((n,), "float32", data=A)
    Hb = T.decl_buffer((n,), "float16", data=H)
    Ib = T.decl_buffer((n,), "int64", data=I)
    Ub = T.decl_buffer((n,), "uint32", data=U)
    tx = T.launch_thread("threadIdx.x", 64)
    x: T.float32 = Ab[tx]
    Ab[tx] = (T.erf(x) + T.sigmoid(x) + T.exp10(x) + T.log10(x) + T.log1p(x) + T.floor(x) + T.fabs(x)
              + T.rsqrt(x) + T.tanh(x))
    Hb[tx] = T.erf(Hb[tx]) + T.exp(Hb[tx]) + f + T.Cast("float16", T.reinterpret("float32", T.reinterpret("int32", x)))
    Ib[tx] = (T.floordiv(Ib[tx], T.int64(-3)) + T.shift_right(Ib[tx], T.int64(2)) + T.bitwise_and(Ib[tx], T.int64(7))
              + T.Cast("int64", T.Select(x > T.float32(0), 1, 2)))
    Ub[tx] = T.floordiv(Ub[tx], T.uint32(3)) + T.floormod(Ub[tx], T.uint32(5)) + T.bitwise_xor(Ub[tx], T.uint32(9))
    Ab[T.Ramp(tx * 4, 1, 4)] = T.Select(Ab[T.Ramp(tx * 4, 1, 4)] > T.Broadcast(T.float32(0), 4),
                                        T.Broadcast(T.float32(1), 4), T.Broadcast(T.float32(2), 4))
    Ib[T.Ramp(tx * 4, 1, 4)] = T.floordiv(T.Ramp(T.Cast("int64", tx), T.int64(1), 4), T.Broadcast(T.int64(3), 4))


def test_intrinsics_and_types_compile(tmp_path):
    """Math intrinsics (erf and the float16 variants through helpers), int64/uint32 arithmetic,
    bit casts, vector Select and vector floor division are type-correct GLSL."""
    source = check_kernel("intrinsics", _intrinsics, tmp_path)
    assert "i64vec4 tir_floordiv(i64vec4 a, i64vec4 b)" in source
    assert "float16_t tir_erf(float16_t x)" in source
    assert "layout(push_constant) uniform Params { int n; float16_t f; } params;" in source


# ---------------------------------------------------------------------------------------------
# Constructs that are not modelled raise a one-line KernelraceError naming them and the kernel.

@T.prim_func
def _symbolic_block(A: T.handle("float32", "global"), n: T.int32):
    T.func_attr({"tirx.noalias": True})
    Ab = T.decl_buffer((n,), "float32", data=A)
    tx = T.launch_thread("threadIdx.x", n)
    Ab[tx] = T.float32(1)


@T.prim_func
def _punned_shared(A: T.handle("float32", "global")):
    T.func_attr({"tirx.noalias": True})
    Ab = T.decl_buffer((64,), "float32", data=A)
    tx = T.launch_thread("threadIdx.x", 64)
    S = T.alloc_shared((64,), "float32")
    Si = T.decl_buffer((64,), "int32", data=S.data, scope="shared")
    S[tx] = Ab[tx]
    T.tvm_storage_sync("shared")
    Ab[tx] = T.Cast("float32", Si[63 - tx])


def _merge_with(stmt):
    (name, func), = device(MERGE_STATE, dict(builders(128))[MERGE_STATE])
    return name, func.with_body(tvm.tirx.SeqStmt([stmt, func.body]))


@pytest.mark.parametrize("make,expected", [
    (lambda: _merge_with(tvm.tirx.Evaluate(tvm.tirx.call_intrin("int32", "tirx.tvm_storage_sync", "global"))),
     r'merge_state_inplace_kernel: tvm_storage_sync\("global"\)'),
    (lambda: _merge_with(tvm.tirx.Evaluate(tvm.tirx.call_extern("float32", "foo", tvm.tirx.FloatImm("float32", 1.0)))),
     r'merge_state_inplace_kernel: intrinsic tirx\.call_extern\("foo"\)'),
    (lambda: ("symbolic_block", _symbolic_block), r"symbolic_block: symbolic threadIdx\.x extent n"),
    (lambda: ("punned_shared", _punned_shared), r"punned_shared: shared buffer S \(float32\) re-viewed as int32"),
], ids=["global-sync", "extern-call", "symbolic-threadIdx", "punned-shared"])
def test_unsupported_construct_raises(make, expected):
    name, func = make()
    with pytest.raises(KernelraceError, match=expected) as info:
        translate(func, name)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("unsupported TIR construct in kernel ")
