"""kernelrace's own reference decoder-only model, written with `tvm.relax.frontend.nn`, for
`kernelrace model CONFIG.json`: the layers MLC-LLM's Llama, Mistral, Qwen2, Phi-3 and Gemma models
are made of, at the shapes a Hugging Face `config.json` gives, exported with the functions an
MLC-compiled model ships (`embed`, `prefill`, `decode`, `batch_prefill`, `batch_decode`,
`softmax_with_temperature`) and their symbolic sizes (`seq_len`, `batch_size`).

Attention goes through the paged KV cache object (`PagedKVCache.attention_with_fused_qkv`), as
in MLC: a packed call in the Relax graph whose kernels (attention, RoPE, KV append, sampling) are
TVM's LLM runtime's, checked by `kernelrace llm` for the same config. The kernels this module's
Relax graph lowers to are the rest: embedding lookup, RMSNorm, the fused QKV, output, gate/up and
down projections with their residual adds, the activation, the final norm, the logits and the
softmax with temperature.

Layers are identical, so `LAYERS` of them are built whatever the config's `num_hidden_layers`:
two, so that a layer's input norm after another layer's residual add is among the kernels.
Weights are `dtype` (default float16: MLC's unquantized `q0f16`); quantized weights (MLC's
`q4f16_1` dequantize-matmul kernels) are not modelled.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from analyzer.errors import KernelraceError

LAYERS = 2
DTYPES = ("float16", "float32", "bfloat16")
# config.json `model_type` -> the family whose layers the reference model takes
FAMILIES = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "phi3": "phi3", "gemma": "gemma",
            "gemma2": "gemma"}
ACTIVATIONS = ("silu", "gelu", "gelu_pytorch_tanh", "gelu_new")


@dataclass(frozen=True)
class ModelShape:
    family: str
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    vocab_size: int
    rms_norm_eps: float = 1e-5
    hidden_act: str = "silu"
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    num_hidden_layers: int = LAYERS
    dtype: str = "float16"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def config_json(path: str) -> dict[str, Any]:
    """A Hugging Face style config.json as a dict (a multimodal one's language model merged in);
    a one-line error naming the file when it cannot be read or is not a JSON object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KernelraceError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise KernelraceError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise KernelraceError(f"{path}: invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise KernelraceError(f"{path}: expected a JSON object (a Hugging Face config.json)")
    # Multimodal configs (Gemma 3, Llama 4, ...) keep the language model's shape under text_config.
    if "num_attention_heads" not in data and isinstance(data.get("text_config"), dict):
        data = {**data, **data["text_config"]}
    return data


def read_config(path: str, dtype: str | None = None) -> ModelShape:
    """The reference model's shape from a Hugging Face style config.json; a one-line error naming
    the file and the key when a key is missing or bad."""
    data = config_json(path)
    kind = str(data.get("model_type") or "llama")
    if kind not in FAMILIES:
        raise KernelraceError(f"{path}: key 'model_type': {json.dumps(kind)} is not a decoder-only family the "
                              f"reference model writes ({', '.join(sorted(FAMILIES))})")

    def integer(key: str, default: int | None = None) -> int:
        v = data.get(key, default)
        if v is None:
            raise KernelraceError(f"{path}: missing key '{key}'")
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise KernelraceError(f"{path}: key '{key}': expected a positive integer, got {json.dumps(v)}")
        return v

    hidden, heads = integer("hidden_size"), integer("num_attention_heads")
    kv = integer("num_key_value_heads", heads)
    if heads % kv:
        raise KernelraceError(f"{path}: num_attention_heads ({heads}) is not a multiple of num_key_value_heads ({kv})")
    if data.get("head_dim") is None and hidden % heads:
        raise KernelraceError(f"{path}: key 'hidden_size': {hidden} is not a multiple of num_attention_heads "
                              f"({heads}); give 'head_dim'")
    head_dim = integer("head_dim", hidden // heads)
    eps = data.get("rms_norm_eps", 1e-5)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps > 0:
        raise KernelraceError(f"{path}: key 'rms_norm_eps': expected a positive number, got {json.dumps(eps)}")
    act = data.get("hidden_activation") or data.get("hidden_act") or ("gelu_pytorch_tanh" if kind.startswith("gemma")
                                                                      else "silu")
    if act not in ACTIVATIONS:
        raise KernelraceError(f"{path}: key 'hidden_act': {json.dumps(act)} is not one of {', '.join(ACTIVATIONS)}")
    dtype = dtype or "float16"
    if dtype not in DTYPES:
        raise KernelraceError(f"unsupported dtype '{dtype}' (supported: {', '.join(DTYPES)})")
    family = FAMILIES[kind]
    return ModelShape(family, hidden, integer("intermediate_size"), heads, kv, head_dim, integer("vocab_size"),
                      float(eps), act, bool(data.get("tie_word_embeddings", family == "gemma")),
                      qkv_bias=family == "qwen2", num_hidden_layers=integer("num_hidden_layers", LAYERS),
                      dtype=dtype)


def export(shape: ModelShape):
    """The reference model's Relax IRModule (unoptimized, as `export_tvm` gives it)."""
    from tvm.relax.frontend import nn
    from tvm.relax.frontend.nn.llm.kv_cache import PagedKVCache

    model = _model_class()(shape)
    model.to(shape.dtype)
    h, v, dt = shape.hidden_size, shape.vocab_size, shape.dtype
    kv = nn.spec.Object(object_type=PagedKVCache)
    packed = {"param_mode": "packed", "effect_mode": "none"}
    spec = {
        "embed": {"input_ids": nn.spec.Tensor(["seq_len"], "int32"), "$": packed},
        "prefill": {"input_embed": nn.spec.Tensor([1, "seq_len", h], dt), "paged_kv_cache": kv, "$": packed},
        "decode": {"input_embed": nn.spec.Tensor([1, 1, h], dt), "paged_kv_cache": kv, "$": packed},
        "batch_prefill": {"input_embeds": nn.spec.Tensor([1, "seq_len", h], dt),
                          "logit_positions": nn.spec.Tensor(["batch_size"], "int32"), "paged_kv_cache": kv,
                          "$": packed},
        "batch_decode": {"input_embeds": nn.spec.Tensor(["batch_size", 1, h], dt), "paged_kv_cache": kv,
                         "$": packed},
        "softmax_with_temperature": {"logits": nn.spec.Tensor(["batch_size", 1, v], "float32"),
                                     "temperature": nn.spec.Tensor(["batch_size"], "float32"),
                                     "$": {"param_mode": "none", "effect_mode": "none"}},
    }
    mod, _ = model.export_tvm(spec)
    return mod


_CLASS = None


def _model_class():
    """The nn.Module classes, made once (they subclass TVM's, imported only when a model is built)."""
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    from tvm import te
    from tvm.relax.frontend import nn
    from tvm.relax.frontend.nn import op

    class Norm(nn.Module):
        def __init__(self, s: ModelShape):
            self.weight = nn.Parameter((s.hidden_size,))
            self.eps, self.gemma = s.rms_norm_eps, s.family == "gemma"

        def forward(self, x):
            # Gemma scales by (1 + weight): one more elementwise kernel, as MLC's Gemma has it.
            w = self.weight + 1 if self.gemma else self.weight
            return op.rms_norm(x, w, axes=[-1], epsilon=self.eps)

    class Attention(nn.Module):
        def __init__(self, s: ModelShape, layer: int):
            self.s, self.layer = s, layer
            qkv = (s.num_attention_heads + 2 * s.num_key_value_heads) * s.head_dim
            self.qkv_proj = nn.Linear(s.hidden_size, qkv, bias=s.qkv_bias)
            self.o_proj = nn.Linear(s.num_attention_heads * s.head_dim, s.hidden_size, bias=False)

        def forward(self, x, cache):
            s = self.s
            b, t, _ = x.shape
            qkv = op.reshape(self.qkv_proj(x), (b, t, s.num_attention_heads + 2 * s.num_key_value_heads, s.head_dim))
            out = cache.attention_with_fused_qkv(self.layer, qkv, s.num_attention_heads, sm_scale=s.head_dim ** -0.5)
            return self.o_proj(op.reshape(out, (b, t, s.num_attention_heads * s.head_dim)))

    class MLP(nn.Module):
        def __init__(self, s: ModelShape):
            self.act = s.hidden_act
            self.gate_up_proj = nn.Linear(s.hidden_size, 2 * s.intermediate_size, bias=False)
            self.down_proj = nn.Linear(s.intermediate_size, s.hidden_size, bias=False)

        def forward(self, x):
            gate, up = op.split(self.gate_up_proj(x), 2, axis=-1)
            act = op.silu(gate) if self.act == "silu" else op.gelu(gate, approximate="tanh")
            return self.down_proj(act * up)

    class Layer(nn.Module):
        def __init__(self, s: ModelShape, layer: int):
            self.input_layernorm, self.post_attention_layernorm = Norm(s), Norm(s)
            self.self_attn, self.mlp = Attention(s, layer), MLP(s)

        def forward(self, x, cache):
            x = x + self.self_attn(self.input_layernorm(x), cache)
            return x + self.mlp(self.post_attention_layernorm(x))

    class Model(nn.Module):
        def __init__(self, s: ModelShape):
            self.s = s
            self.embed_tokens = nn.Embedding(s.vocab_size, s.hidden_size)
            self.layers = nn.ModuleList([Layer(s, i) for i in range(min(LAYERS, s.num_hidden_layers))])
            self.norm = Norm(s)
            if not s.tie_word_embeddings:
                self.lm_head = nn.Linear(s.hidden_size, s.vocab_size, bias=False)

        def embed(self, input_ids):
            x = self.embed_tokens(input_ids)
            return x * (self.s.hidden_size ** 0.5) if self.s.family == "gemma" else x

        def _hidden(self, x, cache):
            for layer in self.layers:
                x = layer(x, cache)
            return self.norm(x)

        def _logits(self, x):
            if self.s.tie_word_embeddings:
                logits = op.matmul(x, op.permute_dims(self.embed_tokens.weight))
            else:
                logits = self.lm_head(x)
            return logits if logits.dtype == "float32" else logits.astype("float32")

        def prefill(self, input_embed, paged_kv_cache):
            def last(x):   # the last position's hidden state, as MLC's `prefill` takes it
                b, t, d = x.shape
                return te.compute((b, 1, d), lambda i, _, k: x[i, t - 1, k], name="index")
            h = op.tensor_expr_op(last, name_hint="index", args=[self._hidden(input_embed, paged_kv_cache)])
            return self._logits(h), paged_kv_cache

        def decode(self, input_embed, paged_kv_cache):
            return self._logits(self._hidden(input_embed, paged_kv_cache)), paged_kv_cache

        def batch_prefill(self, input_embeds, logit_positions, paged_kv_cache):
            h = op.take(self._hidden(input_embeds, paged_kv_cache), logit_positions, axis=1)
            return self._logits(h), paged_kv_cache

        def batch_decode(self, input_embeds, paged_kv_cache):
            return self._logits(self._hidden(input_embeds, paged_kv_cache)), paged_kv_cache

        def softmax_with_temperature(self, logits, temperature):
            b, t, v = logits.shape
            return op.softmax(logits / op.reshape(temperature, (b, 1, 1)), axis=-1)

    _CLASS = Model
    return Model
