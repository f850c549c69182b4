"""Claims of chapter 7 "Length extrapolation for RoPE" beyond its printed output."""

from __future__ import annotations

import math

import torch

import posenc

LLAMA_31 = {
    "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}  # fmt: skip


def test_llama3_keeps_short_wavelengths_and_stretches_long_ones_by_the_factor() -> None:
    plain = posenc.rope_inv_freq(128, base=500000.0)[0]
    scaled = posenc.rope_inv_freq(128, base=500000.0, scaling=LLAMA_31)[0]
    wavelength = 2 * math.pi / plain
    short, long = wavelength < 8192 / 4, wavelength > 8192 / 1
    torch.testing.assert_close(scaled[short], plain[short])
    torch.testing.assert_close(scaled[long], plain[long] / 8)
    between = ~short & ~long
    assert between.any() and ((scaled[between] < plain[between]).all())
    assert (scaled[between] > plain[between] / 8).all()


def test_pi_stretches_every_period_by_the_factor_and_ntk_only_the_slowest() -> None:
    plain = posenc.rope_inv_freq(64)[0]
    pi = posenc.rope_inv_freq(64, scaling={"rope_type": "linear", "factor": 4.0})[0]
    torch.testing.assert_close(pi, plain / 4)
    ntk_base = 10000.0 * 4 ** (64 / 62)  # NTK-aware: base·s^(d/(d-2))
    ntk = posenc.rope_inv_freq(64, base=ntk_base)[0]
    assert ntk[0] == plain[0]
    torch.testing.assert_close(ntk[-1], plain[-1] / 4)
