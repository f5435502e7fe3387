"""pytest plugin: `pytest --kernelrace` fails every test that builds a racy GPU kernel through TVM.

Loaded in every pytest session through the `pytest11` entry point `kernelrace`, so importing it is
cheap (pytest only: no TVM, no analyzer) and it does nothing unless `--kernelrace` is given. With
it, each test's setup, call and teardown run inside `analyzer.tvm_checks.hook.checking("collect")`: every
kernel TVM builds there (CUDA, Metal) is checked, and a test whose kernels have a finding at or
above `--kernelrace-fail-on` (error, the default, or warning) fails with the findings, as the text
report prints them, as its failure report. The session ends with a kernelrace summary.

Why collect, then fail the report (in `pytest_runtest_makereport`), rather than raise from the
build: the failure report is the findings themselves, not a traceback through TVM's build
internals; a test that catches exceptions around its build (`pytest.raises(Exception)`, retry
loops) cannot swallow the verdict; every kernel the test builds is checked and reported, not only
the first racy one; and the test's own outcome is kept (a test that fails for another reason keeps
its failure, with a "kernelrace" section added).

A test that checks kernels itself with `tvm_hook.checking(...)` keeps them: the innermost session
takes a kernel, so building a known-racy kernel inside `checking("collect")` does not fail the test.
Kernels built at import or collection time are not checked.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

ENTRY_POINT = "kernelrace"      # the plugin's name as the pytest11 entry point registers it
_KEY: Any = None                # pytest.StashKey, made when the plugin is enabled


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kernelrace", "kernelrace: static race check of the GPU kernels tests build")
    group.addoption("--kernelrace", action="store_true", default=False,
                    help="check every GPU kernel a test builds through TVM (CUDA, Metal) for races; fail "
                         "the test when one has a finding at or above --kernelrace-fail-on")
    group.addoption("--kernelrace-fail-on", choices=("error", "warning"), default="error",
                    help="lowest finding severity that fails a test (default: error; warning also "
                         "fails on data-dependent races, undecided pairs and kernels kernelrace could not check)")


def pytest_plugin_registered(plugin: object, manager: pytest.PytestPluginManager) -> None:
    """Loaded as `-p analyzer.tvm_checks.pytest_plugin` while the `kernelrace` entry point is installed too:
    the entry point would register this same module again, which pluggy refuses ("Plugin already
    registered under a different name"). Block the entry point's name instead: it is this plugin."""
    if (plugin is sys.modules.get(__name__) and manager.get_name(plugin) != ENTRY_POINT
            and manager.get_plugin(ENTRY_POINT) is None and not manager.is_blocked(ENTRY_POINT)):
        manager.set_blocked(ENTRY_POINT)


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("kernelrace", False):
        return
    try:
        from analyzer.tvm_checks import hook as tvm_hook

        tvm_hook._build_module()     # import TVM once, now, rather than inside the first test
    except Exception as exc:
        raise pytest.UsageError(f"--kernelrace: {exc}") from exc
    config.pluginmanager.register(KernelracePlugin(config), "kernelrace-checker")


class _Crash:
    """The one-line cause pytest shows in its short summary and junit XML."""

    def __init__(self, path: str, lineno: int, message: str):
        self.path, self.lineno, self.message = path, lineno, message

    def __str__(self) -> str:
        return f"{self.path}:{self.lineno}: {self.message}"


class KernelraceRepr:
    """A failure report made of kernelrace findings (a pytest TerminalRepr, duck-typed)."""

    def __init__(self, text: str, crash: _Crash):
        self.text = text
        self.reprcrash = crash

    def toterminal(self, tw) -> None:
        for line in self.text.splitlines():
            bad = "error[" in line or "warning[" in line or line.startswith("kernelrace:")
            tw.line(line, red=bad, bold=line.startswith("kernelrace:"))

    def __str__(self) -> str:
        return self.text


class KernelracePlugin:
    def __init__(self, config: pytest.Config):
        global _KEY
        if _KEY is None:
            _KEY = pytest.StashKey[dict]()
        self.fail_on = config.getoption("kernelrace_fail_on")
        # summed from the reports (so it also works when reports come from other processes)
        self.totals = {"kernels": 0, "clean": 0, "with_findings": 0, "unknown": 0, "errors": 0, "warnings": 0}
        self.tests: set[str] = set()
        self.failing: list[tuple[str, list[str]]] = []
        self.not_checked: list[tuple[str, str]] = []
        self.skipped: list[tuple[str, str]] = []

    # -- watch each phase ---------------------------------------------------------------------

    def _watch(self, item: pytest.Item, when: str):
        from analyzer.tvm_checks.hook import checking

        with checking("collect", fail_on=self.fail_on) as session:
            yield
        if session.results or session.errors or session.skipped:
            item.stash.setdefault(_KEY, {})[when] = session

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item):
        yield from self._watch(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        yield from self._watch(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item):
        yield from self._watch(item, "teardown")

    # -- turn findings into the test's report -------------------------------------------------

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        rep = outcome.get_result()
        session = item.stash.get(_KEY, {}).pop(call.when, None)
        if session is None:
            return
        from analyzer.report.text import summary
        from analyzer.tvm_checks.hook import render

        bad = session.failing()
        not_checked = session.errors if self.fail_on == "warning" else []
        lines = [f"{f.file}:{f.second.line}:{f.second.col}: {f.severity}[{f.rule}] kernel {f.kernel} [{f.target}]"
                 for r in bad for f in r.findings]
        lines += [f"could not check {e}" for e in not_checked]
        rep.kernelrace = {"summary": summary(session.results), "failing": lines, "fail_on": self.fail_on,
                          "not_checked": list(session.errors), "skipped": list(session.skipped)}
        if not lines:
            return
        phase = "" if call.when == "call" else f" during {call.when}"
        parts = [(f"kernelrace: GPU kernel(s) this test built{phase} have findings at or above "
                  f"{self.fail_on} (--kernelrace-fail-on={self.fail_on})")]
        if bad:
            parts.append(render(bad))
        parts += [f"kernelrace: could not check {e}" for e in not_checked]
        text = "\n".join(parts)
        first = bad[0].findings[0] if bad else None
        message = (f"kernelrace: {first.severity}[{first.rule}] in {first.kernel} [{first.target}]"
                   f" at {first.file}:{first.second.line}" if first else f"kernelrace: could not check {not_checked[0]}")
        if len(lines) > 1:
            message += f" (+{len(lines) - 1} more)"
        path, lineno, _ = item.location
        if rep.passed:
            rep.outcome = "failed"
            rep.longrepr = KernelraceRepr(text, _Crash(path, (lineno or 0) + 1, message))
        else:
            rep.sections.append(("kernelrace", text))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "kernelrace", None)
        if not data:
            return
        for k in self.totals:
            self.totals[k] += data["summary"].get(k, 0)
        self.tests.add(report.nodeid)
        if data["failing"]:
            self.failing.append((report.nodeid + ("" if report.when == "call" else f" ({report.when})"),
                                 data["failing"]))
        self.not_checked += [(report.nodeid, e) for e in data["not_checked"]]
        self.skipped += [(report.nodeid, e) for e in data.get("skipped", ())]

    # -- the session summary ------------------------------------------------------------------

    def pytest_terminal_summary(self, terminalreporter) -> None:
        tr, t = terminalreporter, self.totals
        tr.write_sep("=", "kernelrace")
        tr.write_line(f"{t['kernels']} GPU kernel(s) built through TVM checked in {len(self.tests)} test(s): "
                      f"{t['clean']} clean, {t['with_findings']} with findings, {t['unknown']} unknown; "
                      f"{t['errors']} error(s), {t['warnings']} warning(s)")
        if self.not_checked:
            tr.write_line(f"{len(self.not_checked)} device module(s) could not be checked:", yellow=True)
            for nodeid, e in self.not_checked:
                tr.write_line(f"  {nodeid}: {e}", yellow=True)
        if self.skipped:
            tr.write_line(f"{len(self.skipped)} device module(s) for GPU targets kernelrace does not analyse: "
                          + ", ".join(sorted({e for _, e in self.skipped})))
        if self.failing:
            tr.write_line(f"{len(self.failing)} test(s) failed by kernelrace (--kernelrace-fail-on={self.fail_on}):",
                          red=True, bold=True)
            for nodeid, lines in self.failing:
                for line in lines:
                    tr.write_line(f"  {nodeid}: {line}", red=True)
        else:
            tr.write_line(f"no test failed by kernelrace (--kernelrace-fail-on={self.fail_on})", green=True)
