"""The fast forms of the rotation (posenc.rope_kernels) against the formula: every eager path,
gradients, memory written, and the kernel torch.compile generates for q and k."""

import math
import os
import re
import subprocess
import sys

import pytest
import torch
from transformers.models.gptj import modeling_gptj
from transformers.models.llama import modeling_llama

import posenc
from posenc import rope_kernels

ATOL = 1e-6


def hf_formula(x, cos, sin, layout):
    """The textbook form, with transformers' own rotations (Llama: half, GPT-J: interleaved)."""
    rotate = modeling_llama.rotate_half if layout == "half" else modeling_gptj.rotate_every_two
    return x * cos + rotate(x) * sin


def inputs_taking_each_path(dtype=torch.float64):
    """x as the complex form takes it (contiguous, transposed) and as it cannot (odd offset)."""
    gen = torch.Generator().manual_seed(0)
    wide = torch.randn(2, 3, 5, 9, generator=gen).to(dtype)
    return {
        "contiguous": torch.randn(2, 3, 5, 8, generator=gen).to(dtype),
        "transposed": torch.randn(2, 5, 3, 8, generator=gen).to(dtype).transpose(1, 2),
        "odd offset": wide[..., 1:],  # pairs not aligned: the real form, also for interleaved
    }


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_gradients_match_the_textbook_formula(layout):
    inv_freq = posenc.default_inv_freq(8).double().requires_grad_()
    for name, x in inputs_taking_each_path().items():
        x = x.requires_grad_()
        results = []
        for rotate in (posenc.apply_rotary, lambda *args, layout: hf_formula(*args, layout)):
            cos, sin = posenc.rotary_cos_sin(
                torch.arange(3, 8), inv_freq, layout=layout, dtype=torch.float64
            )
            out = rotate(x, cos, sin, layout=layout)
            weights = torch.linspace(-1, 1, out.numel(), dtype=out.dtype).view_as(out)
            results.append((out, *torch.autograd.grad((out * weights).sum(), (x, inv_freq))))
        (out, grad_x, grad_freq), (hf_out, hf_grad_x, hf_grad_freq) = results
        torch.testing.assert_close(out, hf_out, atol=1e-12, rtol=0, msg=name)
        torch.testing.assert_close(grad_x, hf_grad_x, atol=1e-12, rtol=0, msg=name)
        # the angles are float32 (see rotary_cos_sin), so this gradient is float32-accurate
        scale = hf_grad_freq.abs().max().item()
        torch.testing.assert_close(grad_freq, hf_grad_freq, atol=1e-6 * scale, rtol=0, msg=name)
        tables = (cos.detach(), sin.detach())
        assert torch.autograd.gradcheck(
            lambda x, tables=tables: posenc.apply_rotary(x, *tables, layout=layout), (x,)
        ), name


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_every_path_matches_the_textbook_formula(layout, dtype):
    cos, sin = posenc.RotaryEmbedding(8, layout=layout).cos_sin(5)
    for name, x in inputs_taking_each_path(dtype).items():
        expected = hf_formula(x.float(), cos, sin, layout)  # same rounded inputs, float32 math
        actual = posenc.apply_rotary(x, cos, sin, layout=layout)
        assert actual.dtype == dtype and actual.shape == x.shape
        tol = ATOL if dtype == torch.float32 else 1e-2
        torch.testing.assert_close(actual.float(), expected, atol=tol, rtol=tol, msg=name)


class BytesWritten(torch.utils._python_dispatch.TorchDispatchMode):
    """Count the bytes of every tensor an operator returns (views excepted)."""

    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if not func.is_view:
            outputs = result if isinstance(result, (tuple, list)) else [result]
            self.bytes += sum(t.nbytes for t in outputs if isinstance(t, torch.Tensor))
        return result


