"""posenc.rope_triton: the Triton RoPE kernel equals posenc's rotation in every call form.

Without a GPU the kernel runs in Triton's interpreter (TRITON_INTERPRET=1, which
tests/conftest.py sets before anything defines a kernel); on a CUDA machine the compiled
kernel runs on the device, and ``pytest -m gpu`` selects those runs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import posenc
from posenc import rope_triton

pytestmark = pytest.mark.skipif(rope_triton.triton is None, reason="Triton is not installed")


def _expected(q, k, positions, inv_freq, layout, factor):
    """posenc's own rotation of the same tokens, in float64 (the kernel computes in float32)."""
    cos, sin = posenc.rotary_cos_sin(
        positions.cpu(), inv_freq.cpu(), layout=layout, attention_factor=factor,
        dtype=torch.float64,
    )  # fmt: skip
    if positions.ndim == 2:
        cos, sin = cos[:, None], sin[:, None]
    return tuple(posenc.apply_rotary(x.cpu().double(), cos, sin, layout=layout) for x in (q, k))


CASES = {  # name: (heads, kv_heads, seq, head_dim, rotary_dim, per-row positions, factor)
    "full": (4, 4, 9, 32, 32, False, 1.0),
    "gqa, per-row positions": (6, 2, 7, 16, 16, True, 1.0),
    "partial rotary": (2, 1, 5, 24, 8, False, 1.0),
    "yarn factor, odd pairs": (3, 3, 6, 20, 12, True, 1.1),
}


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_kernel_equals_posenc_rotation(device, case, layout, dtype):
    heads, kv_heads, seq, head_dim, rotary_dim, per_row, factor = CASES[case]
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(2, heads, seq, head_dim, generator=generator).to(device, dtype)
    k = torch.randn(2, kv_heads, seq, head_dim, generator=generator).to(device, dtype)
    if per_row:  # left padding: each batch row starts elsewhere
        positions = torch.stack((torch.arange(seq), torch.arange(seq) + 1000))
    else:
        positions = torch.arange(seq) + 4090
    positions = positions.to(device)
    inv_freq, _ = posenc.rope_inv_freq(rotary_dim)
    inv_freq = inv_freq.to(device)
    got_q, got_k = rope_triton.rotate_qk(
        q, k, positions, inv_freq, layout=layout, attention_factor=factor
    )
    want_q, want_k = _expected(q, k, positions, inv_freq, layout, factor)
    assert got_q.dtype == got_k.dtype == dtype and got_q.device == q.device
    # float32: the same float32 angles as rotary_cos_sin, cos and sin within an ulp or two;
    # half precisions: one rounding of the result
    tolerance = {"atol": 2e-5, "rtol": 2e-5} if dtype == torch.float32 else {
        "atol": 2 * torch.finfo(dtype).eps * 4, "rtol": 2 * torch.finfo(dtype).eps}  # fmt: skip
    torch.testing.assert_close(got_q.cpu().double(), want_q, **tolerance)
    torch.testing.assert_close(got_k.cpu().double(), want_k, **tolerance)
    if rotary_dim < head_dim:  # passed through bit for bit
        assert torch.equal(got_q[..., rotary_dim:], q[..., rotary_dim:])


def test_kernel_reads_any_strides(device):
    """q and k as attention projections leave them: (batch, seq, heads, dim) transposed."""
    generator = torch.Generator().manual_seed(1)
    qkv = torch.randn(2, 5, 3, 4, 16, generator=generator).to(device)  # (b, s, q/k/v, h, d)
    q, k = qkv[:, :, 0].transpose(1, 2), qkv[:, :, 1].transpose(1, 2)
    assert not q.is_contiguous()
    positions = torch.arange(5, device=device)
    inv_freq = posenc.rope_inv_freq(16)[0].to(device)
    got_q, got_k = rope_triton.rotate_qk(q, k, positions, inv_freq)
    want_q, want_k = _expected(q, k, positions, inv_freq, "half", 1.0)
    torch.testing.assert_close(got_q.cpu().double(), want_q, atol=2e-5, rtol=2e-5)
    torch.testing.assert_close(got_k.cpu().double(), want_k, atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda q, p, f: rope_triton.rotate_qk(q, q.double(), p, f), TypeError, "same"),
        (lambda q, p, f: rope_triton.rotate_qk(q, q, p[:3], f), ValueError, "positions"),
        (lambda q, p, f: rope_triton.rotate_qk(q, q, p.float(), f), TypeError, "positions"),
        (lambda q, p, f: rope_triton.rotate_qk(q, q, p, torch.ones(9)), ValueError, "inv_freq"),
        (lambda q, p, f: rope_triton.rotate_qk(q, q, p, f, layout="neox"), ValueError, "layout"),
        (
            lambda q, p, f: rope_triton.rotate_qk(q, q, p, f, attention_factor=0),
            ValueError,
            "attention_factor",
        ),
    ],
    ids=["dtypes differ", "short positions", "float positions", "wide inv_freq", "layout",
         "factor 0"],
)  # fmt: skip
def test_bad_input_names_the_argument(call, error, match):
    q = torch.randn(1, 2, 5, 16)
    with pytest.raises(error, match=match):
        call(q, torch.arange(5), posenc.rope_inv_freq(16)[0])


