"""RoPE: equivalence with transformers (Llama, GPT-NeoX, GPT-J), properties, precision, caching,
gradients, memory traffic, the compiled kernel."""

import math
import os
import re
import subprocess
import sys

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.gpt_neox import modeling_gpt_neox
from transformers.models.gptj import modeling_gptj
from transformers.models.llama import modeling_llama

import posenc

ATOL = 1e-6
PROPERTY = settings(max_examples=25, deadline=None)


def hf_llama_cos_sin(head_dim, positions, base=10000.0):
    config = LlamaConfig(
        hidden_size=head_dim * 2, num_attention_heads=2, head_dim=head_dim,
        rope_parameters={"rope_type": "default", "rope_theta": base},
    )  # fmt: skip
    rotary = modeling_llama.LlamaRotaryEmbedding(config)
    return rotary(torch.zeros(1), positions)


def test_half_layout_matches_llama():
    torch.manual_seed(0)
    q, k = torch.randn(2, 4, 33, 64), torch.randn(2, 4, 33, 64)
    positions = torch.stack([torch.arange(33), torch.arange(100, 133)])  # (batch, seq)
    cos, sin = hf_llama_cos_sin(64, positions, base=500000.0)
    expected = modeling_llama.apply_rotary_pos_emb(q, k, cos, sin)
    actual = posenc.RotaryEmbedding(64, base=500000.0)(q, k, positions)
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=0)


def test_cos_sin_tables_match_llama_bit_for_bit():
    positions = torch.arange(4096)[None]
    cos, sin = hf_llama_cos_sin(128, positions)
    ours = posenc.RotaryEmbedding(128).cos_sin(4096)
    assert torch.equal(ours[0], cos[0]) and torch.equal(ours[1], sin[0])


def test_partial_rotary_matches_gpt_neox():
    torch.manual_seed(0)
    head_dim, rotary_dim = 32, 8  # partial_rotary_factor = 0.25 (Pythia)
    q, k = torch.randn(2, 4, 17, head_dim), torch.randn(2, 4, 17, head_dim)
    positions = torch.arange(17)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, rotary_dim, 2).float() / rotary_dim))
    freqs = positions[None, :, None].float() * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    expected = modeling_gpt_neox.apply_rotary_pos_emb(q, k, emb.cos(), emb.sin())
    actual = posenc.RotaryEmbedding(head_dim, rotary_dim=rotary_dim)(q, k)
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=0)
    assert torch.equal(actual[0][..., rotary_dim:], q[..., rotary_dim:])


@pytest.mark.parametrize("rotary_dim", [None, 16])
def test_interleaved_layout_matches_gptj(rotary_dim):
    torch.manual_seed(0)
    head_dim, seq = 32, 21
    rot = rotary_dim or head_dim
    q = torch.randn(2, 3, seq, head_dim)
    positions = torch.arange(seq)[None].expand(2, seq)
    table = modeling_gptj.create_sinusoidal_positions(64, rot)
    sin, cos = torch.split(table[positions], rot // 2, dim=-1)
    q_gptj = q.transpose(1, 2)  # GPT-J works in (batch, seq, heads, dim)
    rotated = modeling_gptj.apply_rotary_pos_emb(q_gptj[..., :rot], sin, cos)
    expected = torch.cat((rotated, q_gptj[..., rot:]), dim=-1).transpose(1, 2)
    rope = posenc.RotaryEmbedding(head_dim, layout="interleaved", rotary_dim=rotary_dim)
    actual, _ = rope(q, q, positions)
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=0)


def test_interleaved_matches_complex_multiplication():
    # Meta's llama: pairs (2i, 2i+1) are complex numbers multiplied by e^{i m θ_i}.
    torch.manual_seed(0)
    x = torch.randn(1, 2, 9, 16)
    inv_freq = posenc.default_inv_freq(16)
    freqs_cis = torch.polar(torch.ones(9, 8), torch.outer(torch.arange(9).float(), inv_freq))
    expected = torch.view_as_real(
        torch.view_as_complex(x.reshape(1, 2, 9, 8, 2)) * freqs_cis
    ).flatten(-2)
    actual, _ = posenc.RotaryEmbedding(16, layout="interleaved")(x, x)
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=0)


