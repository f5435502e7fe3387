"""WGSL as repositories ship it (issue 42): shader-module imports (vello's `#import NAME`,
naga_oil's `#import a::b`, WESL's `import package::a::b;`), struct values, module-scope
declarations in any order, and `return` inside a loop of an inlined function. Each case writes
its own small shader tree under tmp_path."""

from pathlib import Path

import pytest

from analyzer import ir
from analyzer.errors import KernelraceError
from analyzer.frontend import lower_source
from analyzer.frontend.preprocess import PreprocessOptions
from analyzer.frontend.wgsl.imports import _parse_tree, strip_qualifiers


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def findings(cli, path: Path, *extra):
    code, report, err = cli("check", str(path), "--format", "json", *extra)
    assert code in (0, 1), err
    return code, report["findings"]


# ----- imports -----

SHARED_CONFIG = """// the tiles' layout, shared by every stage
struct Layout { width: u32, count: u32, }
const TILE = WG / 32u;          // names a constant declared in another module
"""
SHARED_SIZES = """const WG = 64u;
fn slot(i: u32) -> u32 { return i * TILE; }
"""
STAGE = """#import layout
#import sizes

@group(0) @binding(0) var<storage, read_write> tiles: array<u32>;
@group(0) @binding(1) var<uniform> lay: Layout;
var<workgroup> scratch: array<u32, TILE>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(global_invocation_id) gid: vec3<u32>) {
    tiles[slot(gid.x) + lay.width] = lid.x;   // stride TILE = 2: distinct
    scratch[lid.x % TILE] = lid.x;            // threads 0 and 2 meet
}
"""


def test_vello_import_resolves_from_shared_and_reports_the_files_own_lines(cli, tmp_path):
    write(tmp_path, {"shared/layout.wgsl": SHARED_CONFIG, "shared/sizes.wgsl": SHARED_SIZES, "stage.wgsl": STAGE})
    code, found = findings(cli, tmp_path / "stage.wgsl")
    assert code == 1
    # Only the workgroup scratch collides (threads 0 and 2 write slot 0); the strided store does not.
    assert {(f["rule"], f["second"]["line"]) for f in found} == {("write-after-write", 11)}
    assert found[0]["second"]["file"] == str(tmp_path / "stage.wgsl")
    (k,) = lower_source(STAGE, "wgsl", str(tmp_path / "stage.wgsl"))
    assert k.buffers["scratch"].size_bytes == 2 * 4


def test_a_race_inside_an_imported_function_names_the_modules_line(cli, tmp_path):
    write(tmp_path, {"shared/put.wgsl": "fn put(i: u32) {\n    out[i / 2u] = i;\n}\n",
                     "k.wgsl": "#import put\n@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
                               "@compute @workgroup_size(8)\nfn main(@builtin(local_invocation_id) l: vec3<u32>) {\n"
                               "    put(l.x);\n}\n"})
    code, (f,) = findings(cli, tmp_path / "k.wgsl")
    assert code == 1 and f["rule"] == "write-after-write"
    # The composed shader's line, and the module's own line and text as its origin.
    assert f["second"]["origin"]["file"].endswith("shared/put.wgsl")
    assert (f["second"]["origin"]["line"], f["second"]["origin"]["text"]) == (2, "out[i / 2u] = i;")


NAGA_LIB = """#define_import_path my_lib::math
fn twice(x: u32) -> u32 { return 2u * x; }
"""
NAGA_MAIN = """#import my_lib::math::{twice}
#import my_lib::math as m
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) l: vec3<u32>) {
    out[twice(l.x)] = 1u;
    out[m::twice(l.x) + 1u] = 2u;
}
"""


def test_naga_oil_import_by_define_import_path_under_an_include_folder(cli, tmp_path):
    write(tmp_path, {"lib/deep/math.wgsl": NAGA_LIB, "app/main.wgsl": NAGA_MAIN})
    code, err_report, err = cli("check", str(tmp_path / "app/main.wgsl"))
    assert code == 2 and err.count("\n") == 1
    assert "#import my_lib::math::{twice}: module 'my_lib::math::twice' not found" in err
    assert "pass -I with the folder that holds it" in err
    # Even and odd slots: clean once the module is found.
    code, found = findings(cli, tmp_path / "app/main.wgsl", "-I", str(tmp_path / "lib"))
    assert (code, found) == (0, [])


def test_wesl_imports_from_the_own_package_and_another_under_i(cli, tmp_path):
    write(tmp_path, {
        "crates/geom/src/shapes/types.wesl": "struct Quad { base: u32, n: u32 }\n",
        "crates/util/src/index.wesl": "import package::consts::STRIDE;\nfn at(q: Quad, i: u32) -> u32 "
                                      "{ return q.base + i * STRIDE; }\n",
        "crates/util/src/consts.wesl": "const STRIDE = 1u;\n",
        "crates/geom/src/passes/fill.wesl": """import package::shapes::types::Quad;
import util::{index::at};

@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(16)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    let q = Quad(4u, 16u);
    out[index::at(q, l.x / 2u)] = l.x;
}
"""})
    code, found = findings(cli, tmp_path / "crates/geom/src/passes/fill.wesl", "--lang", "wgsl",
                           "-I", str(tmp_path / "crates"))
    # Threads 2i and 2i+1 write slot 4 + i.
    assert code == 1 and {f["rule"] for f in found} == {"write-after-write"}


