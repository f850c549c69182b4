"""Chapter "Positions at inference time": position ids with padding, packing and KV caches.

One tiny RoPE language model (untrained, seeded) runs every case: a left-padded batch, packed
documents, cached decoding, a cache that evicts tokens. Functions named ``show_*`` print a
result with labels in the reader's language (``lang="en"`` or ``"zh"``); each page calls them
in a one-line block.

Run it: python snippets/positions_at_inference/positions_at_inference.py
"""

# --8<-- [start:model]
import math
import time

import torch
from torch import nn

import posenc
from posenc.positions import (
    document_causal_mask,
    document_ids,
    packed_positions,
    positions_from_mask,
    rerotate,
    sink_window_keep,
)


class TinyLM(nn.Module):
    """Two pre-norm attention + MLP blocks; random weights, for exact comparisons.

    encoding: "rope" (q and k rotated in every layer) or "sinusoidal" (an absolute vector
    added to the token embeddings, as in the original Transformer).
    """

    def __init__(self, encoding="rope", vocab=100, dim=64, heads=4, layers=2):
        super().__init__()
        self.encoding, self.heads, self.head_dim = encoding, heads, dim // heads
        self.embed = nn.Embedding(vocab, dim)
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(2 * layers))
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim, bias=False) for _ in range(layers))
        self.out = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.mlp = nn.ModuleList(
            nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
            for _ in range(layers)
        )
        self.head = nn.Linear(dim, vocab, bias=False)
        self.rope = posenc.RotaryEmbedding(self.head_dim)
        for qkv in self.qkv:  # a wider spread than the default: attention far from uniform
            nn.init.normal_(qkv.weight, std=2 / math.sqrt(dim))

    def forward(self, ids, positions, allowed, past=None, key_positions=None):
        """Logits of the new tokens, and the cache extended by them.

        ids, positions: (batch, seq) new tokens and their position ids.
        allowed: bool (batch, 1, seq, past + seq), True where a query may see a key.
        past: per layer (raw keys, rotated keys, values) of earlier tokens, or None.
        key_positions: None to attend with the cached rotated keys; else (batch, past + seq)
            positions at which to rotate the raw keys again (StreamingLLM's method).
        """
        x = self.embed(ids)
        if self.encoding == "sinusoidal":
            x = x + posenc.sinusoidal(positions, x.shape[-1])
        bias = torch.zeros(allowed.shape).masked_fill(~allowed, float("-inf"))
        cache = []
        for i, (qkv, out, mlp) in enumerate(zip(self.qkv, self.out, self.mlp, strict=True)):
            batch, seq, dim = x.shape
            q, k, v = qkv(self.norms[2 * i](x)).split(dim, dim=-1)
            # (batch, seq, dim) -> (batch, heads, seq, head_dim)
            q, k, v = (t.view(batch, seq, self.heads, -1).transpose(1, 2) for t in (q, k, v))
            q_rot, k_rot = self.rope(q, k, positions) if self.encoding == "rope" else (q, k)
            if past is not None:
                k_raw = torch.cat((past[i][0], k), dim=2)
                k_rot = torch.cat((past[i][1], k_rot), dim=2)
                v = torch.cat((past[i][2], v), dim=2)
            else:
                k_raw = k
            cache.append((k_raw, k_rot, v))
            keys = k_rot
            if key_positions is not None:
                cos, sin = self.rope.cos_sin(key_positions)  # (batch, keys, head_dim)
                keys = posenc.apply_rotary(k_raw, cos[:, None], sin[:, None])
            attended = posenc.attention(q_rot, keys, v, causal=False, bias=bias)
            x = x + out(attended.transpose(1, 2).reshape(batch, seq, dim))
            x = x + mlp(self.norms[2 * i + 1](x))
        return self.head(x), cache


def padded_allowed(mask):
    """Causal mask that also hides padded keys; a pad query sees itself (no empty row)."""
    seq = mask.shape[-1]
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    own = torch.eye(seq, dtype=torch.bool)
    return (causal & (mask.bool()[:, None, :] | own))[:, None]  # (batch, 1, seq, seq)


torch.manual_seed(0)
model = TinyLM("rope").eval().requires_grad_(False)  # inference only: no autograd graphs
torch.manual_seed(0)
absolute = TinyLM("sinusoidal").eval().requires_grad_(False)  # same weights, other encoding


def show_size(lang="en"):
    print(sum(p.numel() for p in model.parameters()), {"en": "parameters", "zh": "个参数"}[lang])


# --8<-- [end:model]


