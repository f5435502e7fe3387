"""The clang front end against the Lark one on the source TVM emits: the same kernels and the same
findings (rule, the lines of both accesses) for a slice of the corpus on CUDA and Metal, the known
races among them (issue 41's differential test)."""

import json

import pytest

from conftest import built, cli_in_process

pytestmark = pytest.mark.slow

SLICE = [
    ("tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace", {"num_heads": 32, "head_dim": 128,
                                                                         "v_dtype": "float16"}),
    ("tvm.relax.frontend.nn.llm._page_kernels:_copy_single_page", {"num_heads": 8, "page_size": 16,
                                                                    "head_dim": 128, "dtype": "float16"}),
    ("tvm.relax.backend.gpu_generic:gpu_2d_continuous_cumsum", {}),
    ("tvm.relax.frontend.nn.llm.position_embedding:llama_rope_with_position_map",
     {"theta": 10000.0, "scale": 1.0, "head_dim": 128, "num_q_heads": 32, "num_kv_heads": 8, "dtype": "float16",
      "rope_scaling": {}}),
]


def _findings(path, frontend):
    code, out, err = cli_in_process(["check", str(path), "--frontend", frontend, "--format", "json", "--no-cache",
                                     "--timeout", "5"])
    assert code in (0, 1), err
    report = json.loads(out)
    assert not any("not analysed" in f["message"] for f in report["findings"]), report["findings"]
    # (a pair left undecided in the solver's budget is `unknown`, said, not a disagreement)
    return {(f["rule"], f.get("kernel"), f["first"]["line"] if f.get("first") else None,
             f["second"]["line"] if f.get("second") else None) for f in report["findings"] if f["rule"] != "unknown"}


@pytest.mark.parametrize("target", ["cuda", "metal"])
@pytest.mark.parametrize("spec,params", SLICE, ids=[s.split(":")[1] for s, _ in SLICE])
def test_lark_and_clang_agree_on_tvm_source(spec, params, target, tmp_path):
    mod = built(spec, params, target)
    path = tmp_path / ("emitted.cu" if target == "cuda" else "emitted.metal")
    path.write_text(mod.source)
    assert _findings(path, "lark") == _findings(path, "clang")
