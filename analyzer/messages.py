"""Every user-facing message template, in one place (lowercase, naming the entities)."""

RACE = {
    "write-after-read": "write to {buf}[{elem}] ({mem}) by thread {t2} may land before thread {t1} reads it at line {l1}",
    "read-after-write": "read of {buf}[{elem}] ({mem}) by thread {t2} may see or miss the write by thread {t1} at line {l1}",
    "write-after-write": "write to {buf}[{elem}] ({mem}) by thread {t2} races with the write by thread {t1} at line {l1}",
}
# A collision that exists only outside the bounds (rules/out_of_bounds.py): the access that leaves
# them, the index, and the access it then collides with.
OUT_OF_BOUNDS = ("{kind} {buf} by thread {t}{b} uses index {index}, outside {bound}, and only there meets the "
                 "{other} by thread {t2}{b2} at line {l2} ({buf}[{elem}])")
# ... or needs another access of one of the two threads outside them (every witness does).
OUT_OF_BOUNDS_ELSEWHERE = ("{kind2} {buf2}[{elem}] by thread {t2}{b2} and the {kind1} by thread {t1}{b1} at line "
                           "{l1} collide only where {kind} {buf} at line {l} by thread {t} uses index {index}, "
                           "outside {bound}")
OUT_OF_BOUNDS_WHY = ("in bounds no two threads collide here: the collision needs an access outside what the "
                     "language defines (undefined behaviour in C, CUDA, Metal and OpenCL; another element than "
                     "the one written in WGSL and SPIR-V), not a missing barrier")
# Races between blocks (analyzer/analysis/interblock/grid.py): the threads named with their blocks.
RACE_GRID = {
    "write-after-read": "write to {buf}[{elem}] ({mem}) by thread {t2} of block {b2} may land before thread {t1} of "
                        "block {b1} reads it at line {l1}",
    "read-after-write": "read of {buf}[{elem}] ({mem}) by thread {t2} of block {b2} may see or miss the write by "
                        "thread {t1} of block {b1} at line {l1}",
    "write-after-write": "write to {buf}[{elem}] ({mem}) by thread {t2} of block {b2} races with the write by thread "
                         "{t1} of block {b1} at line {l1}",
}
GRID_WHY = ("the two threads are in different blocks: no barrier inside the kernel orders two blocks "
            "({barrier} waits for the threads of one block only)")
GRID_WHY_SYNC = ("the two threads are in different blocks and no grid sync lies between their accesses: only a "
                 "grid sync orders two blocks ({barrier} waits for the threads of one block only)")
GRID_BLOCK_STATE = ("it needs two blocks' loop-carried {vars} to hold the same values (as two blocks of a "
                    "persistent kernel drawing the same tile would): a warning, since kernelrace keeps "
                    "block-uniform loop state as an unknown function per block and cannot prove each block "
                    "works on its own elements")
GRID_UNVALIDATED = ("a warning, not an error: no witness of this collision between blocks replays on concrete "
                    "values, and what keeps blocks apart (which elements each block's schedule gives it) may be "
                    "beyond what kernelrace models")
GRID_BARRIER = {"cuda": "__syncthreads()", "metal": "threadgroup_barrier", "spirv": "barrier()",
                "opencl": "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE)"}
# Fix hints for a race between blocks (not re-checked: no barrier placement applies).
GRID_HINT_ATOMIC = ("make the update atomic ({atomic}): blocks accumulating into one element need an atomic "
                    "read-modify-write; no barrier inside the kernel can order two blocks")
GRID_ATOMIC = {"cuda": "atomicAdd(&{buf}[i], v)", "metal": "atomic_fetch_add_explicit(&{buf}[i], v, memory_order_relaxed)",
               "spirv": "atomicAdd({buf}[i], v) in GLSL", "opencl": "atomic_add(&{buf}[i], v)"}
GRID_HINT_LAYOUT = ("no barrier inside the kernel can order two blocks: give each block its own elements of {buf} "
                    "(check the block-to-tile map), write the result to a separate output buffer instead of "
                    "updating {buf} in place, or split the kernel in two launches (a kernel boundary orders every block)")
GRID_HINT_SYNC = ("no block barrier orders two blocks; this kernel's grid syncs do: insert `cg::this_grid().sync()` "
                  "between the two accesses (every thread of the grid must reach it), or give each block its own "
                  "elements of {buf}")
BENIGN_SUFFIX = " (both threads store the same value)"
DIVERGENT_BARRIER = "barrier {text} is reached only by threads where the condition at line {line} holds, which differs between threads of a block"
DIVERGENT_GRID_BARRIER = ("grid sync {text} is reached only by blocks where the condition at line {line} holds, "
                          "which differs between blocks: every thread of the grid must reach it, or the grid deadlocks")
DIVERGENT_GRID_EXIT = ("grid sync {text} sits in a loop that some blocks leave early (the exit at line {line} is "
                       "taken under a condition that may differ between blocks): blocks may pass it a different "
                       "number of times, and the grid deadlocks")
