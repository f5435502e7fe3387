"""The progress bar (analyzer/command/progress_bar.py): on stderr when it is a terminal (a pty here) and
the run outlasts the delay; never on a pipe; the report on stdout is the same either way."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from conftest import FIXTURES

ROOT = Path(__file__).resolve().parent.parent
FILES = [str(FIXTURES / n) for n in ("cuda/neighbour_shift.cu", "metal/neighbour_shift.metal", "opencl/reduce_tree.cl")]


def _run(args: list[str], delay: str, tty: bool) -> tuple[int, str, str]:
    env = dict(os.environ, KERNELRACE_PROGRESS_DELAY=delay, KERNELRACE_NO_CACHE="1", PYTHONPATH=str(ROOT),
               COLUMNS="120", TERM="xterm")
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    cmd = [sys.executable, "-m", "analyzer.cli", *args]
    if not tty:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        return p.returncode, p.stdout, p.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    err = b""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:      # the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        elif p.poll() is not None:
            break
    out = p.stdout.read().decode()
    p.wait(timeout=60)
    os.close(master)
    return p.returncode, out, err.decode(errors="replace")


def test_a_bar_on_a_terminal_and_none_on_a_pipe():
    args = ["check", "-j", "1", *FILES]
    code, out, err = _run(args, "0", tty=True)
    assert code == 1
    assert "checking" in err and "/3" in err and "\x1b[" in err, err    # drawn with terminal control codes
    code2, out2, err2 = _run(args, "0", tty=False)
    assert (code2, out2) == (code, out)                 # the report does not depend on the terminal
    assert "checking" not in err2 and "\x1b[" not in err2 and "━" not in err2


def test_no_bar_on_a_terminal_before_the_delay():
    code, out, err = _run(["check", "-j", "1", *FILES], "600", tty=True)
    assert code == 1 and "checking" not in err and "━" not in err
