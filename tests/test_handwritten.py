"""The hand-written corpus (tests/handwritten/): kernels in the styles public repositories use,
each labelled by its author from the kernel's semantics, not from kernelrace's answer.

Header of each file: `// kernelrace-args: ...` (launch extents), `// verdict: race|clean`, and for a
racy file one or more `// race: BUFFER line N: why`. A racy kernel agrees when kernelrace reports a
race (an error or warning of a race rule) on a labelled buffer; a clean kernel agrees when it
reports none. The buffer `barrier` names a barrier some threads of the block cannot reach
(the divergent-barrier rule). Headers under include/ are included by the kernels, not checked.
"""

import json
import re
from pathlib import Path

from conftest import TESTS, cli_in_process, fixture_args, map_in_processes
import pytest

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

CORPUS = TESTS / "handwritten"
FILES = sorted(p for p in CORPUS.glob("*/*") if p.suffix in (".cu", ".metal"))
RACE_RULES = {"read-after-write", "write-after-read", "write-after-write", "barrier-scope"}
VERDICT = re.compile(r"^//\s*verdict:\s*(race|clean)\s*$", re.M)
RACE = re.compile(r"^//\s*race:\s*(\w+)\s+line\s+(\d+):", re.M)


def label(path: Path) -> tuple[str, set[str]]:
    head = "\n".join(path.read_text().splitlines()[:8])
    verdict = VERDICT.search(head)
    assert verdict, f"{path.name}: no `// verdict:` line"
    buffers = {m.group(1) for m in RACE.finditer(head)}
    assert (verdict.group(1) == "race") == bool(buffers), f"{path.name}: a race label names its buffer"
    return verdict.group(1), buffers


def raced_buffers(report: dict) -> set[str]:
    out = set()
    for f in report["findings"]:
        if f["severity"] not in ("error", "warning"):
            continue
        if f["rule"] in RACE_RULES:
            out |= {f["first"]["buffer"], f["second"]["buffer"]}
        elif f["rule"] == "divergent-barrier":
            out.add("barrier")
    return out


def test_corpus_size_and_balance():
    cuda = [p for p in FILES if p.suffix == ".cu"]
    metal = [p for p in FILES if p.suffix == ".metal"]
    assert len(cuda) >= 120 and len(metal) >= 20
    racy = sum(label(p)[0] == "race" for p in FILES)
    assert 0.4 <= racy / len(FILES) <= 0.6


def _check(path: Path) -> tuple[int, dict | None, str]:
    code, out, err = cli_in_process(["check", str(path), *fixture_args(path), "--format", "json", "--hints", "off"])
    return code, (json.loads(out) if code != 2 else None), err


def test_handwritten_corpus_is_analysed_and_agrees():
    analysed, agree, lines, unreplayed = 0, 0, [], []
    # Both cores: a few kernels spend most of the time (bitonic sorts whose pairs reach the solver's
    # budget); each process takes the next file when it is done with one.
    for path, (code, report, err) in zip(FILES, map_in_processes(_check, FILES)):
        verdict, buffers = label(path)
        if code == 2:
            lines.append(f"not analysed  {path.parent.name}/{path.name}: {err.strip()}")
            continue
        analysed += 1
        got = raced_buffers(report)
        unreplayed += [f"{path.name}: {f['message']}" for f in report["findings"]
                       if (f.get("witness") or {}).get("replayed") is False]
        unknown = [f["message"] for f in report["findings"] if f["rule"] == "unknown"]
        ok = bool(got & buffers) if verdict == "race" else not got
        agree += ok
        if not ok:
            what = "missed race" if verdict == "race" else "false alarm"
            lines.append(f"{what:13} {path.parent.name}/{path.name}: labelled {verdict} {sorted(buffers)}, "
                         f"reported {sorted(got)}" + (f"; unknown: {unknown[0]}" if unknown else ""))
    total = len(FILES)
    print(f"\nhand-written corpus: {analysed}/{total} analysed ({100 * analysed / total:.1f}%), "
          f"{agree}/{total} agree ({100 * agree / total:.1f}%)")
    print("\n".join(lines))
    assert analysed >= 0.98 * total
    assert agree >= 0.95 * total
    # Every witness replays on concrete values (a race found beside a divergent barrier included:
    # reduce2_sync_inside_branch's paths around the barrier are the ones a thread can take).
    assert unreplayed == []