# --8<-- [start:padding]
prompt = torch.tensor([[17, 4, 81, 33]])  # the prompt under test, 4 tokens
PAD = 0
batch = torch.tensor([[PAD, PAD, PAD, 17, 4, 81, 33], [5, 62, 9, 48, 71, 26, 90]])
mask = torch.tensor([[0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]])  # 1 = real token

from_index = torch.arange(7).expand(2, 7)  # position = index in the padded row
from_mask = positions_from_mask(mask)  # position = rank among the real tokens


def show_positions(lang="en"):
    labels = {"en": ("from the index", "from the mask"), "zh": ("按下标编号", "按掩码编号")}[lang]
    print(from_index[0].tolist(), "<-", labels[0])
    print(from_mask[0].tolist(), "<-", labels[1])


padding = {}
for name, lm in (("sinusoidal", absolute), ("rope", model)):
    alone, _ = lm(prompt, torch.arange(4)[None], padded_allowed(torch.ones(1, 4)))
    for source, positions in (("index", from_index), ("mask", from_mask)):
        logits, _ = lm(batch, positions, padded_allowed(mask))
        # the prompt's 4 real tokens, in the batch and alone
        padding[name, source] = (logits[0, 3:] - alone[0]).abs().max().item()
assert padding["sinusoidal", "index"] > 0.1 and padding["sinusoidal", "mask"] < 1e-5
assert padding["rope", "index"] < 1e-5 and padding["rope", "mask"] < 1e-5


def show_padding(lang="en"):
    print(
        {
            "en": "encoding    positions   max |batch - alone|",
            "zh": "位置编码    位置来源    max |批内 - 单独|",
        }[lang]
    )
    names = {
        "en": {"sinusoidal": "sinusoidal", "rope": "RoPE", "index": "index", "mask": "mask"},
        "zh": {"sinusoidal": "正弦", "rope": "RoPE", "index": "下标", "mask": "掩码"},
    }[lang]
    for (name, source), gap in padding.items():
        print(f"{_pad(names[name], 11)} {_pad(names[source], 11)} {gap:.4f}")


def _pad(text, width):
    # left-align in a monospaced font, where a Chinese character takes two columns
    return text + " " * (width - sum(2 if ord(c) > 0x2E80 else 1 for c in text))


# --8<-- [end:padding]


# --8<-- [start:generate]
def generate(lm, ids, mask, steps, positions_of):
    """Greedy decoding with a KV cache; positions_of(mask) gives the prompt's position ids."""
    positions = positions_of(mask)
    logits, past = lm(ids, positions, padded_allowed(mask))
    out = []
    for _ in range(steps):
        token = logits[:, -1].argmax(-1, keepdim=True)  # (batch, 1)
        out.append(token)
        mask = torch.cat((mask, torch.ones_like(token)), dim=-1)
        positions = positions[:, -1:] + 1  # the next position: last position + 1, per row
        allowed = mask.bool()[:, None, None, :]  # the new token sees every real token
        logits, past = lm(token, positions, allowed, past=past)
    return torch.cat(out, dim=-1)


def index_positions(mask):
    return torch.arange(mask.shape[-1]).expand(mask.shape)


one = torch.ones(1, 4, dtype=torch.long)
generated = {}  # (encoding, "alone" or the source of the positions): the 8 tokens generated
for name, lm in (("sinusoidal", absolute), ("rope", model)):
    generated[name, "alone"] = generate(lm, prompt, one, 8, positions_from_mask)[0].tolist()
    for source, positions_of in (("index", index_positions), ("mask", positions_from_mask)):
        generated[name, source] = generate(lm, batch, mask, 8, positions_of)[0].tolist()


def show_generated(lang="en"):
    names = {
        "en": {"sinusoidal": "sinusoidal", "rope": "rope", "alone": "alone",
               "index": "in batch, index", "mask": "in batch, mask"},
        "zh": {"sinusoidal": "正弦", "rope": "RoPE", "alone": "单独",
               "index": "批内，按下标", "mask": "批内，按掩码"},
    }[lang]  # fmt: skip
    for (name, source), tokens in generated.items():
        same = [] if source == "alone" else [tokens == generated[name, "alone"]]
        print(f"{_pad(names[name], 10)} {_pad(names[source], 17)}", tokens, *same)


# --8<-- [end:generate]


# --8<-- [start:pad_fill]
# transformers 5.x gives pads position 0, 4.x gave them 1: padded keys are masked, no change
logits_0, _ = model(batch, positions_from_mask(mask, pad_position=0), padded_allowed(mask))
logits_1, _ = model(batch, positions_from_mask(mask, pad_position=1), padded_allowed(mask))
print(torch.equal(logits_0[:, 3:], logits_1[:, 3:]))
# --8<-- [end:pad_fill]


