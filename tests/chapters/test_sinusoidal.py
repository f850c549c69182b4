"""Claims of chapter 2 "Sinusoidal encoding" beyond its printed output."""

from __future__ import annotations

import runpy

import pytest
import torch

import posenc
from tools import layout

CHAPTER = layout.find_chapter("sinusoidal")


@pytest.fixture(scope="module")
def snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "sinusoidal.py"), run_name="snippet")


@pytest.mark.parametrize(("k", "d"), [(1, 8), (13, 16), (250, 64)])
def test_one_rotation_shifts_every_position(snippet, k: int, d: int) -> None:
    """PE(p + k) = M_k PE(p) with the same M_k for every p, and M_k is a rotation."""
    m_k = snippet["shift_matrix"](k, d)
    table = posenc.sinusoidal(torch.arange(0, 3000, 37), d, dtype=torch.float64)
    shifted = posenc.sinusoidal(torch.arange(0, 3000, 37) + k, d, dtype=torch.float64)
    torch.testing.assert_close(table @ m_k.T, shifted, atol=1e-4, rtol=0)
    torch.testing.assert_close(m_k.T @ m_k, torch.eye(d, dtype=torch.float64))
    assert torch.linalg.det(m_k).item() == pytest.approx(1.0)


def test_dot_product_depends_only_on_the_offset() -> None:
    """PE(p)·PE(q) = Σ_i cos(ω_i (p − q)): the same for every pair with the same offset."""
    table = posenc.sinusoidal(4000, 128, dtype=torch.float64)
    for offset in (1, 17, 400):
        dots = torch.stack([table[p] @ table[p + offset] for p in (0, 99, 1234, 3000)])
        torch.testing.assert_close(dots, dots[:1].expand(4), atol=1e-3, rtol=0)
