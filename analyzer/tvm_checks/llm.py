"""`kernelrace llm`: build and check every GPU kernel TVM's paged KV cache and LLM runtime use for
one model shape, on each target, and tabulate the verdicts (kernel x target).

The kernel list follows what `tvm.relax.frontend.nn.llm.kv_cache` builds for a model (its
`TIRPagedKVCache`: decode, prefill, ragged prefill, sliding-window variants, tree attention, MLA,
merge state, page copies, transpose-append, debug-get, RoPE) plus the sequence-prefill kernels and
`tvm.relax.backend.gpu_generic`'s cumsum and sampling kernels. A kernel that does not apply to the
shape (MLA without its dimensions, sliding window not asked for, a builder TVM refuses for these
parameters or cannot build for a target) is a *skipped* row with its reason, never left out.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.errors import KernelraceError
from analyzer.findings import ERROR, NOTE, WARNING, KernelResult
from analyzer.tvm.corpus import DECODE, GENERIC, KV, PAGE, PREFILL, ROPE, TREE
from analyzer.tvm.reference_model import config_json

DTYPES = ("float16", "bfloat16", "float32")
# Hugging Face `torch_dtype` (or `dtype`) spellings -> TVM dtype
HF_DTYPES = {"float16": "float16", "half": "float16", "fp16": "float16", "bfloat16": "bfloat16",
             "bf16": "bfloat16", "float32": "float32", "float": "float32", "fp32": "float32"}
DEBUG_LAYERS = 4           # _kv_cache_debug_get_kv's layer count when the config does not say
SLIDING_WINDOW_SIZE = 1024  # TVM's default `sliding_window_size` of _attention_prefill
MLA_OPTIONS = "--kv-lora-rank and --qk-rope-head-dim"


@dataclass(frozen=True)
class Shape:
    num_qo_heads: int
    num_kv_heads: int
    head_dim: int
    dtype: str = "float16"
    page_size: int = 16
    sliding_window: int | None = None     # window size; None: no sliding-window kernels
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    num_layers: int = DEBUG_LAYERS

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank is not None and self.qk_rope_head_dim is not None

    def as_dict(self) -> dict[str, Any]:
        return {"num_qo_heads": self.num_qo_heads, "num_kv_heads": self.num_kv_heads, "head_dim": self.head_dim,
                "dtype": self.dtype, "page_size": self.page_size, "sliding_window": self.sliding_window,
                "kv_lora_rank": self.kv_lora_rank, "qk_rope_head_dim": self.qk_rope_head_dim}


@dataclass
class Entry:
    """One kernel of the model: a builder with its parameters, or a reason it does not apply."""
    name: str                      # the row's name: the builder's function, and its variant
    builder: str                   # MODULE:FUNCTION
    params: dict[str, Any]
    skip: str | None = None        # why it is not built for this shape (every target)


def entries(shape: Shape) -> list[Entry]:
    """Every kernel TVM's LLM runtime builds for `shape`, in the order of the table."""
    kv, qo, hd, dt, ps = shape.num_kv_heads, shape.num_qo_heads, shape.head_dim, shape.dtype, shape.page_size
    sw = shape.sliding_window
    no_sw = "sliding window not requested (--sliding-window, or `sliding_window` in the model config)"
    no_mla = f"not an MLA shape: give {MLA_OPTIONS} (or `kv_lora_rank`/`qk_rope_head_dim` in the model config)"
    mla_qk = (shape.kv_lora_rank or 0) + (shape.qk_rope_head_dim or 0)
    rope = dict(theta=10000.0, scale=1.0, head_dim=hd, num_q_heads=qo, num_kv_heads=kv, dtype=dt)
    out = [
        Entry("_attention_decode", f"{DECODE}:_attention_decode",
              dict(num_kv_heads=kv, num_qo_heads=qo, head_dim=hd, qkv_dtype=dt, sliding_window=False,
                   rope_scaling={}, page_size=ps)),
        Entry("_attention_decode (sliding window)", f"{DECODE}:_attention_decode",
              dict(num_kv_heads=kv, num_qo_heads=qo, head_dim=hd, qkv_dtype=dt, sliding_window=True,
                   rope_scaling={}, page_size=ps), None if sw else no_sw),
        Entry("_merge_state_inplace", f"{DECODE}:_merge_state_inplace", dict(num_heads=qo, head_dim=hd, v_dtype=dt)),
        Entry("_attention_prefill", f"{PREFILL}:_attention_prefill",
              dict(h_kv=kv, h_q=qo, d=hd, dtype=dt, sliding_window=False, rope_scaling={}, page_size=ps)),
        Entry("_attention_prefill (sliding window)", f"{PREFILL}:_attention_prefill",
              dict(h_kv=kv, h_q=qo, d=hd, dtype=dt, sliding_window=True, rope_scaling={}, page_size=ps,
                   sliding_window_size=sw or SLIDING_WINDOW_SIZE), None if sw else no_sw),
        Entry("_attention_prefill_ragged", f"{PREFILL}:_attention_prefill_ragged",
              dict(h_kv=kv, h_q=qo, d_qk=hd, d_v=hd, dtype=dt, rope_scaling={})),
        Entry("_attention_sequence_prefill", f"{PREFILL}:_attention_sequence_prefill",
              dict(h_kv=kv, h_q=qo, d=hd, dtype=dt)),
        Entry("_attention_sequence_prefill_with_mask (padded)", f"{PREFILL}:_attention_sequence_prefill_with_mask",
              dict(h_kv=kv, h_q=qo, d=hd, dtype=dt, mask_mode="padded")),
        Entry("_attention_sequence_prefill_with_mask (causal_padded_left)",
              f"{PREFILL}:_attention_sequence_prefill_with_mask",
              dict(h_kv=kv, h_q=qo, d=hd, dtype=dt, mask_mode="causal_padded_left")),
        Entry("tree_attn", f"{TREE}:tree_attn", dict(h_kv=kv, h_q=qo, d=hd, dtype=dt, rope_scaling={})),
        Entry("tree_attn_with_paged_kv_cache", f"{TREE}:tree_attn_with_paged_kv_cache",
              dict(h_kv=kv, h_q=qo, d=hd, dtype=dt, rope_scaling={})),
        # MLA, as TIRPagedKVCache builds it: d_latent = kv_lora_rank, d_rope = qk_rope_head_dim, and the
        # cache holds kv_lora_rank + qk_rope_head_dim per position.
        Entry("_attention_prefill_mla", f"{PREFILL}:_attention_prefill_mla",
              dict(h_q=qo, d_latent=shape.kv_lora_rank, d_rope=shape.qk_rope_head_dim, dtype=dt,
                   sliding_window=False, page_size=ps), None if shape.mla else no_mla),
        Entry("_copy_single_page", f"{PAGE}:_copy_single_page",
              dict(num_heads=kv, page_size=ps, head_dim=hd, dtype=dt)),
        Entry("_copy_single_page_mla", f"{PAGE}:_copy_single_page_mla",
              dict(page_size=ps, head_dim=mla_qk, dtype=dt), None if shape.mla else no_mla),
        Entry("_compact_kv_copy", f"{PAGE}:_compact_kv_copy",
              dict(num_heads=kv, head_dim=hd, dtype=dt, page_size=ps)),
        Entry("_kv_cache_transpose_append", f"{KV}:_kv_cache_transpose_append",
              dict(num_key_value_heads=kv, head_dim=hd, dtype=dt, page_size=ps)),
        Entry("_kv_cache_transpose_append_mla", f"{KV}:_kv_cache_transpose_append_mla",
              dict(d_qk=mla_qk, dtype=dt, page_size=ps), None if shape.mla else no_mla),
        Entry("_kv_cache_debug_get_kv", f"{KV}:_kv_cache_debug_get_kv",
              dict(num_hidden_layers=shape.num_layers, num_key_value_heads=kv, head_dim=hd, dtype=dt)),
        Entry("_kv_cache_debug_get_kv_mla", f"{KV}:_kv_cache_debug_get_kv_mla",
              dict(num_hidden_layers=shape.num_layers, d_qk=mla_qk, dtype=dt), None if shape.mla else no_mla),
        # RoPE: the default and the two variants that access memory differently (GPT-J's interleaved
        # pairs; LongRoPE's per-dimension factors), and Llama 4's.
        Entry("llama_rope_with_position_map", f"{ROPE}:llama_rope_with_position_map", dict(rope, rope_scaling={})),
        Entry("llama_rope_with_position_map (gptj)", f"{ROPE}:llama_rope_with_position_map",
              dict(rope, rope_scaling={"rope_type": "gptj"})),
        Entry("llama_rope_with_position_map (longrope)", f"{ROPE}:llama_rope_with_position_map",
              dict(rope, rope_scaling={"rope_type": "longrope", "max_position_embeddings": 131072,
                                       "original_max_position_embeddings": 4096})),
        Entry("llama4_rope_with_position_map", f"{ROPE}:llama4_rope_with_position_map", dict(rope, rope_scaling={})),
        # gpu_generic: the sampler's cumsum and sampling kernels (shape-independent).
        Entry("gpu_2d_continuous_cumsum", f"{GENERIC}:gpu_2d_continuous_cumsum", {}),
        Entry("gpu_3d_axis_1_cumsum", f"{GENERIC}:gpu_3d_axis_1_cumsum", {}),
        Entry("gpu_multinomial_from_uniform", f"{GENERIC}:gpu_multinomial_from_uniform", {}),
        Entry("generic_get_sample_index", f"{GENERIC}:generic_get_sample_index", {}),
    ]
    for e in out:   # a skipped entry's parameters may be placeholders (MLA dims of 0): do not show them
        if e.skip:
            e.params = {k: v for k, v in e.params.items() if v is not None}
    return out


