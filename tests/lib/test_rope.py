"""RoPE: tables and rotation against transformers (Llama, GPT-NeoX, GPT-J, Meta), tiny models of
every family with posenc swapped in, dynamic NTK as transformers' forward runs it, properties,
precision, the table cache. The fast kernels are tested in test_rope_kernels.py."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import LlamaConfig
from transformers.models.gpt_neox import modeling_gpt_neox
from transformers.models.gptj import modeling_gptj
from transformers.models.llama import modeling_llama

import posenc
from tests.lib.families import FAMILIES, layer_types, posenc_rope, posenc_swapped_in, tiny_model

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


MODELS = [family for family in FAMILIES if family.model_class]


@pytest.mark.parametrize("family", MODELS, ids=lambda f: f.name)
def test_tiny_models_of_every_family_give_the_same_logits_with_posenc(family):
    # A config built by the family's own config class, passed unchanged; sequences past the
    # trained length where the config sets one, so the scaled frequencies are used.
    model = tiny_model(family)
    ids = torch.randint(0, 97, (2, family.seq), generator=torch.Generator().manual_seed(1))
    config = model.config
    ropes = {t: posenc_rope(config, t, layout=family.layout) for t in layer_types(config)}
    with torch.no_grad():
        expected = model(ids).logits
        with posenc_swapped_in(model, family.package, ropes):
            actual = model(ids).logits
    torch.testing.assert_close(actual, expected, atol=2e-6, rtol=0)


def test_dynamic_keep_longest_follows_transformers_forward():
    # transformers' dynamic NTK keeps the frequencies of the longest sequence seen and goes
    # back to the trained ones below the trained length (16 here): lengths 24, 10, 40, 30.
    (family,) = [f for f in FAMILIES if f.name == "llama-dynamic"]
    model = tiny_model(family)
    longest = posenc_rope(model.config, None, keep_longest=True)
    current = posenc_rope(model.config, None)
    for length, forgets in [(24, False), (10, False), (40, False), (30, True)]:
        ids = torch.randint(0, 97, (1, length), generator=torch.Generator().manual_seed(length))
        with torch.no_grad():
            expected = model(ids).logits
            with posenc_swapped_in(model, family.package, {None: longest}):
                kept = model(ids).logits
            with posenc_swapped_in(model, family.package, {None: current}):
                now = model(ids).logits
        torch.testing.assert_close(kept, expected, atol=2e-6, rtol=0)
        # without keep_longest, length 30 after 40 uses its own, different frequencies
        assert torch.allclose(now, expected, atol=2e-6) != forgets


def test_keep_longest_with_lengths_on_the_device():
    scaling = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 16}
    by_int = posenc.RotaryEmbedding(8, scaling=scaling, keep_longest=True)
    by_tensor = posenc.RotaryEmbedding(8, scaling=scaling, keep_longest=True)
    for length in (24, 10, 40, 30):
        positions = torch.arange(length)
        expected = by_int.cos_sin(positions, seq_len=length)
        actual = by_tensor.cos_sin(positions)  # seq_len = positions.max() + 1, a tensor
        torch.testing.assert_close(actual, expected, atol=1e-6, rtol=0)
    assert isinstance(by_tensor._longest, torch.Tensor) and int(by_tensor._longest) == 40


def test_interleaved_with_permuted_weights_gives_same_logits():
    (family,) = [f for f in FAMILIES if f.name == "llama-default"]
    model = tiny_model(family)
    ids = torch.randint(0, 97, (1, 23), generator=torch.Generator().manual_seed(0))
    head_dim = model.config.head_dim
    with torch.no_grad():
        expected = model(ids).logits  # half layout, original weights
        # A checkpoint in interleaved layout holds the rows in the inverse order.
        to_interleaved = torch.argsort(posenc.interleaved_to_half_permutation(head_dim))
        for layer in model.model.layers:
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj):
                rows = proj.weight.view(-1, head_dim, proj.weight.shape[1])
                proj.weight.copy_(rows[:, to_interleaved].reshape(proj.weight.shape))
        rope = posenc_rope(model.config, None, layout="interleaved")
        with posenc_swapped_in(model, family.package, {None: rope}):
            actual = model(ids).logits
    torch.testing.assert_close(actual, expected, atol=1e-6, rtol=0)


def test_reference_rotation_is_the_textbook_formula():
    # x·cos + rot(x)·sin with transformers' own rotations (Llama: half, GPT-J: interleaved)
    x = torch.randn(2, 3, 5, 8)
    for layout, rot in (
        ("half", modeling_llama.rotate_half),
        ("interleaved", modeling_gptj.rotate_every_two),
    ):
        cos, sin = posenc.RotaryEmbedding(8, layout=layout).cos_sin(5)
        expected = x * cos + rot(x) * sin
        torch.testing.assert_close(posenc.rotate_reference(x, cos, sin, layout=layout), expected)
        torch.testing.assert_close(posenc.apply_rotary(x, cos, sin, layout=layout), expected)


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


def test_tables_are_built_for_the_positions_asked_for(monkeypatch):
    # One query at offset 2**31: a cached table from 0 would hold 2**32 rows (~2 TiB here).
    rope = posenc.RotaryEmbedding(64)
    q = torch.randn(1, 2, 1, 64)
    built = []
    original = posenc.rope.rotary_cos_sin

    def spy(positions, *args, **kwargs):
        built.append(positions.numel())
        return original(positions, *args, **kwargs)

    monkeypatch.setattr(posenc.rope, "rotary_cos_sin", spy)
    out, _ = rope(q, q, offset=2**31)
    reference, _ = rope(q, q, torch.tensor([2**31]))
    torch.testing.assert_close(out, reference, atol=0, rtol=0)
    assert built == [1, 1] and not rope._tables
    # a decoding loop from the start is served by a cache that doubles: log(n) tables built
    built.clear()
    for position in range(600):
        rope(q, q, offset=position)
    assert built == [256, 512, 1024]


def test_dynamic_tensor_positions_take_seq_len_from_their_maximum():
    scaling = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 16}
    rope = posenc.RotaryEmbedding(8, scaling=scaling)
    positions = torch.tensor([[0, 1, 2, 3], [36, 37, 38, 39]])  # the longest row ends at 39
    expected = rope.cos_sin(positions, seq_len=40)
    torch.testing.assert_close(rope.cos_sin(positions), expected, atol=1e-6, rtol=0)
    q = torch.randn(2, 1, 4, 8)
    by_offset, _ = rope(q[1:], q[1:], offset=36)  # seq_len = offset + seq = 40
    by_positions, _ = rope(q, q, positions)
    torch.testing.assert_close(by_positions[1:], by_offset, atol=1e-6, rtol=0)


def test_proportional_leaves_the_pairs_past_its_fraction_unrotated():
    # p-RoPE with p = 0.25 of 16 channels: pairs 0, 1 turn (channels 0, 1, 8, 9 in the half
    # layout), the other six pairs have θ = 0.
    rope = posenc.RotaryEmbedding(
        16, scaling={"rope_type": "proportional", "partial_rotary_factor": 0.25}
    )
    x = torch.randn(1, 1, 5, 16)
    out, _ = rope(x, x, offset=3)
    turning = torch.tensor([0, 1, 8, 9])
    still = torch.tensor([c for c in range(16) if c not in turning.tolist()])
    assert torch.equal(out[..., still], x[..., still])
    assert not torch.allclose(out[..., turning], x[..., turning])


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
    torch.testing.assert_close(rope.cos_sin(torch.arange(8), seq_len=torch.tensor(64))[0], long_cos)


def test_output_dtype_follows_input_under_autocast():
    rope = posenc.RotaryEmbedding(8)
    q = torch.randn(1, 2, 4, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out_q, _ = rope(q, q)
        out_bf16, _ = rope(q.bfloat16(), q.bfloat16())
    assert out_q.dtype == torch.float32 and out_bf16.dtype == torch.bfloat16


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_model_wide_cast_keeps_the_frequencies_in_float32(dtype):
    """model.to(bfloat16) casts every buffer; θ_i rounded to 8 bits would turn a key at
    position 100 000 by a visibly wrong angle, so the module computes them again."""
    scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
    cast = posenc.RotaryEmbedding(64, base=500000.0, scaling=scaling).to(dtype)
    fresh = posenc.RotaryEmbedding(64, base=500000.0, scaling=scaling)
    assert cast.inv_freq.dtype == torch.float32
    assert torch.equal(cast.inv_freq, fresh.inv_freq)
    q = torch.randn(1, 2, 4, 64, generator=torch.Generator().manual_seed(0)).to(dtype)
    positions = torch.arange(100_000, 100_004)
    assert torch.equal(cast(q, q, positions)[0], fresh(q, q, positions)[0])
    # what the cast would have done: the angles at 100 000 off by more than 0.1 rad
    rounded = fresh.inv_freq.to(dtype).float()
    assert ((rounded - fresh.inv_freq).abs() * 100_000).max() > 0.1


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
