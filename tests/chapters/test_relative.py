"""Claims of chapter 4 "Relative position encodings" beyond its printed output."""

from __future__ import annotations

import runpy

import pytest
import torch

import posenc
from tools import layout

CHAPTER = layout.find_chapter("relative")


@pytest.fixture(scope="module")
def snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "relative.py"), run_name="snippet")


@pytest.mark.parametrize(("q_len", "mem_len"), [(1, 0), (3, 5), (6, 2)])
def test_relative_shift_puts_distance_i_minus_j_in_column_j(snippet, q_len, mem_len) -> None:
    """Transformer-XL's shift: row i of the (q_len, k_len) matrix whose columns hold distances
    k_len-1 .. 0 becomes the row whose column j holds distance (i + mem) - j, for j <= i + mem."""
    k_len = q_len + mem_len
    distances = torch.arange(k_len - 1, -1, -1, dtype=torch.float32).expand(q_len, k_len)
    shifted = snippet["rel_shift"](distances.clone())
    for i in range(q_len):
        for j in range(i + mem_len + 1):
            assert shifted[i, j] == i + mem_len - j


def test_t5_decoder_distances_from_113_share_the_last_bucket() -> None:
    distances = torch.arange(0, 600)
    buckets = posenc.t5_relative_bucket(-distances, bidirectional=False)
    assert int(distances[buckets == 31][0]) == 113 and bool((buckets[113:] == 31).all())