def select(all_entries: list[Entry], only: str | None) -> list[Entry]:
    """`--only NAME[,NAME]`: build only the rows whose name contains one of the words; the others
    stay in the table, skipped ("not selected")."""
    if not only:
        return all_entries
    words = [w.strip() for w in only.split(",") if w.strip()]
    unknown = [w for w in words if not any(w in e.name for e in all_entries)]
    if unknown:
        raise KernelraceError(f"--only: no kernel matches '{unknown[0]}' (kernels: "
                              f"{', '.join(e.name for e in all_entries)})")
    for e in all_entries:
        if e.skip is None and not any(w in e.name for w in words):
            e.skip = "not selected (--only)"
    return all_entries


# ---- the model configuration (Hugging Face config.json) -------------------------------------------

def read_model_config(path: str) -> dict[str, Any]:
    """The shape fields a Hugging Face style config.json gives; a one-line error naming the file and
    the key when it cannot be read or a key is missing or bad."""
    data = config_json(path)

    def integer(key: str, required: bool = False, positive: bool = True) -> int | None:
        if key not in data or data[key] is None:
            if required:
                raise KernelraceError(f"{path}: missing key '{key}'")
            return None
        v = data[key]
        if isinstance(v, bool) or not isinstance(v, int) or (positive and v < 1):
            raise KernelraceError(f"{path}: key '{key}': expected a positive integer, got {json.dumps(v)}")
        return v

    out: dict[str, Any] = {}
    heads = integer("num_attention_heads", required=True)
    out["num_qo_heads"] = heads
    out["num_kv_heads"] = integer("num_key_value_heads") or heads
    head_dim = integer("head_dim")
    nope, rope = integer("qk_nope_head_dim"), integer("qk_rope_head_dim")
    if head_dim is None and nope is not None and rope is not None:
        # MLA (DeepSeek V2/V3, Kimi K2): no head_dim; a query/key head is the no-RoPE part and the
        # RoPE part (hidden_size / heads is not a head dimension there).
        head_dim = nope + rope
    if head_dim is None:
        if "hidden_size" not in data:
            raise KernelraceError(f"{path}: missing key 'head_dim' (or 'hidden_size' to derive it from)")
        hidden = integer("hidden_size", required=True)
        if hidden % heads:
            raise KernelraceError(f"{path}: key 'hidden_size': {hidden} is not a multiple of "
                                  f"num_attention_heads ({heads}); give 'head_dim'")
        head_dim = hidden // heads
    out["head_dim"] = head_dim
    for key in ("torch_dtype", "dtype"):
        if data.get(key) is not None:
            v = data[key]
            if not isinstance(v, str) or v.removeprefix("torch.") not in HF_DTYPES:
                raise KernelraceError(f"{path}: key '{key}': unsupported dtype {json.dumps(v)} "
                                      f"(supported: {', '.join(DTYPES)})")
            out["dtype"] = HF_DTYPES[v.removeprefix("torch.")]
            break
    scaling = data.get("rope_scaling")
    if scaling is not None and not (isinstance(scaling, dict)
                                    and isinstance(scaling.get("rope_type", scaling.get("type", "")), str)):
        raise KernelraceError(f"{path}: key 'rope_scaling': expected an object with a 'rope_type', "
                              f"got {json.dumps(scaling)}")
    if data.get("use_sliding_window") is not False:
        sw = integer("sliding_window")
        if sw is not None:
            out["sliding_window"] = sw
    out["kv_lora_rank"] = integer("kv_lora_rank")
    out["qk_rope_head_dim"] = integer("qk_rope_head_dim")
    layers = integer("num_hidden_layers")
    if layers is not None:
        out["num_layers"] = layers
    return {k: v for k, v in out.items() if v is not None}


