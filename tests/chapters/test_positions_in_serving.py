"""Claims of chapter 18 "Positions in serving systems" (docs/chapters/18-positions-in-serving*.md)
that no printed output on the page shows, or that the page shows for one case only.

Run only this chapter's tests: make test-chapter NAME=positions-in-serving
"""

from __future__ import annotations

import runpy

import pytest
import torch

import posenc
from posenc.positions import rerotate
from tools import layout

CHAPTER = layout.find_chapter("positions-in-serving")


@pytest.fixture(scope="module")
def page():
    """The chapter's code, run once as the page runs it."""
    return runpy.run_path(str(CHAPTER.snippet_folder / "positions_in_serving.py"), run_name="page")


@pytest.mark.parametrize("chunk", [1, 3, 4, 7, 12])
def test_chunked_prefill_equals_full_prefill_only_with_continued_positions(page, chunk):
    full = page["full"]
    right = page["chunked_prefill"](page["prompt"], chunk, restart=False)
    torch.testing.assert_close(right, full, atol=1e-5, rtol=0)
    if chunk < 12:  # one chunk is the whole prompt: both numberings agree
        wrong = page["chunked_prefill"](page["prompt"], chunk, restart=True)
        assert (wrong - full).abs().max() > 0.1


@pytest.mark.parametrize("layout_", ["half", "interleaved"])
def test_a_rerotated_cached_key_equals_the_key_rotated_at_the_new_position(layout_):
    """Per key shifts (a tensor, as llama.cpp's K-shift), either direction, both layouts."""
    generator = torch.Generator().manual_seed(0)
    k = torch.randn(1, 2, 10, 16, generator=generator)
    rope = posenc.RotaryEmbedding(16, layout=layout_)
    old = torch.randint(0, 500, (10,), generator=generator)
    delta = torch.randint(-200, 200, (10,), generator=generator)
    delta = torch.minimum(delta, old)  # new positions stay >= 0
    cached = posenc.apply_rotary(k, *rope.cos_sin(old), layout=layout_)
    moved = rerotate(cached, delta, rope.inv_freq, layout=layout_)
    expected = posenc.apply_rotary(k, *rope.cos_sin(old - delta), layout=layout_)
    torch.testing.assert_close(moved, expected, atol=1e-5, rtol=0)
    assert (cached - expected).abs().max() > 0.1  # the shift is not a no-op


def test_tree_positions_by_depth_reproduce_each_branch_and_flattened_indices_do_not(page):
    sequential = page["sequential"]
    model, tree, allowed, cache = (
        page["model"],
        page["tree"],
        page["tree_allowed"],
        page["prefix_cache"],
    )
    by_depth, _ = model(tree, 6 + page["depth"], allowed, cache=cache)
    flattened, _ = model(tree, 6 + torch.arange(5), allowed, cache=cache)
    torch.testing.assert_close(by_depth, sequential, atol=1e-5, rtol=0)
    # the root and the first child of each level agree either way; the later nodes do not
    assert (flattened[[2, 3, 4]] - sequential[[2, 3, 4]]).abs().amax(-1).min() > 0.01


def test_the_tree_mask_is_needed_too(page):
    """Depth positions with a plain causal mask over the flattened row: b sees a, c sees b."""
    model, tree, cache = page["model"], page["tree"], page["prefix_cache"]
    causal, _ = model(tree, 6 + page["depth"], cache=cache)
    assert (causal - page["sequential"]).abs().max() > 0.01


@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_ring_shards_need_global_positions(page, ranks):
    zigzag, rope = page["zigzag"], page["rope"]
    seq = 8 * ranks
    generator = torch.Generator().manual_seed(ranks)
    q, k, v = torch.randn(3, 1, 2, seq, 16, generator=generator)
    reference = posenc.attention(*rope(q, k), v)
    shards = zigzag(seq, ranks)
    assert sorted(torch.cat(shards).tolist()) == list(range(seq))
    for local in (False, True):
        out = torch.empty_like(reference)
        rotated = [
            rope(q[:, :, h], k[:, :, h], torch.arange(len(h)) if local else h) for h in shards
        ]
        keys = torch.cat([k_r for _, k_r in rotated], dim=2)
        key_positions = torch.cat(shards)
        for held, (q_r, _) in zip(shards, rotated, strict=True):
            allowed = key_positions[None, :] <= held[:, None]
            bias = torch.zeros(allowed.shape).masked_fill(~allowed, float("-inf"))
            out[:, :, held] = posenc.attention(
                q_r, keys, v[:, :, key_positions], causal=False, bias=bias
            )
        error = (out - reference).abs().max()
        assert (error > 0.01) if local else (error < 1e-5)


def test_megatron_zigzag_gives_every_rank_the_same_causal_work(page):
    """Chunks r and 2R - 1 - r: the number of (query, key) pairs a rank scores is the same."""
    for ranks in (2, 4, 8):
        work = {sum(int(p) + 1 for p in held) for held in page["zigzag"](16 * ranks, ranks)}
        assert len(work) == 1


def test_vllm_style_table_holds_posenc_angles_once_per_pair(page):
    """cat(cos, sin) of half width: its halves are posenc's full-width tables, deduplicated."""
    table, inv_freq = page["cos_sin_cache"], page["inv_freq"]
    cos, sin = posenc.rotary_cos_sin(torch.arange(table.shape[0]), inv_freq)
    half = inv_freq.shape[0]
    torch.testing.assert_close(table[:, :half], cos[:, :half], atol=1e-6, rtol=0)
    torch.testing.assert_close(table[:, half:], sin[:, :half], atol=1e-6, rtol=0)


def test_sink_design_c_matches_for_every_window_length():
    """The query rotated at its cache position for the sinks and at its text position for
    the window gives the attention of keys rotated at their cache positions."""
    rope = posenc.RotaryEmbedding(16)
    generator = torch.Generator().manual_seed(5)
    for seen in (9, 20, 57):
        q = torch.randn(1, 1, 1, 16, generator=generator)
        k = torch.randn(1, 1, seen, 16, generator=generator)
        sinks, window = 2, 6
        text = torch.cat((torch.arange(sinks), torch.arange(seen - window, seen)))
        in_cache = torch.arange(sinks + window)

        def rotate(x, positions):
            return posenc.apply_rotary(x, *rope.cos_sin(positions))

        kept = k[:, :, text]
        reference = rotate(q, torch.tensor([sinks + window])) @ rotate(kept, in_cache).mT
        stored = rotate(kept, text)
        twice = torch.cat(
            (
                rotate(q, torch.tensor([sinks + window])) @ stored[:, :, :sinks].mT,
                rotate(q, torch.tensor([seen])) @ stored[:, :, sinks:].mT,
            ),
            dim=-1,
        )
        torch.testing.assert_close(twice, reference, atol=1e-4, rtol=0)


def test_medusa_tree_positions_follow_its_sorting(page):
    """Medusa sorts the paths by (length, value) and numbers each by its depth."""
    positions = page["tree_positions"]([[1, 0], [0], [2], [0, 0, 0], [1]])
    assert positions == [0, 1, 1, 1, 2, 3]
