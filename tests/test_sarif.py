"""SARIF 2.1.0 output (analyzer/report/sarif.py): valid against the OASIS schema, and meaning what a user of
GitHub code scanning or a SARIF viewer relies on: the primary location is the second access, the
related location the first, one thread flow per thread of the witness, locations of built kernels
in the file --emit-dir wrote, and fingerprints that survive moving code around."""

import argparse
import dataclasses
import json
import re
import shlex
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse
from urllib.request import url2pathname

import pytest
from conftest import FIXTURES, TESTS, fixture_args
from jsonschema.validators import validator_for

from analyzer.findings import Finding, KernelResult, Location
from analyzer.pipeline import Options, check_built, check_file
from analyzer.report import sarif
from rules import RULES

ROOT = TESTS.parent
SCHEMA = json.loads((TESTS / "data" / "sarif-schema-2.1.0.json").read_text())
MERGE_STATE = "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace"
MERGE_PARAMS = {"num_heads": 8, "head_dim": 256, "v_dtype": "float16"}
LEVEL = {"error": "error", "warning": "warning", "note": "note"}
KEY = sarif.FINGERPRINT_KEY


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    # Fixture paths are given relative to the repository, as a user in CI gives them.
    monkeypatch.chdir(ROOT)


# ---------------------------------------------------------------------------------------------
# helpers

def _dims(text):
    return tuple(int(x) for x in text.split(","))


def _fixture_options(path: Path):
    p = argparse.ArgumentParser()
    p.add_argument("--block-dim", type=_dims)
    p.add_argument("--grid-dim", type=_dims)
    p.add_argument("--scalar", dest="define", action="append", default=[])
    p.add_argument("--lang")
    p.add_argument("--strict", action="store_true")
    return p.parse_args(fixture_args(path))


def check(path, source: Path | None = None) -> list[KernelResult]:
    """`kernelrace check` of a fixture with the arguments in its first line; `source` checks
    another file (a modified copy) with the fixture's arguments."""
    path = Path(path)
    a = _fixture_options(path)
    defines = {k: int(v, 0) for k, v in (d.split("=", 1) for d in a.define)}
    target = source or path.relative_to(ROOT)
    return check_file(str(target), a.lang, a.block_dim, a.grid_dim, defines, Options(strict=a.strict))


_CACHE: dict[str, list[KernelResult]] = {}


def check_cached(rel: str) -> list[KernelResult]:
    if rel not in _CACHE:
        _CACHE[rel] = check(FIXTURES / rel)
    return _CACHE[rel]


def validate(log: dict) -> None:
    cls = validator_for(SCHEMA)
    cls.check_schema(SCHEMA)
    doc = json.loads(sarif.dumps(log))     # what is written is JSON, and the same document
    assert doc == log
    errors = sorted(cls(SCHEMA, format_checker=cls.FORMAT_CHECKER).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10])


def findings(results):
    return [f for r in results for f in r.findings]


def resolve(log: dict, art: dict) -> Path:
    """The file an artifactLocation names, as a consumer resolves it."""
    uri = art["uri"]
    if "uriBaseId" in art:
        uri = urljoin(log["runs"][0]["originalUriBaseIds"][art["uriBaseId"]]["uri"], uri)
    parsed = urlparse(uri)
    assert parsed.scheme == "file", f"not resolvable to a file: {art}"
    return Path(url2pathname(unquote(parsed.path)))


def region(loc: dict) -> tuple[int, int | None]:
    r = loc["physicalLocation"]["region"]
    return r["startLine"], r.get("startColumn")


def related(result: dict, id_: int) -> dict:
    hits = [r for r in result.get("relatedLocations", []) if r.get("id") == id_]
    assert len(hits) == 1, result.get("relatedLocations")
    return hits[0]


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def thread(t) -> str:
    return "(" + ",".join(map(str, t)) + ")"


