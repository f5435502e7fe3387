"""Small Relax models written with `tvm.relax.frontend.nn` (test data for `kernelrace model` and
for `kernelrace lint` of the PrimFuncs a Relax model lowers to).

`block()` is an (nn.Module, export_tvm spec) pair: RMSNorm, three Linear layers, softmax and SiLU
over a symbolic number of rows, as a new user would write one. `block_module()` is its Relax
IRModule. `crashes_under_metal(target)` is `block_module()`, except that under a Metal target its
process dies with SIGSEGV, as TVM's Metal steps do at times. `block_kernels(target)` is the block's
PrimFuncs after Relax's lowering and dlight's default schedules (an IRModule of PrimFuncs without
`global_symbol`, as `relax.build` would hand them on), scheduled under `schedule_target` (OpenCL:
dlight's CUDA matmul imports TVM's tensor intrinsics, a minute, and its Metal matmul crashes).
"""

import os
import signal

HIDDEN, FFN = 64, 128


def _module():
    from tvm.relax.frontend import nn
    from tvm.relax.frontend.nn import op

    class Block(nn.Module):
        def __init__(self):
            self.norm = nn.RMSNorm(HIDDEN, -1, 1e-5, bias=False)
            self.up = nn.Linear(HIDDEN, FFN, bias=False)
            self.gate = nn.Linear(HIDDEN, FFN, bias=False)
            self.down = nn.Linear(FFN, HIDDEN, bias=False)

        def forward(self, x):
            h = self.norm(x)
            return op.softmax(self.down(op.silu(self.gate(h)) * self.up(h)), axis=-1)

    block = Block()
    block.to("float16")
    return block


def block():
    from tvm.relax.frontend import nn

    spec = {"forward": {"x": nn.spec.Tensor(["n", HIDDEN], "float16"),
                        "$": {"param_mode": "packed", "effect_mode": "none"}}}
    return _module(), spec


def block_module():
    module, spec = block()
    return module.export_tvm(spec)[0]


def crashes_under_metal(target=None):
    if target is not None and target.kind.name == "metal":
        os.kill(os.getpid(), signal.SIGSEGV)
    return block_module()


def block_kernels(schedule_target: str = "opencl"):
    import tvm
    from tvm import relax
    from tvm.s_tir import dlight as dl

    with tvm.target.Target(schedule_target):
        mod = relax.get_pipeline("zero")(block_module())
        mod = dl.ApplyDefaultSchedule(dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(), dl.gpu.GeneralReduction(),
                                      dl.gpu.Fallback())(mod)
    return tvm.IRModule({gv: f for gv, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc)})
