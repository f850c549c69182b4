"""Chapter "Positions in serving systems": where inference engines rotate, and with which ids.

A two-layer RoPE stack (random weights, seeded) runs every case: a flat batch of requests
with vLLM's positions, chunked prefill, a prefix cache, context parallelism, tree decoding,
llama.cpp's context shift and three designs of a sink cache. Each case compares a cached or
split computation with the plain one, and with the wrong position ids, so each can fail.
Functions named ``show_*`` print a case's result; ``lang="zh"`` prints the Chinese labels
the Chinese page shows (the numbers are the same).

Run it: python snippets/positions_in_serving/positions_in_serving.py
"""

# --8<-- [start:model]
import math

import torch
from torch import nn

import posenc
from posenc.positions import positions_from_mask, rerotate


class RopeStack(nn.Module):
    """Two attention layers with RoPE and residuals; random weights, for exact comparisons.

    The cache holds, per layer, the keys *after* rotation and the values, as vLLM,
    FlashAttention's KV cache and transformers keep them.
    """

    def __init__(self, vocab=64, dim=32, heads=2, layers=2):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.embed = nn.Embedding(vocab, dim)
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim, bias=False) for _ in range(layers))
        self.out = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.head = nn.Linear(dim, vocab, bias=False)
        self.rope = posenc.RotaryEmbedding(self.head_dim)
        for qkv in self.qkv:  # a wide spread: attention far from uniform, positions matter
            nn.init.normal_(qkv.weight, std=2 / math.sqrt(dim))

    def forward(self, ids, positions, allowed=None, cache=None):
        """Logits of the new tokens and the cache extended by their keys and values.

        ids, positions: (seq,) new tokens and their position ids.
        allowed: bool (seq, past + seq), True where a query may see a key; default causal.
        cache: per layer (rotated keys, values), each (1, heads, past, head_dim), or None.
        """
        past = 0 if cache is None else cache[0][0].shape[2]
        seq = ids.shape[0]
        if allowed is None:  # the new tokens see the cache and each other causally
            allowed = torch.ones(seq, past + seq, dtype=torch.bool).tril(past)
        bias = torch.zeros(allowed.shape).masked_fill(~allowed, float("-inf"))
        x = self.embed(ids)[None]  # (1, seq, dim)
        new_cache = []
        for i, (qkv, out) in enumerate(zip(self.qkv, self.out, strict=True)):
            q, k, v = qkv(x).split(x.shape[-1], dim=-1)
            # (1, seq, dim) -> (1, heads, seq, head_dim)
            q, k, v = (t.view(1, seq, self.heads, -1).transpose(1, 2) for t in (q, k, v))
            q, k = self.rope(q, k, positions)  # rotated once, at the given positions
            if cache is not None:
                k = torch.cat((cache[i][0], k), dim=2)
                v = torch.cat((cache[i][1], v), dim=2)
            new_cache.append((k, v))
            attended = posenc.attention(q, k, v, causal=False, bias=bias)
            x = x + out(attended.transpose(1, 2).reshape(1, seq, -1))
        return self.head(x)[0], new_cache


def gap(a, b):
    """Largest absolute difference, as a float."""
    return (a - b).abs().max().item()


torch.manual_seed(0)
model = RopeStack().eval().requires_grad_(False)
tokens = torch.randint(1, 64, (24,), generator=torch.Generator().manual_seed(1))


def show_size(lang="en"):
    print(sum(p.numel() for p in model.parameters()), {"en": "parameters", "zh": "个参数"}[lang])


# --8<-- [end:model]


# --8<-- [start:flat]
# vLLM's model runner: three requests scheduled together, one flat row of tokens.
num_computed = torch.tensor([4, 0, 7])  # tokens each request has in its cache already
num_scheduled = torch.tensor([2, 5, 3])  # tokens each request computes in this step
request = torch.repeat_interleave(torch.arange(3), num_scheduled)  # [0, 0, 1, 1, 1, ...]
starts = torch.cumsum(num_scheduled, 0) - num_scheduled
flat_positions = num_computed[request] + torch.arange(len(request)) - starts[request]

