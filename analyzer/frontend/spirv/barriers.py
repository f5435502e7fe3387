"""Barriers: SPIR-V's scopes and memory semantics, and an `OpControlBarrier` lowered into an IR
barrier (widened by an `OpMemoryBarrier` just before it). Separate because what a barrier
orders is where the Vulkan memory model enters the lowering."""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.lower import Unsupported
from analyzer.frontend.spirv.module import Ins

# Scopes (SPIR-V `Scope` values).
CROSS_DEVICE, DEVICE, WORKGROUP, SUBGROUP, INVOCATION = 0, 1, 2, 3, 4
SCOPE_NAMES = {0: "CrossDevice", 1: "Device", 2: "Workgroup", 3: "Subgroup", 4: "Invocation", 5: "QueueFamily"}
# Memory semantics bits.
ORDERING = 0x2 | 0x4 | 0x8 | 0x10
UNIFORM_MEMORY, WORKGROUP_MEMORY = 0x40, 0x100
SEMANTIC_BITS = [(0x2, "Acquire"), (0x4, "Release"), (0x8, "AcquireRelease"), (0x10, "SequentiallyConsistent"),
                 (0x40, "UniformMemory"), (0x80, "SubgroupMemory"), (0x100, "WorkgroupMemory"),
                 (0x200, "CrossWorkgroupMemory"), (0x400, "AtomicCounterMemory"), (0x800, "ImageMemory"),
                 (0x1000, "OutputMemory"), (0x2000, "MakeAvailable"), (0x4000, "MakeVisible"), (0x8000, "Volatile")]


def semantics_text(bits: int) -> str:
    words = [name for bit, name in SEMANTIC_BITS if bits & bit]
    return "|".join(words) or "None"


class BarriersMixin:
    """KernelLowering's barriers: `fence` holds the semantics of a pending OpMemoryBarrier."""

    def _const(self, ident: str, ins: Ins) -> int:
        v = self.m.constants.get(ident)
        if not isinstance(v, int) or isinstance(v, bool) or ident in self.m.spec_constants:
            raise Unsupported(ins.node, f"scope or semantics {ident} is not a constant")
        return v & 0xFFFFFFFF   # TVM writes them as signed int constants

    def control_barrier(self, ins: Ins) -> list[ir.Stmt]:
        a = ins.args
        exec_scope, mem_scope, sem = (self._const(x, ins) for x in a[:3])
        sem |= self.fence
        self.fence = 0
        if exec_scope == INVOCATION:
            return []
        scope = ir.WARP if exec_scope == SUBGROUP else ir.BLOCK
        spaces = set()
        # Memory is ordered only with an ordering bit and a memory scope wider than one subgroup.
        if sem & ORDERING and mem_scope in (CROSS_DEVICE, DEVICE, WORKGROUP, 5):
            if sem & WORKGROUP_MEMORY:
                spaces.add(ir.SHARED)
            if sem & UNIFORM_MEMORY:
                spaces.add(ir.GLOBAL)
        text = (f"OpControlBarrier {SCOPE_NAMES.get(exec_scope, exec_scope)} {SCOPE_NAMES.get(mem_scope, mem_scope)} "
                f"{semantics_text(sem)}")
        return [ir.Barrier(scope, frozenset(spaces), self.span(ins), text)]