def users(loc, f) -> tuple[int, int | None]:
    """Where SARIF puts an access: its line in the user's source (a GLSL line, a builder's Python
    line) when it has one, else its own; a column of 0 (unknown) is left out."""
    site = loc.users(f.target is not None) or (loc.file, loc.line, loc.col)
    return site[1], site[2] or None


def primary_pos(f) -> tuple[int, int | None]:
    """The primary location: the user's line of the finding (`Finding.site`) when the analysed
    text was generated from the user's, else the second access."""
    site = f.site()
    return (site[1], site[2] or None) if site is not None else (f.second.line, f.second.col)


def users_text(f, loc) -> str:
    site = loc.users(f.target is not None)
    return sarif._users_text(loc, site).strip() if site else loc.text


def match(log: dict, results: list[KernelResult]) -> list[tuple[Finding, dict]]:
    """Each finding with its SARIF result, matched by rule and by the positions of the primary
    location (the user's line of the finding, else the second access) and related location 1 (the
    first access, on the user's line when it has one)."""
    out = log["runs"][0]["results"]
    fs = findings(results)
    assert len(out) == len(fs)
    by_key = {}
    for res in out:
        first = related(res, 1) if any(r.get("id") == 1 for r in res.get("relatedLocations", [])) else None
        key = (res["ruleId"], res["properties"]["kernel"], json.dumps(res["properties"]["params"], sort_keys=True),
               *region(res["locations"][0]), *(region(first) if first else (None, None)))
        assert key not in by_key
        by_key[key] = res
    pairs = []
    for f in fs:
        key = (f.rule, f.kernel, json.dumps(f.params, sort_keys=True), *primary_pos(f),
               *(users(f.first, f) if f.first else (None, None)))
        assert key in by_key, f"no SARIF result with the user's line primary and the first related: {key}"
        pairs.append((f, by_key[key]))
    return pairs


def assert_file_line(log, loc: dict, text: str) -> None:
    """The location's file holds `text` at its line, and its column points into the statement."""
    path = resolve(log, loc["physicalLocation"]["artifactLocation"])
    line, col = region(loc)
    lines = path.read_text().splitlines()
    assert lines[line - 1].strip() == text
    if col is not None:
        # SARIF columns are 1-based: the column is the first character of a token, not a blank
        assert 1 <= col <= len(lines[line - 1]) and not lines[line - 1][col - 1].isspace()


def assert_semantics(log: dict, results: list[KernelResult], on_disk: bool = True) -> None:
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for f, res in match(log, results):
        assert res["ruleId"] == f.rule and rules[res["ruleIndex"]]["id"] == f.rule
        assert res["level"] == LEVEL[f.severity]
        assert res["partialFingerprints"] == {KEY: sarif.fingerprint(f)}
        text = unescape(res["message"]["text"])
        assert text.startswith(f.message)
        props = res["properties"]
        assert props["kernel"] == f.kernel and props["target"] == f.target and props["params"] == f.params
        assert props["witness"] == json.loads(json.dumps(f.witness))
        primary = res["locations"][0]
        assert primary["logicalLocations"] == [{"name": f.kernel, "kind": "function"}]
        if on_disk:
            site = f.site()
            shown = f.second if site is None or f.second.users(f.target is not None) == site else f.first
            if site is None or shown.users(f.target is not None) == site:
                assert_file_line(log, primary, users_text(f, shown))
        if f.first is not None:
            first = related(res, 1)
            if f.first.kind in ("read", "write"):
                assert first["message"]["text"] == f"first access: {f.first.kind} of {f.first.buffer} ({f.first.memory})"
            if on_disk:
                assert_file_line(log, first, users_text(f, f.first))
            assert "](1)" in res["message"]["text"]     # the message links to the first access
        w = f.witness
        if w and "first_thread" in w:
            assert f"thread {thread(w['first_thread'])}" in text and f"thread {thread(w['second_thread'])}" in text
            assert f"block {thread(w['block'])}" in text
            flows = res["codeFlows"][0]["threadFlows"]
            assert [fl["id"] for fl in flows] == ["thread 1", "thread 2"]
            for n, (fl, loc, role) in enumerate(zip(flows, (f.first, f.second), ("first", "second")), 1):
                assert len(fl["locations"]) == 1
                where = fl["locations"][0]["location"]
                assert region(where) == users(loc, f)
                msg = unescape(where["message"]["text"])
                assert msg.startswith(f"thread {n} {thread(w[role + '_thread'])} in block {thread(w['block'])}")
                for loop, it in w[role + "_iterations"].items():
                    assert f"loop at line {loop} iteration {it}" in msg
                if not w[role + "_iterations"]:
                    assert "not in a loop" in msg
                assert fl["initialState"]["thread"]["text"] == thread(w[role + "_thread"])


