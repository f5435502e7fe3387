"""Run a command and report its wall time and the CPU time of its whole process tree (every worker
included, sampled from /proc while they live): on a shared machine the CPU seconds say what the
run costs, the wall time what the load let it take. Linux only.

    python benchmarks/cpu_time.py kernelrace model CONFIG.json --no-cache -j 2
"""

import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(p))
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, []))
    return out


def _cpu(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK     # utime + stime of the process itself
    except (OSError, IndexError, ValueError):
        return -1.0


def main() -> int:
    t0 = time.perf_counter()
    proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
    seen: dict[int, float] = {}
    while proc.poll() is None:
        for pid in _tree(proc.pid):
            c = _cpu(pid)
            if c >= 0:
                seen[pid] = max(seen.get(pid, 0.0), c)
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    load = os.getloadavg()[0]
    print(f"exit {proc.returncode}: {wall:.1f} s wall, {sum(seen.values()):.1f} s CPU in {len(seen)} processes "
          f"(load average {load:.1f} at the end, {os.cpu_count()} cores)", file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
