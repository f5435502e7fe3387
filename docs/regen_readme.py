"""Regenerate the example outputs in README.md from real runs, so that they cannot go stale.

    python docs/regen_readme.py           # run every example and rewrite its block in README.md
    python docs/regen_readme.py --check   # write nothing; exit 1 when a block differs from a fresh run

Each example's block in README.md stands between `<!-- example: NAME -->` and `<!-- /example -->`:
a code block with the command (`$ kernelrace ...`) and the lines of its output that the README
shows (`Example.shows` picks them; `...` stands for lines left out). The command is run from the
repository's root as `python -m analyzer.cli`, without the result cache. tests/test_readme_examples.py
(in the slow set: the `llm` example builds 69 kernels for three targets) fails when a block is stale.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(r"(<!-- example: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /example -->)", re.S)


def _findings_witness_fix(lines: list[str]) -> list[str]:
    """The first finding's header line, its witness and its fix hint."""
    return [lines[0]] + [line for line in lines if line.startswith(("  witness:", "  fix:"))][:2]


def _summary(lines: list[str]) -> list[str]:
    return ["...", lines[-1]]


def _errors(lines: list[str]) -> list[str]:
    return [line for line in lines if re.match(r"\S+: error\[", line)]


@dataclass(frozen=True)
class Example:
    args: tuple[str, ...]                   # kernelrace's arguments
    shown: str                              # the command as README.md shows it (line breaks allowed)
    shows: Callable[[list[str]], list[str]]  # the output lines README.md shows


EXAMPLES = {
    "merge-state": Example(
        ("lint", "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace", "--target", "cuda",
         "--param", "num_heads=8", "--param", "head_dim=256", "--param", "v_dtype=float16"),
        "kernelrace lint tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace \\\n"
        "    --target cuda --param num_heads=8 --param head_dim=256 --param v_dtype=float16",
        _findings_witness_fix),
    "llm": Example(
        ("llm", "--num-qo-heads", "8", "--num-kv-heads", "1", "--head-dim", "512", "--target", "cuda,metal,vulkan"),
        "kernelrace llm --num-qo-heads 8 --num-kv-heads 1 --head-dim 512 --target cuda,metal,vulkan",
        _summary),
    "vulkan": Example(
        ("check", "tests/fixtures/vulkan/reduce_tree.comp"),
        "kernelrace check tests/fixtures/vulkan/reduce_tree.comp",
        _errors),
}


def run(example: Example) -> str:
    """The example's block: its command and the output lines shown, from a fresh run."""
    env = dict(os.environ, KERNELRACE_NO_CACHE="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "analyzer.cli", *example.args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{example.shown}: exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
    shown = example.shows(proc.stdout.splitlines())
    return "```\n$ " + example.shown + "\n" + "".join(line.rstrip() + "\n" for line in shown) + "```\n"


def blocks(text: str) -> dict[str, str]:
    """README.md's example blocks by name."""
    return {m.group("name"): m.group("body") for m in BLOCK.finditer(text)}


def regenerate(text: str, names: list[str] | None = None) -> str:
    fresh = {name: run(EXAMPLES[name]) for name in (names or sorted(blocks(text)))}
    return BLOCK.sub(lambda m: m.group(1) + fresh.get(m.group("name"), m.group("body")) + m.group(4), text)


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    unknown = sorted(set(blocks(text)) - set(EXAMPLES))
    if unknown or argv not in ([], ["--check"]):
        print(f"unknown example(s) in README.md: {unknown}" if unknown else __doc__.strip().splitlines()[2],
              file=sys.stderr)
        return 2
    new = regenerate(text)
    if argv == ["--check"]:
        stale = [n for n, body in blocks(new).items() if blocks(text)[n] != body]
        print("".join(f"README.md: example {n} is stale\n" for n in stale) or "README.md: examples up to date", end="")
        return 1 if stale else 0
    README.write_text(new, encoding="utf-8", newline="\n")
    print(f"README.md: {len(blocks(new))} example(s) regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