# --8<-- [start:cache_length]
# the next token of row 0: 4 real tokens, 7 slots in the cache
wrong_next = mask.shape[-1]  # the cache length, pads included
right_next = int(from_mask[0, -1]) + 1  # last position + 1
_, past = model(batch[:1], from_mask[:1], padded_allowed(mask[:1]))
token = torch.tensor([[52]])
step_mask = torch.cat((mask[:1], torch.ones(1, 1, dtype=torch.long)), dim=-1).bool()
scores = {}
for name, position in (("cache length", wrong_next), ("last + 1", right_next)):
    logits, _ = model(token, torch.tensor([[position]]), step_mask[:, None, None], past=past)
    scores[name] = logits[0, -1]
reference, _ = model(
    torch.tensor([[17, 4, 81, 33, 52]]), torch.arange(5)[None], padded_allowed(torch.ones(1, 5))
)
gaps = {name: (logits - reference[0, -1]).abs().max().item() for name, logits in scores.items()}
assert gaps["cache length"] > 0.1 and gaps["last + 1"] < 1e-5


def show_next_position(lang="en"):
    if lang == "zh":
        print(f"缓存长度：{wrong_next}，最后一个位置 + 1：{right_next}")
        names = {"cache length": "缓存长度", "last + 1": "最后一个位置 + 1"}
        for name, gap in gaps.items():
            print(
                f"下一个位置 = {_pad(names[name], 16)}：max |logits - logits（无填充）| = {gap:.4f}"
            )
        return
    print("cache length:", wrong_next, " last position + 1:", right_next)
    for name, gap in gaps.items():
        print(f"next position = {name:12}: max |logits - logits(no padding)| = {gap:.4f}")


# --8<-- [end:cache_length]


# --8<-- [start:packing]
doc_a = torch.tensor([12, 7, 55, 3, 91])  # document A, 5 tokens
doc_b = torch.tensor([40, 8, 66, 21, 14, 77, 2])  # document B, 7 tokens
packed = torch.cat((doc_a, doc_b))[None]  # one row of 12 tokens
reset = packed_positions([5, 7])[None]  # 0..4, 0..6
running = torch.arange(12)[None]  # 0..11: positions not reset
block = document_causal_mask(document_ids(reset))  # (1, 1, 12, 12): A and B apart
causal = torch.ones(12, 12, dtype=torch.bool).tril()[None, None]
print(reset[0].tolist())
print(document_ids(reset)[0].tolist())

b_alone, _ = model(doc_b[None], torch.arange(7)[None], padded_allowed(torch.ones(1, 7)))
packing = {}
for positions_name, positions in (("reset", reset), ("running", running)):
    for mask_name, allowed in (("block", block), ("causal", causal)):
        logits, _ = model(packed, positions, allowed)
        packing[positions_name, mask_name] = (logits[0, 5:] - b_alone[0]).abs().max().item()
assert packing["reset", "block"] < 1e-5 and packing["running", "block"] < 1e-5
assert packing["reset", "causal"] > 0.1 and packing["running", "causal"] > 0.1


def show_packing(lang="en"):
    head = {
        "en": "positions | mask         | document B: max |packed - alone|",
        "zh": "位置      | 掩码         | 文档 B：max |打包 - 单独|",
    }[lang]
    names = {
        "en": {"reset": "reset", "running": "running", "block": "per document", "causal": "causal"},
        "zh": {"reset": "重置", "running": "连续", "block": "按文档分块", "causal": "普通因果"},
    }[lang]
    print(head)
    for (positions_name, mask_name), gap in packing.items():
        print(f"{_pad(names[positions_name], 9)} | {_pad(names[mask_name], 12)} | {gap:.4f}")


# --8<-- [end:packing]


# --8<-- [start:boundaries]
# flash-attention's varlen kernel takes cumulative lengths; transformers finds them where
# the position ids restart (prepare_fa_kwargs_from_position_ids)
flat = reset.reshape(-1)
starts = (flat == flat.min()).nonzero().flatten()
cu_seqlens = torch.cat((starts, torch.tensor([flat.numel()])))


def show_boundaries(lang="en"):
    label = {"en": "max length", "zh": "最长"}[lang]
    print(cu_seqlens.tolist(), label, int(cu_seqlens.diff().max()))


# --8<-- [end:boundaries]


