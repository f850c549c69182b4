"""KERPLE against a rewrite of the authors' released layers (chijames/KERPLE), and the shape of
its kernels."""

import pytest
import torch

import posenc
from tests.lib.references import kerple_released_forward, kerple_released_parameters


def _released_pair(module):
    """(bias_p, bias_a) of the released class holding the same values as ``module``."""
    r1, r2 = module.r1.detach().clone(), module.r2.detach().clone()
    p, a = (r1, r2) if module.kernel == "log" else (r2, r1)
    return p[:, None, None].requires_grad_(), a[:, None, None].requires_grad_()


@pytest.mark.parametrize("kernel", ["log", "power"])
@pytest.mark.parametrize("heads", [1, 4, 12])
def test_initial_values_are_the_released_draws(kernel, heads):
    torch.manual_seed(heads)
    bias_p, bias_a = kerple_released_parameters(heads, kernel)
    torch.manual_seed(heads)
    module = posenc.Kerple(heads, kernel=kernel)
    r1, r2 = (bias_p, bias_a) if kernel == "log" else (bias_a, bias_p)
    assert torch.equal(module.r1.data, r1.flatten()) and torch.equal(module.r2.data, r2.flatten())


@pytest.mark.parametrize("kernel", ["log", "power"])
@pytest.mark.parametrize(("heads", "seq"), [(1, 1), (3, 7), (8, 33)])
def test_bias_matches_the_released_forward(kernel, heads, seq):
    torch.manual_seed(seq)
    module = posenc.Kerple(heads, kernel=kernel)
    with torch.no_grad():  # some values below the clamp, some above 2: the projection runs
        module.r1.copy_(torch.rand(heads) * 3 - 0.5)
        module.r2.copy_(torch.rand(heads) * 3 - 0.5)
    bias_p, bias_a = _released_pair(module)
    scores = torch.randn(2, heads, seq, seq)
    expected = kerple_released_forward(scores, bias_p, bias_a, kernel)
    actual = scores + module(seq)
    torch.testing.assert_close(actual, expected, atol=0, rtol=0)
    # ... and the parameters were projected to the same values
    p, a = (module.r1, module.r2) if kernel == "log" else (module.r2, module.r1)
    assert torch.equal(p.data, bias_p.data.flatten()) and torch.equal(a.data, bias_a.data.flatten())


@pytest.mark.parametrize("kernel", ["log", "power"])
def test_one_decoding_query_is_the_released_last_row(kernel):
    torch.manual_seed(0)
    module = posenc.Kerple(4, kernel=kernel)
    bias_p, bias_a = _released_pair(module)
    scores = torch.randn(1, 4, 1, 9)
    expected = kerple_released_forward(scores, bias_p, bias_a, kernel)
    torch.testing.assert_close(scores + module(1, 9), expected, atol=0, rtol=0)
    # posenc's rule also serves chunks of queries: rows offset .. offset + q_len - 1
    full = module(9)
    torch.testing.assert_close(module(3, 9), full[:, -3:], atol=0, rtol=0)
    torch.testing.assert_close(module(3, 9, offset=2), full[:, 2:5], atol=0, rtol=0)


@pytest.mark.parametrize("kernel", ["log", "power"])
@pytest.mark.parametrize("causal", [True, False])
def test_zero_at_distance_zero_and_never_increasing_with_distance(kernel, causal):
    torch.manual_seed(1)
    r1 = torch.rand(6) * 2 + 0.01
    r2 = torch.rand(6) * 1.99 + 0.01
    bias = posenc.kerple_bias(40, r1=r1, r2=r2, kernel=kernel, causal=causal)
    assert (bias.diagonal(dim1=-2, dim2=-1) == 0).all()
    last_row = bias[:, -1]  # keys 0..39 seen from query 39: distance 39, 38, ..., 0
    assert (last_row.diff(dim=-1) >= 0).all()  # closer keys are penalised less
    assert (last_row[:, :-1] < 0).all()  # and every other key strictly
    first_row = bias[:, 0]  # keys after query 0
    if causal:
        assert (first_row == 0).all()  # distance max(i - j, 0): masked later anyway
    else:
        assert (first_row.diff(dim=-1) <= 0).all()  # |i - j| grows to the right too
        torch.testing.assert_close(bias, bias.transpose(-1, -2))


def test_power_kernel_with_exponent_one_is_alibi():
    slopes = posenc.alibi_slopes(8)
    kerple = posenc.kerple_bias(10, r1=slopes, r2=torch.ones(8), kernel="power")
    alibi = posenc.alibi_bias(8, 10)  # m·(j - i): equal on and below the diagonal
    torch.testing.assert_close(kerple.tril(), alibi.tril())
    assert not torch.allclose(kerple, alibi)  # above it ALiBi is positive, KERPLE 0


def test_log_kernel_values():
    bias = posenc.kerple_bias(3, r1=torch.tensor([2.0]), r2=torch.tensor([0.5]))
    expected = -2.0 * torch.log(1 + 0.5 * torch.tensor([2.0, 1.0, 0.0]))
    torch.testing.assert_close(bias[0, 2], expected)


@pytest.mark.parametrize("kernel", ["log", "power"])
def test_gradients_are_finite_and_a_shared_module_can_run_twice_before_backward(kernel):
    torch.manual_seed(2)
    module = posenc.Kerple(3, kernel=kernel)
    loss = module(6).sum() + module(6).pow(2).sum()  # two layers sharing one bias module
    loss.backward()
    assert torch.isfinite(module.r1.grad).all() and torch.isfinite(module.r2.grad).all()
    assert (module.r1.grad != 0).all() and (module.r2.grad != 0).all()


def test_projection_restarts_a_parameter_pushed_below_the_bound():
    module = posenc.Kerple(2, kernel="power")
    with torch.no_grad():
        module.r1.fill_(-1.0)
        module.r2.fill_(5.0)
    module(4)
    assert module.r1.tolist() == pytest.approx([0.01, 0.01])
    assert module.r2.tolist() == [2.0, 2.0]
    assert repr(module) == "Kerple(num_heads=2, kernel='power', causal=True)"
