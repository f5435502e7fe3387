"""The kernel builders TVM ships for its LLM runtime, with the parameters each one takes.

Used by the benchmark and the corpus tests; `shape` follows `../shared/notes/tvm-kernels.md`
(8 KV heads, 32 query heads, float16, page size 16, no RoPE scaling).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

DECODE = "tvm.relax.frontend.nn.llm._decode_kernels"
PREFILL = "tvm.relax.frontend.nn.llm._prefill_kernels"
PAGE = "tvm.relax.frontend.nn.llm._page_kernels"
KV = "tvm.relax.frontend.nn.llm.kv_cache"
ROPE = "tvm.relax.frontend.nn.llm.position_embedding"
TREE = "tvm.relax.frontend.nn.llm.tree_attn"
GENERIC = "tvm.relax.backend.gpu_generic"

MERGE_STATE = f"{DECODE}:_merge_state_inplace"

# Buffer contracts TVM's runtime guarantees for the kernels of these builders: (buffer as the
# builder declares it, property, where the runtime establishes it). Each is justified in
# docs/contracts.md; a property not found in TVM's code is not here. apache/tvm's
# src/runtime/vm/paged_kv_cache.cc builds every indptr as a prefix sum of lengths (never negative).
_BEGIN_FORWARD = "paged_kv_cache.cc BeginForward: qo_indptr_h/page_indptr_h are prefix sums of lengths"
_APPEND_INDPTR = "paged_kv_cache.cc BeginForward: cur_append_lengths_indptr_host_ is a prefix sum of append lengths"
_COMMIT_INDPTR = ("paged_kv_cache.cc CommitAcceptedTokenTreeNodes: commit_copy_length_indptr_host_ is a prefix sum "
                  "of path lengths")
_SLOTS = ("paged_kv_cache.cc BeginForward: append_position_map_host_ holds page_ids[o / page_size] * page_size + "
          "o % page_size for distinct in-block offsets o of each sequence's own last block, or -1 for a "
          "position pinned by an attention sink; the kernel stores only where position_map[...] != -1")
_COMMIT_SLOTS = ("paged_kv_cache.cc CommitAcceptedTokenTreeNodes: sequence i's source and destination slots "
                 "are append_position_map_host_ entries of its own segment cur_append_lengths_indptr_host_[i] .. "
                 "[i + 1] (never -1: tree attention rules out sliding windows)")
_FORK = ("paged_kv_cache.cc ForkSequence: CopySinglePage(src, tgt, in_page_offset) only when in_page_offset > 0, "
         "with in_page_offset = in_block_offset % page_size_ (stated up to page_size)")
_CUMSUM = "relax/backend/dispatch_sampling.py: the kernel's prob is cumsum(prob, axis=1) of probabilities"
BUILTIN_CONTRACTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    f"{PREFILL}:_attention_prefill": (("q_indptr", "nondecreasing", _BEGIN_FORWARD),
                                      ("page_indptr", "nondecreasing", _BEGIN_FORWARD)),
    f"{PREFILL}:_attention_prefill_mla": (("q_indptr", "nondecreasing", _BEGIN_FORWARD),
                                          ("page_indptr", "nondecreasing", _BEGIN_FORWARD)),
    f"{TREE}:tree_attn_with_paged_kv_cache": (("q_indptr", "nondecreasing", _BEGIN_FORWARD),
                                              ("page_indptr", "nondecreasing", _BEGIN_FORWARD)),
    f"{PREFILL}:_attention_prefill_ragged": (("q_indptr", "nondecreasing", _APPEND_INDPTR),
                                             ("kv_indptr", "nondecreasing", _APPEND_INDPTR)),
    f"{TREE}:tree_attn": (("q_indptr", "nondecreasing", _APPEND_INDPTR),
                          ("kv_indptr", "nondecreasing", _APPEND_INDPTR)),
    f"{PAGE}:_compact_kv_copy": (("copy_length_indptr", "nondecreasing", _COMMIT_INDPTR),
                                 ("copy_src_dst_pos", "distinct-across(copy_length_indptr)", _COMMIT_SLOTS)),
    f"{KV}:_kv_cache_transpose_append": (("position_map", "distinct-except(-1)", _SLOTS),),
    f"{KV}:_kv_cache_transpose_append_mla": (("position_map", "distinct-except(-1)", _SLOTS),),
    f"{PAGE}:_copy_single_page": (("copy_length", "range=1..{page_size}", _FORK),),
    f"{PAGE}:_copy_single_page_mla": (("copy_length", "range=1..{page_size}", _FORK),),
    f"{GENERIC}:generic_get_sample_index": (("prob", "nondecreasing", _CUMSUM),),
}


def builders(head_dim: int, dtype: str = "float16", kv_heads: int = 8, qo_heads: int = 32,
             page_size: int = 16) -> list[tuple[str, dict[str, Any]]]:
    hd, kv, qo = head_dim, kv_heads, qo_heads
    return [
        (f"{DECODE}:_attention_decode", dict(num_kv_heads=kv, num_qo_heads=qo, head_dim=hd, qkv_dtype=dtype,
                                             sliding_window=False, rope_scaling={}, page_size=page_size)),
        (MERGE_STATE, dict(num_heads=qo, head_dim=hd, v_dtype=dtype)),
        (f"{PREFILL}:_attention_prefill", dict(h_kv=kv, h_q=qo, d=hd, dtype=dtype, sliding_window=False,
                                               rope_scaling={}, page_size=page_size)),
        (f"{PREFILL}:_attention_prefill_ragged", dict(h_kv=kv, h_q=qo, d_qk=hd, d_v=hd, dtype=dtype, rope_scaling={})),
        (f"{PREFILL}:_attention_sequence_prefill", dict(h_kv=kv, h_q=qo, d=hd, dtype=dtype)),
        (f"{PREFILL}:_attention_sequence_prefill_with_mask", dict(h_kv=kv, h_q=qo, d=hd, dtype=dtype)),
        (f"{PREFILL}:_attention_prefill_mla", dict(h_q=qo, d_latent=hd, d_rope=64, dtype=dtype,
                                                   sliding_window=False, page_size=page_size)),
        (f"{TREE}:tree_attn", dict(h_kv=kv, h_q=qo, d=hd, dtype=dtype, rope_scaling={})),
        (f"{TREE}:tree_attn_with_paged_kv_cache", dict(h_kv=kv, h_q=qo, d=hd, dtype=dtype, rope_scaling={})),
        (f"{PAGE}:_copy_single_page", dict(num_heads=kv, page_size=page_size, head_dim=hd, dtype=dtype)),
        (f"{PAGE}:_copy_single_page_mla", dict(page_size=page_size, head_dim=hd, dtype=dtype)),
        (f"{PAGE}:_compact_kv_copy", dict(num_heads=kv, head_dim=hd, dtype=dtype, page_size=page_size)),
        (f"{KV}:_kv_cache_transpose_append", dict(num_key_value_heads=kv, head_dim=hd, dtype=dtype, page_size=page_size)),
        (f"{KV}:_kv_cache_transpose_append_mla", dict(d_qk=hd, dtype=dtype, page_size=page_size)),
        (f"{KV}:_kv_cache_debug_get_kv", dict(num_hidden_layers=4, num_key_value_heads=kv, head_dim=hd, dtype=dtype)),
        (f"{KV}:_kv_cache_debug_get_kv_mla", dict(num_hidden_layers=4, d_qk=hd, dtype=dtype)),
        (f"{ROPE}:llama_rope_with_position_map", dict(theta=10000.0, scale=1.0, head_dim=hd, num_q_heads=qo,
                                                      num_kv_heads=kv, dtype=dtype, rope_scaling={})),
        (f"{ROPE}:llama4_rope_with_position_map", dict(theta=10000.0, scale=1.0, head_dim=hd, num_q_heads=qo,
                                                       num_kv_heads=kv, dtype=dtype, rope_scaling={})),
        (f"{GENERIC}:gpu_2d_continuous_cumsum", {}),
        (f"{GENERIC}:gpu_3d_axis_1_cumsum", {}),
        (f"{GENERIC}:gpu_multinomial_from_uniform", {}),
        (f"{GENERIC}:generic_get_sample_index", {}),
    ]


@dataclass
class CorpusBuild:
    name: str                    # the builder's function name
    target: str
    head_dim: int
    module: Any = None           # the BuiltModule, or None when TVM could not build it
    error: str | None = None
    seconds: float = 0.0         # TVM's build time
    spec: str = ""               # module:function, as `kernelrace lint` names the builder
    params: dict = field(default_factory=dict)   # the builder's arguments (to build it again)


def corpus_builds(head_dims: list[int], targets: list[str], only: list[str] | None = None):
    """Build every corpus builder (those whose name contains a word of `only`, if given) for each
    head_dim and target, in that order, timing each build. For the benchmarks."""
    from analyzer.tvm.build import build
    from analyzer.errors import KernelraceError

    for hd in head_dims:
        for spec, params in builders(hd):
            name = spec.split(":")[1]
            if only and not any(w in name for w in only):
                continue
            for target in targets:
                t0 = time.perf_counter()
                try:
                    yield CorpusBuild(name, target, hd, build(spec, params, target), None, time.perf_counter() - t0, spec,
                                      params)
                except KernelraceError as exc:
                    yield CorpusBuild(name, target, hd, None, str(exc), time.perf_counter() - t0, spec, params)
