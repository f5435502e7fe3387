"""GLSL do-while loops: SPIR-V puts their condition in the loop's continue block, which branches
back to the header or out to the merge (frontend/spirv/control_flow.py). The racy and fixed
fixtures are vulkan/do_while*.comp; here, what is still refused."""

from conftest import cli_in_process

CONTINUES = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { float data[]; };
layout(push_constant) uniform P { int steps; } p;
void main() {
  int k = 0;
  do {
    k++;
    if (k == 2) continue;
    data[gl_GlobalInvocationID.x] = float(k);
  } while (k < p.steps);
}
"""


def test_a_do_while_whose_body_continues_is_refused_in_one_line(tmp_path):
    # `continue` jumps to the condition, which the lowering puts after the body: it would skip it.
    src = tmp_path / "continues.comp"
    src.write_text(CONTINUES)
    code, out, err = cli_in_process(["check", str(src), "--no-cache", "--no-config", "-j", "1"])
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "a do-while loop whose body continues to its condition" in err