def tiny_llama(seed=0):
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )  # fmt: skip
    config._attn_implementation = "eager"
    return LlamaForCausalLM(config).eval()


def use_posenc_rope(monkeypatch, model, rope):
    """Make the model's attention call posenc's RoPE with the position ids instead of HF's."""

    class PositionIds(torch.nn.Module):
        def forward(self, x, position_ids):
            return position_ids, position_ids

    model.model.rotary_emb = PositionIds()
    monkeypatch.setattr(
        modeling_llama, "apply_rotary_pos_emb", lambda q, k, cos, sin: rope(q, k, positions=cos)
    )


def test_tiny_llama_same_logits_with_posenc_rope(monkeypatch):
    model = tiny_llama()
    ids = torch.randint(0, 97, (2, 19))
    with torch.no_grad():
        expected = model(ids).logits
        use_posenc_rope(monkeypatch, model, posenc.RotaryEmbedding(16))
        actual = model(ids).logits
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=0)


def test_interleaved_with_permuted_weights_gives_same_logits(monkeypatch):
    model = tiny_llama()
    ids = torch.randint(0, 97, (1, 23))
    with torch.no_grad():
        expected = model(ids).logits  # half layout, original weights
        # A checkpoint in interleaved layout holds the rows in the inverse order.
        to_interleaved = torch.argsort(posenc.interleaved_to_half_permutation(16))
        for layer in model.model.layers:
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj):
                rows = proj.weight.view(-1, 16, 64)
                proj.weight.copy_(rows[:, to_interleaved].reshape(-1, 64))
        use_posenc_rope(monkeypatch, model, posenc.RotaryEmbedding(16, layout="interleaved"))
        actual = model(ids).logits
    torch.testing.assert_close(actual, expected, atol=1e-6, rtol=0)


def test_permutation_maps_interleaved_pairs_to_halves():
    assert posenc.interleaved_to_half_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]


def test_positions_forms_agree_and_offset_means_cache():
    torch.manual_seed(0)
    rope = posenc.RotaryEmbedding(16)
    q, k = torch.randn(2, 4, 5, 16), torch.randn(2, 1, 5, 16)  # GQA: one kv head
    by_offset = rope(q, k, offset=7)
    by_vector = rope(q, k, torch.arange(7, 12))
    by_batch = rope(q, k, torch.arange(7, 12).expand(2, 5))
    for other in (by_vector, by_batch):
        torch.testing.assert_close(other, by_offset, atol=0, rtol=0)


def test_left_padding_positions_per_row():
    torch.manual_seed(0)
    rope = posenc.RotaryEmbedding(8)
    q = torch.randn(2, 1, 4, 8)
    positions = torch.tensor([[0, 0, 0, 1], [0, 1, 2, 3]])  # row 0 left-padded by two
    out, _ = rope(q, q, positions)
    single, _ = rope(q[:1, :, 2:], q[:1, :, 2:])
    torch.testing.assert_close(out[:1, :, 2:], single, atol=0, rtol=0)


vectors = st.integers(0, 2**31 - 1).map(lambda seed: torch.randn(
    2, 16, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))  # fmt: skip


def rotate(x, position, layout="half", inverse=False):
    cos, sin = posenc.rotary_cos_sin(
        torch.tensor([position]), posenc.default_inv_freq(16), layout=layout
    )
    return posenc.apply_rotary(x.float(), cos, -sin if inverse else sin, layout=layout)


