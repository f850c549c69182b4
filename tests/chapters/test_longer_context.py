"""Claims of chapter 20 "Longer context: training tricks and chunked attention" beyond its
printed output (docs/chapters/20-longer-context.md and its Chinese twin).

Where a claim is about released code, the reference here is a line-by-line transcription of
that code (PoSE's train_pose.py, LongLM's Llama.py, ChunkLlama's chunkllama_attn_replace.py,
vLLM's dual-chunk backend, CLEX's clex_layer.py), written apart from the chapter's snippet; a
test fails if the snippet's shorter form computes anything else.

Run only this chapter's tests: make test-chapter NAME=longer-context
"""

from __future__ import annotations

import math
import random
import runpy

import pytest
import torch

from tools import layout

CHAPTER = layout.find_chapter("longer-context")


@pytest.fixture(scope="module")
def lc() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "longer_context.py"), run_name="snippet")


def _figure(name: str, monkeypatch, tmp_path) -> dict:
    """A figure script's namespace, without drawing it (tests/site/test_snippets.py does)."""
    import snippets.figures

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(snippets.figures, "save_each_language", lambda *args: None)
    return runpy.run_path(str(CHAPTER.snippet_folder / f"figure_{name}.py"), run_name="figure")


# ── PoSE ─────────────────────────────────────────────────────────────────────────────────