# ---------------------------------------------------------------------------------------------
# fixtures through the analyzer

def test_cuda_fixture():
    results = check_cached("cuda/stride_loop_neighbour.cu")
    log = sarif.to_sarif(results)
    validate(log)
    assert_semantics(log, results)
    out = log["runs"][0]["results"]
    assert {r["ruleId"] for r in out} == {"read-after-write", "write-after-read"}
    # The read-after-write: thread 2 reads out[i + 1] (line 10), thread 1 wrote it (line 9).
    raw = next(r for r in out if r["ruleId"] == "read-after-write")
    assert raw["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "tests/fixtures/cuda/stride_loop_neighbour.cu", "uriBaseId": "%SRCROOT%"}
    assert region(raw["locations"][0])[0] == 10 and region(related(raw, 1))[0] == 9
    # Lark's columns are 1-based like SARIF's: column 18 of line 10 is the `out` of `out[i + 1]`.
    line10 = (FIXTURES / "cuda/stride_loop_neighbour.cu").read_text().splitlines()[9]
    assert line10[region(raw["locations"][0])[1] - 1:].startswith("out[i + 1]")
    assert related(raw, 1)["message"]["text"] == "first access: write of out (global)"
    assert raw["level"] == "error"
    assert run_base_uri(log) == ROOT.as_uri() + "/"


def run_base_uri(log):
    return log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]


def test_metal_fixture():
    results = check_cached("metal/seed_row_scale.metal")
    assert findings(results)
    log = sarif.to_sarif(results)
    validate(log)
    assert_semantics(log, results)
    res = log["runs"][0]["results"][0]
    assert res["ruleId"] == "write-after-read"
    assert related(res, 1)["message"]["text"] == "first access: read of S (device)"


def test_glsl_findings_are_on_the_glsl_line(tmp_path):
    """A GLSL shader is analysed as the SPIR-V glslang compiles it to; the result's primary location
    is the user's GLSL line (what code scanning annotates in a diff), the disassembly's line a
    related location."""
    results = check_cached("vulkan/reduce_tree.comp")
    fs = findings(results)
    assert fs and all(f.second.origin for f in fs)
    log = sarif.to_sarif(results)
    validate(log)
    assert_semantics(log, results)     # the GLSL file is on disk; its lines are checked
    glsl = (FIXTURES / "vulkan/reduce_tree.comp").read_text().splitlines()
    spvasm = "tests/fixtures/vulkan/reduce_tree.comp.spvasm"
    for f, res in match(log, results):
        primary = res["locations"][0]["physicalLocation"]
        assert primary["artifactLocation"] == {"uri": "tests/fixtures/vulkan/reduce_tree.comp", "uriBaseId": "%SRCROOT%"}
        line, col = region(res["locations"][0])
        assert line == f.second.origin[1] and col is None     # glslang gives no column
        assert glsl[line - 1].strip() == f.second.origin_text == primary["contextRegion"]["snippet"]["text"]
        # the disassembly, not on disk yet: a related location with its own line
        generated = related(res, 2)
        art = generated["physicalLocation"]["artifactLocation"]
        assert art["uri"] == spvasm and "uriBaseId" not in art and "not written" in art["description"]["text"]
        assert region(generated) == (f.second.line, f.second.col)
        assert "in the SPIR-V compiled from it" in generated["message"]["text"]
        assert res["properties"]["origin"]["second"] == {"file": "tests/fixtures/vulkan/reduce_tree.comp",
                                                         "line": f.second.origin[1], "col": f.second.origin[2],
                                                         "text": f.second.origin_text}
    # With the disassembly written (--emit-dir), the related location points into it, line for line.
    emitted = sarif.emit_sources(results, sarif.check_sources(results), str(tmp_path / "emit"))
    assert Path(emitted[spvasm]).is_file()
    log = sarif.to_sarif(results, emit=emitted)
    validate(log)
    assert_semantics(log, results)
    lines = Path(emitted[spvasm]).read_text().splitlines()
    for f, res in match(log, results):
        generated = related(res, 2)
        assert resolve(log, generated["physicalLocation"]["artifactLocation"]) == Path(emitted[spvasm]).resolve()
        assert lines[f.second.line - 1].strip() == f.second.text


