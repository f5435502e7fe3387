"""SPIR-V (as `spirv-dis` prints it) lowered into the kernel IR.

A module is read in two passes: the declarations (types, constants, decorations, names, global
variables, entry points) into tables, then each GLCompute entry point's function, whose
structured control flow (`OpSelectionMerge`, `OpLoopMerge`) is rebuilt into the IR's `If` and
`Loop`. SSA values become IR expressions; a load becomes a temporary so that its access happens
where the load is; `OpPhi` becomes a variable assigned on each incoming edge. Function-storage
scalars (glslang's unoptimised locals) are IR variables; Function-storage composites are private
buffers. Vulkan's subgroup size is the device's (4 to 128) and its mapping of invocations to
subgroups is the driver's, so the kernel's warp size is 1: a subgroup barrier orders no two
invocations the analysis could tell apart.

The lowering is split by concern: `module` reads the module into tables, `kernel` lowers each
entry point with the mixins `values`, `control_flow`, `instructions`, `memory` and `barriers`, and
`coalesce` joins adjacent lane accesses of the lowered body.
"""

from analyzer.frontend.spirv.kernel import KernelLowering, SpirvLowering
from analyzer.frontend.spirv.module import Module

__all__ = ["KernelLowering", "Module", "SpirvLowering"]