BARRIER_SCOPE = {
    "write-after-read": "write to {buf}[{elem}] ({mem}) by thread {t2} is not ordered after the read by thread {t1} at line {l1}: {barriers}; {hint}",
    "read-after-write": "read of {buf}[{elem}] ({mem}) by thread {t2} may miss the write by thread {t1} at line {l1}: {barriers}; {hint}",
    "write-after-write": "write to {buf}[{elem}] ({mem}) by thread {t2} is not ordered after the write by thread {t1} at line {l1}: {barriers}; {hint}",
}
BARRIER_SCOPE_ONE = "the barrier {text} at line {lines} does not order {mem} memory"
BARRIER_SCOPE_MANY = "the barriers {text} at lines {lines} do not order {mem} memory"
BARRIER_SCOPE_NONE = "the barriers between them do not order {mem} memory"
BARRIER_SCOPE_WHY = ("every thread waits at the barrier, but without ordering {mem} memory it neither makes "
                     "{mem} writes before it visible to the threads after it nor keeps a read before it from "
                     "seeing a write issued after it")
# How to make a barrier order the memory it misses, per dialect.
BARRIER_SCOPE_HINT = {
    "metal": "use {fn}({flags})",
    "spirv": {"global": "add UniformMemory (0x40) to the barrier's memory semantics, e.g. memoryBarrierBuffer() "
                        "before barrier() in GLSL",
              "shared": "add WorkgroupMemory (0x100) to the barrier's memory semantics, e.g. memoryBarrierShared() "
                        "before barrier() in GLSL"},
    "cuda": "use {fn}(), which orders shared and global memory",
    "opencl": "use {fn}(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE)",
    "wgsl": {"global": "add storageBarrier() next to the workgroupBarrier(): only storageBarrier() orders storage memory",
             "shared": "add workgroupBarrier() next to the storageBarrier(): only workgroupBarrier() orders workgroup "
                       "memory"},
}
BARRIER_SCOPE_HINT_OTHER = "make the barrier order {mem} memory too"
REDUNDANT_BARRIER = "barrier {text} is redundant: without it{also}, no two threads' accesses collide"
REDUNDANT_ALSO = " (and without the redundant barriers reported above it)"
REDUNDANT_CHECKED = ("{pairs} pair(s) of accesses that only it keeps apart were checked, for every block, "
                     "thread pair, loop iteration and parameter value the kernel allows")
REDUNDANT_SHADOWED = "every pair of accesses it keeps apart, another barrier keeps apart too"
UNKNOWN = "undecided: {what} between line {l1} and line {l2} on {buf}: {reason}"
SOLVER_FAILED = ("not checked: a solver call failed ({reason}) and the analysis of this kernel stopped; nothing "
                 "about this kernel is known (please report this)")
OUT_OF_MEMORY = ("not checked: the analysis grew past the kernel's memory limit ({mb} MB, --kernel-memory) and "
                 "was stopped; nothing about this kernel is known")

DEVICE_ADDRESSES = ("{buf} is buffer_reference memory, reached through device addresses the shader loads or is "
                    "given: where they point is the host's, so two different addresses may reach the same "
                    "memory here (if the host's buffers never overlap, a collision of two different addresses "
                    "is not a race)")
WARPS_BOTH = "threads of different warps collide, and so do threads of one warp"
WARPS_DIFFERENT_ONLY = "it needs threads in two different warps: it shows once a block spans more than one warp"
WARPS_SAME_ONLY = "only threads of one warp collide: lockstep execution may hide it, but warps are not guaranteed to run in lockstep"
WARP_BARRIER_ONLY = "only a warp-level barrier lies between the accesses, and it does not order threads of different warps"
DATA_DEPENDENT = ("it needs particular contents of {bufs} (it disappears when their values increase with "
                  "their index, as a sorted index map or a cumulative sum does): a warning, since "
                  "kernelrace cannot see the contents of memory")
LOOP_STATE = ("it needs the loop-carried {vars} to hold the same values in the two iterations shown{data}: "
              "kernelrace keeps loop state as an unknown function of the iteration, so it cannot rule "
              "that out (state that only moves forward, as a persistent kernel's tile counters, never repeats)")
CONTRACT_WOULD_REFUTE = ("the buffer contract{s} {names}, turned off by --no-contracts, rule{verb} it out "
                         "(see docs/contracts.md)")
LOOP_STATE_OR_DATA = (", or particular contents of {bufs} (it disappears when the state does not repeat and "
                      "their values increase with their index)")
SUBGROUPS_UNKNOWN = ("Vulkan leaves subgroup size (4 to 128) and membership to the device: no subgroup is assumed, "
                     "so a subgroup barrier orders no two invocations here")
OBSERVED = ("seen in a run: block (0,0,0) ran on inputs drawn from seed {seed}{params}, and these two threads "
            "touched the element with no barrier between them; the solver could not decide the pair within "
            "its budget (--timeout)")
CONDITIONAL_RACE = ("a race only when {cond}: if every launch guarantees {free}, state it (`// kernelrace: assume "
                    "{said}` in the source, or --assume); otherwise fix the race")
WITNESS_NOT_SEARCHED = ("witness not validated: not searched for, as {n} collisions between blocks on this buffer "
                        "before it were (a bound on the time many store sites take); a possible race (a warning)")
WITNESS_NOT_REPLAYED = ("witness not validated: replayed on concrete values, {reason}; the solver found no "
                        "other witness that replays, so this is a possible race (a warning), not a demonstrated one")