def test_an_item_imported_under_another_name_is_that_item(cli, tmp_path):
    # bevy's `import bevy_core_pipeline::tonemapping::tonemapping_luminance as luminance;`: the
    # renamed function was an unknown call, of a vector's lanes, so its f32 result was a vector
    write(tmp_path, {
        "crates/tone/src/curves.wesl": "fn luma(v: vec3<f32>) -> f32 { return dot(v, vec3(0.2, 0.7, 0.1)); }\n",
        "crates/app/src/k.wesl": """import tone::curves::luma as luminance;

@group(0) @binding(0) var<storage, read_write> out: array<vec3<f32>>;
@group(0) @binding(1) var<storage, read_write> keep: array<u32>;
@compute @workgroup_size(16)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    let rr = luminance(out[l.x]);
    if rr > 0.5 { keep[l.x / DIV] = l.x; }
}
"""})
    path = tmp_path / "crates/app/src/k.wesl"
    text = path.read_text()
    path.write_text(text.replace("DIV", "1u"))
    assert findings(cli, path, "--lang", "wgsl", "-I", str(tmp_path / "crates")) == (0, [])
    path.write_text(text.replace("DIV", "2u"))
    code, found = findings(cli, path, "--lang", "wgsl", "-I", str(tmp_path / "crates"))
    assert code == 1 and {(f["rule"], f["second"]["line"]) for f in found} == {("write-after-write", 8)}


def test_an_import_in_a_branch_not_taken_is_not_resolved(cli, tmp_path):
    write(tmp_path, {"k.wgsl": "#ifdef WITH_EXTRA\n#import extra\n#endif\n"
                               "@compute @workgroup_size(1) fn main() {}\n"})
    assert findings(cli, tmp_path / "k.wgsl") == (0, [])
    code, _, err = cli("check", str(tmp_path / "k.wgsl"), "-D", "WITH_EXTRA")
    assert code == 2 and f"{tmp_path / 'k.wgsl'}:2:1: unsupported construct: #import extra" in err


def test_import_trees_and_qualified_names():
    assert _parse_tree("a::{b, c::{d as e, f}}", "t", 1) == [
        (("a", "b"), None), (("a", "c", "d"), "e"), (("a", "c", "f"), None)]
    # Columns stay: the qualifier becomes spaces after the name.
    assert strip_qualifiers("x = m::f(y) + a::b::C;") == "x = f   (y) + C      ;"


def test_a_malformed_import_is_one_line(cli, tmp_path):
    write(tmp_path, {"k.wgsl": "import a::{b;\n@compute @workgroup_size(1) fn main() {}\n"})
    code, _, err = cli("check", str(tmp_path / "k.wgsl"))
    assert code == 2 and err.count("\n") == 1 and ":1:1: syntax error: import a::{b" in err


def test_an_unsupported_construct_in_a_module_names_the_modules_line(tmp_path):
    write(tmp_path, {"shared/bad.wgsl": "\nfn f() { discard; }\n"})
    src = "#import bad\n@compute @workgroup_size(1) fn main() { f(); }\n"
    try:
        lower_source(src, "wgsl", str(tmp_path / "k.wgsl"), PreprocessOptions())
    except Exception as exc:   # a KernelraceError naming the module's file and line
        assert str(exc).startswith(f"{tmp_path / 'shared/bad.wgsl'}:2:10: unsupported construct: 'discard'")
    else:
        raise AssertionError("no error")


# ----- struct values, order-free module scope, returns in loops -----

STRUCTS = """struct Pair { lo: u32, hi: u32, }
struct Box { p: Pair, w: vec2<f32>, }
@group(0) @binding(0) var<storage, read_write> boxes: array<Box>;
var<workgroup> sh: array<Pair, 64>;

fn swap(p: Pair) -> Pair { return Pair(p.hi, p.lo); }

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    var b = boxes[l.x];              // a struct copied from memory
    b.p = swap(b.p);
    sh[l.x] = b.p;                   // stored member by member
    BARRIER
    let other = sh[(l.x + 1u) % 64u];
    boxes[l.x] = Box(other, b.w);
}
"""


def test_struct_values_copy_construct_return_and_store(cli, tmp_path):
    (k,) = lower_source(STRUCTS.replace("BARRIER", "workgroupBarrier();"), "wgsl", "t.wgsl")
    writes = [s.access for s in ir.walk_stmts(k.body) if isinstance(s, ir.MemOp) and s.access.is_write]
    # sh: two u32 members; boxes: Pair (8 bytes) then w at byte 8 (vec2 alignment), two lanes as one store.
    assert [(a.buffer, a.width) for a in writes] == [("sh", 4), ("sh", 4), ("boxes", 4), ("boxes", 4), ("boxes", 8)]
    racy, fixed = tmp_path / "s.wgsl", tmp_path / "s_fixed.wgsl"
    racy.write_text(STRUCTS.replace("BARRIER", ""))
    fixed.write_text(STRUCTS.replace("BARRIER", "workgroupBarrier();"))
    code, found = findings(cli, racy)
    assert code == 1 and {(f["rule"], f["second"]["line"]) for f in found} == {("read-after-write", 14)}
    assert findings(cli, fixed) == (0, [])


EARLY_RETURN = """@group(0) @binding(0) var<storage, read_write> out: array<u32>;
fn clamp3(x: u32) -> u32 {
    if x > 3u { return 3u; }
    return x;
}
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
    out[clamp3(l.x) + 16u * w.x] = l.x;
}
"""