# ── behind posenc's own calls: apply_rotary(kernel=...) and RotaryEmbedding(kernel=...) ──


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize(
    "table_shape",
    [(5, 12), (2, 1, 5, 12), (1, 3, 5, 12), (5, 16)],
    ids=["shared", "per batch row", "per head", "full width"],
)
def test_apply_rotary_kernels_agree(device, layout, table_shape):
    """Tables broadcast as apply_rotary allows (read with stride 0, never copied), partial
    rotary where the table is narrower than x."""
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(2, 3, 5, 16, generator=generator).to(device)
    angles = torch.rand(table_shape[:-1] + (table_shape[-1] // 2,), generator=generator) * 6
    cos, sin = posenc.rope._cos_sin_from_angles(angles, layout, 1.0, torch.float32)
    cos, sin = cos.to(device), sin.to(device)
    want = posenc.apply_rotary(x, cos, sin, layout=layout, kernel="eager")
    got = posenc.apply_rotary(x, cos, sin, layout=layout, kernel="triton")
    torch.testing.assert_close(got, want, atol=2e-6, rtol=2e-6)


LONGROPE = {
    "rope_type": "longrope",
    "short_factor": [1.0] * 8,
    "long_factor": [1.0 + i for i in range(8)],
    "original_max_position_embeddings": 8,
}
ROPE_FORMS = {  # name: (RotaryEmbedding kwargs, call kwargs)
    "offset": ({}, {"offset": 7}),
    "per-row positions": ({}, {"positions": torch.tensor([[0, 1, 2, 3, 4], [9, 10, 11, 12, 13]])}),
    "partial rotary": ({"scaling": {"partial_rotary_factor": 0.5}}, {}),
    "yarn": (
        {"scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8}},
        {"offset": 30},
    ),
    "dynamic, seq_len": (
        {"scaling": {"rope_type": "dynamic", "factor": 2.0}, "max_position_embeddings": 8},
        {"offset": 20, "seq_len": 40},
    ),
    "longrope past the trained length": (
        {"scaling": LONGROPE, "max_position_embeddings": 32},
        {"offset": 10},
    ),
}


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("form", list(ROPE_FORMS))
def test_rotary_embedding_kernels_agree(device, form, layout):
    """Every call form of the module, through the Triton kernel (angles from positions, no
    table) and through the eager operators (tables): grouped-query keys throughout."""
    module_kwargs, call_kwargs = ROPE_FORMS[form]
    generator = torch.Generator().manual_seed(3)
    q = torch.randn(2, 4, 5, 16, generator=generator).to(device)
    k = torch.randn(2, 2, 5, 16, generator=generator).to(device)
    kwargs = {name: value.to(device) if isinstance(value, torch.Tensor) else value
              for name, value in call_kwargs.items()}  # fmt: skip
    eager = posenc.RotaryEmbedding(16, layout=layout, kernel="eager", **module_kwargs).to(device)
    triton_ = posenc.RotaryEmbedding(16, layout=layout, kernel="triton", **module_kwargs)
    for got, want in zip(triton_.to(device)(q, k, **kwargs), eager(q, k, **kwargs), strict=True):
        torch.testing.assert_close(got, want, atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("kernel", ["module", "apply_rotary"])
def test_kernel_gradients_match_eager(device, kernel):
    """The kernel has a backward pass (the rotation by the opposite angle), so training on
    CUDA with the default kernel gets the gradients eager operators give; an output that
    reaches no loss (k's here, for the module) leaves its input without a gradient."""
    generator = torch.Generator().manual_seed(4)
    q0 = torch.randn(1, 4, 6, 16, generator=generator).to(device)
    k0 = torch.randn(1, 2, 6, 16, generator=generator).to(device)
    upstream = torch.randn(1, 4, 6, 16, generator=generator).to(device)
    grads = {}
    for name in ("eager", "triton"):
        q, k = q0.clone().requires_grad_(), k0.clone().requires_grad_()
        rope = posenc.RotaryEmbedding(16, scaling={"partial_rotary_factor": 0.75}, kernel=name)
        rope = rope.to(device)
        if kernel == "module":
            out_q, _ = rope(q, k, offset=3)
        else:
            cos, sin = rope.cos_sin(6, offset=3, device=device)
            out_q = posenc.apply_rotary(q, cos, sin, kernel=name)
        (out_q * upstream).sum().backward()
        grads[name] = q.grad
        assert k.grad is None
    torch.testing.assert_close(grads["triton"], grads["eager"], atol=2e-6, rtol=2e-6)


def test_kernel_rounds_once_in_half_precision(device):
    """Computed in float32 and rounded once: in float16 the kernel's error is that of the exact
    rotation rounded to float16, the least any float16 result can have. (float16, not
    bfloat16: Triton's interpreter converts float32 to bfloat16 by truncating, where a GPU
    rounds to nearest, so on a CPU only float16 shows the kernel's own rounding.)"""
    generator = torch.Generator().manual_seed(6)
    q = torch.randn(1, 4, 128, 32, generator=generator).to(device, torch.float16)
    exact, _ = posenc.RotaryEmbedding(32, kernel="eager")(q.double(), q.double(), offset=5000)
    got, _ = posenc.RotaryEmbedding(32, kernel="triton")(q, q, offset=5000)
    eager, _ = posenc.RotaryEmbedding(32, kernel="eager")(q, q, offset=5000)
    best = (exact.half().double() - exact).abs().mean()
    assert (got.double() - exact).abs().mean() <= best * 1.001
    assert (eager.double() - exact).abs().mean() > best * 1.2  # rounding at each step costs


def test_auto_kernel_is_eager_on_cpu_and_triton_on_cuda(device):
    """What ``kernel="auto"`` (the default) runs: in bfloat16 the two kernels round
    differently (the Triton kernel once at the end, the eager operators at each step), so
    bit equality tells which one ran."""
    generator = torch.Generator().manual_seed(5)
    q = torch.randn(1, 4, 64, 32, generator=generator).to(device, torch.bfloat16)
    default = posenc.RotaryEmbedding(32)(q, q, offset=5000)[0]
    eager = posenc.RotaryEmbedding(32, kernel="eager")(q, q, offset=5000)[0]
    triton_ = posenc.RotaryEmbedding(32, kernel="triton")(q, q, offset=5000)[0]
    assert not torch.equal(eager, triton_)  # else this test could not tell them apart
    assert torch.equal(default, eager if device == "cpu" else triton_)


def test_apply_rotary_with_the_kernel_names_x_in_its_errors():
    x, table = torch.randn(1, 1, 2, 4, dtype=torch.float64), torch.ones(2, 4)
    with pytest.raises(TypeError, match="^x must be float32, bfloat16 or float16"):
        posenc.apply_rotary(x, table, table, kernel="triton")


def test_tables_that_require_grad_are_refused_by_the_kernel():
    x, table = torch.randn(1, 1, 2, 4), torch.ones(2, 4, requires_grad=True)
    with pytest.raises(ValueError, match="kernel='eager'"):
        posenc.apply_rotary(x, table, table, kernel="triton")


def test_triton_kernel_on_a_cpu_tensor_names_the_way_out():
    # A fresh process without the interpreter: a CPU tensor gets a clear error.
    script = (
        "import torch, posenc\n"
        "x = torch.ones(1, 1, 2, 8)\n"
        "try:\n"
        "    posenc.RotaryEmbedding(8, kernel='triton')(x, x)\n"
        "except ValueError as error:\n"
        "    print('ValueError:', error)\n"
    )  # fmt: skip
    env = {name: value for name, value in os.environ.items() if name != "TRITON_INTERPRET"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert "ValueError: q must be on a CUDA device for the Triton kernel" in done.stdout, (
        done.stdout + done.stderr
    )
