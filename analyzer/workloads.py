"""`analyzer.workloads`, the builder module the README and users' commands name
(`kernelrace lint analyzer.workloads:softmax ...`): the workloads live in `analyzer.tvm.workloads`."""

from analyzer.tvm.workloads import (  # noqa: F401
    gemv, layer_norm, matmul, rms_norm, softmax, sum, transpose, workloads,
)

__all__ = ["gemv", "layer_norm", "matmul", "rms_norm", "softmax", "sum", "transpose", "workloads"]
