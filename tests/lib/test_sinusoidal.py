"""Sinusoidal encoding: values, the fixed linear map PE(p+k) = M_k PE(p), the module."""

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc


def test_values_follow_vaswani():
    pe = posenc.sinusoidal(50, 8)
    assert pe.shape == (50, 8) and pe.dtype == torch.float32
    assert pe[0].tolist() == [0.0, 1.0] * 4  # sin 0, cos 0
    p, i = 37, 2
    omega = 10000.0 ** (-2 * i / 8)
    assert math.isclose(pe[p, 2 * i], math.sin(p * omega), abs_tol=1e-6)
    assert math.isclose(pe[p, 2 * i + 1], math.cos(p * omega), abs_tol=1e-6)


def test_tensor_positions_and_dtype():
    positions = torch.tensor([[3, 4], [5, 6]])
    pe = posenc.sinusoidal(positions, 6, dtype=torch.bfloat16)
    assert pe.shape == (2, 2, 6) and pe.dtype == torch.bfloat16
    torch.testing.assert_close(
        pe.float(), posenc.sinusoidal(7, 6)[3:7].view(2, 2, 6), atol=1e-2, rtol=0
    )


def shift_matrix(k, dim):
    """M_k: a block-diagonal rotation that depends only on the shift k."""
    pe_k = posenc.sinusoidal(torch.tensor([k]), dim, dtype=torch.float64)[0]
    sin_k, cos_k = pe_k[0::2], pe_k[1::2]
    matrix = torch.zeros(dim, dim, dtype=torch.float64)
    for i in range(dim // 2):
        # sin(a+b) = sin a cos b + cos a sin b;  cos(a+b) = cos a cos b − sin a sin b
        matrix[2 * i, 2 * i], matrix[2 * i, 2 * i + 1] = cos_k[i], sin_k[i]
        matrix[2 * i + 1, 2 * i], matrix[2 * i + 1, 2 * i + 1] = -sin_k[i], cos_k[i]
    return matrix


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2000), st.integers(0, 200))
def test_shift_is_a_fixed_linear_map(p, k):
    dim = 16
    pe = posenc.sinusoidal(torch.tensor([p, p + k]), dim, dtype=torch.float64)
    torch.testing.assert_close(shift_matrix(k, dim) @ pe[0], pe[1], atol=1e-4, rtol=0)


def test_module_adds_encoding_with_offset():
    module = posenc.SinusoidalPositionalEncoding(8)
    x = torch.zeros(2, 5, 8)
    torch.testing.assert_close(module(x, offset=3), posenc.sinusoidal(8, 8)[3:].expand(2, 5, 8))
    torch.testing.assert_close(module(x, torch.arange(3, 8)), module(x, offset=3))
