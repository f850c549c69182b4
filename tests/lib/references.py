"""Reference implementations the library is compared against, transcribed from their sources.

Each function here is copied from its primary source (link in its docstring) with only the
changes a module-level Python function needs, so a test compares posenc with the original
code rather than with a restatement of posenc's own formula.
"""

from __future__ import annotations

import math

import torch


def press_get_slopes(n: int) -> list[float]:
    """ALiBi slopes, Press et al.'s ``get_slopes`` as published with the paper.

    Source: https://github.com/ofirpress/attention_with_linear_biases/blob/
    a35aaca144e0eb6b789dfcb46784c4b8e31b7983/fairseq/models/transformer.py#L742
    (the nested function, and the recursion for a head count that is not a power of two).
    """

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        # In the paper, we only train models that have 2^a heads for some a. This function has
        # some good properties that only occur when the input is a power of 2. To maintain
        # that even when the number of heads is not a power of 2, we use this workaround.
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + press_get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


# ── xPos: microsoft/torchscale ──────────────────────────────────────────────


def torchscale_xpos(x, offset=0, downscale=False, scale_base=512):
    """xPos of ``x`` as microsoft/torchscale's ``XPOS.forward(x, offset, downscale)`` computes it.

    Source: https://github.com/microsoft/torchscale/blob/4d1e0e82e5adf86dd424f1463192635b73fc8efc/
    torchscale/component/xpos_relative_position.py (``fixed_pos_embedding``,
    ``rotate_every_two``, ``duplicate_interleave``, ``apply_rotary_pos_emb``, ``XPOS``).
    Rewritten step by step, the same operations in the same order (so the same float32
    numbers), not copied. ``x`` is ``(batch * heads, length, head_dim)`` as there; the released
    attention layer passes the keys with ``offset=0, downscale=True`` and the queries with
    ``offset = k_len - q_len``.
    """
    head_dim, length = x.shape[-1], x.shape[1]
    zeta = (torch.arange(0, head_dim, 2) + 0.4 * head_dim) / (1.4 * head_dim)  # the buffer
    total = length + offset
    lowest = -total // 2  # min_pos: Python floors, so -ceil(total / 2)
    exponents = torch.arange(lowest, lowest + total, 1).to(zeta).div(scale_base)
    scale = zeta ** exponents[:, None]  # (total, head_dim / 2)
    # fixed_pos_embedding is called on the scale table: its rows are positions 0 .. total - 1,
    # its columns the head_dim / 2 frequencies 10000^(-j / (head_dim / 2))
    rows, pairs = scale.shape
    inv_freq = 1.0 / (10000 ** (torch.arange(0, pairs) / pairs))
    angles = torch.einsum("i , j -> i j", torch.arange(0, rows, dtype=torch.float), inv_freq)
    sin, cos = torch.sin(angles.to(scale)), torch.cos(angles.to(scale))
    if rows > length:  # the queries: the last `length` positions
        scale, sin, cos = scale[-length:], sin[-length:], cos[-length:]
    if downscale:
        scale = 1 / scale

    def widen(table):  # each column twice, side by side: (n, p) -> (n, 2p)
        return table.reshape(-1, 1).repeat(1, 2).reshape(table.shape[0], -1)

    sin, cos = widen(sin * scale), widen(cos * scale)
    rotated = torch.stack((-x[:, :, 1::2], x[:, :, ::2]), dim=-1).flatten(-2)
    return x * cos + rotated * sin


# ── KERPLE: chijames/KERPLE ─────────────────────────────────────────────────


def kerple_released_parameters(num_heads, kernel):
    """The initial ``(bias_p, bias_a)`` of chijames/KERPLE's ``ParallelKerpleLog`` (``"log"``)
    or ``ParallelKerplePower`` with ``pos_emb = "kerple_power_ap_"`` (``"power"``), each
    ``(heads, 1, 1)``, drawn on the CPU in float32 in the released order (``bias_p`` first).

    Source: https://github.com/chijames/KERPLE/blob/25be3d712e96a3353b374f1f8e36b97d86f97ffa/
    megatron/mpu/layers.py (``get_parameter(2, 'uniform')`` for ``bias_p``,
    ``get_parameter(1, 'uniform')`` for ``bias_a``, in both classes). Rewritten, not copied;
    one process, no model parallelism.
    """
    del kernel  # both classes draw bias_p = 2 U[0, 1), then bias_a = U[0, 1)
    bias_p = torch.rand(num_heads)[:, None, None] * 2
    bias_a = torch.rand(num_heads)[:, None, None] * 1
    return bias_p, bias_a


