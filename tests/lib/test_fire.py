"""FIRE against the implementation that circulates under the paper's name (no release by the
authors was found), and the properties of its normalised input."""

import math

import pytest
import torch

import posenc
from tests.lib.references import circulating_fire_bias


def _reference(module, seq):
    return circulating_fire_bias(
        seq, module.mlp, module.c, module.init_threshold, module.threshold_multiplier
    )[0]


@pytest.mark.parametrize(
    ("heads", "seq", "threshold", "c", "multiplier"),
    [
        (1, 1, 512.0, 0.1, 1.0),
        (4, 9, 4.0, 0.1, 1.0),  # queries on both sides of the threshold
        (12, 40, 16.0, -0.3, -0.5),  # negative c and multiplier: both used as |.|
        (2, 33, 512.0, 2.0, 1.0),
    ],
)
def test_matches_the_circulating_implementation_on_past_keys(heads, seq, threshold, c, multiplier):
    torch.manual_seed(seq)
    module = posenc.FIRE(heads, init_threshold=threshold)
    with torch.no_grad():
        module.c.fill_(c)
        module.threshold_multiplier.fill_(multiplier)
    actual, expected = module(seq), _reference(module, seq)
    past = torch.ones(seq, seq, dtype=torch.bool).tril()  # keys up to the query
    torch.testing.assert_close(actual[:, past], expected[:, past], atol=1e-6, rtol=1e-5)
    # keys after the query: f(0) here, as the query's own key (the causal mask removes them)
    with torch.no_grad():
        f0 = module.mlp(torch.zeros(1, 1))[0][:, None]  # (heads, 1)
    torch.testing.assert_close(actual[:, ~past], f0.expand(-1, int((~past).sum())))
    torch.testing.assert_close(actual.diagonal(dim1=1, dim2=2), f0.expand(-1, seq))


def test_decoding_rows_are_rows_of_the_full_bias():
    torch.manual_seed(0)
    module = posenc.FIRE(3, init_threshold=6.0)
    full = module(15)
    torch.testing.assert_close(module(1, 15), full[:, -1:], atol=0, rtol=0)
    torch.testing.assert_close(module(4, 15, offset=5), full[:, 5:9], atol=0, rtol=0)
    assert module(2, offset=7).shape == (3, 2, 9)


@pytest.mark.parametrize("offset", [0, 3, 700])
@pytest.mark.parametrize(("c", "threshold"), [(0.1, 512.0), (1.0, 1.0), (0.01, 20.0), (5.0, 3.0)])
def test_inputs_lie_in_the_unit_interval_and_vanish_at_distance_zero(offset, c, threshold):
    u = posenc.fire_inputs(30, offset=offset, c=c, threshold=threshold)
    assert u.shape == (30, 30 + offset)
    assert (u >= 0).all() and (u < 1).all()
    rows = torch.arange(30)
    assert (u[rows, rows + offset] == 0).all()  # each query's own position
    assert (u.diff(dim=-1) <= 0).all()  # farther keys (to the left) get larger inputs


def test_causal_earlier_rows_do_not_depend_on_the_length():
    # b(i, j) is a function of i and j alone: a longer sequence adds rows and columns but
    # changes none of the old ones (it would, if distances were divided by the length).
    torch.manual_seed(1)
    module = posenc.FIRE(4, init_threshold=5.0)
    long = module(25)
    for length in (1, 6, 17):
        torch.testing.assert_close(long[:, :length, :length], module(length), atol=0, rtol=0)


def test_the_first_key_is_always_at_the_far_end_once_past_the_threshold():
    # Progressive interpolation: for i >= L the farthest key maps to psi(i)/psi(i) ~ 1,
    # below the threshold to psi(i)/psi(L) < 1.
    c, threshold = 0.5, 6.0
    u = posenc.fire_inputs(40, c=c, threshold=threshold, eps=0.0)
    for i in range(40):
        expected = math.log1p(c * i) / math.log1p(c * max(threshold, i))
        assert float(u[i, 0]) == pytest.approx(expected, rel=1e-6)
    assert (u[6:, 0] == 1).all() and (u[:6, 0] < 1).all()


def test_tensor_parameters_carry_gradients_and_dtype():
    c = torch.tensor(0.2, dtype=torch.float64, requires_grad=True)
    threshold = torch.tensor(4.0, dtype=torch.float64, requires_grad=True)
    u = posenc.fire_inputs(10, c=c, threshold=threshold)
    assert u.dtype == torch.float64
    u.sum().backward()
    assert c.grad != 0 and threshold.grad != 0  # queries below L = 4 see the threshold


def test_module_parameters_and_repr():
    module = posenc.FIRE(6, hidden_layers=2, mlp_width=8)
    assert [type(m).__name__ for m in module.mlp] == [
        "Linear", "ReLU", "Linear", "ReLU", "Linear",
    ]  # fmt: skip
    assert module.c.item() == pytest.approx(0.1) and module.threshold.item() == 512.0
    assert set(dict(module.named_parameters())) >= {"c", "threshold_multiplier"}
    assert "init_threshold" in dict(module.named_buffers())
    assert repr(module).startswith("FIRE(\n  num_heads=6, mlp_width=8, hidden_layers=2")
    bias = module(5)
    assert bias.shape == (6, 5, 5)
    bias.sum().backward()
    assert module.c.grad is not None and module.threshold_multiplier.grad is not None