def test_divergent_barrier_witness():
    results = check_cached("cuda/divergent_barrier.cu")
    (f,) = [f for f in findings(results) if f.rule == "divergent-barrier"]
    assert set(f.witness) == {"reaching_thread", "skipping_thread", "block"}
    log = sarif.to_sarif(results)
    validate(log)
    assert_semantics(log, results)
    (res,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "divergent-barrier"]
    text = unescape(res["message"]["text"])
    assert f"thread {thread(f.witness['reaching_thread'])} reaches the barrier" in text
    reach, skip = res["codeFlows"][0]["threadFlows"]
    assert reach["initialState"]["thread"]["text"] == thread(f.witness["reaching_thread"])
    assert skip["initialState"]["thread"]["text"] == thread(f.witness["skipping_thread"])
    # the reaching thread goes through the condition to the barrier; the other stops at the condition
    assert [region(x["location"]) for x in reach["locations"]] == [(f.first.line, f.first.col), (f.second.line, f.second.col)]
    assert [region(x["location"]) for x in skip["locations"]] == [(f.first.line, f.first.col)]
    assert "skips the barrier" in skip["locations"][0]["location"]["message"]["text"]
    assert res["properties"]["witness"] == f.witness


def test_clean_run():
    results = check_cached("cuda/neighbour_shift_fixed.cu")
    assert results and not findings(results)
    log = sarif.to_sarif(results, invocation={"argv": ["kernelrace", "check", "tests/fixtures/cuda/neighbour_shift_fixed.cu"]})
    validate(log)
    run = log["runs"][0]
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True,
                                   "commandLine": "kernelrace check tests/fixtures/cuda/neighbour_shift_fixed.cu",
                                   "arguments": ["check", "tests/fixtures/cuda/neighbour_shift_fixed.cu"]}]
    assert run["properties"]["summary"]["clean"] == len(results)
    validate(sarif.to_sarif([]))


MORE = ["cuda/divergent_barrier.cu", "cuda/matmul_tiled.cu", "metal/device_loop_carried.metal",
        "metal/divergent_barrier.metal", "metal/matmul_tiled.metal", "metal/merge_state_barrier_scope.metal",
        "metal/simdgroup_mem_none.metal", "vulkan/buffer_barrier.comp", "vulkan/divergent_barrier.comp",
        "vulkan/tile_overwrite.comp", "vulkan/tvm_shaped_tile.spvasm"]


@pytest.mark.parametrize("path", [pytest.param(FIXTURES / m, id=m)
                                  for m in MORE])