def model_config_files(paths: list[str]) -> list[str]:
    """The config files named, with each directory standing for its `*.json` files (sorted)."""
    out: list[str] = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            found = sorted(str(f) for f in p.glob("*.json") if f.is_file())
            if not found:
                raise KernelraceError(f"{given}: no *.json model configs in this directory")
            out.extend(found)
        else:
            out.append(given)
    return list(dict.fromkeys(out))


def shape_from(cli: dict[str, Any], model_config: str | None) -> Shape:
    """The shape: the command line over the model config over the defaults."""
    values: dict[str, Any] = read_model_config(model_config) if model_config else {}
    values.update({k: v for k, v in cli.items() if v is not None})
    for key, option in (("num_qo_heads", "--num-qo-heads"), ("num_kv_heads", "--num-kv-heads"),
                        ("head_dim", "--head-dim")):
        if key not in values:
            raise KernelraceError(f"llm: {option} is required (or --model-config config.json)")
    if ("kv_lora_rank" in values) != ("qk_rope_head_dim" in values):
        raise KernelraceError(f"llm: MLA needs both {MLA_OPTIONS}")
    if values["num_qo_heads"] % values["num_kv_heads"]:
        raise KernelraceError(f"llm: num_qo_heads ({values['num_qo_heads']}) is not a multiple of "
                              f"num_kv_heads ({values['num_kv_heads']})")
    if values.get("dtype", "float16") not in DTYPES:
        raise KernelraceError(f"llm: unsupported dtype '{values['dtype']}' (supported: {', '.join(DTYPES)})")
    return Shape(**values)