# vLLM's table: cos and sin of every position side by side, half the rotary width each
head_dim, max_positions = 16, 64
inv_freq = posenc.default_inv_freq(head_dim)
freqs = torch.einsum("i,j -> ij", torch.arange(max_positions, dtype=torch.float), inv_freq)
cos_sin_cache = torch.cat((freqs.cos(), freqs.sin()), dim=-1)  # (max_positions, head_dim)


def forward_static(positions, query, head_size, cos_sin_cache):
    """vLLM's RotaryEmbedding.forward_static for the query, GPT-NeoX style, line by line."""
    positions = positions.flatten()
    num_tokens = positions.shape[0]
    cos_sin = cos_sin_cache.index_select(0, positions)  # one row per token
    cos, sin = cos_sin.chunk(2, dim=-1)
    query = query.view(num_tokens, -1, head_size)  # (tokens, heads, head_size)
    cos, sin = cos.unsqueeze(-2), sin.unsqueeze(-2)  # ApplyRotaryEmb, is_neox_style=True
    x1, x2 = torch.chunk(query, 2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


q_flat = torch.randn(len(request), 2 * head_dim, generator=torch.Generator().manual_seed(2))

# the same tokens request by request, each at offset = its cache length
rope = posenc.RotaryEmbedding(head_dim)
per_request = []
for r in range(3):
    q_r = q_flat[request == r].view(-1, 2, head_dim).transpose(0, 1)[None]  # (1, heads, seq, hd)
    per_request.append(rope(q_r, q_r, offset=int(num_computed[r]))[0][0].transpose(0, 1))
per_request = torch.cat(per_request)  # (tokens, heads, head_dim)

flat = {}
for name, ids in (("runner", flat_positions), ("arange", torch.arange(len(request)))):
    flat[name] = gap(forward_static(ids, q_flat, head_dim, cos_sin_cache), per_request)
assert flat["runner"] < 1e-6 < 0.1 < flat["arange"]


def show_flat(lang="en"):
    print(flat_positions.tolist())
    if lang == "zh":
        print("拍平的一行 == 逐个请求：", flat["runner"] < 1e-6)
        print(f"按行内下标 arange(len(row)) 编号：max |拍平 - 逐个请求| = {flat['arange']:.4f}")
        return
    print("flat row == request by request:", flat["runner"] < 1e-6)
    print(f"numbered by arange(len(row)): max |flat - request by request| = {flat['arange']:.4f}")


# --8<-- [end:flat]


# --8<-- [start:longrope]
# vLLM's Phi3LongRoPEScaledRotaryEmbedding before PR #27431: one table of short-factor rows
# (positions 0..k-1), then one of long-factor rows; the whole flat batch indexes the long
# rows as soon as any of its positions exceeds k = original_max_position_embeddings.
original_max = 16  # original_max_position_embeddings, small for the demo
short_factor = torch.ones(head_dim // 2)
long_factor = torch.linspace(1.0, 8.0, head_dim // 2)


def factor_table(factor, length):
    angles = torch.outer(torch.arange(length, dtype=torch.float), inv_freq / factor)
    return torch.cat((angles.cos(), angles.sin()), dim=-1)


long_short_cos_sin_cache = torch.cat(
    (factor_table(short_factor, original_max), factor_table(long_factor, 64))
)


def longrope_rows(positions, use_long_rope=None):
    """use_long_rope=None: the old per-batch rule; True/False: decided once (the fix)."""
    if use_long_rope is None:
        k = original_max  # vLLM's two lines, as written
        long_prompt_offset = (
            torch.any(positions > k).float() * torch.full_like(positions, k)
        ).long()
    else:
        long_prompt_offset = torch.full_like(positions, original_max if use_long_rope else 0)
    return long_short_cos_sin_cache.index_select(0, positions + long_prompt_offset)


request_0 = torch.tensor([4, 5])  # request 0 of the flat batch, scheduled on its own
partner = torch.tensor([30, 31, 32])  # a long request beside it
batched = torch.cat((request_0, partner))
longrope = {
    rule: gap(longrope_rows(batched, use)[:2], longrope_rows(request_0, use))
    for rule, use in (("any(positions > k)", None), ("decided once", False))
}
assert longrope["decided once"] == 0 < 0.1 < longrope["any(positions > k)"]


def show_longrope(lang="en"):
    label = {"en": "{}: max |rows of request 0 in the batch - alone| = {:.4f}",
             "zh": "{}：max |请求 0 在批内的行 - 单独时的行| = {:.4f}"}[lang]  # fmt: skip
    names = {"en": {"any(positions > k)": "any(positions > k)", "decided once": "decided once"},
             "zh": {"any(positions > k)": "any(positions > k)", "decided once": "启动时定一次"}}[lang]  # fmt: skip
    for rule, value in longrope.items():
        print(label.format(names[rule], value))


# --8<-- [end:longrope]


# --8<-- [start:chunked]
prompt = tokens[:12]
full, _ = model(prompt, torch.arange(12))  # the whole prompt in one forward pass


def chunked_prefill(prompt, chunk, restart):
    """Prefill chunk by chunk through the cache; restart=True numbers every chunk from 0."""
    cache, logits = None, []
    for start in range(0, len(prompt), chunk):
        ids = prompt[start : start + chunk]
        cached = 0 if cache is None else cache[0][0].shape[2]  # the cache length
        first = 0 if restart else cached
        out, cache = model(ids, torch.arange(first, first + len(ids)), cache=cache)
        logits.append(out)
    return torch.cat(logits)


right = gap(chunked_prefill(prompt, 5, restart=False), full)
wrong = gap(chunked_prefill(prompt, 5, restart=True), full)
assert right < 1e-5 < 0.1 < wrong


def show_chunked(lang="en"):
    if lang == "zh":
        print(f"位置从缓存长度接着编：max |分块 - 整体| = {right:.4f}")
        print(f"每块从 0 重新编号：  max |分块 - 整体| = {wrong:.4f}")
        return
    print(f"positions continue from the cache length: max |chunked - full| = {right:.4f}")
    print(f"positions restart in every chunk:          max |chunked - full| = {wrong:.4f}")


# --8<-- [end:chunked]


# --8<-- [start:prefix]
system = tokens[:6]  # a shared system prompt: its rotated keys are cached once
_, system_cache = model(system, torch.arange(6))
question = tokens[6:10]  # a new request: the system prompt, then its own 4 tokens
alone, _ = model(torch.cat((system, question)), torch.arange(10))
reused, _ = model(question, torch.arange(6, 10), cache=system_cache)  # prefix cache hit

# a document cached after a 3-token preamble, wanted after a 6-token one
document = tokens[10:15]
_, cache_a = model(torch.cat((tokens[15:18], document)), torch.arange(8))  # at positions 3..7
fresh, cache_b = model(torch.cat((tokens[18:24], document)), torch.arange(11))  # at 6..10
moved = [rerotate(k[:, :, 3:], -3, model.rope.inv_freq) for k, _ in cache_a]  # 3..7 -> 6..10
prefix_gap = [gap(reused, alone[6:])] + [gap(moved[i], cache_b[i][0][:, :, 6:]) for i in (0, 1)]
assert prefix_gap[0] < 1e-5 and prefix_gap[1] < 1e-5 < 0.01 < prefix_gap[2]


def show_prefix(lang="en"):
    lines = {
        "en": ("cached prefix at its own positions: max |reused - full| = {:.4f}",
               "layer 1 keys moved by 3: max |moved - fresh| = {:.4f}",
               "layer 2 keys moved by 3: max |moved - fresh| = {:.4f}"),
        "zh": ("缓存的前缀在原位置复用：max |复用 - 完整计算| = {:.4f}",
               "第 1 层 key 平移 3 个位置：max |平移 - 重新计算| = {:.4f}",
               "第 2 层 key 平移 3 个位置：max |平移 - 重新计算| = {:.4f}"),
    }[lang]  # fmt: skip
    for line, value in zip(lines, prefix_gap, strict=True):
        print(line.format(value))


# --8<-- [end:prefix]


# --8<-- [start:ring]
def zigzag(seq, ranks):
    """Megatron's split: 2 * ranks chunks, rank r holds chunks r and 2 * ranks - 1 - r."""
    chunks = torch.arange(seq).chunk(2 * ranks)
    return [torch.cat((chunks[r], chunks[2 * ranks - 1 - r])) for r in range(ranks)]


generator = torch.Generator().manual_seed(3)
q, k, v = torch.randn(3, 1, 2, 16, 16, generator=generator)  # (batch, heads, seq, head_dim)
q_all, k_all = rope(q, k)  # positions 0..15 on one device
reference = posenc.attention(q_all, k_all, v)

shards = zigzag(16, ranks=2)
ring = {}
for name, local in (("global", False), ("local", True)):
    out = torch.empty_like(reference)
    rotated_keys = []
    for held in shards:  # every rank rotates its own queries and keys
        at = torch.arange(len(held)) if local else held
        rotated_keys.append(rope(q[:, :, held], k[:, :, held], at))
    keys = torch.cat([k_r for _, k_r in rotated_keys], dim=2)  # the all-gather of the keys
    key_positions = torch.cat(shards)
    for held, (q_r, _) in zip(shards, rotated_keys, strict=True):
        allowed = key_positions[None, :] <= held[:, None]  # causal by global position
        bias = torch.zeros(allowed.shape).masked_fill(~allowed, float("-inf"))
        values = v[:, :, key_positions]
        out[:, :, held] = posenc.attention(q_r, keys, values, causal=False, bias=bias)
    ring[name] = gap(out, reference)
assert ring["global"] < 1e-5 < 0.01 < ring["local"]


def show_ring(lang="en"):
    if lang == "zh":
        print("rank 0 持有的位置", shards[0].tolist())
        print(f"全局位置：max |分到各卡 - 单卡| = {ring['global']:.4f}")
        print(f"本地位置：max |分到各卡 - 单卡| = {ring['local']:.4f}")
        return
    print("rank 0 holds positions", shards[0].tolist())
    for name, value in ring.items():
        print(f"{name} positions: max |ring - one device| = {value:.4f}")


# --8<-- [end:ring]


# --8<-- [start:tree]
prefix = tokens[:6]
_, prefix_cache = model(prefix, torch.arange(6))
# a draft tree: root r (the token just sampled), children a and b, then c under a, d under b
tree = torch.tensor([30, 41, 52, 13, 24])  # r, a, b, c, d
parent = [-1, 0, 0, 1, 2]
depth = torch.tensor([0, 1, 1, 2, 2])
ancestors = torch.eye(5, dtype=torch.bool)  # every node sees itself ...
for node in range(5):
    up = parent[node]
    while up >= 0:  # ... and its ancestors
        ancestors[node, up] = True
        up = parent[up]
tree_allowed = torch.cat((torch.ones(5, 6, dtype=torch.bool), ancestors), dim=1)  # and the prefix

# each branch decoded on its own, one token after the other
sequential = torch.empty(5, 64)
for branch in ([0, 1, 3], [0, 2, 4]):
    out, _ = model(tree[branch], torch.arange(6, 9), cache=prefix_cache)
    sequential[branch] = out

tree_gap = {}
for name, positions in (("depth", 6 + depth), ("flattened index", 6 + torch.arange(5))):
    out, tree_cache = model(tree, positions, tree_allowed, cache=prefix_cache)
    tree_gap[name] = gap(out, sequential)
assert tree_gap["depth"] < 1e-5 < 0.01 < tree_gap["flattened index"]


def show_tree(lang="en"):
    names = {"depth": "深度", "flattened index": "拍平后的下标"}
    for name, value in tree_gap.items():
        if lang == "zh":
            print(f"树的位置 = 前缀 + {names[name]}：max |树 - 逐分支解码| = {value:.4f}")
        else:
            print(
                f"tree positions = prefix + {name:15}: max |tree - branch by branch| = {value:.4f}"
            )


# --8<-- [end:tree]


# --8<-- [start:accept]
# accept branch r, b, d: copy its cached keys and values into consecutive slots, as is
out, tree_cache = model(tree, 6 + depth, tree_allowed, cache=prefix_cache)
keep = torch.cat((torch.arange(6), 6 + torch.tensor([0, 2, 4])))
accepted = [(k[:, :, keep], v[:, :, keep]) for k, v in tree_cache]
next_token = torch.tensor([7])
after_tree, _ = model(next_token, torch.tensor([9]), cache=accepted)
plain, _ = model(torch.cat((prefix, tree[[0, 2, 4]], next_token)), torch.arange(10))
accept_gap = gap(after_tree, plain[-1:])
assert accept_gap < 1e-5


def show_accept(lang="en"):
    line = {"en": "next step after the copy: max |tree path - plain decoding| = {:.4f}",
            "zh": "复制之后的下一步：max |树上的路径 - 普通解码| = {:.4f}"}[lang]  # fmt: skip
    print(line.format(accept_gap))


# --8<-- [end:accept]


# --8<-- [start:shift]
# llama.cpp's context shift with n_ctx = 16 and n_keep = 4, once the context is full
n_ctx, n_keep = 16, 4
n_past = 16
n_discard = (n_past - n_keep) // 2
kept = torch.cat((torch.arange(n_keep), torch.arange(n_keep + n_discard, n_past)))
shift = torch.where(kept >= n_keep + n_discard, n_discard, 0)  # what seq_add(-n_discard) adds

_, cache = model(tokens[:n_past], torch.arange(n_past))
# the K-shift: every kept key turned back by its own shift, values untouched
shifted = [(rerotate(k[:, :, kept], shift, model.rope.inv_freq), v[:, :, kept]) for k, v in cache]
_, rebuilt = model(tokens[:n_past][kept], torch.arange(len(kept)))  # the kept text from scratch
next_token = tokens[n_past : n_past + 1]
after_shift, _ = model(next_token, torch.tensor([len(kept)]), cache=shifted)
recomputed, _ = model(torch.cat((tokens[:n_past][kept], next_token)), torch.arange(len(kept) + 1))
shift_gap = (gap(shifted[0][0], rebuilt[0][0]), gap(after_shift, recomputed[-1:]))
assert shift_gap[0] < 1e-5 < 0.01 < shift_gap[1]


def show_shift(lang="en"):
    if lang == "zh":
        print(f"n_discard：{n_discard}  保留的位置：{kept.tolist()}")
        print("平移之后：", (kept - shift).tolist())
        print(f"第 1 层 key：max |平移后 - 在新位置旋转| = {shift_gap[0]:.4f}")
        print(f"下一个 token：max |平移后 - 重算保留的文本| = {shift_gap[1]:.4f}")
        return
    print("n_discard:", n_discard, " kept positions:", kept.tolist())
    print("after the shift:", (kept - shift).tolist())
    print(f"layer 1 keys: max |shifted - rotated at the new position| = {shift_gap[0]:.4f}")
    print(f"next token: max |after the shift - kept text recomputed| = {shift_gap[1]:.4f}")


# --8<-- [end:shift]


# --8<-- [start:sinks]
# one head, a cache of 2 sinks + 6 recent tokens after 20 tokens; the 21st token attends
generator = torch.Generator().manual_seed(4)
q_raw = torch.randn(1, 1, 1, 16, generator=generator)  # the new query, before RoPE
k_raw, v_all = torch.randn(2, 1, 1, 20, 16, generator=generator)  # keys before RoPE
keep = torch.zeros(20, dtype=torch.bool)
keep[:2], keep[-6:] = True, True  # 2 sinks, 6 recent
text = torch.arange(20)[keep]  # positions in the text: 0, 1, 14, ..., 19
in_cache = positions_from_mask(keep)[keep]  # positions in the cache: 0, 1, 2, ..., 7
m_text, m_cache = 20, 8  # the new token in the text and in the cache
k_kept, v_kept = k_raw[:, :, keep], v_all[:, :, keep]


def at(x, positions):
    return posenc.apply_rotary(x, *rope.cos_sin(positions))


def attend(scores, values):
    return torch.softmax(scores / math.sqrt(16), dim=-1) @ values


def scores(q, k):
    return q @ k.transpose(-1, -2)


# (a) keys stored rotated at their text positions, turned back when the window slides
moved_back = rerotate(at(k_kept, text), text - in_cache, rope.inv_freq)
a = attend(scores(at(q_raw, torch.tensor([m_cache])), moved_back), v_kept)
# (b) keys stored before RoPE, all rotated at their cache positions at every step
b = attend(scores(at(q_raw, torch.tensor([m_cache])), at(k_kept, in_cache)), v_kept)
# (c) keys stored rotated at their text positions, never touched; the query rotated twice:
#     at its cache position for the sinks, at its text position for the window
stored = at(k_kept, text)
sinks = scores(at(q_raw, torch.tensor([m_cache])), stored[:, :, :2])
window = scores(at(q_raw, torch.tensor([m_text])), stored[:, :, 2:])
c = attend(torch.cat((sinks, window), dim=-1), v_kept)


# (c) with two ordinary attention calls, one per block, each returning its output and the
#     log-sum-exp of its scores (FlashAttention's softmax_lse), merged afterwards
def attend_lse(scores, values):
    scaled = scores / math.sqrt(16)
    return torch.softmax(scaled, dim=-1) @ values, torch.logsumexp(scaled, dim=-1, keepdim=True)


(out_s, lse_s), (out_w, lse_w) = (
    attend_lse(sinks, v_kept[:, :, :2]),
    attend_lse(window, v_kept[:, :, 2:]),
)
lse = torch.logaddexp(lse_s, lse_w)
merged = (lse_s - lse).exp() * out_s + (lse_w - lse).exp() * out_w
# (c) with one query rotation only: the sinks then sit 19 and 20 positions back, not 7 and 8
once = attend(scores(at(q_raw, torch.tensor([m_text])), stored), v_kept)
sink_gap = {"b": gap(b, a), "c": gap(c, a), "merged": gap(merged, a), "once": gap(once, a)}
assert max(sink_gap["b"], sink_gap["c"], sink_gap["merged"]) < 1e-5 < 0.01 < sink_gap["once"]


def show_sinks(lang="en"):
    labels = {
        "en": {"b": "(b) rotated at use       ", "c": "(c) query rotated twice ",
               "merged": "(c) two calls, LSE merge", "once": "(c) query rotated once  "},
        "zh": {"b": "（b）用到时再旋转", "c": "（c）query 旋转两次", "merged": "（c）两次调用，按 LSE 合并",
               "once": "（c）query 只旋转一次"},
    }[lang]  # fmt: skip
    colon = {"en": ": ", "zh": "："}[lang]
    for name, value in sink_gap.items():
        print(f"{labels[name]}{colon}max |out - (a)| = {value:.4f}")


# --8<-- [end:sinks]


# --8<-- [start:exercise_medusa]
def tree_positions(choices):
    """Position ids of a Medusa tree relative to the prefix: the root 0, each path its depth.

    choices: paths as lists of top-k indices, e.g. [[0], [1], [0, 0]]; sorted as Medusa
    sorts them (by length, then value), the root first.
    """
    ordered = sorted(choices, key=lambda path: (len(path), path))
    return [0] + [len(path) for path in ordered]


print(tree_positions([[0], [1], [2], [0, 0], [0, 1], [1, 0], [0, 0, 0]]))
# --8<-- [end:exercise_medusa]


# --8<-- [start:exercise_zigzag]
for r, held in enumerate(zigzag(16, ranks=4)):
    print(f"rank {r}:", held.tolist())
# --8<-- [end:exercise_zigzag]


if __name__ == "__main__":
    show_size()
    show_flat()
    show_longrope()
    show_chunked()
    show_prefix()
    show_ring()
    show_tree()
    show_accept()
    show_shift()
    show_sinks()
