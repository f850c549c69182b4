"""posenc.attention: the formula, SDPA and FlexAttention paths (FlexAttention compiled on CPU, as
on CUDA: decoding without recompiles, no (heads, L, L) tensor), broadcasting, compile, autocast."""

import importlib
import os
import subprocess
import sys
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_block_mask

import posenc

attention_module = importlib.import_module("posenc.attention")  # posenc.attention: the function


def naive_attention(q, k, v, *, causal, slopes=None, bias=None):
    """softmax(q·kᵀ/√d + m_h(j − i) + B + M) v, written out (queries are the last keys)."""
    heads, q_len, k_len = q.shape[1], q.shape[2], k.shape[2]
    k = k.repeat_interleave(heads // k.shape[1], dim=1)
    v = v.repeat_interleave(heads // v.shape[1], dim=1)
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    i = torch.arange(q_len)[:, None] + (k_len - q_len)
    j = torch.arange(k_len)[None]
    if slopes is not None:
        distance = (i - j) if causal else (i - j).abs()
        scores = scores - slopes[:, None, None] * distance
    if bias is not None:
        scores = scores + bias
    if causal:
        scores = scores.masked_fill(j > i, float("-inf"))
    return scores.softmax(-1) @ v


def inputs(batch=2, heads=4, kv_heads=2, q_len=7, k_len=7, dim=16, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (
        torch.randn(batch, heads, q_len, dim, generator=gen),
        torch.randn(batch, kv_heads, k_len, dim, generator=gen),
        torch.randn(batch, kv_heads, k_len, dim, generator=gen),
    )


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize(("q_len", "k_len"), [(7, 7), (3, 7), (1, 9)])
def test_sdpa_alibi_matches_formula(causal, q_len, k_len):
    q, k, v = inputs(q_len=q_len, k_len=k_len)
    slopes = posenc.alibi_slopes(4)
    expected = naive_attention(q, k, v, causal=causal, slopes=slopes)
    actual = posenc.attention(q, k, v, causal=causal, alibi_slopes=slopes, backend="sdpa")
    torch.testing.assert_close(actual, expected, atol=1e-6, rtol=0)


def test_sdpa_mask_is_alibi_bias(monkeypatch):
    # attention builds its ALiBi term with alibi_bias, not a copy of the formula
    calls = []
    original = attention_module.alibi_bias

    def spy(*args, **kwargs):
        calls.append(kwargs["causal"])
        return original(*args, **kwargs)

    monkeypatch.setattr(attention_module, "alibi_bias", spy)
    q, k, v = inputs(q_len=3)
    posenc.attention(q, k, v, causal=False, alibi_slopes=posenc.alibi_slopes(4), backend="sdpa")
    assert calls == [False]


def test_plain_and_biased_attention():
    q, k, v = inputs(kv_heads=4)
    torch.testing.assert_close(
        posenc.attention(q, k, v), naive_attention(q, k, v, causal=True), atol=1e-6, rtol=0
    )
    bias = torch.randn(1, 4, 1, 7)  # broadcast over batch and queries
    torch.testing.assert_close(
        posenc.attention(q, k, v, causal=False, bias=bias),
        naive_attention(q, k, v, causal=False, bias=bias),
        atol=1e-6, rtol=0,
    )  # fmt: skip


def test_t5_bias_plugs_in():
    q, k, v = inputs(kv_heads=4)
    bias = posenc.T5RelativeBias(4)(7)  # (heads, q_len, k_len), like ALiBi's
    out = posenc.attention(q, k, v, causal=False, bias=bias)
    torch.testing.assert_close(
        out, naive_attention(q, k, v, causal=False, bias=bias), atol=1e-6, rtol=0
    )


def test_alibi_mask_is_broadcast_over_the_batch(monkeypatch):
    seen = []
    original = F.scaled_dot_product_attention

    def spy(*args, attn_mask=None, **kwargs):
        seen.append(attn_mask.shape)
        return original(*args, attn_mask=attn_mask, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", spy)
    q, k, v = inputs(batch=8)
    posenc.attention(q, k, v, alibi_slopes=posenc.alibi_slopes(4))
    assert seen == [(1, 4, 7, 7)]


def test_under_autocast():
    q, k, v = inputs()
    slopes = posenc.alibi_slopes(4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = posenc.attention(q, k, v, alibi_slopes=slopes)
    torch.testing.assert_close(
        out.float(), naive_attention(q, k, v, causal=True, slopes=slopes), atol=5e-2, rtol=0
    )


def test_alibi_attention_compiles_fullgraph():
    torch._dynamo.reset()
    q, k, v = inputs()
    slopes = posenc.alibi_slopes(4)
    compiled = torch.compile(
        lambda q, k, v: posenc.attention(q, k, v, alibi_slopes=slopes),
        fullgraph=True,
        backend="eager",
    )
    torch.testing.assert_close(compiled(q, k, v), posenc.attention(q, k, v, alibi_slopes=slopes))


# ── FlexAttention, compiled as on CUDA, here on CPU ─────────────────────────


@pytest.mark.parametrize(
    ("q_len", "k_len"), [(1, 1), (5, 5), (128, 128), (130, 300), (1, 257), (200, 700), (3, 1000)]
)
def test_block_mask_is_create_block_masks(q_len, k_len):
    # The tiles computed from their indices equal those create_block_mask finds by evaluating
    # the mask at every (query, key) pair, for queries that are the last q_len keys.
    offset = k_len - q_len
    ours, first_query = attention_module._causal_block_mask(q_len, k_len, torch.device("cpu"))
    assert first_query.item() == offset
    theirs = create_block_mask(
        lambda b, h, i, j: j <= i + offset, None, None, q_len, k_len, device="cpu"
    )
    for name in ("kv_num_blocks", "full_kv_num_blocks", "q_num_blocks", "full_q_num_blocks"):
        assert torch.equal(getattr(ours, name), getattr(theirs, name)), name
    for count, indices in (
        ("kv_num_blocks", "kv_indices"),
        ("full_kv_num_blocks", "full_kv_indices"),
    ):
        for row, n in enumerate(getattr(ours, count)[0, 0].tolist()):
            got = sorted(getattr(ours, indices)[0, 0, row, :n].tolist())
            want = sorted(getattr(theirs, indices)[0, 0, row, :n].tolist())
            assert got == want, (indices, row)


def test_a_repeated_flex_call_dispatches_only_the_kernel(fresh_compiler):
    """The block mask is built once per (q_len, k_len, device): a second call with the same
    shapes dispatches a handful of tensor operations besides the compiled kernel (the mask
    alone was about 300, 1.4 ms of host time a call on an H100 machine)."""
    q, k, v = inputs(batch=1, heads=4, kv_heads=4, q_len=256, k_len=256)
    slopes = posenc.alibi_slopes(4)
    first = posenc.attention(q, k, v, alibi_slopes=slopes, backend="flex")  # compiles
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        again = posenc.attention(q, k, v, alibi_slopes=slopes, backend="flex")
    ops = [event.name for event in profile.events() if event.name.startswith("aten::")]
    assert len(ops) <= 24, f"{len(ops)} aten operations in a repeated call: {sorted(set(ops))}"
    torch.testing.assert_close(again, first, rtol=0, atol=0)
    # another length is another mask, and the answer for it is still right
    short = posenc.attention(q[:, :, -5:], k, v, alibi_slopes=slopes, backend="flex")
    torch.testing.assert_close(short, first[:, :, -5:], atol=1e-5, rtol=0)


def test_a_decoding_step_with_alibi_builds_its_mask_in_a_few_operations():
    """One query against a cache on the SDPA path (what auto runs for decoding): its bias is
    m_h·(j − i) over the keys alone, with no causal mask to build (no key is in the last
    query's future). It took 23 operations before SDPA (0.27 ms a step on an H100 machine,
    where SDPA without bias took 0.04 ms); the answer stays the formula's."""
    q, k, v = inputs(batch=1, heads=4, kv_heads=4, q_len=1, k_len=300)
    slopes = posenc.alibi_slopes(4)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        posenc.attention(q, k, v, alibi_slopes=slopes, backend="sdpa")
    top = [event.name for event in profile.events() if event.cpu_parent is None]
    assert top[-1] == "aten::scaled_dot_product_attention" and len(top) <= 8, top
    for causal in (True, False):
        want = naive_attention(q, k, v, causal=causal, slopes=slopes)
        got = posenc.attention(q, k, v, causal=causal, alibi_slopes=slopes, backend="sdpa")
        torch.testing.assert_close(got, want, atol=1e-6, rtol=0)


@pytest.mark.parametrize(
    ("device", "q_len", "flex_usable", "expected"),
    [
        ("cuda", 4096, True, "flex"),  # a prompt: no (heads, L, L) mask
        ("cuda", 1, True, "sdpa"),  # a decoding step: FlexAttention was the slowest path
        ("cuda", 4096, False, "sdpa"),  # another bias, or no ALiBi: nothing for flex to do
        ("cpu", 4096, True, "sdpa"),
    ],
)
def test_auto_sends_prompts_to_flex_and_decoding_to_sdpa(device, q_len, flex_usable, expected):
    assert attention_module._auto_backend(device, q_len, flex_usable) == expected


@pytest.fixture
def fresh_compiler():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def largest_allocation(run) -> int:
    """Bytes of the largest CPU allocation made while ``run`` runs, compiled code included."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, profile_memory=True) as profile:
        run()
    return max(event.cpu_memory_usage for event in profile.events())


def test_flex_decoding_compiles_once_matches_the_formula_and_builds_no_score_matrix(
    fresh_compiler,
):
    heads, length = 4, 300
    q, k, v = inputs(batch=1, heads=heads, kv_heads=2, q_len=length + 6, k_len=length + 6)
    slopes = posenc.alibi_slopes(heads)

    def run(q_len, k_len):
        # q_len new queries, the last of k_len keys, in fresh tensors as a KV cache makes them
        query, keys, values = (
            q[:, :, k_len - q_len : k_len].clone(), k[:, :, :k_len].clone(), v[:, :, :k_len].clone()
        )  # fmt: skip
        return posenc.attention(query, keys, values, alibi_slopes=slopes, backend="flex")

    prefill = run(length, length)  # compiles
    head = (q[:, :, :length], k[:, :, :length], v[:, :, :length])  # the prompt
    expected = naive_attention(*head, causal=True, slopes=slopes)
    torch.testing.assert_close(prefill, expected, atol=1e-5, rtol=0)
    run(1, length + 1)  # the first decoding step compiles once more, with lengths symbolic
    with torch._dynamo.config.patch(error_on_recompile=True):
        for k_len in range(length + 2, length + 7):  # a new offset and k_len at every step
            step = run(1, k_len)
            keys, values = k[:, :, :k_len], v[:, :, :k_len]
            want = naive_attention(
                q[:, :, k_len - 1 : k_len], keys, values, causal=True, slopes=slopes
            )
            torch.testing.assert_close(step, want, atol=1e-5, rtol=0)
    # (heads, L, L) float32 scores would be 1.4 MB; the largest buffer is about the output
    score_bytes = heads * length * length * 4
    assert largest_allocation(lambda: run(length, length)) < score_bytes / 8
    sdpa = lambda: posenc.attention(*head, alibi_slopes=slopes)  # noqa: E731
    assert largest_allocation(sdpa) >= score_bytes  # the SDPA path does build them


def test_flex_bidirectional_and_plain_match_the_formula(fresh_compiler):
    # inputs(): batch 2, 4 heads, 2 kv heads, head_dim 16.
    # k_len 8, 40 and 24 are lengths the kernel got wrong (see SWEEP below).
    slopes = posenc.alibi_slopes(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for q_len, k_len in [(5, 9), (8, 8), (5, 40), (24, 24), (13, 136)]:
            q, k, v = inputs(q_len=q_len, k_len=k_len, seed=k_len)
            out = posenc.attention(q, k, v, causal=False, alibi_slopes=slopes, backend="flex")
            want = naive_attention(q, k, v, causal=False, slopes=slopes)
            torch.testing.assert_close(out, want, atol=1e-5, rtol=0, msg=f"{q_len=}, {k_len=}")
        for q_len, k_len in [(5, 9), (24, 24)]:  # no score_mod: the mask alone
            q, k, v = inputs(q_len=q_len, k_len=k_len, seed=k_len)
            plain = posenc.attention(q, k, v, causal=True, backend="flex")
            want = naive_attention(q, k, v, causal=True)
            torch.testing.assert_close(plain, want, atol=1e-5, rtol=0, msg=f"{q_len=}, {k_len=}")


# Lengths that caught a bug of torch 2.13's C++ FlexAttention kernel (see
# attention._pad_qk_for_cpu): with head_dim 8 or 16 on a CPU without AVX-512, a tile of
# k_len % 16 == 8 keys (k_len < 128) wrote scores past its end, off by ~1 with no error. Around
# them: 1, odd lengths, multiples of 16, a full tile (128) and more than one tile (> 128),
# queries that are the whole sequence, one decoding step, or a chunk of it. The order keeps the
# compilations few (the first call, the first new length, q_len 1, a second tile).
SWEEP = [
    *[(1, k_len) for k_len in (40, 8, 24, 57, 120, 128)],  # decoding steps
    *[(length, length) for length in (40, 7, 8, 24, 57, 120, 128)],  # prompts
    (5, 40), (17, 120), (1, 1),  # a chunk of a prompt; one token
    (1, 136), (1, 201), (136, 136),  # past one tile of 128 keys
]  # fmt: skip


def test_flex_matches_the_formula_over_a_sweep_of_lengths(fresh_compiler):
    slopes = posenc.alibi_slopes(4)
    wrong = []
    for q_len, k_len in SWEEP:
        q, k, v = inputs(batch=1, q_len=q_len, k_len=k_len, dim=16, seed=k_len)
        out = posenc.attention(q, k, v, alibi_slopes=slopes, backend="flex")
        error = (out - naive_attention(q, k, v, causal=True, slopes=slopes)).abs().max().item()
        if error > 1e-5:
            wrong.append((q_len, k_len, error))
    assert not wrong, wrong  # every (q_len, k_len, max error) that is off


def test_flex_compiles_again_for_other_heads_and_head_dims(fresh_compiler):
    # A second model in the same process (here: fewer heads, a smaller head_dim first): the
    # kernel is compiled again for the new sizes instead of for symbolic ones, which inductor's
    # CPU kernel cannot build in torch 2.13. Both lengths are ones the kernel got wrong.
    for heads, kv_heads, length, dim in [(2, 2, 24, 8), (4, 2, 40, 16)]:
        q, k, v = inputs(
            batch=1, heads=heads, kv_heads=kv_heads, q_len=length, k_len=length, dim=dim
        )
        slopes = posenc.alibi_slopes(heads)
        out = posenc.attention(q, k, v, alibi_slopes=slopes, backend="flex")
        want = naive_attention(q, k, v, causal=True, slopes=slopes)
        torch.testing.assert_close(out, want, atol=1e-5, rtol=0)
        assert not getattr(q, "_dynamo_static_indices", None)  # the caller's tensors unmarked


def test_flex_without_a_compiler_names_the_way_out(tmp_path):
    # A fresh process with a fresh inductor cache and no usable C++ compiler.
    script = """
import torch, posenc
torch._inductor.config.cpp.cxx = ("/nonexistent/c++",)
q = torch.randn(1, 2, 5, 8)
try:
    posenc.attention(q, q, q, alibi_slopes=posenc.alibi_slopes(2), backend="flex")
except RuntimeError as error:
    print("RuntimeError:", error)
"""
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path), "CXX": "/nonexistent/c++"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert "RuntimeError: attention(backend='flex') could not compile" in done.stdout, (
        done.stdout + done.stderr
    )
    assert "backend='sdpa'" in done.stdout


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("causal", [True, False])
def test_cuda_auto_uses_flex_and_matches_sdpa(causal):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 8, 256, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    slopes = posenc.alibi_slopes(8, device="cuda")
    flex = posenc.attention(q, k, v, causal=causal, alibi_slopes=slopes)
    sdpa = posenc.attention(q, k, v, causal=causal, alibi_slopes=slopes, backend="sdpa")
    torch.testing.assert_close(flex.float(), sdpa.float(), atol=2e-2, rtol=2e-2)
