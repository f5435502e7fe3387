"""The compile step a CUDA deployment adds to TVM's build, timed: CUDA C to PTX, PTX to a cubin.

A CUDA-enabled TVM compiles the CUDA C it emits with nvcc inside the build call
(`tvm.contrib.nvcc.compile_cuda`: `--ptx -O3` for the target's arch), and the driver assembles the
PTX when the module loads. This TVM wheel has no CUDA runtime and stops at CUDA C. Two ways to
time what it leaves out, the first found used:

- `nvcc` on PATH: `nvcc --ptx -O3 -arch=sm_80`, as TVM runs it;
- NVIDIA's pip wheels (`pip install ".[bench]"`): NVRTC (nvidia-cuda-nvrtc-cu12), the library
  form of the front end and optimiser nvcc runs for device code, to PTX for compute_80, with the
  headers TVM's source includes (nvidia-cuda-runtime-cu12, nvidia-cuda-cccl-cu12); then ptxas
  (nvidia-cuda-nvcc-cu12) to sm_80 code, which the driver would otherwise do at load.

Neither needs a GPU.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


class CompileError(Exception):
    pass


class Nvcc:
    name = "nvcc"

    def __init__(self, path: str):
        self.path = path

    def seconds(self, files) -> float:
        """Seconds nvcc takes to compile the CUDA files to PTX as TVM's `compile_cuda` does."""
        total = 0.0
        with tempfile.TemporaryDirectory() as tmp:
            for i, (_, text) in enumerate(files):
                src, ptx = Path(tmp) / f"k{i}.cu", Path(tmp) / f"k{i}.ptx"
                src.write_text(text)
                t = time.perf_counter()
                done = subprocess.run([self.path, "--ptx", "-O3", "-arch=sm_80", "-o", str(ptx), str(src)],
                                      capture_output=True, text=True)
                total += time.perf_counter() - t
                if done.returncode != 0:
                    raise CompileError(f"nvcc failed on {src.name}: {done.stderr.strip().splitlines()[-1]}")
        return total


class Nvrtc:
    name = "nvrtc+ptxas"

    def __init__(self, lib: ctypes.CDLL, includes: list[str], ptxas: str):
        self.lib, self.includes, self.ptxas = lib, includes, ptxas

    def seconds(self, files) -> float:
        """Seconds NVRTC takes to compile the CUDA files to PTX, plus ptxas to assemble it."""
        total = 0.0
        with tempfile.TemporaryDirectory() as tmp:
            for i, (_, text) in enumerate(files):
                t = time.perf_counter()
                ptx = self._ptx(text.encode(), f"k{i}.cu")
                path = Path(tmp) / f"k{i}.ptx"
                path.write_bytes(ptx)
                done = subprocess.run([self.ptxas, "-O3", "-arch=sm_80", str(path), "-o", str(path.with_suffix(".cubin"))],
                                      capture_output=True, text=True)
                total += time.perf_counter() - t
                if done.returncode != 0:
                    raise CompileError(f"ptxas failed on k{i}.ptx: {done.stderr.strip()[:300]}")
        return total

    def _ptx(self, source: bytes, name: str) -> bytes:
        lib, prog = self.lib, ctypes.c_void_p()
        if lib.nvrtcCreateProgram(ctypes.byref(prog), source, name.encode(), 0, None, None) != 0:
            raise CompileError(f"nvrtcCreateProgram failed on {name}")
        try:
            opts = [b"-arch=compute_80", b"-default-device"] + [b"-I" + d.encode() for d in self.includes]
            if lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts)) != 0:
                size = ctypes.c_size_t()
                lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
                log = ctypes.create_string_buffer(size.value)
                lib.nvrtcGetProgramLog(prog, log)
                raise CompileError(f"NVRTC failed on {name}: {log.value.decode(errors='replace').strip()[:300]}")
            size = ctypes.c_size_t()
            lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
            ptx = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetPTX(prog, ptx)
            return ptx.value
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _package_dir(name: str) -> Path | None:
    try:
        module = __import__(f"nvidia.{name}", fromlist=["_"])
    except ImportError:
        return None
    return Path(list(module.__path__)[0])


def toolchain() -> Nvcc | Nvrtc | None:
    """The first way to time CUDA's compile step this machine has (see the module's docstring)."""
    nvcc = shutil.which("nvcc")
    if nvcc:
        return Nvcc(nvcc)
    dirs = {n: _package_dir(n) for n in ("cuda_nvrtc", "cuda_runtime", "cuda_cccl", "cuda_nvcc")}
    if any(d is None for d in dirs.values()):
        return None
    libs = sorted((dirs["cuda_nvrtc"] / "lib").glob("libnvrtc.so.*"))
    ptxas = dirs["cuda_nvcc"] / "bin" / "ptxas"
    if not libs or not ptxas.exists():
        return None
    includes = [str(dirs["cuda_runtime"] / "include"), str(dirs["cuda_cccl"] / "include")]
    return Nvrtc(ctypes.CDLL(str(libs[0])), includes, str(ptxas))
