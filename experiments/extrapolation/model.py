"""A tiny causal character-level Transformer whose position method is a switch.

Every encoding comes from posenc. Methods:

- ``nope``: no position encoding at all (only the causal mask carries order).
- ``sinusoidal``, ``learned``: a vector added to the token embedding at the input.
- ``t5``: T5's bucketed relative bias (causal buckets), one table shared by all layers.
- ``alibi``: ALiBi's linear distance penalty, fixed slopes.
- ``rope``: rotary embedding of q and k in every layer; at evaluation its frequencies can be
  rescaled by ``rope_scaling`` (position interpolation, NTK-aware base, YaRN) without retraining.

Chapter 21 adds four rivals (``RIVALS``), each from posenc with the library's defaults; creating
them after the shared layers leaves the six methods above exactly as they were (same initial
weights, same computation):

- ``xpos``: `posenc.XPos` on q and k in every layer (RoPE times a per-pair decay).
- ``kerple``: `posenc.Kerple`, the logarithmic kernel, one module shared by all layers as in the
  authors' GPT-NeoX code (``megatron/model/gpt2_model.py`` builds one and passes it to every layer).
- ``fire``: `posenc.FIRE`, one per layer (a choice of this experiment).
- ``cope``: `posenc.CoPE`, one table per layer of ``train_len + 1`` positions (the released
  default: block size + 1), gates from the scaled logits, the term divided by sqrt(head_dim) as
  in the authors' ``ContextPosSelfAttn``.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

import posenc

METHODS = ("nope", "sinusoidal", "learned", "t5", "rope", "alibi")  # chapter 8
RIVALS = ("xpos", "kerple", "fire", "cope")  # chapter 21


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, rope=None, slopes=None, bias=None, cope=None):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(dim, dim=-1)
        # (B, T, D) -> (B, heads, T, head_dim)
        q, k, v = (t.view(batch, seq, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        if rope is not None:
            q, k = rope(q, k)
        if cope is not None:  # (q·k + q·e[p]) / sqrt(d), gates from q·k / sqrt(d)
            scale = math.sqrt(q.shape[-1])
            bias = cope(q, q @ k.transpose(-1, -2) / scale) / scale  # (B, heads, T, T)
        out = posenc.attention(q, k, v, causal=True, alibi_slopes=slopes, bias=bias)
        x = x + self.proj(out.transpose(1, 2).reshape(batch, seq, dim))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(
        self, method: str, *, vocab: int, dim: int = 128, heads: int = 4, layers: int = 3,
        train_len: int = 128,
    ) -> None:  # fmt: skip
        super().__init__()
        if method not in METHODS + RIVALS:
            raise ValueError(f"method must be one of {METHODS + RIVALS}, got {method!r}")
        self.method, self.dim, self.heads, self.train_len = method, dim, heads, train_len
        self.head_dim = dim // heads
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        if method == "learned":
            self.pos = posenc.LearnedPositionalEmbedding(train_len, dim)
        if method == "t5":
            self.t5 = posenc.T5RelativeBias(
                heads, bidirectional=False, num_buckets=32, max_distance=128
            )
        if method == "alibi":
            self.register_buffer("slopes", posenc.alibi_slopes(heads), persistent=False)
        if method == "kerple":
            self.kerple = posenc.Kerple(heads, kernel="log")  # one for all layers
        if method == "fire":
            self.fire = nn.ModuleList(posenc.FIRE(heads) for _ in range(layers))
        if method == "cope":
            self.cope = nn.ModuleList(
                posenc.CoPE(self.head_dim, train_len + 1) for _ in range(layers)
            )
        self.set_rope_scaling(None)

    def set_rope_scaling(self, scaling: dict[str, Any] | None, base: float = 10000.0) -> None:
        """Swap the RoPE frequencies (inference-time scaling); the trained weights stay.

        xPos takes no scaling: ``None`` (what the evaluation loops pass) keeps it as built.
        """
        if self.method == "xpos":
            if scaling is not None:
                raise ValueError("xpos takes no rope_scaling")
            self.rope = posenc.XPos(self.head_dim, base=base)
            return
        self.rope = (
            posenc.RotaryEmbedding(self.head_dim, base=base, scaling=scaling)
            if self.method == "rope" else None
        )  # fmt: skip

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) -> next-token logits (B, T, vocab)."""
        seq = ids.shape[1]
        x = self.embed(ids)
        if self.method == "sinusoidal":
            x = x + posenc.sinusoidal(seq, self.dim, device=ids.device)
        elif self.method == "learned":
            x = self.pos(x)  # raises past train_len: the table has no row there
        slopes = self.slopes if self.method == "alibi" else None
        bias = self.t5(seq) if self.method == "t5" else None
        if self.method == "kerple":
            bias = self.kerple(seq)  # (heads, T, T), shared by the layers
        for layer, block in enumerate(self.blocks):
            if self.method == "fire":
                bias = self.fire[layer](seq)  # (heads, T, T), this layer's own
            cope = self.cope[layer] if self.method == "cope" else None
            x = block(x, rope=self.rope, slopes=slopes, bias=bias, cope=cope)
        return self.head(self.norm(x))