def test_more_fixtures_validate(path):
    """Other rules and dialects: barrier-scope (with its barriers as related locations), divergent
    barriers in every dialect, SPIR-V assembly written by hand, several findings per kernel."""
    results = check(path)
    assert findings(results)
    log = sarif.to_sarif(results)
    validate(log)
    assert_semantics(log, results, on_disk=path.suffix != ".comp")
    for f, res in match(log, results):
        for b in (f.witness or {}).get("barriers", []):
            assert any(region(r)[0] == b["line"] and "barrier" in r["message"]["text"]
                       for r in res["relatedLocations"] if r["id"] >= 4)


def test_unknown_findings_are_warnings(tmp_path):
    src = FIXTURES / "cuda/neighbour_shift.cu"
    rel = str(src.relative_to(ROOT))
    lines = src.read_text().splitlines()
    second = Location(rel, 9, 9, "write", "buf", "shared", lines[8].strip())
    first = Location(rel, 8, 9, "read", "buf", "shared", lines[7].strip())
    f = Finding("unknown", "warning", "undecided: read and write between line 8 and line 9 on buf: solver budget",
                "neighbour_shift", rel, second, first)
    log = sarif.to_sarif([KernelResult("neighbour_shift", rel, None, None, [f])])
    validate(log)
    (res,) = log["runs"][0]["results"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert res["ruleId"] == "unknown" and res["level"] == "warning"
    assert rules[res["ruleIndex"]]["id"] == "unknown"
    assert rules[res["ruleIndex"]]["defaultConfiguration"]["level"] == "warning"
    assert "codeFlows" not in res       # no witness: nothing to draw
    assert region(res["locations"][0]) == (9, 9) and region(related(res, 1)) == (8, 9)


def test_rule_descriptors():
    log = sarif.to_sarif([])
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "kernelrace"
    assert driver["informationUri"] == "https://github.com/kernelrace/kernelrace"
    assert isinstance(driver["version"], str) and driver["version"]
    by_id = {d["id"]: d for d in driver["rules"]}
    assert len(by_id) == len(driver["rules"])
    assert set(by_id) == set(RULES) | {"unknown"}
    for name, rule in RULES.items():
        d = by_id[name]
        assert d["name"] == name
        assert d["shortDescription"]["text"] == rule.summary
        assert d["defaultConfiguration"]["level"] == LEVEL[rule.severity]
        assert d["help"]["text"] == rule.doc.strip()
        assert d["fullDescription"]["text"] and d["fullDescription"]["text"] in " ".join(rule.doc.split())


def test_invocation():
    argv = ["kernelrace", "lint", MERGE_STATE, "--param", "v_dtype=float16", "--format", "sarif"]
    log = sarif.to_sarif([], invocation={"argv": argv, "exitCode": 1, "in_baseline": 2, "builder": MERGE_STATE,
                                         "workingDirectory": str(ROOT)})
    validate(log)
    (inv,) = log["runs"][0]["invocations"]
    assert inv["workingDirectory"] == {"uri": ROOT.as_uri()}
    assert inv["commandLine"] == shlex.join(argv) and inv["arguments"] == argv[1:]
    assert inv["exitCode"] == 1 and inv["executionSuccessful"] is True
    assert inv["properties"] == {"in_baseline": 2}
    assert log["runs"][0]["properties"]["builder"] == MERGE_STATE


def test_brackets_in_messages_are_escaped():
    """`[text](id)` is an embedded link in SARIF messages: `out[128]` must be written `out\\[128\\]`."""
    log = sarif.to_sarif(check_cached("cuda/stride_loop_neighbour.cu"))
    for res in log["runs"][0]["results"]:
        text = res["message"]["text"]
        links = re.findall(r"(?<!\\)\[(?:[^\[\]\\]|\\.)*\]\((\d+)\)", text)
        assert links == ["1"]
        unlinked = re.sub(r"(?<!\\)\[(?:[^\[\]\\]|\\.)*\]\(\d+\)", "", text)
        assert not re.search(r"(?<!\\)[\[\]]", unlinked)


# ---------------------------------------------------------------------------------------------
# determinism and fingerprints

def test_output_is_deterministic():
    results = check_cached("cuda/stride_loop_neighbour.cu")
    again = check(FIXTURES / "cuda/stride_loop_neighbour.cu")
    assert sarif.dumps(sarif.to_sarif(results)) == sarif.dumps(sarif.to_sarif(again))
    # the order of the input does not matter
    shuffled = [dataclasses.replace(r, findings=list(reversed(r.findings))) for r in reversed(results)]
    assert sarif.dumps(sarif.to_sarif(shuffled)) == sarif.dumps(sarif.to_sarif(results))


def test_a_kernels_results_do_not_depend_on_what_was_checked_before():
    """Z3's search depends on every term its context has seen: without a context per kernel, the
    witnesses of half the fixtures changed with the order a run checked them in."""
    first = sarif.dumps(sarif.to_sarif(check(FIXTURES / "cuda/device_fn_store.cu")))
    check(FIXTURES / "cuda/back_to_back_barriers.cu")
    assert sarif.dumps(sarif.to_sarif(check(FIXTURES / "cuda/device_fn_store.cu"))) == first


def _fingerprints(results):
    return sorted((f.rule, sarif.fingerprint(f)) for f in findings(results))


@pytest.mark.parametrize("rel", ["cuda/stride_loop_neighbour.cu", "metal/seed_row_scale.metal",
                                 "vulkan/merge_state.comp"])
def test_fingerprints_survive_line_shifts(rel, tmp_path):
    src = FIXTURES / rel
    text = src.read_text()
    copy = tmp_path / src.name
    copy.write_text("//\n" + text)            # a comment line on top: every line moves down by one
    before, after = check_cached(rel), check(src, source=copy)
    assert findings(before)
    assert [f.second.line + 1 for f in findings(before)] == [f.second.line for f in findings(after)] \
        or rel.endswith(".comp")               # SPIR-V: OpLine moves, the disassembly's lines need not
    if rel.endswith(".comp"):
        assert [f.second.origin[1] + 1 for f in findings(before)] == [f.second.origin[1] for f in findings(after)]
    assert _fingerprints(before) == _fingerprints(after)
    # in the SARIF too, whatever the file is called
    fp = lambda rs: sorted(r["partialFingerprints"][KEY] for r in sarif.to_sarif(rs)["runs"][0]["results"])
    assert fp(before) == fp(after)


def test_fingerprints_follow_the_access_text(tmp_path):
    rel = "cuda/stride_loop_neighbour.cu"
    before = check_cached(rel)
    assert len(set(_fingerprints(before))) == len(findings(before))        # one per finding
    copy = tmp_path / "edited.cu"
    copy.write_text((FIXTURES / rel).read_text().replace("nxt[i] = out[i + 1];", "nxt[i] = out[1 + i];"))
    after = check(FIXTURES / rel, source=copy)
    fp = {f.rule: sarif.fingerprint(f) for f in findings(before)}
    fp2 = {f.rule: sarif.fingerprint(f) for f in findings(after)}
    assert fp.keys() == fp2.keys()
    # both findings involve the edited read of out[i + 1]: both keys change
    assert all(fp[k] != fp2[k] for k in fp)


def test_embedded_sources():
    asm = ('          %1 = OpString "a.comp"\n'
           '               OpSource GLSL 450 %1 "#version 450\n'
           'void main() { /* \\"q\\" */ }\n"\n'
           '               OpSourceContinued "// more\n"\n'
           '               OpName %main "main"\n')
    assert sarif.embedded_sources(asm) == {"a.comp": '#version 450\nvoid main() { /* "q" */ }\n// more\n'}


# ---------------------------------------------------------------------------------------------
# built kernels (kernelrace lint)

_BUILT: dict = {}


def built(target, params=MERGE_PARAMS):
    from analyzer.tvm.build import build

    key = (target, json.dumps(params, sort_keys=True))
    if key not in _BUILT:
        mod = build(MERGE_STATE, dict(params), target)
        _BUILT[key] = (mod, check_built(mod, Options()))
    return _BUILT[key]


def _decode_kernels() -> Path:
    import tvm.relax.frontend.nn.llm._decode_kernels as m

    return Path(m.__file__).resolve()


def test_built_cuda_kernel_points_at_the_builders_line(tmp_path):
    """TVM's emitted CUDA carries no line information; the TIR the builder wrote in TVMScript
    does. The primary location is the builder's Python line of the access (the write of S in
    `_merge_state_inplace`), the emitted source a related location."""
    mod, results = built("cuda")
    assert findings(results)
    name = "_merge_state_inplace.cu"                 # what check_built calls TVM's CUDA source
    assert {r.file for r in results} == {name}
    sources = {name: mod.source}
    assert sarif.built_sources(mod) == sources
    builder = _decode_kernels().read_text().splitlines()

    # Not emitted: the emitted source is the virtual name, without a base, marked as not on disk.
    log = sarif.to_sarif(results, invocation={"builder": MERGE_STATE})
    validate(log)
    assert_semantics(log, results)           # the builder's file is on disk: its lines are checked
    for f, res in match(log, results):
        primary = res["locations"][0]
        assert resolve(log, primary["physicalLocation"]["artifactLocation"]) == _decode_kernels()
        art = related(res, 2)["physicalLocation"]["artifactLocation"]
        assert art["uri"] == name and "uriBaseId" not in art and "not written" in art["description"]["text"]
    war = next(res for f, res in match(log, results) if f.rule == "write-after-read")
    line, col = region(war["locations"][0])
    assert builder[line - 1].strip() == "S[bx, ty + by * bdy] = T.log2(s_val[0] + s_other_val[0]) + s_max[0]"
    assert builder[line - 1][col - 1] == "S"
    first_line = region(related(war, 1))[0]
    assert builder[first_line - 1].strip() == "s_val[0] = S[bx, ty + by * bdy]"    # the read of S

    emitted = sarif.emit_sources(results, sources, str(tmp_path / "emit"))
    path = Path(emitted[name])
    assert path.read_text() == mod.source
    assert path.parent.name == "cuda-num_heads=8-head_dim=256-v_dtype=float16"
    log = sarif.to_sarif(results, emit=emitted, invocation={"builder": MERGE_STATE})
    validate(log)
    assert_semantics(log, results)
    for f, res in match(log, results):
        for id_, loc in ((2, f.second), (3, f.first)):
            generated = related(res, id_)
            assert resolve(log, generated["physicalLocation"]["artifactLocation"]) == path.resolve()
            assert path.read_text().splitlines()[region(generated)[0] - 1].strip() == loc.text
            assert "in the source emitted by TVM" in generated["message"]["text"]
        assert res["properties"]["builder"] == MERGE_STATE
        assert res["properties"]["target"] == "cuda" and res["properties"]["params"] == MERGE_PARAMS
        assert "cuda, num_heads=8, head_dim=256, v_dtype='float16'" in unescape(res["message"]["text"])
    assert region(related(war, 2))[0] > region(related(war, 3))[0]   # the write (second) after the read


def test_a_builder_without_line_information_points_at_its_def_line(tmp_path, monkeypatch):
    """A `te`/dlight builder's TIR carries no Python lines: the primary location is the builder
    function's `def` line (the user's file), with the access's line in the emitted source related."""
    import inspect

    from analyzer import workloads
    from analyzer.pipeline import build_and_check

    results, _, sources = build_and_check("analyzer.workloads:softmax", {"rows": "n", "cols": 4096,
                                          "schedule_target": "opencl"}, "metal", Options(), want_sources=True)
    fs = findings(results)
    assert fs and all(f.site() == f.builder_def for f in fs)
    log = sarif.to_sarif(results, invocation={"builder": "analyzer.workloads:softmax"})
    validate(log)
    fn = inspect.unwrap(workloads.softmax)
    out = log["runs"][0]["results"]
    assert len(out) == len(fs)
    for res in out:
        primary = res["locations"][0]
        assert resolve(log, primary["physicalLocation"]["artifactLocation"]) == Path(inspect.getsourcefile(fn)).resolve()
        assert region(primary) == (inspect.getsourcelines(fn)[1], None)
        assert "its line there is not known" in primary["message"]["text"]
        assert related(res, 2)["physicalLocation"]["region"]["startLine"] == res["properties"]["second"]["line"]


def test_emitted_source_under_the_working_directory_is_relative(tmp_path, monkeypatch):
    mod, results = built("cuda")
    monkeypatch.chdir(tmp_path)
    emitted = sarif.emit_sources(results, sarif.built_sources(mod), "emitted")
    assert emitted["_merge_state_inplace.cu"] == str(Path("emitted/cuda-num_heads=8-head_dim=256-v_dtype=float16"
                                                          "/_merge_state_inplace.cu"))
    log = sarif.to_sarif(results, emit=emitted)
    validate(log)
    art = related(log["runs"][0]["results"][0], 2)["physicalLocation"]["artifactLocation"]
    assert art == {"uri": "emitted/cuda-num_heads=8-head_dim=256-v_dtype=float16/_merge_state_inplace.cu",
                   "uriBaseId": "%SRCROOT%"}
    assert resolve(log, art) == (tmp_path / art["uri"]).resolve()


def test_builds_of_several_parameter_sets_do_not_share_a_file(tmp_path):
    """`--param head_dim=128,256`: two sources named `_merge_state_inplace.cu`; each finding's
    emitted source is its own build's file."""
    emitted, all_results, mods = {}, [], {}
    for hd in (128, 256):
        params = dict(MERGE_PARAMS, head_dim=hd)
        mod, results = built("cuda", params)
        mods[hd] = mod
        emitted.update(sarif.emit_sources(results, sarif.built_sources(mod), str(tmp_path)))
        all_results.extend(results)
    log = sarif.to_sarif(all_results, emit=emitted)
    validate(log)
    assert_semantics(log, all_results)
    seen = set()
    for f, res in match(log, all_results):
        path = resolve(log, related(res, 2)["physicalLocation"]["artifactLocation"])
        assert path.read_text() == mods[f.params["head_dim"]].source
        seen.add(path)
    assert len(seen) == 2


def test_built_vulkan_kernel_emits_spirv_and_glsl(tmp_path):
    """A Vulkan build: the builder's line primary, the SPIR-V analysed (2, 3) and the GLSL it was
    compiled from (4; generated from the TIR, embedded in the SPIR-V) related."""
    mod, results = built("vulkan")
    fs = findings(results)
    assert fs and all(f.second.origin for f in fs)
    sources = sarif.built_sources(mod)
    units = dict(mod.units)
    assert set(units) <= set(sources) and {r.file for r in results} <= set(units)
    glsl_names = {f.second.origin[0] for f in fs}
    assert glsl_names <= set(sources)                  # the GLSL it was compiled from, embedded in the SPIR-V
    emitted = sarif.emit_sources(results, sources, str(tmp_path))
    log = sarif.to_sarif(results, emit=emitted)
    validate(log)
    assert_semantics(log, results)
    for f, res in match(log, results):
        assert resolve(log, res["locations"][0]["physicalLocation"]["artifactLocation"]) == _decode_kernels()
        assert resolve(log, related(res, 2)["physicalLocation"]["artifactLocation"]) == Path(emitted[f.file]).resolve()
        origin = related(res, 4)
        path = resolve(log, origin["physicalLocation"]["artifactLocation"])
        assert path == Path(emitted[f.second.origin[0]]).resolve()
        assert path.read_text().splitlines()[region(origin)[0] - 1].strip() == f.second.origin_text