def released_pose(ids: list[int], scaled_max: int, model_max: int) -> tuple[list, torch.Tensor]:
    """dwzhu-pku/PoSE src/train_pose.py L164-L183 (train_preprocess_function_pose), one text."""
    len_chunk = min(len(ids), model_max)
    len_input = len(ids)
    lt1 = 0
    rt1 = random.randint(1, (len_chunk + 1) // 2)
    rt2 = random.randint(lt1 + len_chunk, len_input)
    lt2 = rt2 - (len_chunk - (rt1 - lt1))
    chunked_ids = ids[lt1:rt1] + ids[lt2:rt2]
    pos_ids = torch.arange(len(chunked_ids), dtype=torch.long)
    len_pos_ids = len(pos_ids)
    lt = 0
    rt = random.randint(lt, scaled_max - len_pos_ids)
    pos_ids[: rt1 - lt1] += lt
    pos_ids[rt1 - lt1 :] += rt
    return chunked_ids, pos_ids


class Fixed:
    """Stands in for random.Random: returns the given draws in order, checking their range."""

    def __init__(self, values: list[int]) -> None:
        self.values = list(values)

    def randint(self, low: int, high: int) -> int:
        value = self.values.pop(0)
        assert low <= value <= high
        return value


def test_pose_ids_follow_the_released_code(lc) -> None:
    # The released code draws three numbers per text (chunk, text end, skip); the snippet
    # draws the chunk and the skip. Feed both the same chunk and skip.
    for seed in range(50):
        random.seed(seed)
        text = list(range(5 * 64))  # a document of five windows
        chunk, released = released_pose(text, 512, 64)
        jumps = (released.diff() != 1).nonzero()
        first = int(jumps[0]) + 1 if len(jumps) else 64
        skip = int(released[-1]) - 63

        assert torch.equal(lc["pose_position_ids"](64, 512, Fixed([first, skip])), released)
        assert len(chunk) == 64  # the training input stays one window long
        # the second chunk's text comes from at or after the end of the first
        assert chunk.index(chunk[first]) == first and chunk[first] >= first


def test_pose_example_is_short_and_within_the_target(lc) -> None:
    rng = random.Random(1)
    for _ in range(500):
        ids = lc["pose_position_ids"](64, 512, rng)
        assert len(ids) == 64 and int(ids.max()) <= 511 and int(ids.min()) == 0
        assert int((ids.diff() != 1).sum()) <= 1  # at most one neighbour pair is not one apart
        assert bool((ids.diff() >= 1).all())  # ids stay increasing


def test_pose_distance_counts_match_brute_force(lc) -> None:
    counts = lc["pose_distance_counts"](16, 64, 300, seed=3)
    rng, brute = random.Random(3), torch.zeros(64, dtype=torch.long)
    for _ in range(300):
        ids = lc["pose_position_ids"](16, 64, rng)
        held = torch.unique((ids[:, None] - ids[None, :]).flatten())
        brute[held[held >= 0]] += 1
    assert torch.equal(counts, brute)


def test_pose_inside_a_chunk_reaches_its_length_minus_one(lc) -> None:
    """Inside its chunks an example holds 0 .. (longer chunk's length) - 1, not the length."""
    for first, skip in [(1, 448), (32, 100), (20, 0), (64 // 2, 448)]:
        ids = lc["pose_position_ids"](64, 512, Fixed([first, skip]))
        longer = max(first, 64 - first)
        inside = max(int((ids[:first, None] - ids[None, :first]).max()),
                     int((ids[first:, None] - ids[None, first:]).max()))  # fmt: skip
        assert inside == longer - 1 and longer >= 64 // 2


def test_pose_largest_skip_has_probability_one_over_its_range(lc) -> None:
    rng, hits, draws = random.Random(11), 0, 200_000
    for _ in range(draws):
        hits += lc["pose_draw"](16, 64, rng)[1] == 64 - 16
    assert abs(hits / draws - 1 / (64 - 16 + 1)) < 0.002


def test_pose_short_distances_always_far_ones_rarely(lc) -> None:
    counts, examples = lc["counts"], 64_000
    # chunk 0 holds at most half the window, so chunk 1 holds at least 1024 ids
    assert bool((counts[:1024] == examples).all())
    # a middle distance needs the skip in a band of L_c - 1 of L_t - L_c + 1 values: ~1 in 7
    band = (2048 - 1) / (16384 - 2048 + 1)
    assert abs(band - 1 / 7) < 0.005
    for distance in (2048, 4096, 8192, 12000):
        assert abs(int(counts[distance]) / examples - band) < 0.01
    # the largest distance needs the largest skip exactly: one value of L_t - L_c + 1, so
    # 64,000 / 14,337 = 4.46 examples on average (the page's draw holds it once)
    assert lc["skips"] == 14_337 and f"{lc['expected_largest']:.2f}" == "4.46"
    assert int(counts[16383]) == 1
    rng = random.Random(5)
    for _ in range(2000):
        first, skip = lc["pose_draw"](16, 64, rng)
        ids = torch.arange(16)
        ids[first:] += skip
        holds_largest = bool(((ids[:, None] - ids[None, :]) == 63).any())
        assert holds_largest == (skip == 64 - 16)


# ── randomized positions ─────────────────────────────────────────────────────────────────


def test_randomized_ids_are_a_sorted_subset(lc) -> None:
    g = torch.Generator().manual_seed(2)
    for _ in range(50):
        ids = lc["randomized_position_ids"](64, 512, g)
        assert len(torch.unique(ids)) == 64 and bool((ids.diff() > 0).all())
        assert 0 <= int(ids.min()) and int(ids.max()) < 512


def test_randomized_positions_hold_far_distances_in_almost_every_example(lc) -> None:
    # the figure's claim: almost every distance in almost every example (up to half the window)
    g, held = torch.Generator().manual_seed(0), torch.zeros(512)
    for _ in range(300):
        ids = lc["randomized_position_ids"](64, 512, g)
        diffs = (ids[:, None] - ids[None, :]).flatten()
        held += torch.bincount(diffs[diffs >= 0], minlength=512)[:512].clamp(max=1)
    assert float((held[:256] / 300).min()) > 0.9
    # adjacent tokens one position apart about one time in eight (16384 / 2048 = 8)
    assert abs(float((lc["gaps"] == 1).float().mean()) - 1 / 8) < 0.01


# ── Self-Extend ──────────────────────────────────────────────────────────────────────────


def released_self_extend_positions(n: int, group: int, window: int):
    """datamllab/LongLM self_extend_patch/Llama.py L124-L180 (prefill, q_len == kv_seq_len):
    the query and key position ids of both passes and the mask that picks the neighbour pass."""
    query_position = torch.arange(n)[None, :]
    key_position = query_position
    re_group = 0 if query_position.max() < window else window
    group_query_position = query_position // group + re_group - re_group / group
    group_key_position = key_position // group
    neighbor_mask = torch.tril(torch.ones(n, n))
    if n - window > 0:
        group_mask = torch.tril(torch.ones(n - window, n - window))
        neighbor_mask[window:, :-window] -= group_mask
    return group_query_position[0], group_key_position[0], neighbor_mask.bool()


def test_self_extend_matches_the_released_positions(lc) -> None:
    for n, group, window in [(40, 4, 8), (50, 2, 16), (33, 8, 8)]:
        gq, gk, near = released_self_extend_positions(n, group, window)
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        released = torch.where(near, i - j, (gq[:, None] - gk[None, :]).long())
        mine = lc["self_extend_relative"](i, j, group, window)
        causal = j <= i
        assert torch.equal(mine[causal], released[causal])


def test_self_extend_scores_are_the_matrix(lc) -> None:
    """The two-pass implementation rotates each pair by exactly self_extend_relative."""
    n, d = lc["n"], lc["head_dim"]
    q, k, rel = lc["q"], lc["k"], lc["rel"]
    causal = lc["j"] <= lc["i"]
    by_r = (lc["rotate"](q[:, None, :].expand(n, n, d), rel.clamp(min=0)) * k[None]).sum(-1)
    assert torch.allclose(lc["extended"][causal], by_r[causal], atol=1e-4)


def test_self_extend_pieces_meet_at_the_window_and_vary_by_one(lc) -> None:
    for group, window in [(4, 8), (8, 1024), (2, 512)]:
        i = torch.arange(window, 6 * window)
        j = i - window
        grouped = i // group - j // group + window - window // group
        assert bool((grouped == window).all())  # the shift joins the two formulas
        far = lc["self_extend_relative"](i, i - window - 3, group, window)
        assert set(far.tolist()) == {window + 3 // group, window + math.ceil(3 / group)}


def released_leaky_rerope_relative(n: int, k: int, window: int) -> torch.Tensor:
    """bojone/rerope leaky_rerope_patch.py (prefill): the second pass rotates the query by
    LlamaLinearScalingRotaryEmbedding(scaling_factor=k) at position_ids + window·(k - 1) and the
    key at position_ids, so the pair sees (i + w(k - 1))/k - j/k; the first pass, i - j, is kept
    where |i - j| < window."""
    pos = torch.arange(n, dtype=torch.float64)
    offset = window * (k - 1)
    second = (pos[:, None] + offset) / k - pos[None, :] / k
    first = pos[:, None] - pos[None, :]
    return torch.where((first.abs() < window), first, second)


def test_self_extend_is_leaky_rerope_with_floors(lc) -> None:
    for n, group, window in [(40, 4, 8), (300, 8, 64), (100, 2, 10)]:
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        causal = j <= i
        leaky = released_leaky_rerope_relative(n, group, window)
        assert torch.allclose(
            lc["leaky_rerope_relative"](i, j, group, window)[causal], leaky[causal]
        )
        mine = lc["self_extend_relative"](i, j, group, window).double()
        assert bool(((mine - leaky).abs() < 1)[causal].all())  # floors move a position by < 1
        # positions stay integers (the model saw only integer positions) while Leaky ReRoPE's don't
        far = causal & (i - j >= window)
        assert bool((leaky[far] != leaky[far].round()).any())


def test_self_extend_keeps_a_coarse_order_dca_loses_it(lc) -> None:
    """Self-Extend: a farther key never gets a smaller relative position. DCA: keys at one
    place in different older chunks get the same relative position."""
    n = 120
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    se = lc["self_extend_relative"](i, j, 4, 8)
    for row in range(n):
        r = se[row, : row + 1]
        assert bool((r[:-1] >= r[1:]).all())  # non-increasing as j moves toward i
    s, local = 12, 3
    dca = lc["dca_relative"](i, j, s, local)
    q = torch.tensor(n - 1)
    # older keys whose key one chunk later is still in an older chunk
    older = torch.arange(0, (int(q) // s - 1) * s - s)
    assert torch.equal(
        lc["dca_relative"](q, older, s, local), lc["dca_relative"](q, older + s, s, local)
    )
    assert bool((dca[n - 1, : (int(q) // s - 1) * s].reshape(-1, s) == dca[n - 1, :s]).all())


def test_dca_why_the_three_ids(lc) -> None:
    """Older keys sit between local + 1 and c_q away, never nearer than the key at the same
    place in the previous chunk; without the successive part the key right before a chunk
    boundary would sit local + 1 away instead of 1."""
    for s, local, n in [(12, 3, 80), (2560, 512, 9000), (20, 19, 100)]:
        step = max(1, n // 120)
        i, j = torch.arange(0, n, step)[:, None], torch.arange(n)[None, :]
        r = lc["dca_relative"](i, j, s, local)
        older = (i // s - j // s >= 2) & (j <= i)
        assert int(r[older].min()) >= local + 1 and int(r[older].max()) <= s + local
        previous_place = lc["dca_relative"](i, (i // s - 1) * s + j % s, s, local)
        assert bool((r[older] >= previous_place.expand_as(r)[older]).all())
        first = torch.arange(s, n, s)  # the first query of each chunk, key just before it
        assert bool((lc["dca_relative"](first, first - 1, s, local) == 1).all())
        inter_only = min(2 * s - 1, s + local) - (first - 1) % s
        assert bool((inter_only == local + 1).all())


def test_dca_paper_and_code_numbers(lc) -> None:
    """Llama 2 (c = 4096): the paper's s = 3072 with w = c - s = 1024 and queries up to c - 1;
    ChunkLlama's chunk_size = 3072 is c_q, chunk_len = 2560, local_window = 512."""
    c = 4096
    paper_s = c * 3 // 4
    assert (paper_s, c - paper_s, c - 1) == (3072, 1024, 4095)
    chunk_size, local_window = c * 3 // 4, c // 8  # replace_with_chunkllama's defaults
    chunk_len = chunk_size - local_window
    assert (chunk_size, chunk_len, local_window) == (3072, 2560, 512)
    relative = lc["dca_relative"]
    largest = lc["largest_relative"](100_000, relative, chunk_len=chunk_len, local=local_window)
    assert largest == chunk_size


def test_dca_key_id_does_not_depend_on_the_query(lc) -> None:
    """ChunkLlama and vLLM rotate each key once, at j mod s, and cache it rotated: the query id
    r + j mod s depends only on i and on which chunk the key is in."""
    s, local, n = 12, 3, 60
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    query_id = lc["dca_relative"](i, j, s, local) + j % s
    kind = (i // s - j // s).clamp(max=2)
    for k_ in range(3):
        for row in range(n):
            ids = query_id[row][(kind[row] == k_) & (j[0] <= row)]
            assert len(torch.unique(ids)) <= 1


def test_self_extend_decoding_rotates_every_cached_key_again() -> None:
    """LongLM keeps keys unrotated in the cache (past_key_value.update before any rotation) and
    rotates each cached key by minus its relative position to the new query (Llama.py
    L264-L271): that position changes as the query moves, so no key can be cached rotated."""
    group, window = 4, 8

    def decode_positions(n: int) -> torch.Tensor:
        position_ids = torch.arange(n)[None, :]
        key_position = torch.arange(n)[None, :]
        neighbor = position_ids[:, -1] - key_position
        group_pos = (
            position_ids[:, -1] // group - key_position // group + (window - window // group)
        )
        return torch.cat([group_pos[:, :-window], neighbor[:, -window:]], 1)[0]

    before, after = decode_positions(40), decode_positions(41)[:40]
    assert not torch.equal(before, after)  # every key's rotation moved: the neighbours' at least
    assert bool((after[-window + 1 :] == before[-window + 1 :] + 1).all())


@pytest.mark.parametrize(
    ("trained", "group", "window"), [(4096, 8, 1024), (2048, 4, 512), (16, 4, 8)]
)
def test_self_extend_longest_input_is_the_readme_bound(lc, trained, group, window) -> None:
    longest = lc["self_extend_longest"](trained, group, window)
    relative = lc["self_extend_relative"]
    assert lc["largest_relative"](longest, relative, group=group, window=window) == trained - 1
    assert lc["largest_relative"](longest + 1, relative, group=group, window=window) == trained


def test_self_extend_decoding_step_is_the_last_row(lc) -> None:
    """LongLM's decoding path (Llama.py L264-L271) places the query at 0 and every key at
    minus its relative position; that relative position is the last row of the prefill."""
    n, group, window = 40, 4, 8
    position_ids = torch.arange(n)[None, :]
    key_position = torch.arange(n)[None, :]
    neighbor_key_position = position_ids[:, -1] - key_position
    re_group = 0 if position_ids.max() < window else window
    group_key_position = (
        position_ids[:, -1] // group - key_position // group + (re_group - re_group // group)
    )
    decode = torch.cat([group_key_position[:, :-window], neighbor_key_position[:, -window:]], 1)
    last = lc["self_extend_relative"](torch.tensor(n - 1), torch.arange(n), group, window)
    assert torch.equal(decode[0], last)


# ── Dual Chunk Attention ─────────────────────────────────────────────────────────────────


def released_dca_relative(n: int, chunk_size: int, local_window: int) -> torch.Tensor:
    """HKUNLP/ChunkLlama chunkllama_attn_replace.py, prefill: the position tables (L47-L52)
    and the positions each pass reads (L152-L192), as one matrix of query id - key id."""
    chunk_len = chunk_size - local_window
    q_t = torch.arange(chunk_len)
    qc_t = (torch.arange(chunk_len) + chunk_len).clamp(max=chunk_size)
    k_t = torch.arange(n) % chunk_len
    position_ids = torch.arange(n) % chunk_len
    rel = torch.full((n, n), -1)
    prev = (0, chunk_len)
    rel[:chunk_len, :chunk_len] = q_t[position_ids[:chunk_len]][:, None] - k_t[None, :chunk_len]
    remain = n - chunk_len
    while remain > 0:
        begin = n - remain
        end = begin + min(chunk_len, remain)
        q_intra = q_t[position_ids[begin:end]]
        rel[begin:end, begin:end] = q_intra[:, None] - k_t[None, begin:end]
        q_succ = qc_t[position_ids[begin:end]]
        rel[begin:end, prev[0] : prev[1]] = q_succ[:, None] - k_t[None, prev[0] : prev[1]]
        if begin - (prev[1] - prev[0]) > 0:
            q_inter = qc_t[position_ids[chunk_len - 1]].repeat(end - begin)
            older = begin - (prev[1] - prev[0])
            rel[begin:end, :older] = q_inter[:, None] - k_t[None, :older]
        prev = (begin, end)
        remain -= chunk_len
    return rel


@pytest.mark.parametrize(
    ("n", "chunk_size", "local"), [(40, 15, 3), (100, 24, 8), (61, 9, 4), (50, 10, 6)]
)
def test_dca_matches_the_released_positions(lc, n, chunk_size, local) -> None:
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    mine = lc["dca_relative"](i, j, chunk_size - local, local)
    released = released_dca_relative(n, chunk_size, local)
    causal = j <= i
    assert torch.equal(mine[causal], released[causal])


def test_vllm_tables_give_the_same_query_ids(lc) -> None:
    """vLLM's DualChunkRotaryEmbedding._compute_cos_sin_cache (L70-L82) and forward_native:
    q at i mod s, q_succ at qc_t[i mod s], q_inter at qc_t[chunk_len - 1] = chunk_size."""
    chunk_size, local_size = 262144, 8192
    chunk_len = chunk_size - local_size
    qc_t = (torch.arange(chunk_len) + chunk_len).clamp(max=chunk_size)
    assert int(qc_t[chunk_len - 1]) == chunk_size
    i = torch.tensor([3 * chunk_len + 5])
    older = torch.tensor([0])
    assert int(lc["dca_relative"](i, older, chunk_len, local_size)) == chunk_size  # inter
    previous = torch.tensor([2 * chunk_len + 7])
    assert int(lc["dca_relative"](i, previous, chunk_len, local_size)) == int(i - previous)


def test_dca_scores_are_the_matrix_and_never_exceed_cq(lc) -> None:
    n, d = lc["n"], lc["head_dim"]
    q, k, rel = lc["q"], lc["k"], lc["rel_dca"]
    causal = lc["j"] <= lc["i"]
    by_r = (lc["rotate"](q[:, None, :].expand(n, n, d), rel.clamp(min=0)) * k[None]).sum(-1)
    assert torch.allclose(lc["dca"][causal], by_r[causal], atol=1e-4)
    for s, local, length in [(12, 3, 200), (2560, 512, 9000), (7, 7, 60)]:
        i, j = torch.arange(0, length, 7)[:, None], torch.arange(length)[None, :]
        r = lc["dca_relative"](i, j, s, local)[j <= i]
        assert int(r.max()) <= s + local and int(r.min()) >= 0


def test_dca_previous_chunk_is_exact_until_the_cap(lc) -> None:
    s, local, n = 12, 3, 60
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    r = lc["dca_relative"](i, j, s, local)
    previous = i // s - j // s == 1
    uncapped = previous & (s + i % s <= s + local)
    assert torch.equal(r[uncapped], (i - j).expand(n, n)[uncapped])
    assert bool((r[previous & ~uncapped] < (i - j).expand(n, n)[previous & ~uncapped]).all())


def released_chunkllama_tables(
    chunk_size: int, local_window: int, seq_len: int, scaling_factor: float, trained: int
):
    """HKUNLP/ChunkLlama chunkllama_attn_replace.py L39-L67 (_set_cos_sin_cache): the query,
    successive-query and key positions, each divided by the PI scaling_factor, and the mscale
    that multiplies every cos and sin once seq_len passes max_position_embeddings."""
    scale = seq_len / trained
    mscale = 1.0 if scale <= 1 else 0.05 * math.log(scale) + 1.0
    chunk_len = chunk_size - local_window
    q_t = torch.arange(chunk_len, dtype=torch.float64) / scaling_factor
    qc_t = (torch.arange(chunk_len, dtype=torch.float64) + chunk_len).clamp(max=chunk_size)
    qc_t = qc_t / scaling_factor
    k_t = (torch.arange(seq_len, dtype=torch.float64) % chunk_len) / scaling_factor
    return q_t, qc_t, k_t, mscale


def test_chunkllama_runs_dca_on_position_interpolation(lc) -> None:
    """With a PI scaling_factor the tables give DCA's relative positions divided by it; past the
    trained length cos and sin carry 0.05 ln(n / L) + 1, so the logits (0.05 ln(n / L) + 1)^2."""
    chunk_size, local, n, factor, trained = 15, 3, 40, 2.0, 16
    q_t, qc_t, k_t, mscale = released_chunkllama_tables(chunk_size, local, n, factor, trained)
    s = chunk_size - local
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    apart = i // s - j // s
    inter = qc_t[s - 1].expand(n, n)
    q_id = torch.where(apart == 0, q_t[i % s], torch.where(apart == 1, qc_t[i % s], inter))
    rel = q_id - k_t[None, :]
    causal = j <= i
    expected = lc["dca_relative"](i, j, s, local).double() / factor
    assert torch.allclose(rel[causal], expected[causal])
    assert mscale == pytest.approx(0.05 * math.log(40 / 16) + 1)
    assert released_chunkllama_tables(chunk_size, local, 16, factor, trained)[3] == 1.0


def test_vllm_critical_queries_are_uncapped() -> None:
    """vLLM's DualChunkRotaryEmbedding (L68-L159): besides the three DCA queries it rotates two
    'critical' copies, the previous-chunk query at chunk_len + i mod chunk_len without the cap
    and the older-chunk one at chunk_size + i mod chunk_len; the backend reads them only with its
    sparse attention on, to score the last queries against every key."""
    chunk_size, local_size = 262144, 8192
    chunk_len = chunk_size - local_size
    m = torch.tensor([0, 100, 8192, 9000, chunk_len - 1])
    qc = (m + chunk_len).clamp(max=chunk_size)
    qc_no_clamp = m + chunk_len
    q_inter_critical = m + chunk_size
    assert bool((qc_no_clamp >= qc).all()) and bool((qc_no_clamp > qc)[m > local_size].all())
    assert bool((q_inter_critical >= chunk_size).all()) and bool((q_inter_critical > qc).all())


def test_dca_merge_of_three_passes_is_one_softmax(lc) -> None:
    """ChunkLlama's merge_attn_outputs (L96-L111): outputs of partial softmaxes weighted by
    their log-sum-exp equal the softmax over all the keys at once."""
    torch.manual_seed(1)
    logits = torch.randn(30)
    values = torch.randn(30, 4)
    parts = [slice(0, 12), slice(12, 24), slice(24, 30)]
    outputs, lses = [], []
    for part in parts:
        w = torch.softmax(logits[part], -1)
        outputs.append(w @ values[part])
        lses.append(torch.logsumexp(logits[part], -1))
    lse = torch.stack(lses)
    merged = (torch.softmax(lse, 0)[:, None] * torch.stack(outputs)).sum(0)
    assert torch.allclose(merged, torch.softmax(logits, -1) @ values, atol=1e-6)


def test_dca_reads_far_keys_chunked_attention_does_not(lc) -> None:
    """Change a key two chunks back: DCA's attention output for the last query changes,
    chunked attention's does not."""
    n, d, s, local = lc["n"], lc["head_dim"], lc["chunk_len"], lc["local"]
    q, k = lc["q"], lc["k"].clone()
    v = torch.randn(n, d, generator=torch.Generator().manual_seed(4))

    def outputs(keys):
        dca = torch.softmax(lc["dca_scores"](q, keys, s, local)[-1] / math.sqrt(d), -1) @ v
        plain = lc["scores"](q, keys, torch.arange(n), torch.arange(n))[-1]
        own = torch.arange(n) // s == (n - 1) // s
        chunked = torch.softmax(plain.masked_fill(~own, float("-inf")) / math.sqrt(d), -1) @ v
        return dca, chunked

    before = outputs(k)
    k[3] = -4 * k[3]
    after = outputs(k)
    assert not torch.allclose(before[0], after[0], atol=1e-4)
    assert torch.equal(before[1], after[1])


def test_qwen_temperature_is_vllms(lc) -> None:
    """vllm/attention/backends/dual_chunk_flash_attn.py L125-L130: (0.1 ln(n / L) + 1).clip(1);
    applied to the keys and to the softmax scale, so the logits grow by its square."""
    original = 262144
    for n in (1000, 262144, 300_000, 1_010_000):
        vllm = float((0.1 * torch.log(torch.tensor(n / original)) + 1.0).clip(min=1))
        assert lc["temperature"](n) == pytest.approx(vllm, rel=1e-6)
    assert lc["temperature"](100) == 1.0
    # decoding: the query carries f(n), a key written at length m keeps f(m), so the logit grows
    # by f(n) f(m), below f(n)^2 once m < n and n > L
    n, m = 1_010_000, 300_000
    assert lc["temperature"](n) * lc["temperature"](m) < lc["temperature"](n) ** 2
    # YaRN's logits factor is the square of its per-side 0.1 ln s + 1 (chapter 7)
    f = lc["temperature"](1_010_000)
    assert f * f == pytest.approx(lc["posenc"].yarn_mscale(1_010_000 / original) ** 2)


def test_qwen_largest_distance_is_one_past_a_trained_sequence(lc) -> None:
    chunk_len, local = lc["qwen_chunk"], lc["qwen"]["local_size"]
    largest = lc["largest_relative"]
    rel_max = largest(1_010_000, lc["dca_relative"], chunk_len=chunk_len, local=local)
    assert rel_max == lc["qwen"]["original_max_position_embeddings"]  # 262143 + 1


# ── LongRoPE2 ────────────────────────────────────────────────────────────────────────────


def test_mixed_window_is_longrope_with_short_factors_of_one(lc) -> None:
    posenc = lc["posenc"]
    theta = posenc.rope_inv_freq(96, 10000.0)[0]
    long = torch.tensor(lc["mixed"]["long_factor"], dtype=torch.float32)
    cases = [(1, theta), (4096, theta), (4097, theta / long), (131072, theta / long)]
    for seq_len, expected in cases:
        got = posenc.rope_inv_freq(96, 10000.0, scaling=lc["mixed"], seq_len=seq_len,
                                   max_position_embeddings=131072)[0]  # fmt: skip
        assert torch.allclose(got, expected, rtol=1e-6)


def test_mixed_window_agrees_with_transformers(lc) -> None:
    from transformers import PretrainedConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    config = PretrainedConfig()
    scaling = {k: v for k, v in lc["mixed"].items() if k not in ("type", "rope_type")}
    config.rope_parameters = {"rope_type": "longrope", "rope_theta": 10000.0, **scaling}
    config.head_dim, config.hidden_size, config.num_attention_heads = 96, 96, 1
    config.max_position_embeddings = 131072
    config.original_max_position_embeddings = 4096
    for seq_len in (4096, 4097):
        hf, _ = ROPE_INIT_FUNCTIONS["longrope"](config, "cpu", seq_len=seq_len)
        ours = lc["posenc"].rope_inv_freq(96, 10000.0, scaling=lc["mixed"], seq_len=seq_len,
                                          max_position_embeddings=131072)[0]  # fmt: skip
        assert torch.equal(ours, hf)


def test_longrope_attention_factor_is_not_one_for_short_inputs(lc) -> None:
    """transformers' longrope multiplies cos and sin by sqrt(1 + ln s / ln L0) at every length,
    short factors of one or not; only attention_factor = 1 gives the original RoPE (and then the
    long inputs lose the factor too)."""
    from transformers import PretrainedConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    posenc = lc["posenc"]
    expected = math.sqrt(1 + math.log(131072 / 4096) / math.log(4096))
    assert f"{expected:.4f}" == "1.1902" and f"{expected**2:.4f}" == "1.4167"
    scaling = {k: v for k, v in lc["mixed"].items() if k not in ("type", "rope_type")}
    for attention_factor in (None, 1.0):
        extra = {} if attention_factor is None else {"attention_factor": attention_factor}
        config = PretrainedConfig()
        config.rope_parameters = {
            "rope_type": "longrope",
            "rope_theta": 10000.0,
            **scaling,
            **extra,
        }
        config.head_dim, config.hidden_size, config.num_attention_heads = 96, 96, 1
        config.max_position_embeddings = 131072
        config.original_max_position_embeddings = 4096
        for seq_len in (1, 4096, 4097):
            _, hf = ROPE_INIT_FUNCTIONS["longrope"](config, "cpu", seq_len=seq_len)
            scaling_here = dict(lc["mixed"], **extra)
            ours = posenc.rope_inv_freq(
                96, 10000.0, scaling=scaling_here, seq_len=seq_len, max_position_embeddings=131072
            )[1]
            assert ours == pytest.approx(hf)
            assert hf == pytest.approx(expected if attention_factor is None else 1.0)
        assert lc["longrope"](lc["mixed"], 4096)[1] == pytest.approx(expected)


def test_critical_dimensions_are_the_papers(lc) -> None:
    """LongRoPE2 §2.1 and §3.2: theoretical critical dimensions 31 (Phi3-mini, d 96, base 10^4,
    2048 tokens; 'the critical dimension is 62, corresponding to the 31st') and 35 (LLaMA3-8B)."""
    assert lc["critical_pairs"](96, 10000.0, 2048) == 31
    assert lc["critical_pairs"](128, 500000.0, 8192) == 35
    assert lc["critical_pairs"](96, 10000.0, 4096) == 34  # Phi-3.5-mini's config, the figure


def test_critical_pairs_is_liu_et_al(lc) -> None:
    # Liu et al. Eq. 13: d_extra = 2 ceil(d/2 log_b(T / 2π)); the snippet counts pairs
    for d, base, trained in [(128, 500000.0, 8192), (96, 10000.0, 4096), (128, 10000.0, 4096)]:
        d_extra = 2 * math.ceil(d / 2 * math.log(trained / (2 * math.pi), base))
        assert 2 * lc["critical_pairs"](d, base, trained) == d_extra


# ── CLEX ─────────────────────────────────────────────────────────────────────────────────


def released_clex_time_embedding(t: float, dim: int, base: float = 10000.0):
    """DAMO-NLP-SG/CLEX CLEX/clex_layer.py L38-L47 (ODELinear.get_time_embedding)."""
    alpha = 1 if t < 1 else 2 * t - 1
    ntk_base = base * alpha ** (dim / (dim - 2))
    ntk_inv_freq = 1.0 / (ntk_base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    index = torch.arange(0, dim, 2, dtype=torch.float64)
    delta_ntk_freq = (
        -2 * index / (dim - 2) * 1 / (base ** (index / dim) * (alpha ** (index / (dim - 2) + 1)))
    )
    return delta_ntk_freq, ntk_inv_freq


def test_clex_time_term_is_the_ntk_slope(lc) -> None:
    """CLEX's forward adds delta_time / time = d/dt log θ_NTK(t); at the learned term zero the
    snippet's slope equals it and its log θ_NTK is CLEX's."""
    freq = lc["inv_freq"]
    d = 2 * len(freq)
    exponent = torch.arange(0, d, 2, dtype=torch.float64) / (d - 2)
    for t in (1.0, 1.7, 3.0, 8.5):
        delta, ntk = released_clex_time_embedding(t, d)
        assert torch.allclose(delta / ntk, -exponent * 2 / (2 * t - 1), rtol=1e-12)
        assert torch.allclose(lc["ntk_log_freq"](t, freq), torch.log(ntk), atol=1e-6)


@pytest.mark.parametrize("t", [1.0, 2.0, 3.5, 8.0])
def test_clex_at_initialisation_is_ntk_with_factor_2t_minus_1(lc, t) -> None:
    freq = lc["inv_freq"]
    d = 2 * len(freq)
    closed = freq.double() * (2 * t - 1) ** (-torch.arange(0, d, 2, dtype=torch.float64) / (d - 2))
    assert torch.allclose(lc["clex_inv_freq"](freq, t), closed, rtol=1e-9)


def test_clex_factor_at_inference_is_the_released_rule(lc) -> None:
    """clex_layer.py L111, L123-L124: scale_factor = seq_len // L; t = scale_factor if the
    length is a multiple of L, else scale_factor + 1; at most max_factor."""
    for seq_len in [1, 100, 4095, 4096, 4097, 8191, 8192, 8193, 50_000, 70_000]:
        scale_factor = seq_len // 4096
        t_val = scale_factor if seq_len % 4096 == 0 else scale_factor + 1
        t_val = t_val if t_val <= 16 else 16
        assert lc["clex_factor"](seq_len, 4096, max_factor=16) == t_val


def released_clex_training_positions(seq_len, max_position_embeddings, t_val, generator):
    """clex_layer.py L111-L121 (forward, do_train): scale_factor = seq_len // L (at least 1),
    get_random_position_ids(n=seq_len - 2, max=seq_len * t_val - 2), then
    [0, (sampled + 1) / scale_factor, seq_len * t_val // scale_factor - 1]."""
    scale_factor = seq_len // max_position_embeddings
    if scale_factor < 1.0:
        scale_factor = 1
    sampled = torch.randperm(seq_len * t_val - 2, generator=generator)[: seq_len - 2].sort().values
    return torch.cat([
        torch.tensor([0.0], dtype=torch.float64),
        (sampled.double() + 1) / scale_factor,
        torch.tensor([seq_len * t_val // scale_factor - 1.0], dtype=torch.float64),
    ])  # fmt: skip


def test_clex_training_positions_follow_the_released_code(lc) -> None:
    for seq_len, t_val in [(64, 1), (64, 3), (256, 2), (256, 5), (100, 2)]:
        seed = seq_len + t_val
        a, b = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
        mine = lc["clex_training_positions"](seq_len, 64, t_val, a)
        assert torch.equal(mine, released_clex_training_positions(seq_len, 64, t_val, b))
        # sorted, except that beyond L0 the pinned last position (t·L0 - 1) can fall up to a
        # fraction below the largest sampled one, (t·seq_len - 2) / scale
        assert len(mine) == seq_len and bool((mine[:-1].diff() > 0).all())
        assert float(mine[:-1].max()) - float(mine[-1]) < 1
        fractional = bool((mine != mine.round()).any())
        assert fractional == (seq_len // 64 > 1)  # interpolated only beyond the trained length
        assert float(mine[-1]) == seq_len * t_val // max(seq_len // 64, 1) - 1  # about t·L0


def test_clex_zero_init_is_ntk_2t_minus_1_not_t(lc) -> None:
    d = lc["head_dim"]
    exponent = torch.arange(0, d, 2, dtype=torch.float64) / (d - 2)
    base = lc["inv_freq"].double()
    assert torch.allclose(
        lc["dynamic_ntk"](2.0, 4 * 4096).double(), base * 7.0**-exponent, rtol=1e-5
    )
    assert torch.allclose(
        lc["dynamic_ntk"](1.0, 4 * 4096).double(), base * 4.0**-exponent, rtol=1e-5
    )
    assert torch.allclose(lc["at_init"], base * 7.0**-exponent, rtol=1e-6)


def test_clex_training_positions_are_sorted_random_with_ends_pinned() -> None:
    """clex_layer.py L88-L90 and L113-L121 at seq_len = L: n - 2 sorted distinct positions from
    0 .. t·n - 3, shifted by one, between 0 and t·n - 1."""
    torch.manual_seed(0)
    seq_len = 64
    for t_val in (1, 2, 5):
        sampled = torch.randperm(seq_len * t_val - 2)[: seq_len - 2].sort().values.float()
        ex = torch.cat([torch.tensor([0.0]), sampled + 1, torch.tensor([seq_len * t_val - 1.0])])
        assert len(ex) == seq_len and bool((ex.diff() > 0).all())
        assert ex[0] == 0 and ex[-1] == seq_len * t_val - 1


# ── figures and exercise ─────────────────────────────────────────────────────────────────


def test_relative_positions_figure_uses_the_chapters_functions(lc, monkeypatch, tmp_path) -> None:
    fig = _figure("relative_positions", monkeypatch, tmp_path)
    plain, self_extend, dca = fig["relative_positions"]()
    n = fig["N"]
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    causal = (j <= i).numpy()
    mine = lc["self_extend_relative"](i, j, fig["GROUP"], fig["WINDOW"]).numpy()
    assert (self_extend[causal] == mine[causal]).all()
    mine = lc["dca_relative"](i, j, fig["CHUNK"], fig["LOCAL"]).numpy()
    assert (dca[causal] == mine[causal]).all()
    # the caption's claim: neither method uses a relative position of 16 or more
    assert self_extend[causal].max() == dca[causal].max() == fig["TRAINED"] - 1
    assert plain[causal].max() == n - 1


def test_training_and_frequency_figures_use_the_chapters_functions(lc, monkeypatch, tmp_path):
    fig = _figure("training_positions", monkeypatch, tmp_path)
    a, b = random.Random(9), random.Random(9)
    for _ in range(20):
        assert torch.equal(fig["pose_ids"](a), lc["pose_position_ids"](64, 512, b))
    fig = _figure("frequencies", monkeypatch, tmp_path)
    freq = lc["inv_freq"]
    figure_freq, snippet_freq = fig["clex_inv_freq"](freq, 3.0), lc["clex_inv_freq"](freq, 3.0)
    assert torch.allclose(figure_freq, snippet_freq, rtol=1e-12)


def test_exercise_arithmetic(lc) -> None:
    # (4096 - 1024)·G + 1024 >= 32000  <=>  G >= 10.08...; the next divisor of 1024 is 16
    assert f"{(32000 - 1024) / (4096 - 1024):.1f}" == "10.1"
    relative = lc["self_extend_relative"]
    assert lc["largest_relative"](32_000, relative, group=8, window=1024) >= 4096
    assert lc["largest_relative"](32_000, relative, group=16, window=1024) < 4096