@pytest.mark.parametrize(("layout", "at_most"), [("half", 2.0), ("interleaved", 1.0)])
def test_rotation_writes_little_more_than_its_output(layout, at_most):
    # RoPE is limited by memory traffic: x * cos + rot(x) * sin writes 4.5 times the size of x.
    x = torch.randn(2, 4, 64, 32)
    cos, sin = posenc.rotary_cos_sin(torch.arange(64), posenc.default_inv_freq(32), layout=layout)
    with BytesWritten() as written:
        posenc.apply_rotary(x, cos, sin, layout=layout)
    table = 2 * cos.nbytes  # the interleaved form builds one complex table, cos + i sin
    assert written.bytes <= at_most * x.nbytes + table
    with BytesWritten() as textbook:
        hf_formula(x, cos, sin, layout)
    assert textbook.bytes >= 4 * x.nbytes


def test_interleaved_layout_compiles_without_complex_numbers():
    # inductor generates no code for complex operators (it warns and falls back to eager ones)
    torch._dynamo.reset()
    traced = []

    def backend(graph, example_inputs):
        traced.extend(str(node.target) for node in graph.graph.nodes)
        return graph.forward

    rope = posenc.RotaryEmbedding(8, layout="interleaved")
    q = torch.randn(1, 2, 5, 8)
    compiled = torch.compile(lambda q: rope(q, q), fullgraph=True, backend=backend)
    torch.testing.assert_close(compiled(q), rope(q, q), atol=ATOL, rtol=0)
    assert traced and not [target for target in traced if "complex" in target]


# ── RotaryEmbedding(kernel="compiled"): one generated kernel for q and k ────────


@pytest.fixture
def fresh_compiler():
    # Each test compiles its own variants; a shared cache would count them all against
    # torch's limit of 8 recompilations per function.
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_compiled_rotation_matches_eager_in_every_call_form(layout, fresh_compiler):
    # partial rotary (12 of 16 channels), grouped-query keys, offsets, per-row positions,
    # and a decoding step of length 1: each form gives exactly what the eager ops give
    eager = posenc.RotaryEmbedding(16, layout=layout, rotary_dim=12)
    compiled = posenc.RotaryEmbedding(16, layout=layout, rotary_dim=12, kernel="compiled")
    q, k = torch.randn(2, 4, 7, 16), torch.randn(2, 2, 7, 16)
    per_row = torch.tensor([[0, 1, 2, 3, 4, 5, 6], [0, 0, 0, 1, 2, 3, 4]])
    # as a model makes them: a (batch, seq, heads, head_dim) projection seen as (b, h, s, d)
    q_from_projection = torch.randn(2, 7, 4, 16).transpose(1, 2)
    for args, kwargs in [
        ((q, k), {}),
        ((q, k), {"offset": 5}),
        ((q, k, per_row), {}),
        ((q[:, :, -1:], k[:, :, -1:]), {"offset": 7}),
        ((q_from_projection, k), {}),
        ((q.double(), k), {}),  # each tensor keeps its own dtype
    ]:
        for got, want in zip(compiled(*args, **kwargs), eager(*args, **kwargs), strict=True):
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want, atol=ATOL, rtol=0)


def test_compiled_rotation_rounds_bfloat16_no_worse_than_eager(fresh_compiler):
    # The kernel computes in float32 and rounds once; the eager ops round after each op.
    rope = posenc.RotaryEmbedding(64)
    compiled = posenc.RotaryEmbedding(64, kernel="compiled")
    q = torch.randn(1, 4, 64, 64).bfloat16()
    exact, _ = rope(q.double(), q.double(), offset=4000)
    got, _ = compiled(q, q, offset=4000)
    eager, _ = rope(q, q, offset=4000)
    assert got.dtype == torch.bfloat16
    assert (got.double() - exact).abs().max() <= (eager.double() - exact).abs().max() * 1.25


