"""The shared checks (posenc._checks): the one rule for lengths and offsets, what counts as a
finite number, no reading of tensor values off the CPU, and the argument order."""

import inspect
import math

import pytest
import torch

import posenc
from posenc import _checks


@pytest.mark.parametrize(
    ("q_len", "k_len", "offset", "expected"),
    [
        (3, None, None, (3, 3, 0)),
        (3, 7, None, (3, 7, 4)),  # the queries are the last 3 keys
        (3, None, 4, (3, 7, 4)),  # the keys end with the last query
        (3, 5, 1, (3, 5, 1)),  # both given: as they are
        (0, 4, None, (0, 4, 4)),
    ],
)
def test_lengths_follow_one_rule(q_len, k_len, offset, expected):
    assert _checks.resolve_lengths(q_len, k_len, offset) == expected


def test_numbers_must_be_finite_and_within_bounds():
    assert _checks.check_number("x", 2, above=1) == 2.0
    for bad in (math.inf, -math.inf, math.nan, 1.0):
        with pytest.raises(ValueError, match=r"^x must be a finite number > 1, got"):
            _checks.check_number("x", bad, above=1)
    with pytest.raises(TypeError, match=r"^x must be a finite number > 1, got bool True"):
        _checks.check_number("x", True, above=1)
    assert _checks.check_number("x", 0.5, above=0, at_most=1) == 0.5


def test_values_are_read_on_cpu_only():
    # A meta tensor has no values: checking it must not try to read them.
    negative = torch.tensor([-1, 2], device="meta")
    assert _checks.check_positions("positions", negative) is negative
    with pytest.raises(ValueError, match="positions must be >= 0, got a minimum of -1"):
        _checks.check_positions("positions", torch.tensor([-1, 2]))


def test_devices_without_an_index_are_the_current_one():
    assert _checks.same_device(torch.device("cpu"), torch.device("cpu"))
    assert not _checks.same_device(torch.device("cpu"), torch.device("meta"))
    with pytest.raises(ValueError, match=r"^k must be on q's device \(cpu\), got meta"):
        _checks.check_on_device("k", torch.empty(1, device="meta"), torch.device("cpu"), "q's")


def test_base_is_positional_after_the_sizes_and_the_rest_keyword_only():
    # The "Arguments" convention of the package docstring, over every public callable.
    flags = {"causal", "bidirectional", "compiled", "keep_longest"}
    checked = 0
    for name in posenc.__all__:
        try:
            parameters = list(inspect.signature(getattr(posenc, name)).parameters.values())
        except (TypeError, ValueError):  # constants, enums
            continue
        names = [p.name for p in parameters]
        if "base" in names:
            at = names.index("base")
            assert parameters[at].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, name
            assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[at + 1 :]), name
            checked += 1
        for p in parameters:
            if p.name in flags:
                assert p.kind is inspect.Parameter.KEYWORD_ONLY, (name, p.name)
    assert checked >= 6  # sinusoidal, SinusoidalPositionalEncoding, RotaryEmbedding, ...