def test_an_early_return_is_a_value_not_loop_state(cli, tmp_path):
    # Threads 0..3 get their own slot; from 4 on they share slot 3. The result is no loop state
    # (the body is not wrapped in a loop), so the verdicts are exact both ways.
    clean, racy = tmp_path / "c_fixed.wgsl", tmp_path / "c.wgsl"
    clean.write_text(EARLY_RETURN.replace("WG", "4"))
    racy.write_text(EARLY_RETURN.replace("WG", "6"))
    assert findings(cli, clean) == (0, [])
    code, found = findings(cli, racy)
    assert code == 1 and [(f["rule"], f["severity"]) for f in found] == [("write-after-write", "error")]
    assert all({f["witness"]["first_thread"][0], f["witness"]["second_thread"][0]} <= {3, 4, 5} for f in found)
    assert all(f["witness"]["replayed"] for f in found)
    (k,) = lower_source(EARLY_RETURN.replace("WG", "4"), "wgsl", "t.wgsl")
    assert not [s for s in ir.walk_stmts(k.body) if isinstance(s, ir.Loop)]


def test_a_return_inside_a_loop_breaks_out_of_each_enclosing_loop():
    (k,) = lower_source("""@group(0) @binding(0) var<storage, read_write> out: array<u32>;
fn find(x: u32) -> u32 {
    for (var i = 0u; i < 8u; i++) {
        loop {
            if out[i] == x { return i; }
            break;
        }
    }
    return 8u;
}
@compute @workgroup_size(1)
fn main() { out[9] = find(5u); }
""", "wgsl", "t.wgsl")
    (outer,) = [s for s in k.body if isinstance(s, ir.Loop)]
    (inner,) = [s for s in outer.body if isinstance(s, ir.Loop)]
    # Inside: `find.ret = i; find.returned = 1; break`; after the inner loop `if returned: break`;
    # after the outer loop, `return 8u` only while nothing returned.
    (hit,) = [s for s in inner.body if isinstance(s, ir.If)]
    assert [type(s) for s in hit.then] == [ir.Assign, ir.Assign, ir.Break]
    after = outer.body[outer.body.index(inner) + 1]
    assert isinstance(after, ir.If) and after.cond == ir.BinOp("!=", ir.Var("find.returned"), ir.Const(0))
    guard = k.body[k.body.index(outer) + 1]
    assert isinstance(guard, ir.If) and guard.cond == ir.BinOp("==", ir.Var("find.returned"), ir.Const(0))
    assert (guard.then[0].target, guard.then[0].value) == ("find.ret", ir.Const(8))