@PROPERTY
@given(vectors, st.integers(0, 5000), st.sampled_from(["half", "interleaved"]))
def test_rotation_keeps_norm(x, position, layout):
    torch.testing.assert_close(rotate(x, position, layout).norm(dim=-1), x.float().norm(dim=-1))


@PROPERTY
@given(vectors, st.integers(0, 2000), st.integers(0, 2000), st.integers(0, 2000))
def test_scores_depend_only_on_offset(qk, m, n, shift):
    q, k = qk[0:1], qk[1:2]
    score = (rotate(q, m) * rotate(k, n)).sum()
    shifted = (rotate(q, m + shift) * rotate(k, n + shift)).sum()
    torch.testing.assert_close(shifted, score, atol=2e-3, rtol=0)


@PROPERTY
@given(vectors, st.integers(0, 100000), st.sampled_from(["half", "interleaved"]))
def test_rotating_back_is_identity(x, position, layout):
    back = rotate(rotate(x, position, layout), position, layout, inverse=True)
    torch.testing.assert_close(back, x.float(), atol=1e-5, rtol=0)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_inputs_stay_within_their_rounding_at_large_positions(dtype):
    torch.manual_seed(0)
    rope = posenc.RotaryEmbedding(64)
    positions = torch.tensor([0, 1000, 65_537, 500_001, 999_999, 1_000_000])
    q = torch.randn(1, 2, len(positions), 64).to(dtype)
    reference, _ = rope(q.float(), q.float(), positions)  # same (rounded) inputs, fp32 math
    actual, _ = rope(q, q, positions)
    assert actual.dtype == dtype
    relative = (actual.float() - reference).norm() / reference.norm()
    assert relative <= 1e-2

    # The naive way, angles in the input dtype, is wrong by order 1 at these positions.
    angles = positions.to(dtype)[:, None] * rope.inv_freq.to(dtype)
    angles = torch.cat((angles, angles), dim=-1)
    naive = posenc.apply_rotary(q, angles.cos(), angles.sin())
    naive_relative = (naive.float() - reference).norm() / reference.norm()
    # bf16 rounds 1e6 by 4096 (scrambled angles); fp16 overflows past 65504 (inf, then nan).
    assert naive_relative > 0.3 or not torch.isfinite(naive_relative)


def test_cache_grows_and_is_kept_per_dtype():
    rope = posenc.RotaryEmbedding(8)
    rope.cos_sin(10)
    rope.cos_sin(10, dtype=torch.bfloat16)
    assert {key[1] for key in rope._tables} == {torch.float32, torch.bfloat16}
    assert rope._tables[(torch.device("cpu"), torch.float32)][0].shape[0] == 256
    cos, _ = rope.cos_sin(300, offset=10)
    assert (
        cos.shape == (300, 8)
        and rope._tables[(torch.device("cpu"), torch.float32)][0].shape[0] == 512
    )
    torch.testing.assert_close(cos, rope.cos_sin(torch.arange(10, 310))[0], atol=0, rtol=0)


def test_scaled_rope_uses_attention_factor():
    scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    rope = posenc.RotaryEmbedding(16, scaling=scaling)
    cos, sin = rope.cos_sin(3)
    assert rope.attention_factor > 1
    torch.testing.assert_close(cos[0], torch.full((16,), rope.attention_factor))


def test_dynamic_scaling_follows_seq_len():
    scaling = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 16}
    rope = posenc.RotaryEmbedding(8, scaling=scaling)
    short_cos, _ = rope.cos_sin(8)
    default_cos, _ = posenc.RotaryEmbedding(8).cos_sin(8)
    torch.testing.assert_close(short_cos, default_cos, atol=0, rtol=0)
    long_cos, _ = rope.cos_sin(torch.arange(8), seq_len=64)
    assert not torch.allclose(long_cos, default_cos)