def kerple_released_forward(x, bias_p, bias_a, kernel, eps=1e-2):
    """``x`` plus the KERPLE bias as the released ``forward(x)`` computes it (``x`` the scores
    ``[b, heads, sq, sk]``), clamping ``bias_p`` and ``bias_a`` in place first as it does.

    Source: the same file as `kerple_released_parameters`, ``ParallelKerpleLog.forward`` and
    ``ParallelKerplePower.forward`` (``kerple_power_ap_``: no ``wei_*`` parameters, so the
    weight is the float 1.0). Rewritten step by step, the same operations in the same order,
    not copied; the cache of the distance matrix is left out.
    """
    sq, sk = x.shape[-2], x.shape[-1]
    # row i, column j: i - j below the diagonal, 0 on and above it
    diff = torch.tril(
        torch.arange(sk, device=x.device).view(sk, 1).repeat(1, sk)
        + torch.arange(0, -sk, -1, device=x.device)
    ).to(x.dtype)
    if kernel == "log":
        bias_p.data = bias_p.data.clamp(min=eps)
        bias_a.data = bias_a.data.clamp(min=eps)
        bias = -bias_p * torch.log(1 + bias_a * diff)
        weight = 1.0
    else:
        bias_p.data = bias_p.data.clamp(min=eps, max=2)
        bias = diff.pow(bias_p)
        bias_a.data = bias_a.data.clamp(min=eps)
        bias = -bias * bias_a
        weight = 1.0
    if sq != sk:
        assert sq == 1, "the released code takes sq == sk, or one query with a cache"
        bias = bias[:, sk - 1, :].view(bias.shape[0], 1, bias.shape[2])
    return x * weight + bias


# ── FIRE: the implementation that circulates under the paper's name ─────────


def circulating_fire_bias(seq_length, mlp, c, init_L, L_multiplier, eps=1e-6):
    """The FIRE bias ``(1, heads, seq_length, seq_length)`` as the ``FIRE`` module found in
    several public repositories computes it, with its positions ``0 .. seq_length - 1``.

    No release by the paper's authors was found. Source read:
    https://github.com/mcleish7/arithmetic/blob/86022a57d38c0fde46444d62e8dcbebcc0af614c/
    cramming/architectures/embeddings.py (class ``FIRE``, ``forward`` with ``max_length = 0``,
    where its sorted random subset of positions is all of them). Rewritten step by step, the
    same operations in the same order, not copied. ``mlp`` maps ``(..., 1)`` to
    ``(..., heads)``; ``c``, ``init_L`` and ``L_multiplier`` are 0-d tensors.
    """
    positions = torch.arange(seq_length, dtype=torch.float)
    relative = positions[:, None] - positions[None, :]  # i - j, negative after the query
    threshold = torch.abs(L_multiplier * init_L)
    normaliser = torch.max(positions, threshold)[:, None]  # max(i, L)
    relative = torch.log(torch.abs(c * relative) + 1)
    normaliser = torch.log(torch.abs(c * normaliser) + 1)
    inputs = relative / (normaliser + eps)
    return mlp(inputs.unsqueeze(-1)).unsqueeze(0).permute(0, 3, 1, 2)


# ── CoPE: the paper's listing and facebookresearch/RAM ──────────────────────


def cope_listing_term(query, attn_logits, pos_emb, npos_max):
    """The term ``CoPE.forward(query, attn_logits)`` of the listing printed in the CoPE paper
    (arXiv:2405.18719) returns; ``pos_emb`` is ``(1, head_dim, npos_max)`` as there.

    The paper's text was not reachable from here; the listing was read as it is reproduced,
    identically, in several public repositories (class ``CoPE``: sigmoid gates of the
    logits, reversed cumulative sum, clamp at ``npos_max - 1``, ``query @ pos_emb``, gather
    at the ceiling and the floor, linear weights), and it agrees with the authors' repository
    (`cope_released_attention`). Rewritten, not copied.
    """
    gates = torch.sigmoid(attn_logits)
    positions = gates.flip(-1).cumsum(dim=-1).flip(-1).clamp(max=npos_max - 1)
    upper, lower = positions.ceil().long(), positions.floor().long()
    at_integers = torch.matmul(query, pos_emb)
    weight = positions - lower
    return at_integers.gather(-1, upper) * weight + at_integers.gather(-1, lower) * (1 - weight)


def cope_released_attention(query, key, val, attn_mask, pos_emb, npos):
    """The output of facebookresearch/RAM's ``ContextPosSelfAttn.forward`` with its default
    flags (``pos_emb = "cope"``, no separate gate key, gates from the keys, division by
    sqrt(head_dim) after adding the position term) and no dropout.

    Source: https://github.com/facebookresearch/RAM/blob/e6f051fbcfaef4cab69bf2ea1b25f500f94c0c64/
    projects/cope/src/cope/context_position.py. Rewritten step by step, the same operations
    in the same order, not copied. ``query``, ``key``, ``val``: ``(B, L, head_dim)``;
    ``attn_mask``: 0/1, broadcastable to ``(B, L, L)``; ``pos_emb``: ``(1, head_dim, npos)``.
    """
    head_dim = query.shape[-1]
    gate_logits = torch.bmm(query, key.transpose(-1, -2))
    gates = torch.sigmoid(gate_logits / math.sqrt(head_dim)) * attn_mask
    positions = gates.flip(-1).cumsum(dim=-1).flip(-1).clamp(max=npos - 1)
    at_integers = torch.matmul(query, pos_emb)
    upper, lower = positions.ceil().long(), positions.floor().long()
    weight = positions - lower
    pos_logits = at_integers.gather(-1, upper) * weight + at_integers.gather(-1, lower) * (
        1 - weight
    )
    attn_logits = gate_logits  # the same product: gates come from the keys
    attn_logits += pos_logits
    attn_logits /= math.sqrt(head_dim)
    attn_logits += attn_mask.log()
    return torch.bmm(torch.softmax(attn_logits, dim=-1), val)