def test_module_scope_is_order_free_and_constant_expressions_fold():
    (k,) = lower_source("""
var<workgroup> a: array<T, N / 4u + (1u << 2u) - (7u % 4u)>;
alias T = S;
struct S { x: u32, y: U, }
struct U { z: f32 }
const N = M * 2u;
const M = 8u;
@compute @workgroup_size(1) fn main() { a[0].y.z = 1.0; }
""", "wgsl", "t.wgsl")
    assert k.buffers["a"].size_bytes == (16 // 4 + 4 - 3) * 8


def test_a_constant_defined_by_itself_is_one_line():
    try:
        lower_source("const A = B;\nconst B = A;\n@compute @workgroup_size(1) fn main() { let x = A; }\n",
                     "wgsl", "t.wgsl")
    except Exception as exc:
        assert "defined in terms of itself" in str(exc)
    else:
        raise AssertionError("no error")


def test_a_vector_or_struct_assigned_from_its_own_lanes_reads_them_first(cli, tmp_path):
    # `idx = idx.yx` swaps: threads write (lid, 0) swapped to (0, lid), distinct rows. Lane by lane
    # without copies it would write (0, 0) from every thread.
    shader = tmp_path / "swap.wgsl"
    shader.write_text("""struct P { a: u32, b: u32 }
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(16)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    var idx = vec2(l.x, 0u);
    idx = idx.yx;
    var p = P(l.x, 0u);
    p = P(p.b, p.a);
    out[idx.x * 16u + idx.y] = 1u;
    out[64u + p.b] = 2u;
}
""")
    assert findings(cli, shader) == (0, [])


def test_array_values_constant_tables_and_copies():
    (k,) = lower_source("""const TABLE = array(4u, 8u, 15u, 16u);
const LONG = array(0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 14u, 15u, 16u);
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
var<workgroup> sh: array<u32, 4>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    var local = array<u32, 4>(1u, 2u, 3u, 4u);     // a private array with an initial value
    sh[l.x] = TABLE[2] + local[l.x];
    workgroupBarrier();
    let copy = sh;                                  // copied element by element
    out[TABLE[l.x]] = copy[3];
    out[LONG[l.x] + 32u] = 0u;
    let halves = unpack2x16float(out[0]);
    out[5] = pack4x8unorm(vec4(halves[0], halves.y, 0.0, 1.0));
}
""", "wgsl", "t.wgsl")
    ops = [s.access for s in ir.walk_stmts(k.body) if isinstance(s, ir.MemOp)]
    private = [a for a in ops if a.space == ir.PRIVATE]
    assert len(private) == 4 and all(a.is_write for a in private)
    # TABLE[2] folds to 15; TABLE[l.x] is a chain of selects on the index; LONG[l.x] (17
    # elements) an uninterpreted function of it.
    (sh_write,) = [a for a in ops if a.buffer == "sh"]
    assert "Const(value=15)" in repr(sh_write.value)
    (short,) = [a for a in ops if a.buffer == "out" and isinstance(a.offset, ir.BinOp)
                and isinstance(a.offset.a, ir.Select)]
    assert short.offset.a.cond == ir.BinOp("==", ir.Builtin("tid.x"), ir.Const(0))
    (long,) = [a for a in ops if a.buffer == "out" and "array_value" in repr(a.offset)]
    assert ir.Call(long.offset.a.a.fn, (ir.Builtin("tid.x"),)) == long.offset.a.a
    reads = [s for s in ir.walk_stmts(k.body) if isinstance(s, ir.Assign) and s.target.startswith("copy")]
    assert len(reads) == 4


def test_the_address_of_a_struct_variable_passes_it_by_pointer():
    (k,) = lower_source("""struct S { n: u32 }
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
fn bump(s: ptr<function, S>) { (*s).n += 1u; }
@compute @workgroup_size(1)
fn main() { var s = S(2u); bump(&s); out[s.n] = 0u; }
""", "wgsl", "t.wgsl")
    (op,) = [s for s in ir.walk_stmts(k.body) if isinstance(s, ir.MemOp)]
    assert op.access.offset == ir.BinOp("*", ir.Var("s.n"), ir.Const(4))
    assert [s.target for s in ir.walk_stmts(k.body) if isinstance(s, ir.Assign)] == ["s.n", "s.n"]


BREAK_IF_WITH_CONTINUE = """@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(8)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
    var i = 0u;
    loop {
        if i == 1u { continue; }
        out[w.x * 64u + l.x * 8u + i] = i;
        continuing {
            i += 1u;
            break if i >= STOP;
        }
    }
}
"""


def test_break_if_in_a_loop_whose_body_continues(cli, tmp_path):
    (k,) = lower_source(BREAK_IF_WITH_CONTINUE.replace("STOP", "8u"), "wgsl", "t.wgsl")
    (loop,) = [s for s in k.body if isinstance(s, ir.Loop)]
    # `continue` sets the flag, the store runs only while it is 0, then `i += 1` and `break if`.
    assert loop.update == [] and isinstance(loop.body[-1], ir.If) and isinstance(loop.body[-1].then[0], ir.Break)
    assert isinstance(loop.body[-2], ir.Assign) and loop.body[-2].target == "i"
    guard = loop.body[-3]
    assert isinstance(guard, ir.If) and guard.cond == ir.BinOp("==", ir.Var("continued"), ir.Const(0))
    # Nine iterations write past a thread's eight slots into the next thread's: an error; eight
    # do not (what is left is the analysis's warning on a `loop` it cannot bound, not an error).
    racy, fixed = tmp_path / "b.wgsl", tmp_path / "b_fixed.wgsl"
    racy.write_text(BREAK_IF_WITH_CONTINUE.replace("STOP", "9u"))
    fixed.write_text(BREAK_IF_WITH_CONTINUE.replace("STOP", "8u"))
    code, found = findings(cli, racy)
    assert code == 1 and "error" in {f["severity"] for f in found}
    code, found = findings(cli, fixed)
    assert code == 0 and {f["severity"] for f in found} <= {"warning"}


def test_a_template_without_its_values_is_one_line_naming_them(cli, tmp_path):
    for text, where, said in [("{%- include \"s.wgsl\" -%}\n@compute @workgroup_size(1) fn main() {}\n", "1:1",
                               "the template includes 's.wgsl', not found"),
                              ("var<storage, read_write> a: array<{{ elem }}>;\n{% if n > 2 %}{{ m }}{% endif %}\n",
                               "1:1", "unsupported construct: a template (Tera, Jinja or handlebars) that its host "
                                      "renders with values of its own: pass -D elem=VALUE -D m=VALUE -D n=VALUE"),
                              ("var t: texture_storage_2d<{FORMAT}, write>;\n", "1:27",
                               "unsupported construct: template placeholder '{FORMAT}'"),
                              ("var t: texture_storage_2d<##FORMAT##, write>;\n", "1:27",
                               "unsupported construct: template placeholder '##FORMAT##'")]:
        shader = tmp_path / "t.wgsl"
        shader.write_text(text)
        code, _, err = cli("check", str(shader))
        assert code == 2 and err.count("\n") == 1, err
        assert f"{shader}:{where}: {said}" in err, err
    shader.write_text("var t: texture_storage_2d<{FORMAT}, write>;\n")
    assert "pass -D FORMAT=VALUE, the text the host puts there" in cli("check", str(shader))[2]
    # An ordinary syntax error on a line with braces stays a syntax error.
    shader.write_text("@compute @workgroup_size(1) fn main() { x }\n")
    code, _, err = cli("check", str(shader))
    assert code == 2 and "syntax error" in err


# A Tera template as an ML runtime ships it: an include, a loop over a shape the host passes,
# Tera's `range(end=)`, a filter over a whole quotient and a `set_global`.
TERA_TYPES = """alias Scalar = {{ scalar_type }};
struct Array { data: array<Scalar> };
"""
TERA_SHADER = """{%- include "types.wgsl" -%}
{% set_global wg = 64 %}
@group(0) @binding(0) var<storage, read> src: Array;
@group(0) @binding(1) var<storage, read_write> dst: Array;

@compute @workgroup_size({{ wg }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < {{ o_lens[0] / 4 | int }}u) {
        var acc = Scalar();
        {%- for k in range(end = taps) %}
        acc = acc + src.data[gid.x + {{ k }}u];
        {%- endfor %}
        dst.data[gid.x * {{ stride }}u] = acc;
    }
}
"""


def test_a_tera_template_is_checked_as_rendered_with_the_values_given(cli, tmp_path):
    write(tmp_path, {"inc/types.wgsl": TERA_TYPES, "k.wgsl": TERA_SHADER})
    given = ["-I", str(tmp_path / "inc"), "-D", "scalar_type=f32", "-D", "o_lens=[256]", "-D", "taps=3"]
    # stride 1: one element a thread, clean; stride 0: every thread writes dst[0]
    code, found = findings(cli, tmp_path / "k.wgsl", *given, "-D", "stride=1")
    assert (code, found) == (0, [])
    code, found = findings(cli, tmp_path / "k.wgsl", *given, "-D", "stride=0")
    assert code == 1 and {f["rule"] for f in found} == {"write-after-write"}
    # Positions are the rendered text's, under the file's name with `.rendered`; the line shown is it.
    rendered = str(tmp_path / "k.wgsl") + ".rendered"
    assert found[0]["first"]["file"] == rendered
    (k,) = lower_source(TERA_SHADER, "wgsl", str(tmp_path / "k.wgsl"),
                        PreprocessOptions((str(tmp_path / "inc"),), (("scalar_type", "f32"), ("o_lens", "[256]"),
                                                                       ("taps", "3"), ("stride", "0"))))
    assert k.block_dim == {"x": 64, "y": 1, "z": 1}
    line = found[0]["first"]["line"]
    assert "dst.data[gid.x * 0u]" in k.source_lines[line - 1]
    # The bound is (256 / 4) | int = 64, not 256 / (4 | int) = 64.0 (not WGSL); three taps unrolled.
    text = "\n".join(k.source_lines)
    assert "gid.x < 64u" in text and text.count("acc = acc + src.data") == 3


def test_host_string_placeholders_and_tera_edge_cases(cli, tmp_path):
    shader = tmp_path / "tone.wgsl"
    shader.write_text("@group(0) @binding(0) var<storage, read_write> a: array<u32>;\n"
                      "@group(0) @binding(1) var out: texture_storage_2d<{FORMAT}, write>;\n"
                      "@compute @workgroup_size(8) fn main(@builtin(local_invocation_id) l: vec3<u32>) {\n"
                      "    a[l.x / 2u] = l.x;\n}\n")
    code, found = findings(cli, shader, "-D", "FORMAT=rgba8unorm")
    # a host string's {NAME} keeps the file's lines: positions are the file's own
    assert code == 1 and found[0]["first"] == {**found[0]["first"], "file": str(shader), "line": 4}
    shader.write_text(shader.read_text().replace("{FORMAT}", "##FORMAT##"))
    code, found = findings(cli, shader, "-D", "FORMAT=rgba8unorm")
    assert code == 1 and found[0]["first"]["line"] == 4
    code, _, err = cli("check", str(shader))
    assert code == 2 and "pass -D FORMAT=VALUE, the text the host puts there" in err
    shader.write_text("{% for i in [1, 2] %}{% set_global x = i %}{% endfor %}\n")
    code, _, err = cli("check", str(shader))
    assert code == 2 and "tone.wgsl:1:1: unsupported construct: Tera's set_global inside a loop" in err
    shader.write_text("{% for i in range(end = n) %}x{% endfor %}\n")
    code, _, err = cli("check", str(shader), "-D", "n=10000000")
    assert code == 2 and err.count("\n") == 1 and "range of 10000000 items" in err
    shader.write_text("{% if x %}{% include \"tone.wgsl\" %}{% endif %}\n")
    code, _, err = cli("check", str(shader), "-D", "x=1")
    assert code == 2 and err.count("\n") == 1 and "tone.wgsl:1:1: the template includes itself" in err, err
    shader.write_text("{% if x %}\n")
    code, _, err = cli("check", str(shader), "-D", "x=1")
    assert code == 2 and err.count("\n") == 1 and "tone.wgsl:1:1: template syntax error" in err


def test_matrix_values_are_columns_and_their_products_are_uninterpreted():
    (k,) = lower_source("""@group(0) @binding(0) var<storage, read_write> ms: array<mat2x2<f32>>;
@group(0) @binding(1) var<storage, read_write> vs: array<vec2<f32>>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    let m = mat2x2<f32>(vec2(1.0, 0.0), vec2(0.0, 1.0));
    let s = mat2x2<f32>(1.0, 2.0, 3.0, 4.0);
    ms[l.x] = ms[l.x] * m + s;          // read as two columns, written as two
    vs[l.x] = m * vs[l.x] + s[1];
}
""", "wgsl", "t.wgsl")
    ops = [s.access for s in ir.walk_stmts(k.body) if isinstance(s, ir.MemOp)]
    assert [(a.buffer, a.offset) for a in ops if a.buffer == "ms"] == [
        ("ms", ir.BinOp("*", ir.Builtin("tid.x"), ir.Const(16))),
        ("ms", ir.BinOp("+", ir.BinOp("*", ir.Builtin("tid.x"), ir.Const(16)), ir.Const(8)))]
    (v,) = [a for a in ops if a.buffer == "vs"]
    # Each lane of m * v is a function of all the operands' lanes; s[1] is the column (3, 4).
    lane0 = v.value.args[0]
    assert lane0.fn == "f+" and lane0.args[0].fn.startswith("mat*") and len(lane0.args[0].args) == 6
    assert lane0.args[1] == ir.Call("float:3.0", ())


BINDLESS = """struct Slot { v: vec4f }
@group(0) @binding(0) var tex: binding_array<texture_2d<f32>>;
@group(0) @binding(1) var imgs: binding_array<texture_storage_2d<r32float, write>, 4>;
@group(0) @binding(2) var<storage, read_write> slots: binding_array<Slot>;
@compute @workgroup_size(8)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    let a = textureLoad(tex[l.x], vec2u(0), 0);
    slots[l.x].v = a;
    textureStore(imgs[l.x / DIV], vec2u(0), a);
}
"""


def test_binding_arrays_of_textures_and_buffers(cli, tmp_path):
    (k,) = lower_source(BINDLESS.replace("DIV", "1u"), "wgsl", "t.wgsl")
    load = next(s for s in ir.walk_stmts(k.body) if isinstance(s, ir.Eval))
    # A sampled texture's value depends on which texture of the array it is.
    assert load.value.fn.endswith("textureLoad:tex.0") and load.value.args[0] == ir.Builtin("tid.x")
    clean, racy = tmp_path / "b_fixed.wgsl", tmp_path / "b.wgsl"
    clean.write_text(BINDLESS.replace("DIV", "1u"))
    racy.write_text(BINDLESS.replace("DIV", "2u"))       # two threads store texel (0, 0) of one image
    assert findings(cli, clean) == (0, [])
    code, found = findings(cli, racy)
    assert code == 1 and {(f["rule"], f["second"]["line"]) for f in found} == {("write-after-write", 9)}


def test_bit_counts_of_constants_fold():
    (k,) = lower_source("""@group(0) @binding(0) var<storage, read_write> o: array<u32>;
const WG = 256u;
@compute @workgroup_size(1) fn main() {
    o[0] = firstTrailingBit(WG) + 100u * firstLeadingBit(WG) + 1000u * countOneBits(7u);
    o[1] = countLeadingZeros(1u) + 100u * countTrailingZeros(0u) + firstTrailingBit(o[2]);
}""", "wgsl", "t.wgsl")
    first, second = [s.access for s in k.body if isinstance(s, ir.MemOp) and s.access.is_write]
    assert first.value == ir.Const(8 + 800 + 3000)
    # Of a value read from memory: an uninterpreted call, as before.
    assert second.value.a == ir.Const(31 + 3200) and second.value.b.fn == "firstTrailingBit"


CONDITIONAL = """@if(WIDE) @group(0) @binding(0) var<storage, read_write> out: array<vec2<u32>>;
@else @group(0) @binding(0) var<storage, read_write> out: array<u32>;
@if(!WIDE && STRIDED) {
const STEP = 2u;
}
@elif(true) {
const STEP = 1u;
}
struct S {
    a: u32,
    @if(WIDE) b: texture_storage_2d<r32uint, write>,
}
@compute @workgroup_size(8)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    @if(WIDE) {
        out[l.x] = vec2(l.x);
    }
    @else
    out[l.x * STEP] = l.x;
    if l.x > 100u { out[0] = 0u; } @if(MORE) else { out[1] = 1u; }
}
"""


def test_wesl_conditional_translation_follows_the_features(cli, tmp_path):
    from analyzer.frontend.wgsl.conditions import apply_conditions
    narrow = apply_conditions(CONDITIONAL, "t.wesl", (("STRIDED", "1"),))
    assert narrow.count("\n") == CONDITIONAL.count("\n")           # lines stay
    assert "vec2<u32>>" not in narrow and "const STEP = 2u;" in narrow and "STEP = 1u" not in narrow
    assert "{\nconst STEP" not in narrow                              # a kept module-scope group loses its braces
    wide = apply_conditions(CONDITIONAL, "t.wesl", (("WIDE", "1"), ("STRIDED", "0")))
    assert "array<vec2<u32>>" in wide and "array<u32>;" not in wide and "const STEP = 1u;" in wide
    assert "texture_storage_2d<r32uint, write>" in wide and "out[l.x * STEP]" not in wide
    # `@if` on the else of an `if`: dropped with MORE undefined.
    assert "out[1] = 1u" not in narrow and "out[1] = 1u" in apply_conditions(CONDITIONAL, "t", (("MORE", "1"),))
    shader = tmp_path / "c.wesl"
    shader.write_text(CONDITIONAL.replace("@if(MORE) else { out[1] = 1u; }", ""))
    assert findings(cli, shader, "--lang", "wgsl", "-D", "STRIDED") == (0, [])
    code, found = findings(cli, shader, "--lang", "wgsl", "-D", "STRIDED=false")   # STEP 1u: still distinct
    assert code == 0


def test_a_bad_condition_is_one_line(cli, tmp_path):
    shader = tmp_path / "c.wesl"
    for text, what in [("@if(A +) const X = 1u;\n", "condition 'A +'"), ("@else const X = 1u;\n", "@else without an @if"),
                       ("@if(A const X = 1u;\n", "unbalanced parentheses")]:
        shader.write_text(text + "@compute @workgroup_size(1) fn main() {}\n")
        code, _, err = cli("check", str(shader), "--lang", "wgsl")
        assert code == 2 and err.count("\n") == 1 and what in err and ":1:" in err


def test_dynamic_lane_store_immediate_data_and_gather(cli, tmp_path):
    shader = tmp_path / "l.wgsl"
    shader.write_text("""var<immediate> size: u32;
@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    var v = vec4(0u);
    v[l.x] = l.x;                                   // only lane l.x changes
    let g = textureGather(0, t, s, vec2f(0.5));      // the component comes first
    out[v[l.x] + size] = g.x;
}
""")
    (k,) = lower_source(shader.read_text(), "wgsl", str(shader))
    assert "size" in k.params
    lanes = [s for s in k.body if isinstance(s, ir.Assign) and s.target.startswith("v.")][4:]
    assert [s.target for s in lanes] == ["v.0", "v.1", "v.2", "v.3"]
    assert lanes[2].value == ir.Select(ir.BinOp("==", ir.Builtin("tid.x"), ir.Const(2)), ir.Builtin("tid.x"),
                                       ir.Var("v.2"))
    # v[l.x] is l.x for every thread: distinct slots.
    assert findings(cli, shader) == (0, [])


SUBGROUP_BARRIER = """var<workgroup> s: array<u32, 64>;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
    s[i] = i;
    BARRIER();
    out[i] = s[(i + 1u) % 64u];
}
"""


def test_subgroup_barrier_meets_the_subgroup_and_orders_no_workgroup_memory(cli, tmp_path):
    racy, fixed = tmp_path / "sg.wgsl", tmp_path / "sg_fixed.wgsl"
    racy.write_text(SUBGROUP_BARRIER.replace("BARRIER", "subgroupBarrier"))
    fixed.write_text(SUBGROUP_BARRIER.replace("BARRIER", "workgroupBarrier"))
    code, found = findings(cli, racy)
    assert code == 1 and {f["rule"] for f in found} >= {"read-after-write"}
    assert findings(cli, fixed) == (0, [])
    (k,) = lower_source(racy.read_text(), "wgsl", str(racy))
    (bar,) = [s for s in k.body if isinstance(s, ir.Barrier)]
    assert (bar.scope, bar.spaces, bar.text) == (ir.WARP, frozenset(), "subgroupBarrier()")


ATOMIC_ASSIGN = """@group(0) @binding(0) var<storage, read_write> flags: array<ELEM, 4>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
    flags[i % 4u] = i;          // every thread of a residue class writes one flag
    out[i] = flags[(i + 1u) % 4u];
}
"""


def test_an_assignment_to_an_atomic_is_an_atomic_store_as_naga_reads_it(cli, tmp_path):
    atomic, plain = tmp_path / "flags.wgsl", tmp_path / "flags_plain.wgsl"
    atomic.write_text(ATOMIC_ASSIGN.replace("ELEM", "atomic<u32>"))
    plain.write_text(ATOMIC_ASSIGN.replace("ELEM", "u32"))
    # plain u32 flags: threads 0 and 4 write flags[0], thread 3 reads it: races
    code, found = findings(cli, plain)
    assert code == 1 and {f["rule"] for f in found} == {"write-after-write", "read-after-write"}
    # atomic flags written and read as naga does (OpAtomicStore, OpAtomicLoad): no data race
    assert findings(cli, atomic) == (0, [])
    (k,) = lower_source(atomic.read_text(), "wgsl", str(atomic))
    accesses = [s.access for s in k.body if isinstance(s, ir.MemOp) and s.access.buffer == "flags"]
    assert accesses and all(a.atomic for a in accesses)


RAY_QUERY = """@group(0) @binding(0) var acc: acceleration_structure;
@group(0) @binding(1) var<storage, read_write> hits: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    var rq: ray_query;
    let dir = normalize(vec3<f32>(f32(gid.x), 0.5, 1.0));
    rayQueryInitialize(&rq, acc, RayDesc(RAY_FLAG_TERMINATE_ON_FIRST_HIT, 0xFFu, 0.1, 100.0, vec3<f32>(0.0), dir));
    rayQueryProceed(&rq);
    let hit = rayQueryGetCommittedIntersection(&rq);
    if hit.kind != RAY_QUERY_INTERSECTION_NONE {
        hits[SLOT] = u32(hit.t * 100.0) + hit.instance_index;
    }
}
"""


def test_ray_queries_are_values_read_from_a_read_only_structure(cli, tmp_path):
    # One slot a pixel: clean. A slot chosen by the hit (its primitive): two pixels may hit one.
    fixed, racy = tmp_path / "rq_fixed.wgsl", tmp_path / "rq.wgsl"
    fixed.write_text(RAY_QUERY.replace("SLOT", "gid.x"))
    racy.write_text(RAY_QUERY.replace("SLOT", "hit.primitive_index"))
    assert findings(cli, fixed) == (0, [])
    code, found = findings(cli, racy)
    assert code == 1 and {f["rule"] for f in found} == {"write-after-write"}
    (k,) = lower_source(racy.read_text(), "wgsl", str(racy))
    assert set(k.buffers) == {"hits"}   # the structure is no memory the kernel shares


COMMON = """struct Params { stride: u32, }
@group(0) @binding(1) var<uniform> params: Params;
fn put(i: u32) {
    out[i / params.stride + 64u] = i;
}
"""


def test_an_included_file_is_a_module_the_host_concatenates(cli, tmp_path):
    """`--include common.wgsl` (a host that concatenates sources: webgpu-samples' cornell): its
    declarations are the shader's, after the file's own lines, so the file's positions stay its
    own and a finding inside the included file names that file's line. Without it the name is
    unknown (one line)."""
    write(tmp_path, {"common.wgsl": COMMON,
                     "k.wgsl": "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
                               "@compute @workgroup_size(64)\nfn main(@builtin(local_invocation_index) l: u32) {\n"
                               "    out[l / params.stride] = l;\n    put(l);\n}\n"})
    code, _, err = cli("check", str(tmp_path / "k.wgsl"))
    assert code == 2 and "k.wgsl:4:13: unsupported construct: unknown name 'params'" in err
    common = str(tmp_path / "common.wgsl")
    code, found = findings(cli, tmp_path / "k.wgsl", "--include", common)
    assert code == 1 and {(f["rule"], f["second"]["line"]) for f in found if not f["second"]["origin"]} == {
        ("write-after-write", 4)}
    inside = [f["second"]["origin"] for f in found if f["second"]["origin"]]
    assert inside and all(o["file"].endswith("common.wgsl") and o["line"] == 4 for o in inside)


RAY_FROM_MEMORY = """enable wgpu_ray_query;
@group(0) @binding(0) var acc: acceleration_structure;
@group(0) @binding(1) var<storage, read_write> origins: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> hits: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) l: u32) {
    origins[l] = vec4<f32>(f32(l));
    BARRIER
    var rq: ray_query;
    rayQueryInitialize(&rq, acc, RayDesc(0u, 0xFFu, 0.001, 100.0, origins[63u - l].xyz, vec3<f32>(0.0, 0.0, 1.0)));
    rayQueryProceed(&rq);
    hits[l] = rayQueryGetCommittedIntersection(&rq).t;
}
"""


def test_a_ray_descriptor_read_from_memory_is_an_access(cli, tmp_path):
    """The reads in a ray query built-in's arguments (a `RayDesc` whose origin is loaded) are
    accesses (they were evaluated and dropped: the race on `origins` was missed)."""
    racy, fixed = tmp_path / "rq.wgsl", tmp_path / "rq_fixed.wgsl"
    racy.write_text(RAY_FROM_MEMORY.replace("BARRIER", ""))
    fixed.write_text(RAY_FROM_MEMORY.replace("BARRIER", "storageBarrier();"))
    code, found = findings(cli, racy)
    assert code == 1 and {(f["rule"], f["second"]["line"]) for f in found} == {("read-after-write", 10)}
    assert findings(cli, fixed) == (0, [])


def test_a_binding_array_of_runtime_sized_buffers_is_read_not_written():
    src = """enable wgpu_binding_array;
struct Data {{ values: array<f32> }}
@group(0) @binding(0) var<storage{rw}> sources: binding_array<Data, 4>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
  out[gid.x] = sources[gid.x % 4u].values[gid.x]{store};
}}
"""
    (k,) = lower_source(src.format(rw="", store=""), "wgsl", "t.wgsl")
    (read,) = [a for a in ir.accesses(k.body) if a.buffer == "sources"]
    # each buffer of the array starts where a function of its index says, its element 4 bytes on
    start = ir.Call("binding-array-start:sources", (ir.BinOp("%", ir.BinOp("+", ir.BinOp(
        "*", ir.Builtin("bid.x"), ir.Builtin("bdim.x")), ir.Builtin("tid.x")), ir.Const(4)),))
    assert start in ir.operands(read.offset) or read.offset.a == start
    # written, two buffers' elements could be placed on each other: not modelled
    with pytest.raises(KernelraceError, match="7:.*binding array of runtime-sized buffers written"):
        lower_source(src.format(rw=", read_write", store=";\n  sources[0].values[gid.x] = 1.0"), "wgsl", "t.wgsl")


COMPOSITE_RESULTS = """struct Vertex { p: vec3<f32>, w: f32 }
struct Hit { t: f32, to_world: mat4x3<f32> }
@group(0) @binding(0) var<storage, read_write> verts: array<Vertex>;
@group(0) @binding(1) var<storage, read_write> out: array<vec3<f32>>;
fn basis(n: vec3<f32>) -> mat3x3<f32> {
    var t = n.yzx;
    return mat3x3(t, n, cross(n, t));
}
fn three(i: u32) -> array<Vertex, 3> {
    return array<Vertex, 3>(verts[3u * i], verts[3u * i + 1u], verts[3u * i + 2u]);
}
fn hit(v: Vertex) -> Hit {
    return Hit(v.w, mat4x3<f32>(v.p, v.p, v.p, v.p));
}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let tri = three(gid.x);
    let m = basis(tri[1].p);
    let h = hit(tri[2]);
    out[gid.x / DIV] = m[2] + h.to_world[3] * h.t;
}
"""


def test_functions_returning_matrices_arrays_and_structs_with_a_matrix(cli, tmp_path):
    # `mat3x3(t, n, b)` (its type from the values) was read as an unknown function of vectors,
    # and a function's matrix, array or struct-with-a-matrix result was refused (exit 2)
    clean, racy = tmp_path / "c_fixed.wgsl", tmp_path / "c.wgsl"
    clean.write_text(COMPOSITE_RESULTS.replace("DIV", "1u"))
    racy.write_text(COMPOSITE_RESULTS.replace("DIV", "2u"))       # two invocations store one element
    assert findings(cli, clean) == (0, [])
    code, found = findings(cli, racy)
    assert code == 1 and {(f["rule"], f["second"]["line"]) for f in found} == {("write-after-write", 20)}
    (k,) = lower_source(COMPOSITE_RESULTS.replace("DIV", "1u"), "wgsl", "t.wgsl")
    (store,) = [a for a in ir.accesses(k.body) if a.buffer == "out"]
    # m[2] is the third column's variables, not a lane of an unknown call `mat3x3`
    assert "Var(name='m.2.0')" in repr(store.value) and "mat3x3" not in repr(store.value)