def test_output_dtype_follows_input_under_autocast():
    rope = posenc.RotaryEmbedding(8)
    q = torch.randn(1, 2, 4, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out_q, _ = rope(q, q)
        out_bf16, _ = rope(q.bfloat16(), q.bfloat16())
    assert out_q.dtype == torch.float32 and out_bf16.dtype == torch.bfloat16


def test_works_under_torch_compile_fullgraph():
    torch._dynamo.reset()
    rope = posenc.RotaryEmbedding(8)
    q, k = torch.randn(1, 2, 5, 8), torch.randn(1, 1, 5, 8)
    positions = torch.arange(3, 8)
    compiled = torch.compile(lambda q, k, p: rope(q, k, p), fullgraph=True)
    torch.testing.assert_close(compiled(q, k, positions), rope(q, k, positions))
    compiled_default = torch.compile(
        lambda q, k: rope(q, k, offset=3), fullgraph=True, backend="eager"
    )
    torch.testing.assert_close(compiled_default(q, k), rope(q, k, positions))


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


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_tables_are_built_on_the_device():
    rope = posenc.RotaryEmbedding(64)  # inv_freq stays on the CPU on purpose
    q = torch.randn(2, 4, 128, 64, device="cuda", dtype=torch.bfloat16)
    out, _ = rope(q, q, torch.arange(128, device="cuda"))
    reference, _ = rope(q.float().cpu(), q.float().cpu(), torch.arange(128))
    assert out.device.type == "cuda"
    torch.testing.assert_close(out.float().cpu(), reference, atol=2e-2, rtol=2e-2)
    rope(q, q)
    assert all(key[0].type in ("cuda", "cpu") for key in rope._tables)


# ── RotaryEmbedding(compiled=True): one generated kernel for q and k ────────


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
    compiled = posenc.RotaryEmbedding(16, layout=layout, rotary_dim=12, compiled=True)
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
    compiled = posenc.RotaryEmbedding(64, compiled=True)
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
    for compiled in (False, True):
        out_q, out_k = posenc.RotaryEmbedding(8, compiled=compiled)(q, k)
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

    rope = posenc.RotaryEmbedding(16, layout=layout, compiled=True)
    q, k = torch.randn(2, 4, 5, 16, dtype=dtype), torch.randn(2, 2, 5, 16, dtype=dtype)
    _, sources = run_and_get_code(rope, q, k)
    code = "\n".join(sources)
    kernels = re.findall(r"^(\w+) = async_compile\.", code, flags=re.MULTILINE)
    buffers = re.findall(r"empty_strided_cpu\(\(([\d, ]+)\)", code)
    assert len(kernels) == 1, kernels
    assert sorted(math.prod(map(int, b.split(","))) for b in buffers) == [k.numel(), q.numel()]


def test_compiled_flag_is_harmless_inside_a_compiled_model(fresh_compiler):
    # Under an outer torch.compile the module uses the eager form, which the outer compiler
    # fuses itself (no nested compile).
    rope = posenc.RotaryEmbedding(8, compiled=True)
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
    posenc.RotaryEmbedding(8, compiled=True)(q, q)
except RuntimeError as error:
    print("RuntimeError:", error)
"""
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path), "CXX": "/nonexistent/c++"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert "RuntimeError: RotaryEmbedding(compiled=True) could not compile" in done.stdout, (
        done.stdout + done.stderr
    )
    assert "compiled=False" in done.stdout


def test_compiled_rotation_takes_any_length_after_the_first_change(fresh_compiler):
    # After one change of sequence length torch.compile makes that dimension dynamic, so a
    # decoding loop (one new length per step) does not compile again at every step.
    rope = posenc.RotaryEmbedding(8, compiled=True)
    for seq in (5, 6):
        rope(torch.randn(1, 2, seq, 8), torch.randn(1, 2, seq, 8))
    with torch._dynamo.config.patch(error_on_recompile=True):
        for seq in (7, 9, 30):
            rope(torch.randn(1, 2, seq, 8), torch.randn(1, 2, seq, 8))
