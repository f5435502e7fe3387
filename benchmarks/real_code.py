"""Real kernels from public repositories, checked as a new user would check them.

The list (benchmarks/real_code.tsv) names one file a row: repository (owner/name), commit, path,
the flags a user would pass (-I with the repository's include folders, -D macros its build passes,
launch flags; `-` for none) and a short reading of the file's launch. Only the list lives in this
repository; the code stays in the snapshots `fetch` brought (bare git directories under
MIRROR/owner+name/repo). Each repository is extracted at its commit under --scratch, with its own
directory structure so includes resolve, and each file is checked on its own:

    python benchmarks/real_code.py [--mirror /work/.mirror] [--list benchmarks/real_code.tsv]
        [--scratch /tmp/kernelrace-real] [--checkout PATH] [--kernelrace "python -m analyzer.cli"]
        [--extra "--frontend clang"] [--jobs 1] [--timeout 120] [--only REGEX] [--label NAME]
    python benchmarks/real_code.py --summarise SCRATCH/results-LABEL.json
    python benchmarks/real_code.py --compare SCRATCH/results-A.json SCRATCH/results-B.json

runs `kernelrace check FILE --format json --no-cache --no-config -j 1` plus the row's flags (-I folders taken
from the repository's root) and --extra, with PYTHONPATH set to
--checkout (default: this checkout), so it measures any worktree. A file is *analysed* when check
exits 0 or 1 and no kernel is `unknown`; *clean* when analysed with no finding. Prints one line per
file as it ends, then the markdown summary (per dialect and per repository, then the causes of
exit 2 and of `unknown`, grouped after normalising paths, numbers and quoted names), and writes
SCRATCH/results-LABEL.json (every file's outcome) and SCRATCH/summary-LABEL.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DIALECTS = {".cu": "cuda", ".cuh": "cuda", ".cl": "opencl", ".metal": "metal",
            ".wgsl": "wgsl", ".wesl": "wgsl", ".comp": "glsl", ".glsl": "glsl"}
# What is extracted of a repository: sources and headers, so that includes resolve, not its assets.
EXTRACT = {".cu", ".cuh", ".cl", ".metal", ".wgsl", ".wesl", ".comp", ".glsl", ".h", ".hh", ".hpp", ".hxx",
           ".inl", ".inc", ".cuinc", ".def", ".c", ".cc", ".cpp", ".mm"}


@dataclass
class Row:
    repo: str
    commit: str
    path: str
    flags: str
    reading: str

    @property
    def dialect(self) -> str:
        return DIALECTS.get(Path(self.path).suffix, "?")


@dataclass
class Outcome:
    repo: str
    path: str
    dialect: str
    flags: str
    status: str                     # clean | findings | unknown | exit2 | timeout
    rc: int | None
    seconds: float
    cause: str = ""                 # exit 2: stderr's first line; unknown: the first unknown's message
    kernels: int = 0
    errors: int = 0
    warnings: int = 0
    by_rule: dict = field(default_factory=dict)
    findings: list = field(default_factory=list)   # error findings: rule, kernel, line, message


def read_list(path: Path) -> list[Row]:
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 5 or not re.fullmatch(r"[0-9a-f]{40}", parts[1]):
            sys.exit(f"{path}:{n}: expected repository, commit (40 hex), path, flags, reading (tab-separated)")
        rows.append(Row(*parts))
    return rows


def tree(scratch: Path, row: Row) -> Path:
    return scratch / f"{row.repo.replace('/', '+')}@{row.commit[:12]}"


def extract(mirror: Path, scratch: Path, row: Row) -> Path:
    """The repository's sources and headers at the row's commit under scratch (once per repository
    and commit). Blob by blob, not `git archive`: a snapshot lacks its largest files, and one absent
    blob would stop an archive."""
    dest = tree(scratch, row)
    if (dest / ".extracted").exists():
        return dest
    git_dir = mirror / row.repo.replace("/", "+") / "repo"
    git = ["git", "--git-dir", str(git_dir)]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", row.commit], capture_output=True)
    if listing.returncode != 0:
        sys.exit(f"{row.repo}: no commit {row.commit} under {git_dir}: {listing.stderr.decode().strip()}")
    blobs = []
    for entry in listing.stdout.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        name = path.decode(errors="replace")
        if kind == b"blob" and mode != b"120000" and Path(name).suffix in EXTRACT:
            blobs.append((sha.decode(), name))
    cat = subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for sha, name in blobs:
        cat.stdin.write(sha.encode() + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue                    # not in the snapshot (too large): an include of it stays unresolved
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    cat.stdin.close()
    cat.wait()
    (dest / ".extracted").touch()
    return dest


def flag_args(flags: str, root: Path) -> list[str]:
    """The row's flags, with -I folders and --include files taken relative to the repository's root."""
    if flags.strip() in ("", "-"):
        return []
    out, words = [], shlex.split(flags)
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("-I", "--include") and i + 1 < len(words):
            out += [w, str(root / words[i + 1])]
            i += 2
            continue
        if w.startswith("-I") and len(w) > 2:
            out += ["-I", str(root / w[2:])]
        else:
            out.append(w)
        i += 1
    return out


def normalise(cause: str, scratch: Path) -> str:
    """One cause for messages that differ only in the file, its line and column, the source line
    quoted after a syntax error, a kernel's or buffer's name or numbers; the unexpected token is kept."""
    c = re.sub(r"(\S*/)?[\w.-]+\+[\w.-]+@[0-9a-f]{12}/\S*?((:\d+)+:?|(?=[\s:]))", "FILE", cause)
    c = c.replace(str(scratch) + "/", "")
    c = re.sub(r"^kernelrace: (error: )?", "", c)
    c = re.sub(r"^FILE:? ", "", c)
    c = re.sub(r"^kernel \S+ not analysed: ", "", c)
    c = re.sub(r"^(syntax error: unexpected '[^']*'):.*", r"\1", c)
    c = re.sub(r"^(syntax error: unexpected character \S+):.*", r"\1", c)
    c = re.sub(r"(between line N and line N|between line \d+ and line \d+) on \w+", "on a buffer", c)
    c = re.sub(r"\(searched next to the file.*", "", c)
    c = re.sub(r"%\w+", "%N", c)
    c = re.sub(r"\b\d+\b", "N", c)
    return c.strip()[:140]


def run_one(row: Row, args, scratch: Path) -> Outcome:
    root = tree(scratch, row)
    file = root / row.path
    cmd = [*shlex.split(args.kernelrace), "check", str(file), "--format", "json", "--no-cache", "--no-config",
           "-j", "1", *flag_args(row.flags, root), *shlex.split(args.extra)]
    env = dict(os.environ, PYTHONPATH=str(args.checkout))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=args.checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)     # its own session: the checker and any solver it started
        proc.communicate()
        return Outcome(row.repo, row.path, row.dialect, row.flags, "timeout", None, round(time.perf_counter() - t0, 2))
    seconds = round(time.perf_counter() - t0, 2)
    base = dict(repo=row.repo, path=row.path, dialect=row.dialect, flags=row.flags, rc=proc.returncode, seconds=seconds)
    first_err = next((ln for ln in err.splitlines() if ln.strip()), "")
    try:
        report = json.loads(out) if proc.returncode in (0, 1) else None
    except json.JSONDecodeError:
        report = None
    if report is None:
        cause = first_err or f"exit {proc.returncode} with no message"
        if "Traceback" in err:
            cause = "traceback: " + (err.strip().splitlines() or [""])[-1]
        return Outcome(**base, status="exit2", cause=cause)
    findings = report.get("findings", [])
    unknown = [f for f in findings if f.get("rule") == "unknown"]
    real = [f for f in findings if f.get("rule") != "unknown"]
    summary = report.get("summary", {})
    errors = [f for f in real if f.get("severity") == "error"]
    status = "unknown" if unknown or summary.get("unknown") else ("findings" if real else "clean")
    return Outcome(**base, status=status, cause=unknown[0]["message"] if unknown else "",
                   kernels=summary.get("kernels", 0), errors=len(errors), warnings=len(real) - len(errors),
                   by_rule=dict(Counter(f["rule"] for f in real)),
                   findings=[{"rule": f["rule"], "kernel": f.get("kernel"), "line": (f.get("first") or {}).get("line"),
                              "message": f.get("message")} for f in errors])


def table(outcomes: list[Outcome], key) -> list[str]:
    groups = defaultdict(list)
    for o in outcomes:
        groups[key(o)].append(o)
    lines = ["| | files | analysed | clean | with findings | unknown | exit 2 | timeout | s/file max | s/file median |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def line(name, os_):
        c = Counter(o.status for o in os_)
        analysed = c["clean"] + c["findings"]
        secs = [o.seconds for o in os_]
        return (f"| {name} | {len(os_)} | {analysed} ({100 * analysed / len(os_):.0f}%) | {c['clean']} | {c['findings']} "
                f"| {c['unknown']} | {c['exit2']} | {c['timeout']} | {max(secs):.1f} | {statistics.median(secs):.1f} |")
    for name in sorted(groups):
        lines.append(line(name, groups[name]))
    lines.append(line("**all**", outcomes))
    return lines


def causes(outcomes: list[Outcome], status: str, scratch: Path) -> list[str]:
    c = Counter(normalise(o.cause, scratch) for o in outcomes if o.status == status)
    return [f"| {n} | {cause.replace('|', '/')} |" for cause, n in c.most_common()]


def summary(outcomes: list[Outcome], scratch: Path, label: str) -> str:
    out = [f"Checkout: {label}", "", "By dialect:", "", *table(outcomes, lambda o: o.dialect), "",
           "By repository:", "", *table(outcomes, lambda o: f"{o.repo} ({o.dialect})"), ""]
    for status, title in (("exit2", "Exit 2, by cause"), ("unknown", "Unknown, by cause")):
        rows = causes(outcomes, status, scratch)
        if rows:
            out += [f"{title}:", "", "| files | cause |", "|---:|---|", *rows, ""]
    timeouts = [o for o in outcomes if o.status == "timeout"]
    if timeouts:
        out += ["Timeouts: " + ", ".join(f"{o.repo}:{o.path}" for o in timeouts), ""]
    rules = Counter()
    for o in outcomes:
        rules.update(o.by_rule)
    if rules:
        out += ["Findings by rule (analysed files): " + ", ".join(f"{r} {n}" for r, n in rules.most_common()), ""]
    return "\n".join(out)


def comparison(runs: list[dict]) -> str:
    """Analysed files (and exit 2) per dialect, one column per results file, on the rows they share."""
    shared = set.intersection(*({(o["repo"], o["path"]) for o in r["files"]} for r in runs))
    names = [f"{r['commit']}" + (f" {r['extra']}" if r["extra"] else "") for r in runs]
    lines = ["| | files | " + " | ".join(f"analysed: {n} | exit 2: {n}" for n in names) + " |",
             "|---|---:|" + "---:|---:|" * len(runs)]
    dialects = sorted({o["dialect"] for r in runs for o in r["files"]})
    for d in [*dialects, None]:
        if not any((o["repo"], o["path"]) in shared and o["dialect"] == d for o in runs[0]["files"]) and d:
            continue
        cells, total = [], 0
        for r in runs:
            os_ = [o for o in r["files"] if (o["repo"], o["path"]) in shared and (d is None or o["dialect"] == d)]
            total = len(os_)
            analysed = sum(o["status"] in ("clean", "findings") for o in os_)
            cells += [f"{analysed} ({100 * analysed / max(total, 1):.0f}%)", str(sum(o["status"] == "exit2" for o in os_))]
        lines.append(f"| {d or '**all**'} | {total} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def git_label(checkout: Path) -> str:
    try:
        return subprocess.check_output(["git", "-C", str(checkout), "rev-parse", "--short=12", "HEAD"], text=True).strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return checkout.name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"), help="the snapshots' directory")
    ap.add_argument("--list", type=Path, default=ROOT / "benchmarks" / "real_code.tsv")
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/kernelrace-real"),
                    help="where the repositories are extracted and the results written (outside the repository)")
    ap.add_argument("--checkout", type=Path, default=ROOT, help="the kernelrace worktree to measure")
    ap.add_argument("--kernelrace", default=f"{shlex.quote(sys.executable)} -m analyzer.cli")
    ap.add_argument("--extra", default="", help="more arguments for every check (e.g. --frontend clang)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120, help="seconds per file")
    ap.add_argument("--only", default="", help="rows whose repository or path matches this regular expression")
    ap.add_argument("--label", default="", help="names the output files (default: the checkout's commit)")
    ap.add_argument("--summarise", type=Path, metavar="RESULTS_JSON",
                    help="print the summary of an earlier run's results file instead of running")
    ap.add_argument("--compare", type=Path, nargs="+", metavar="RESULTS_JSON",
                    help="print analysed files per dialect of earlier runs side by side instead of running")
    args = ap.parse_args()
    args.checkout = args.checkout.resolve()
    scratch = args.scratch.resolve()
    if args.compare:
        print(comparison([json.loads(p.read_text()) for p in args.compare]))
        return 0
    if args.summarise:
        data = json.loads(args.summarise.read_text())
        outcomes = [Outcome(**o) for o in data["files"]]
        print(summary(outcomes, scratch, f"{data['checkout']} at {data['commit']}"
                      + (f", with {data['extra']}" if data["extra"] else "")))
        return 0
    if scratch == ROOT or ROOT in scratch.parents:
        sys.exit("--scratch must be outside the repository")
    rows = [r for r in read_list(args.list) if not args.only or re.search(args.only, f"{r.repo}/{r.path}")]
    for row in rows:
        extract(args.mirror, scratch, row)
        if not (tree(scratch, row) / row.path).exists():
            sys.exit(f"{row.repo}@{row.commit[:12]}: {row.path} is not in the snapshot")
    label = args.label or git_label(args.checkout)
    outcomes: list[Outcome] = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_one, row, args, scratch): row for row in rows}
        for n, fut in enumerate(as_completed(futures), 1):
            o = fut.result()
            outcomes.append(o)
            print(f"[{n}/{len(rows)}] {o.status:8} {o.seconds:7.1f}s {o.repo}:{o.path}"
                  + (f"  -- {o.cause[:120]}" if o.cause else ""), flush=True)
    order = {(r.repo, r.path): i for i, r in enumerate(rows)}
    outcomes.sort(key=lambda o: order[(o.repo, o.path)])
    text = summary(outcomes, scratch, f"{args.checkout} at {label}" + (f", with {args.extra}" if args.extra else ""))
    (scratch / f"results-{label}.json").write_text(json.dumps(
        {"checkout": str(args.checkout), "commit": label, "extra": args.extra, "timeout": args.timeout,
         "files": [asdict(o) for o in outcomes]}, indent=1))
    (scratch / f"summary-{label}.md").write_text(text + "\n")
    print(text)
    print(f"wrote {scratch / f'results-{label}.json'} and {scratch / f'summary-{label}.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