# ---- running ---------------------------------------------------------------------------------------

@dataclass
class Cell:
    """One kernel on one target: the results it produced, or why there are none."""
    entry: Entry
    target: str
    results: list[int] = field(default_factory=list)   # indices into the run's result list
    skipped: str | None = None     # does not apply (not built)
    failed: str | None = None      # built or analysed with an error of ours or TVM's lowering
    seconds: float = 0.0


def _what(exc: BaseException) -> str:
    """An exception's message in one line: its last line, as `build` reports it, unless that is
    only a caret underline (TVMScript diagnostics), then its first line with words."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    if re.search(r"[A-Za-z]", lines[-1]):
        return f"{type(exc).__name__}: {lines[-1]}"
    first = next(line for line in lines if re.search(r"[A-Za-z]", line))
    return f"{type(exc).__name__}: {first.removeprefix('error: ')}"


def _skip_reason(exc: KernelraceError, target: str) -> str | None:
    """A build error that means "this kernel does not apply to the shape/target": the builder
    itself refused the parameters, or TVM could not build it for the target."""
    msg, cause = str(exc), exc.__cause__
    if msg.startswith("builder ") and " raised " in msg:
        return f"TVM's builder raised {_what(cause) if cause else msg.partition(' raised ')[2]}"
    if msg.startswith("TVM failed to build"):
        return f"TVM cannot build it for {target}: {_what(cause) if cause else msg.rpartition(': ')[2]}"
    return None


def run(shape_entries: list[Entry], targets: list[str], check: Callable[[Entry, str], list[KernelResult]],
        progress: Callable[[str, bool], None] | None = None,
        keep: Callable[[Entry, str], bool] | None = None) -> tuple[list[KernelResult], list[Cell]]:
    """Build and check each entry on each target with `check(entry, target)` (which raises
    KernelraceError when the build or the analysis fails). `progress(label, done)` is called before
    (done=False) and after (done=True) each kernel and target. `keep(entry, target)`: the cells
    of the table this run has (--shard: its own); the others are left out, not skipped."""
    results: list[KernelResult] = []
    cells: list[Cell] = []
    for e in shape_entries:
        for t in targets:
            if keep is not None and not keep(e, t):
                continue
            cell = Cell(e, t)
            cells.append(cell)
            if e.skip:
                cell.skipped = e.skip
                if progress:
                    progress(f"{e.name} [{t}]", True)
                continue
            if progress:
                progress(f"{e.name} [{t}]", False)
            t0 = time.perf_counter()
            try:
                got = check(e, t)
            except KernelraceError as exc:
                reason = _skip_reason(exc, t)
                if reason:
                    cell.skipped = reason
                else:
                    cell.failed = str(exc)
                got = []
            except Exception as exc:  # noqa: BLE001  a bug of ours: this cell fails, the run goes on
                cell.failed = f"internal error: {type(exc).__name__}: {exc}"
                got = []
            cell.seconds = time.perf_counter() - t0
            cell.results = list(range(len(results), len(results) + len(got)))
            results.extend(got)
            if progress:
                progress(f"{e.name} [{t}]", True)
    return results, cells


def status(cell: Cell, results: list[KernelResult]) -> tuple[str, dict[str, int]]:
    """A cell's verdict after filtering: clean, findings, unknown, skipped or failed, and its
    reported findings by severity."""
    counts = {ERROR: 0, WARNING: 0, NOTE: 0}
    if cell.skipped:
        return "skipped", counts
    if cell.failed:
        return "failed", counts
    rs = [results[i] for i in cell.results]
    for r in rs:
        for f in r.findings:
            counts[f.severity] = counts.get(f.severity, 0) + 1
    if any(r.status == "unknown" for r in rs):
        return "unknown", counts
    return ("findings" if any(r.status == "findings" for r in rs) else "clean"), counts


def table(shape: Shape, targets: list[str], cells: list[Cell], results: list[KernelResult],
          models: list[str] | None = None) -> dict[str, Any]:
    """The summary table as data: one row per kernel and target; the skipped ones again with reasons;
    `models`, the config files of this shape (several models may share one)."""
    rows, skipped = [], []
    for c in cells:
        st, counts = status(c, results)
        row = {"kernel": c.entry.name, "builder": c.entry.builder, "params": c.entry.params, "target": c.target,
               "status": st, "findings": counts,
               "kernels": sorted({results[i].kernel for i in c.results}),
               "reason": c.skipped or c.failed, "seconds": round(c.seconds, 3)}
        rows.append(row)
        if st == "skipped":
            skipped.append({"kernel": c.entry.name, "builder": c.entry.builder, "target": c.target,
                            "reason": c.skipped})
    out = {"shape": shape.as_dict(), "targets": list(targets), "rows": rows, "skipped": skipped}
    if models:
        out["models"] = list(models)
    return out