# --8<-- [start:cache]
# left-padded batch: prefill 4 slots, then 3 tokens one by one through the cache
tokens = torch.tensor([[PAD, PAD, 17, 4, 81, 33, 52], [5, 62, 9, 48, 71, 26, 90]])
pad_mask = torch.tensor([[0, 0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]])
positions = positions_from_mask(pad_mask)
full, _ = model(tokens, positions, padded_allowed(pad_mask))
logits, past = model(tokens[:, :4], positions[:, :4], padded_allowed(pad_mask[:, :4]))
steps = [logits]
for t in range(4, 7):
    allowed = pad_mask[:, : t + 1].bool()[:, None, None, :]
    logits, past = model(tokens[:, t : t + 1], positions[:, t : t + 1], allowed, past=past)
    steps.append(logits)
cached = torch.cat(steps, dim=1)
real = pad_mask.bool()
gap = (cached - full)[real].abs().max().item()
assert gap < 1e-5


def show_cached(lang="en"):
    label = {"en": "max |cached - full|", "zh": "max |逐步解码 - 完整计算|"}[lang]
    print(f"{label} = {gap:.4f}")


# --8<-- [end:cache]


# --8<-- [start:evict]
SINKS, WINDOW = 4, 8
stream = torch.randint(1, 100, (1, 40), generator=torch.Generator().manual_seed(1))


def run_stream(policy):
    """Feed 40 tokens one by one through a cache of 4 sinks + 8 recent tokens.

    policy: "raw" (keys cached before RoPE, rotated at their positions in the cache at every
    step: StreamingLLM), "rerotate" (keys cached after RoPE and turned back by the shift when
    tokens are evicted), or "stale" (cached after RoPE, never turned back).
    Returns the logits of every step, (40, vocab).
    """
    past, all_logits = None, []
    for t in range(stream.shape[1]):
        n_cached = 0 if past is None else past[0][0].shape[2]
        position = torch.tensor([[n_cached]])  # the new token: next position in the cache
        allowed = torch.ones(1, 1, 1, n_cached + 1, dtype=torch.bool)
        key_positions = torch.arange(n_cached + 1)[None] if policy == "raw" else None
        logits, past = model(stream[:, t : t + 1], position, allowed, past, key_positions)
        all_logits.append(logits[0, -1])
        if past[0][0].shape[2] > SINKS + WINDOW:  # evict: keep 4 sinks and 8 recent
            keep = sink_window_keep(past[0][0].shape[2], sinks=SINKS, window=WINDOW)
            before = torch.arange(keep.shape[0])[keep]  # positions in the cache before
            after = positions_from_mask(keep)[keep]  # consecutive positions after
            new_past = []
            for k_raw, k_rot, v in past:
                k_rot = k_rot[:, :, keep]
                if policy == "rerotate":
                    k_rot = rerotate(k_rot, before - after, model.rope.inv_freq)
                new_past.append((k_raw[:, :, keep], k_rot, v[:, :, keep]))
            past = new_past
    return torch.stack(all_logits)


streamed = {policy: run_stream(policy) for policy in ("raw", "rerotate", "stale")}


def show_evict(lang="en"):
    line = {
        "en": "{}: max |logits - logits(keys cached before RoPE)| = {:.4f}",
        "zh": "{}：max |logits - logits（缓存 RoPE 之前的 key）| = {:.4f}",
    }[lang]
    names = {
        "en": {"rerotate": "re-rotated", "stale": "not re-rotated"},
        "zh": {"rerotate": "重新旋转", "stale": "不重新旋转"},
    }[lang]
    for policy in ("rerotate", "stale"):
        gap = (streamed[policy] - streamed["raw"]).abs().max().item()
        print(line.format(names[policy], gap))


assert (streamed["rerotate"] - streamed["raw"]).abs().max() < 1e-4
assert (streamed["stale"] - streamed["raw"]).abs().max() > 0.1
# --8<-- [end:evict]


# --8<-- [start:cost]
import statistics

# one layer's cache: 8 key heads of 128 dimensions, 4096 tokens
cache_k, cache_v = torch.randn(2, 1, 8, 4096, 128)
query = torch.randn(1, 8, 1, 128)
inv_freq = posenc.default_inv_freq(128)


