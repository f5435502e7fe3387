"""kernelrace: a static race analyzer for GPU kernels.

A kernel goes through these stages, each in its own package:

    builder (Python) ──tvm/──▶ emitted source ─┐
    .cu .metal .cl .spvasm .comp .wgsl ────────┴─frontend/─▶ kernel IR (ir.py)
        ──analysis/─▶ symbolic events, barrier intervals, pair verdicts, witnesses
        ──rules/ (top level)─▶ findings (findings.py, messages.py)
        ──report/─▶ text, JSON, SARIF, baselines

- `frontend/`: Lark parsing and lowering per dialect (the C family: CUDA C, Metal, OpenCL C; SPIR-V
  assembly; WGSL), and the glslang/SPIR-V tools. Produces `ir.Kernel`.
- `tvm/`: running a builder and building it with TVM (`builders.py`, `build.py`), the TIR→GLSL
  translation for Vulkan (`tir_glsl.py`), the LLM kernel corpus and dlight workloads.
- `analysis/`: symbolic execution (`symbolic.py`), barrier intervals (`concurrency.py`), address
  algebra and solver-free disjointness, the Z3 encoding, pair checks (`races.py`; between blocks `grid.py`, `last_block.py`), witness replay
  and fix re-checks. Reads the IR only.
- `dynamic/`: an interpreter of the IR (threads one at a time between barriers, seeded inputs)
  and a dynamic race detector, for `kernelrace confirm` and the tests' oracle. Reads the IR only.
- `report/`: text output, SARIF, baselines. Reads findings only.
- Entry points, here: `cli.py`, `config.py`, `pipeline.py` (file or build → findings),
  `confirm.py`, `opencl_run.py` (`confirm --runtime opencl`), `llm.py`, `tvm_hook.py` (checking inside TVM's own build), `pytest_plugin.py`, `mutants.py`.

`ir.py`, `findings.py`, `messages.py` and `errors.py` are the vocabulary every stage shares.
Imports point down this list, never back (tests/test_layout.py checks it); `docs/architecture.md`
says more.
"""

__version__ = "0.1.0"