def test_compiled_rotation_gradients_match_eager(fresh_compiler):
    q = torch.randn(1, 2, 6, 8, dtype=torch.float64, requires_grad=True)
    k = torch.randn(1, 2, 6, 8, dtype=torch.float64, requires_grad=True)
    upstream = torch.randn(2, 1, 2, 6, 8, dtype=torch.float64)
    grads = []
    for kernel in ("eager", "compiled"):
        out_q, out_k = posenc.RotaryEmbedding(8, kernel=kernel)(q, k)
        grads.append(torch.autograd.grad((out_q, out_k), (q, k), tuple(upstream)))
    for got, want in zip(grads[1], grads[0], strict=True):
        torch.testing.assert_close(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_compiled_rotation_is_one_kernel_writing_only_the_outputs(layout, dtype, fresh_compiler):
    # The claim behind the speed: one loop reads q and k and writes each result once. In the
    # code inductor generates that is one kernel and no buffer besides the two outputs, in
    # either layout and also in bfloat16, where eager posenc needs two passes in both layouts.
    from torch._inductor.utils import run_and_get_code

    rope = posenc.RotaryEmbedding(16, layout=layout, kernel="compiled")
    q, k = torch.randn(2, 4, 5, 16, dtype=dtype), torch.randn(2, 2, 5, 16, dtype=dtype)
    _, sources = run_and_get_code(rope, q, k)
    code = "\n".join(sources)
    kernels = re.findall(r"^(\w+) = async_compile\.", code, flags=re.MULTILINE)
    buffers = re.findall(r"empty_strided_cpu\(\(([\d, ]+)\)", code)
    assert len(kernels) == 1, kernels
    assert sorted(math.prod(map(int, b.split(","))) for b in buffers) == [k.numel(), q.numel()]


def test_compiled_kernel_is_harmless_inside_a_compiled_model(fresh_compiler):
    # Under an outer torch.compile the module uses the eager form, which the outer compiler
    # fuses itself (no nested compile).
    rope = posenc.RotaryEmbedding(8, kernel="compiled")
    q = torch.randn(1, 2, 5, 8)
    outer = torch.compile(lambda q: rope(q, q), fullgraph=True, backend="eager")
    torch.testing.assert_close(outer(q), posenc.RotaryEmbedding(8)(q, q))


def test_compiled_rotation_without_a_compiler_names_the_way_out(tmp_path):
    # A fresh process with a fresh inductor cache and no usable C++ compiler.
    script = """
import torch, posenc
torch._inductor.config.cpp.cxx = ("/nonexistent/c++",)
q = torch.randn(1, 2, 5, 8)
try:
    posenc.RotaryEmbedding(8, kernel="compiled")(q, q)
except RuntimeError as error:
    print("RuntimeError:", error)
"""
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path), "CXX": "/nonexistent/c++"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert "RuntimeError: RotaryEmbedding(kernel='compiled') could not compile" in done.stdout, (
        done.stdout + done.stderr
    )
    assert "kernel='eager'" in done.stdout


def test_compiled_rotation_takes_any_length_after_the_first_change(fresh_compiler):
    # After one change of sequence length torch.compile makes that dimension dynamic, so a
    # decoding loop (one new length per step) does not compile again at every step.
    rope = posenc.RotaryEmbedding(8, kernel="compiled")
    for seq in (5, 6):
        rope(torch.randn(1, 2, seq, 8), torch.randn(1, 2, seq, 8))
    with torch._dynamo.config.patch(error_on_recompile=True):
        for seq in (7, 9, 30):
            rope(torch.randn(1, 2, seq, 8), torch.randn(1, 2, seq, 8))


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_compiled_pairs_form_equals_the_reference_rotation(layout):
    # rotate_pairs, the form written for the compiler, run eagerly: one table entry per pair
    x = torch.randn(2, 3, 5, 8, dtype=torch.float64)
    cos, sin = posenc.rotary_cos_sin(
        torch.arange(5), posenc.default_inv_freq(8), layout=layout, dtype=torch.float64
    )
    pair = slice(0, 4) if layout == "half" else slice(0, None, 2)
    expected = posenc.rotate_reference(x, cos, sin, layout=layout)
    actual = rope_kernels.rotate_pairs(x, cos[..., pair], sin[..., pair], layout)
    torch.testing.assert_close(actual, expected, atol=1e-12, rtol=0)
