"""Chapter "Longer context: training tricks and chunked attention": which positions training
shows (PoSE, randomized positions, CLEX), which relative position each query-key pair is
rotated by at inference (Self-Extend, Dual Chunk Attention), and which frequencies a long
input gets (LongRoPE2's mixed context window, CLEX's continuous scaling).

Functions named ``show_*`` print a result with labels in the reader's language (``lang="en"``
or ``"zh"``); each page calls them in a one-line block.

Run it from the repository: python snippets/longer_context/longer_context.py
"""

# --8<-- [start:setup]
import math
import random

import torch

import posenc

head_dim = 32
inv_freq = posenc.rope_inv_freq(head_dim, 10000.0)[0]  # θ_i, float32


def rotate(x: torch.Tensor, positions: torch.Tensor, freq: torch.Tensor = inv_freq):
    """Rotate the rows of x (..., n, d) by RoPE at the given integer positions (..., n)."""
    cos, sin = posenc.rotary_cos_sin(positions, freq)
    return posenc.apply_rotary(x, cos, sin)


def scores(q, k, q_pos, k_pos, freq=inv_freq):
    """q_i · k_j with q_i rotated by q_pos[i] and k_j by k_pos[j]: an (n_q, n_k) matrix."""
    return rotate(q, q_pos, freq) @ rotate(k, k_pos, freq).T


# Any position ids, not only 0, 1, 2, ...: the score sees only q_pos[i] - k_pos[j].
torch.manual_seed(0)
q, k = torch.randn(6, head_dim), torch.randn(6, head_dim)
q_pos = torch.tensor([0, 5, 9, 700, 701, 4000])
k_pos = torch.tensor([3, 4, 80, 81, 2500, 3999])
r = q_pos[:, None] - k_pos[None, :]  # the relative position of every pair
# the same scores from r alone: rotate the query by r[i, j] (the key by -r[i, j] where r < 0)
pairs = (6, 6, head_dim)
q_r = rotate(q[:, None, :].expand(pairs), r.clamp(min=0))
k_r = rotate(k[None, :, :].expand(pairs), (-r).clamp(min=0))
by_r = (q_r * k_r).sum(-1)
# equal up to float32 rounding of angles near 4000 rad:
print(float((scores(q, k, q_pos, k_pos) - by_r).abs().max()) < 1e-3 * float(by_r.abs().max()))
# --8<-- [end:setup]

# --8<-- [start:pose]