def time_ratio(fn, floor, rounds=21):
    """Median over rounds of fn's time / floor's time, the two run back to back in each round
    on one thread: a burst of other work hits both alike (the best of each, timed apart on
    every core, swung from 0.1 to 20 on a busy machine; this stays within 1.0-1.5)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ratios = []
        for _ in range(rounds):
            start = time.perf_counter()
            fn()
            middle = time.perf_counter()
            floor()
            ratios.append((middle - start) / (time.perf_counter() - middle))
        return statistics.median(ratios)
    finally:
        torch.set_num_threads(threads)


turn_per_attend = time_ratio(
    lambda: rerotate(cache_k, 1, inv_freq),
    lambda: posenc.attention(query, cache_k, cache_v, causal=False),
)
# the least each step must move: what it reads and what it writes back to the cache
rotated = rerotate(cache_k, 1, inv_freq)
re_rotation = cache_k.numel() + rotated.numel()  # reads K, writes it rotated
attention_step = cache_k.numel() + cache_v.numel()  # reads K and V (the query is tiny)


def show_cost(lang="en"):
    slow = turn_per_attend > 1 / 3
    if lang == "zh":
        print(f"搬动的数：重新旋转 {re_rotation}，注意力 {attention_step}")
        print("重新旋转的耗时超过注意力这一步的三分之一：" + ("是" if slow else "否"))
        return
    print(f"numbers moved: re-rotation {re_rotation}, attention {attention_step}")
    print("re-rotation takes more than a third of the attention step:", slow)


# --8<-- [end:cost]


# --8<-- [start:drift]
# a key cached at position 5000 moves back by 256: by 1 at each of 256 evictions, or at once
torch.manual_seed(0)
k = torch.randn(1, 1, 1, 128)
cos, sin = posenc.rotary_cos_sin(torch.tensor([5000]), inv_freq)
start = posenc.apply_rotary(k, cos, sin)  # the key as the cache stored it
cos, sin = posenc.rotary_cos_sin(torch.tensor([5000 - 256]), inv_freq)
target = posenc.apply_rotary(k, cos, sin)  # the key rotated at 4744 from scratch
drift = {}
for dtype in (torch.float32, torch.bfloat16):
    stepwise = start.to(dtype)
    for _ in range(256):
        stepwise = rerotate(stepwise, 1, inv_freq)  # rounded to dtype at every step
    once = rerotate(start.to(dtype), 256, inv_freq)
    drift[dtype] = [(x.float() - target).abs().max().item() for x in (stepwise, once)]
assert drift[torch.bfloat16][0] > 10 * drift[torch.bfloat16][1]


def show_drift(lang="en"):
    line = {
        "en": "{:8}: 256 steps of 1: {:.3f}   one step of 256: {:.3f}",
        "zh": "{:8}：每次移 1、共 256 次：{:.3f}   一次移 256：{:.3f}",
    }[lang]
    for dtype, (stepwise_error, once_error) in drift.items():
        print(line.format(str(dtype)[6:], stepwise_error, once_error))


# --8<-- [end:drift]


# --8<-- [start:exercise_blocks]
# evict 64 tokens at a time: the key is turned back 4 times on its way through 256 positions
blockwise = start.to(torch.bfloat16)
for _ in range(4):
    blockwise = rerotate(blockwise, 64, inv_freq)


def show_blocks(lang="en"):
    label = {"en": "bfloat16: 4 steps of 64: ", "zh": "bfloat16：每次移 64、共 4 次："}[lang]
    print(f"{label}{(blockwise.float() - target).abs().max().item():.3f}")


# --8<-- [end:exercise_blocks]


# --8<-- [start:exercise_streaming]
# StreamingLLM §3.2: the cache holds tokens [0, 1, 2, 3, 6, 7, 8], the 9th is being decoded
kept = torch.zeros(10, dtype=torch.bool)
kept[[0, 1, 2, 3, 6, 7, 8, 9]] = True  # 9: the token being decoded
print(positions_from_mask(kept)[kept].tolist())
# --8<-- [end:exercise_streaming]


# --8<-- [start:exercise_absolute]
# the sinusoidal model of the padding section, on the packed row with the per-document mask
b_only, _ = absolute(doc_b[None], torch.arange(7)[None], padded_allowed(torch.ones(1, 7)))
absolute_packing = {}
for name, positions in (("reset", reset), ("running", running)):
    logits, _ = absolute(packed, positions, block)
    absolute_packing[name] = (logits[0, 5:] - b_only[0]).abs().max().item()


def show_absolute_packing(lang="en"):
    names = {"reset": "重置", "running": "连续"}  # the two are equally wide
    line = {"en": "{}: max |packed - alone| = {:.4f}", "zh": "{}：max |打包 - 单独| = {:.4f}"}[lang]
    for name, gap in absolute_packing.items():
        print(line.format(f"{name:8}" if lang == "en" else names[name], gap))


# --8<-- [end:exercise_absolute]


if __name__ == "__main__":
    show_size()
    show_positions()
    show_padding()
    show_generated()
    show_next_position()
    show_packing()
    show_boundaries()
    show_cached()
    show_evict()
    show_cost()
    show_drift()
    show_blocks()
    show_absolute_packing()
