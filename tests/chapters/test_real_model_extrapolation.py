"""The SmolLM2 experiment of chapter 19 (experiments/smollm2/): posenc's frequencies equal
transformers' for every method, the swap and the attention probe leave the model's outputs as
they are, the quick profile runs end to end, and the committed results are complete.

Loading the model takes 15-45 s on 2 cores; it is loaded once for this file.
"""

from __future__ import annotations

import json
import math
import random

import pytest
import torch

from experiments.smollm2 import model as smol
from experiments.smollm2 import results as results_file
from experiments.smollm2 import run


@pytest.mark.parametrize("method", smol.METHODS)
@pytest.mark.parametrize("length", [4096, 8192, 12288, 16384])
def test_posenc_tables_equal_transformers_for_every_method(method, length):
    """The cos/sin tables the swapped model uses are transformers' own for the same
    rope_parameters, bit for bit (dynamic NTK: at the input's length, as transformers'
    forward computes it)."""
    positions = torch.arange(length)[None]
    x = torch.zeros(1)
    reference = smol.transformers_rotary(method)(x, positions)
    ours = smol.SwappedRotary(smol.posenc_rotary(method))(x, positions)
    for a, b in zip(reference, ours, strict=True):
        assert torch.equal(a, b)


def test_methods_differ_past_the_trained_length_and_dynamic_is_plain_rope_up_to_it():
    """Why run.py runs dynamic NTK only past 8192: up to it its tables are plain RoPE's."""
    at = lambda method, n: smol.SwappedRotary(smol.posenc_rotary(method), seq_len=n)(  # noqa: E731
        torch.zeros(1), torch.arange(n)[None]
    )[0]
    assert torch.equal(at("dynamic", 8192), at("none", 8192))
    assert not torch.equal(at("dynamic", 8193)[:, :100], at("none", 8193)[:, :100])
    tables = {m: at(m, 16384) for m in smol.METHODS}
    for a in smol.METHODS:
        for b in smol.METHODS:
            assert a == b or not torch.equal(tables[a], tables[b]), (a, b)


@pytest.fixture(scope="module")
def loaded():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield smol.load()
    finally:
        torch.set_num_threads(threads)


@pytest.mark.slow
def test_swap_and_probe_leave_the_model_unchanged(loaded):
    """Plain RoPE through posenc gives the model's own logits, bit for bit; the probing
    attention (and its mask) gives the same logits, also for a question run against a cache;
    a scaled method changes them."""
    model, tokenizer = loaded
    ids = torch.tensor([run.encode(tokenizer, "The capital of France is Paris. The capital of")])
    with torch.no_grad():
        own = model(ids).logits
        with smol.swap_rope(model, "none", seq_len=ids.shape[1]):
            assert torch.equal(model(ids).logits, own)
        with smol.swap_rope(model, "linear", seq_len=ids.shape[1]):
            assert not torch.allclose(model(ids).logits, own)
        smol.enable_probes(model)
        with smol.probing([3, ids.shape[1] - 1]) as probe:
            torch.testing.assert_close(model(ids).logits, own)
        assert len(probe.sink) == model.config.num_hidden_layers
        assert torch.allclose(probe.sink[0][:, 0], torch.ones(9))  # query 3 sees keys 0..3
        cache = model.model(ids[:, :-3], use_cache=True).past_key_values
        tail = model(ids[:, -3:], past_key_values=cache).logits
        torch.testing.assert_close(tail, own[:, -3:], atol=1e-4, rtol=1e-4)


@pytest.mark.slow
def test_a_wrong_answer_is_not_found(loaded):
    """The score can fail: with every needle's digits replaced in the question's answer, no
    needle counts as found and the digits' log-probability drops."""
    model, tokenizer = loaded
    filler = run.encode(tokenizer, run.TEXT.read_text(encoding="utf-8"))
    cfg = run.PROFILES["quick"]
    tokens, needles, start = run.build_input(
        tokenizer, filler, 512, cfg["depths"], random.Random(3)
    )
    right = run.run_unit(model, tokenizer, (tokens, needles, start), "none", 512, 8192, cfg, False)
    wrong_keys = [(c, f"{(int(k) + 55555) % 100000:05d}", *rest) for c, k, *rest in needles]
    wrong = run.run_unit(
        model, tokenizer, (tokens, wrong_keys, start), "none", 512, 8192, cfg, False
    )
    assert sum(n["found"] for n in right["needles"]) >= 1
    assert not any(n["found"] for n in wrong["needles"])
    assert sum(n["logprob"] for n in wrong["needles"]) < sum(n["logprob"] for n in right["needles"])


@pytest.mark.slow
def test_quick_profile_runs_end_to_end(loaded, tmp_path):
    out = tmp_path / "quick.json"
    report = run.main(["--quick", "--out", str(out), "--cache", str(tmp_path)], loaded=loaded)
    written = results_file.validate(json.loads(out.read_text()))
    assert written == json.loads(json.dumps(report))
    assert written["rounds"] == {"256": 1, "512": 1}
    for method in results_file.LABELS:
        found, asked = results_file.found(written, method, 512)
        assert asked == 5 and 0 <= found <= 5
        ppl = [v for v in written["perplexity"][method]["perplexity"] if v is not None]
        assert ppl and all(math.isfinite(v) and v > 1 for v in ppl)
        sink = written["attention"][method]["sink"]
        assert len(sink) == 30 and all(0 <= v <= 1 for row in sink for v in row)
    # dynamic NTK is plain RoPE at the quick profile's "trained" 256, and differs at 512
    assert written["passkey"]["dynamic"]["256"] == written["passkey"]["none"]["256"]
    assert written["perplexity"]["dynamic"] != written["perplexity"]["none"]


def test_units_give_each_length_its_rounds_round_by_round():
    """Short lengths get more rounds than long ones; every unit of a round runs before the
    next round starts (so a stopped run has whole rounds of the short lengths); dynamic NTK
    only past the trained length."""
    cfg = run.PROFILES["full"]
    todo = run.units(cfg)
    plain = {}
    for _, length, method in todo:
        plain[length] = plain.get(length, 0) + (method == "none")
    assert plain == cfg["rounds"]
    assert [r for r, _, _ in todo] == sorted(r for r, _, _ in todo)
    assert all(length > cfg["trained"] for _, length, method in todo if method == "dynamic")


def test_kept_units_survive_new_lengths_rounds_and_budget():
    """A unit's input depends on its round and length only, so adding a length or rounds
    keeps the finished units; changing what a unit measures does not."""
    cfg = dict(run.PROFILES["full"])
    kept = run.fingerprint(cfg, "text")
    grown = cfg | {"lengths": (2048, 65536), "rounds": {2048: 20, 65536: 1}, "budget": 5.0}
    assert run.fingerprint(grown, "text") == kept
    assert run.fingerprint(cfg | {"depths": (0.5,)}, "text") != kept
    assert run.fingerprint(cfg, "other text") != kept


def test_wilson_interval():
    low, high = results_file.wilson(5, 10)
    assert round(low, 3) == 0.237 and round(high, 3) == 0.763
    assert results_file.wilson(0, 10)[0] == 0 and results_file.wilson(10, 10)[1] == 1


def test_committed_full_results_match_the_code():
    report = results_file.load("full")
    assert report["profile"] == "full"
    config = {k: report["config"][k] for k in run.PROFILES["full"]}
    assert config == json.loads(json.dumps(run.PROFILES["full"]))
    assert report["config"]["methods"] == json.loads(json.dumps(smol.methods()))
    assert all(n >= 1 for n in report["rounds"].values())  # every length measured