def pose_draw(train_len: int, target_len: int, rng: random.Random) -> tuple[int, int]:
    """One PoSE example as released (dwzhu-pku/PoSE, src/train_pose.py): the length of the
    first chunk, 1 .. (train_len + 1) // 2, and the skip u of the second, 0 .. target_len -
    train_len (random.randint includes both ends)."""
    first = rng.randint(1, (train_len + 1) // 2)
    skip = rng.randint(0, target_len - train_len)
    return first, skip


def pose_position_ids(train_len: int, target_len: int, rng: random.Random) -> torch.Tensor:
    """Two chunks of consecutive ids: 0 .. first - 1, then first + u .. train_len - 1 + u."""
    first, skip = pose_draw(train_len, target_len, rng)
    ids = torch.arange(train_len)
    ids[first:] += skip
    return ids


rng = random.Random(0)
ids = pose_position_ids(2048, 16384, rng)  # LLaMA 2k -> 16k, the paper's Table 1 setting
print(len(ids), ids[:3].tolist(), ids[-3:].tolist(), int((ids.diff() != 1).sum()))
# --8<-- [end:pose]

# --8<-- [start:pose_coverage]


def pose_distance_counts(train_len, target_len, examples, seed=0):
    """How many of `examples` PoSE examples hold at least one query-key pair at each distance
    r = 0 .. target_len - 1. One example holds 0 .. len(chunk) - 1 inside each chunk and
    skip + 1 .. skip + train_len - 1 across the two chunks."""
    rng = random.Random(seed)
    starts = torch.zeros(target_len + 1, dtype=torch.long)  # a difference array: +1 where a
    for _ in range(examples):  # span of distances starts, -1 where it ends
        first, skip = pose_draw(train_len, target_len, rng)
        inside = max(first, train_len - first)  # the longer chunk holds 0 .. inside - 1
        if skip + 1 <= inside:  # the two spans touch: one span
            spans = [(0, skip + train_len)]
        else:
            spans = [(0, inside), (skip + 1, skip + train_len)]
        for start, end in spans:
            starts[start] += 1
            starts[end] -= 1
    return starts.cumsum(0)[:target_len]


# 1000 steps with a global batch of 64 (the paper's §4.1): 64,000 examples of 2048 tokens
counts = pose_distance_counts(2048, 16384, 64_000)


# The largest distance, 16383, needs the largest skip: one value of the 14,337 the skip takes.
skips = 16384 - 2048 + 1
expected_largest = 64_000 / skips


def show_pose(lang="en"):
    lines = {
        "en": ("examples: 64,000 of 2048 tokens; distances 1 .. 16383 seen: {} of 16383",
               "examples holding distance {:>5}: {:>6,}",
               "expected for 16383: 64,000 / {:,} = {:.2f}"),
        "zh": ("样本 64,000 条，每条 2048 个 token；距离 1 .. 16383 共 16383 个，出现过的有 {} 个",
               "距离 {:>5} 出现在 {:>6,} 条样本中",
               "距离 16383 的期望条数：64000 / {} = {:.2f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(int((counts[1:] > 0).sum())))
    for distance in (1, 1023, 2048, 8192, 16383):
        print(lines[1].format(distance, int(counts[distance])))
    print(lines[2].format(skips, expected_largest))


# --8<-- [end:pose_coverage]

# --8<-- [start:randomized]


def randomized_position_ids(n: int, max_len: int, generator: torch.Generator) -> torch.Tensor:
    """Ruoss et al. (2023): n distinct positions drawn uniformly from 0 .. max_len - 1, sorted
    (google-deepmind/randomized_positional_encodings, noisy_fixed_positional_encodings)."""
    return torch.randperm(max_len, generator=generator)[:n].sort().values


g = torch.Generator().manual_seed(0)
rand_ids = randomized_position_ids(2048, 16384, g)
gaps = rand_ids.diff()


def show_randomized(lang="en"):
    lines = {
        "en": ("ids from {} to {}; neighbours one position apart: {:.1%}",
               "mean gap between neighbours: {:.2f} (16384 / 2048 = 8); largest gap: {}"),
        "zh": ("位置编号从 {} 到 {}；相邻 token 编号只差 1 的占 {:.1%}",
               "相邻 token 的平均间隔：{:.2f}（16384 / 2048 = 8）；最大间隔：{}"),
    }[lang]  # fmt: skip
    print(lines[0].format(int(rand_ids[0]), int(rand_ids[-1]), float((gaps == 1).float().mean())))
    print(lines[1].format(float(gaps.float().mean()), int(gaps.max())))


# --8<-- [end:randomized]

# --8<-- [start:self_extend]


def self_extend_relative(i, j, group: int, window: int):
    """The relative position Self-Extend rotates the pair (query i, key j <= i) by, as released
    (datamllab/LongLM, self_extend_patch/Llama.py): i - j inside the neighbour window, and
    floor(i/G) - floor(j/G) + w - w/G beyond it. The window must be a multiple of G."""
    assert window % group == 0, "w - w/G is an integer only when G divides w"
    grouped = i // group - j // group + window - window // group
    return torch.where(i - j < window, i - j, grouped)


def self_extend_scores(q, k, group, window, freq=inv_freq):
    """Two RoPE passes merged by a mask, as the released code computes them: a neighbour pass
    with positions i and j, a grouped pass with query positions floor(i/G) + w - w/G and key
    positions floor(j/G); causal."""
    pos = torch.arange(len(q))
    neighbour = scores(q, k, pos, pos, freq)
    grouped = scores(q, k, pos // group + window - window // group, pos // group, freq)
    i, j = pos[:, None], pos[None, :]
    merged = torch.where(i - j < window, neighbour, grouped)
    return merged.masked_fill(j > i, float("-inf"))


# 40 tokens for a model trained on 16 (relative positions 0 .. 15): G = 4, w = 8
torch.manual_seed(0)
n, trained, group, window = 40, 16, 4, 8
q, k = torch.randn(n, head_dim), torch.randn(n, head_dim)
i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
plain = scores(q, k, torch.arange(n), torch.arange(n)).masked_fill(j > i, float("-inf"))
extended = self_extend_scores(q, k, group, window)
causal = j <= i
rel = self_extend_relative(i, j, group, window)


def scores_from_relative(q, k, relative, freq=inv_freq):
    """q_i · k_j rebuilt from a matrix of relative positions alone: query i rotated by
    relative[i, j], key j not rotated (relative >= 0 on and below the diagonal)."""
    n_q, n_k = relative.shape
    q_r = rotate(q[:, None, :].expand(n_q, n_k, q.shape[-1]), relative.clamp(min=0), freq)
    return (q_r * k[None, :, :]).sum(-1)


def leaky_rerope_relative(i, j, slope_inverse: int, window: int):
    """Su's Leaky ReRoPE (kexue.fm/archives/9708): i - j inside the window, then a slope of
    1/k: w + (i - j - w) / k, a fraction."""
    return torch.where(i - j < window, (i - j).double(), window + (i - j - window) / slope_inverse)


def show_self_extend(lang="en"):
    lines = {
        "en": ("two passes, merged: equal to the scores rebuilt from r(i, j): {}",
               "r(i, j) within 1 of Leaky ReRoPE with slope 1/4: {}",
               "largest relative position at 40 tokens: {} (plain RoPE: 39)",
               "relative positions of query 39 over keys 0 .. 39 (plain RoPE: 39 .. 0):"),
        "zh": ("两遍合并后的分数，与只用 r(i, j) 重算的相同：{}",
               "r(i, j) 与斜率 1/4 的 Leaky ReRoPE 相差不到 1：{}",
               "40 个 token 时的最大相对位置：{}（普通 RoPE：39）",
               "query 39 对 key 0 .. 39 用的相对位置（普通 RoPE：39 .. 0）："),
    }[lang]  # fmt: skip
    by_r = scores_from_relative(q, k, rel)
    print(lines[0].format(torch.allclose(extended[causal], by_r[causal], atol=1e-4)))
    leaky = leaky_rerope_relative(i, j, group, window)
    print(lines[1].format(bool(((rel - leaky).abs() < 1)[causal].all())))
    print(lines[2].format(int(rel[causal].max())))
    print(lines[3])
    print(" ".join(str(int(x)) for x in rel[39]))


# --8<-- [end:self_extend]

# --8<-- [start:self_extend_limit]


def self_extend_longest(trained: int, group: int, window: int) -> int:
    """The longest input whose relative positions all stay below the trained length
    (LongLM's README: (L - w_n) * G + w_n)."""
    return (trained - window) * group + window


def largest_relative(n: int, relative, **kwargs) -> int:
    """The largest relative position over the last query of an n-token input (the largest of
    all, since r grows with i): one row, not the whole n x n matrix."""
    last = torch.tensor(n - 1)
    return int(relative(last, torch.arange(n), **kwargs).max())


longest = self_extend_longest(4096, 8, 1024)  # Llama 2's 4096 tokens, G = 8, w = 1024


def show_self_extend_limit(lang="en"):
    line = {"en": "{:>6} tokens: largest relative position {}",
            "zh": "{:>6} 个 token：最大相对位置 {}"}[lang]  # fmt: skip
    for length in (longest, longest + 1):
        largest = largest_relative(length, self_extend_relative, group=8, window=1024)
        print(line.format(length, largest))


# --8<-- [end:self_extend_limit]

# --8<-- [start:dca]


def dca_relative(i, j, chunk_len: int, local: int):
    """The relative position Dual Chunk Attention rotates (query i, key j <= i) by, as released
    (HKUNLP/ChunkLlama chunkllama_attn_replace.py; vLLM's DualChunkRotaryEmbedding): keys sit
    at j mod s; a query sits at i mod s against its own chunk, at min(s + i mod s, s + local)
    against the previous chunk, and at min(2s - 1, s + local) against older chunks."""
    s, top = chunk_len, chunk_len + local  # top: chunk_size in the code
    same, previous = i // s == j // s, i // s - j // s == 1
    succ = torch.clamp(s + i % s, max=top)
    inter = min(2 * s - 1, top)
    q_pos = torch.where(same, i % s, torch.where(previous, succ, torch.full_like(succ, inter)))
    return q_pos - j % s


def dca_scores(q, k, chunk_len, local, freq=inv_freq):
    """Three RoPE passes merged by chunk, as in the released code: intra (query i mod s),
    successive (query min(s + i mod s, s + local)) and inter (query min(2s - 1, s + local)),
    keys always at j mod s; causal."""
    s, top = chunk_len, chunk_len + local
    pos = torch.arange(len(q))
    k_pos = pos % s
    intra = scores(q, k, pos % s, k_pos, freq)
    succ = scores(q, k, torch.clamp(s + pos % s, max=top), k_pos, freq)
    inter = scores(q, k, torch.full_like(pos, min(2 * s - 1, top)), k_pos, freq)
    i, j = pos[:, None], pos[None, :]
    apart = i // s - j // s  # 0: same chunk, 1: previous chunk, 2 or more: older
    merged = torch.where(apart == 0, intra, torch.where(apart == 1, succ, inter))
    return merged.masked_fill(j > i, float("-inf"))


chunk_len, local = 12, 3  # chunks of s = 12 tokens; no query placed past s + 3 = 15
dca = dca_scores(q, k, chunk_len, local)
rel_dca = dca_relative(i, j, chunk_len, local)
# the previous chunk, where the query id s + i mod s is still at or below the cap s + local
previous_uncapped = (i // chunk_len - j // chunk_len == 1) & (i % chunk_len <= local)


def show_dca(lang="en"):
    lines = {
        "en": ("three passes, merged: equal to the scores rebuilt from r(i, j): {}",
               "previous chunk at the true distance i - j until the cap: {}",
               "largest relative position at 40 tokens: {} (plain RoPE: 39)",
               "relative positions of query 37 over keys 0 .. 37:"),
        "zh": ("三遍合并后的分数，与只用 r(i, j) 重算的相同：{}",
               "前一块在碰到上限之前用真实距离 i - j：{}",
               "40 个 token 时的最大相对位置：{}（普通 RoPE：39）",
               "query 37 对 key 0 .. 37 用的相对位置："),
    }[lang]  # fmt: skip
    by_r = scores_from_relative(q, k, rel_dca)
    print(lines[0].format(torch.allclose(dca[causal], by_r[causal], atol=1e-4)))
    print(lines[1].format(torch.equal(rel_dca[previous_uncapped], (i - j)[previous_uncapped])))
    print(lines[2].format(int(rel_dca[causal].max())))
    print(lines[3])
    print(" ".join(str(int(x)) for x in rel_dca[37, :38]))


# --8<-- [end:dca]

# --8<-- [start:dca_mistake]
# Plant a copy of the last query as key 5, two chunks back, and read where the query looks:
# DCA (every earlier key, remapped positions) against chunked attention (own chunk only).
planted = k.clone()
planted[5] = q[-1]
weights_dca = torch.softmax(dca_scores(q, planted, chunk_len, local)[-1] / math.sqrt(head_dim), -1)
own_chunk = j[0] // chunk_len == (n - 1) // chunk_len
chunked = scores(q, planted, torch.arange(n), torch.arange(n))[-1].masked_fill(~own_chunk, float("-inf"))  # fmt: skip
weights_chunked = torch.softmax(chunked / math.sqrt(head_dim), dim=-1)


def show_dca_mistake(lang="en"):
    line = {"en": "weight of query 39 on key 5, a copy of itself: DCA {:.3f} (its largest: {}), chunked attention {:.3f}",
            "zh": "query 39 分给 key 5（它自己的副本）的权重：DCA {:.3f}（是最大的一个：{}），分块注意力 {:.3f}"}[lang]  # fmt: skip
    largest = int(weights_dca.argmax()) == 5
    print(line.format(float(weights_dca[5]), largest, float(weights_chunked[5])))


# --8<-- [end:dca_mistake]

# --8<-- [start:dca_qwen]
# Qwen2.5-7B-Instruct-1M's config.json: dual_chunk_attention_config
qwen = {"chunk_size": 262144, "local_size": 8192, "original_max_position_embeddings": 262144}
qwen_chunk = qwen["chunk_size"] - qwen["local_size"]  # s: the code's chunk_len
longest_qwen = 1_010_000  # the config's max_position_embeddings


def temperature(n: int) -> float:
    """vLLM's dual-chunk backend: YaRN's 0.1 ln(n / L) + 1 (never below 1) for an n-token
    sequence, multiplied into the keys and into the softmax scale (or the query)."""
    return posenc.yarn_mscale(n / qwen["original_max_position_embeddings"])


def show_dca_qwen(lang="en"):
    lines = {
        "en": ("chunks of {:,} tokens; {:,} tokens make {} chunks",
               "largest relative position at {:,} tokens: {:,}",
               "temperature at {:,} tokens: {:.4f} on queries and keys, {:.4f} on the logits"),
        "zh": ("每块 {:,} 个 token；{:,} 个 token 分成 {} 块",
               "{:,} 个 token 时的最大相对位置：{:,}",
               "{:,} 个 token 时的温度：query 和 key 各乘 {:.4f}，分数乘 {:.4f}"),
    }[lang]  # fmt: skip
    rel_max = largest_relative(longest_qwen, dca_relative, chunk_len=qwen_chunk, local=qwen["local_size"])  # fmt: skip
    print(lines[0].format(qwen_chunk, longest_qwen, math.ceil(longest_qwen / qwen_chunk)))
    print(lines[1].format(longest_qwen, rel_max))
    f = temperature(longest_qwen)
    print(lines[2].format(longest_qwen, f, f * f))


# --8<-- [end:dca_qwen]


# --8<-- [start:longrope2]


def critical_pairs(head_dim: int, base: float, trained: int) -> int:
    """Pairs that turn at least once within the trained length: Liu et al.'s theoretical
    critical dimension is twice this number (chapter 16)."""
    theta = posenc.rope_inv_freq(head_dim, base)[0].double()
    return int((2 * math.pi / theta <= trained).sum())


# Phi-3.5-mini's released LongRoPE dict (original length 4096, 48 pairs) and the same long
# factors with short factors of 1, LongRoPE2's original frequencies for short inputs
phi = posenc.released_config("phi-3.5-mini")["config"]
released = dict(phi["rope_scaling"], original_max_position_embeddings=4096)
mixed = dict(released, short_factor=[1.0] * 48)


def longrope(scaling: dict, seq_len: int) -> tuple[torch.Tensor, float]:
    """(θ_i / θ'_i, attention factor): what each pair is divided by for a sequence of seq_len
    tokens, and what the longrope type multiplies cos and sin by (transformers' rule)."""
    base = posenc.rope_inv_freq(96, 10000.0)[0]
    scaled, factor = posenc.rope_inv_freq(96, 10000.0, scaling=scaling, seq_len=seq_len,
                                          max_position_embeddings=131072)  # fmt: skip
    return base / scaled, factor


def show_longrope2(lang="en"):
    lines = {
        "en": ("critical dimension (theory): LLaMA3-8B {} pairs of 64 (8192 tokens), Phi3-mini {} of 48 (2048 tokens; {} at 4096)",
               "largest divisor at {:>4} tokens: LongRoPE as released {:5.2f}, short factors of one {:5.2f}",
               "attention factor at 1, 4096 and 4097 tokens: {} on queries and keys; logits × {:.4f}"),
        "zh": ("临界维度（理论值）：LLaMA3-8B 64 对中 {} 对（8192 个 token），Phi3-mini 48 对中 {} 对（2048 个 token；4096 个 token 时 {} 对）",
               "{} 个 token 时最大的除数：LongRoPE 发布的缩放倍数 {:.2f}，短缩放倍数全取 1 时 {:.2f}",
               "1、4096 和 4097 个 token 时的注意力因子：query 和 key 各乘 {}；分数乘 {:.4f}"),
    }[lang]  # fmt: skip
    phi3 = [critical_pairs(96, 10000.0, length) for length in (2048, 4096)]
    print(lines[0].format(critical_pairs(128, 500000.0, 8192), *phi3))
    for seq_len in (4096, 4097):
        largest = (float(longrope(released, seq_len)[0].max()), float(longrope(mixed, seq_len)[0].max()))  # fmt: skip
        print(lines[1].format(seq_len, *largest))
    factors = [longrope(mixed, seq_len)[1] for seq_len in (1, 4096, 4097)]
    separator = {"en": ", ", "zh": "、"}[lang]
    print(lines[2].format(separator.join(f"{f:.4f}" for f in factors), factors[0] ** 2))


# --8<-- [end:longrope2]

# --8<-- [start:clex]


def ntk_log_freq(t: float, freq: torch.Tensor) -> torch.Tensor:
    """log of the NTK-aware frequencies for the factor 2t - 1 (CLEX's get_time_embedding)."""
    d = 2 * len(freq)
    exponent = torch.arange(0, d, 2, dtype=torch.float64) / (d - 2)
    return torch.log(freq.double()) - exponent * math.log(2 * t - 1)


def clex_inv_freq(freq, t_end, learned=None, step=0.01):
    """Integrate CLEX's ODE from t = 1 (the original θ) to t_end with fixed RK4 steps, as its
    clex_layer.py does with torchdiffeq (method "rk4", step_size time_dt):
        d/dt log θ(t) = learned(log θ(t) + log θ_NTK(t)) + d/dt log θ_NTK(t)
    `learned` is the trained network (None: zero, CLEX's initialisation)."""
    exponent = torch.arange(0, 2 * len(freq), 2, dtype=torch.float64) / (2 * len(freq) - 2)

    def slope(t, z):
        ntk_slope = -exponent * 2 / (2 * t - 1)  # d/dt of ntk_log_freq(t)
        extra = 0 if learned is None else learned(z + ntk_log_freq(t, freq))
        return extra + ntk_slope

    z, t = torch.log(freq.double()), 1.0
    for _ in range(round((t_end - 1) / step)):
        k1 = slope(t, z)
        k2 = slope(t + step / 2, z + step / 2 * k1)
        k3 = slope(t + step / 2, z + step / 2 * k2)
        k4 = slope(t + step, z + step * k3)
        z, t = z + step / 6 * (k1 + 2 * k2 + 2 * k3 + k4), t + step
    return torch.exp(z)


# With the learned term at zero, CLEX's frequencies at t are NTK-aware with factor 2t - 1, that
# is, dynamic NTK with factor 2 at t times the trained length: base · (2t - 1)^(d/(d-2)).
# Dynamic NTK with factor 1 at t times the trained length is NTK-aware with factor t instead.
at_init = clex_inv_freq(inv_freq, 4.0)


def dynamic_ntk(factor: float, seq_len: int) -> torch.Tensor:
    dynamic = {"rope_type": "dynamic", "factor": factor, "original_max_position_embeddings": 4096}
    return posenc.rope_inv_freq(head_dim, 10000.0, scaling=dynamic, seq_len=seq_len)[0]


def clex_factor(seq_len: int, trained: int, max_factor: int) -> int:
    """CLEX at inference: t = ceil(seq_len / trained), at most max_factor (clex_layer.py)."""
    return min(math.ceil(seq_len / trained), max_factor)


def clex_training_positions(seq_len: int, trained: int, t: int, generator: torch.Generator):
    """CLEX in training (clex_layer.py, forward with do_train): seq_len - 2 sorted distinct
    integers below t·seq_len - 2, plus one, between a first position 0 and a last one
    t·seq_len // scale - 1, all divided by scale = seq_len // trained (at least 1)."""
    scale = max(seq_len // trained, 1)
    sampled = torch.randperm(seq_len * t - 2, generator=generator)[: seq_len - 2].sort().values
    middle = (sampled.double() + 1) / scale
    return torch.cat([torch.zeros(1, dtype=torch.float64), middle,
                      torch.tensor([seq_len * t // scale - 1.0], dtype=torch.float64)])  # fmt: skip


g = torch.Generator().manual_seed(0)
clex_positions = {length: clex_training_positions(length, 4096, 2, g) for length in (4096, 16384)}


def show_clex(lang="en"):
    lines = {
        "en": ("learned term 0, t = 4: NTK-aware with factor 2t - 1 = 7: {}; with factor t = 4: {}",
               "t at 4096, 4097, 8192, 10,000 and 100,000 tokens: {}",
               "training at {:>5} tokens, t = 2: positions 0 .. {:.0f}, mean gap {:.2f}, fractional {:.0%}"),
        "zh": ("可学习项为 0、t = 4：等于缩放倍数 2t - 1 = 7 的 NTK-aware：{}；等于缩放倍数 t = 4 的：{}",
               "4096、4097、8192、10000 和 100000 个 token 时的 t：{}",
               "训练长度 {:>5}、t = 2：位置从 0 到 {:.0f}，平均间隔 {:.2f}，非整数的占 {:.0%}"),
    }[lang]  # fmt: skip
    seven = torch.allclose(at_init.float(), dynamic_ntk(2.0, 4 * 4096), rtol=1e-5)
    four = torch.allclose(at_init.float(), dynamic_ntk(1.0, 4 * 4096), rtol=1e-2)
    print(lines[0].format(seven, four))
    print(lines[1].format([clex_factor(m, 4096, max_factor=8) for m in (4096, 4097, 8192, 10000, 100_000)]))  # fmt: skip
    for length, positions in clex_positions.items():
        fractional = float((positions != positions.round()).double().mean())
        print(
            lines[2].format(
                length, float(positions[-1]), float(positions.diff().mean()), fractional
            )
        )


# --8<-- [end:clex]

# --8<-- [start:exercise]
# 1. Llama 2 (4096 tokens), Self-Extend with w = 1024: the smallest group size that divides w
#    and keeps every relative position of a 32,000-token input below 4096.
fits = [g for g in (2, 4, 8, 16, 32) if largest_relative(32_000, self_extend_relative, group=g, window=1024) < 4096]  # fmt: skip
print(fits[0], self_extend_longest(4096, fits[0], 1024))
# 2. ChunkLlama's defaults for Llama 2: chunk_size = 3/4 of 4096, local = 4096 / 8
s_llama, local_llama = 4096 * 3 // 4 - 4096 // 8, 4096 // 8
print([largest_relative(m, dca_relative, chunk_len=s_llama, local=local_llama) for m in (4096, 10_000, 100_000)])  # fmt: skip
# --8<-- [end:exercise]

if __name__ == "__main__":
    show_pose()
    show_randomized()
    show_self_extend()
    show_self_extend_limit()
    show_dca()
    show_dca_qwen()
    show_dca_mistake()
    show_longrope2()
    show_clex()
