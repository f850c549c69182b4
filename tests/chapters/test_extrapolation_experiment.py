"""The extrapolation experiment of chapter 8: the quick profile runs end to end, and the
committed full results have the shape the chapter reads."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

import posenc
from experiments.extrapolation import corpus, model, retrieval, seeds, train
from experiments.extrapolation import results as results_file

ALL_NAMES = {
    "nope",
    "sinusoidal",
    "learned",
    "t5",
    "rope",
    "rope+pi",
    "rope+ntk",
    "rope+yarn",
    "alibi",
}


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory):
    threads = torch.get_num_threads()
    try:
        out = tmp_path_factory.mktemp("experiment") / "quick.json"
        report = train.main(["--quick", "--out", str(out)])
        return report, json.loads(out.read_text())
    finally:
        torch.set_num_threads(threads)


def test_quick_profile_runs_end_to_end(quick_report):
    report, written = quick_report
    assert written == json.loads(json.dumps(report))  # the file holds what run() returned
    assert written["profile"] == "quick"
    assert set(written["results"]) == ALL_NAMES
    for name, entry in written["results"].items():
        for length in ("128", "256", "512", "1024"):
            ppl = entry["perplexity"][length]
            if name == "learned" and length != "128":
                assert ppl is None  # no table row past position 127
            else:
                assert math.isfinite(ppl) and 1 < ppl < len(corpus.ALPHABET) * 2
        # 30 steps already beat the uniform guess ln(96) = 4.56 nats per character
        assert entry["final_train_loss"] < math.log(len(corpus.ALPHABET))
    assert written["wall_seconds"] > 0 and written["hardware"]["threads"] == 1


def test_rope_variants_equal_rope_at_training_length(quick_report):
    results = quick_report[1]["results"]
    for name in ("rope+pi", "rope+ntk", "rope+yarn"):
        assert results[name]["perplexity"]["128"] == results["rope"]["perplexity"]["128"]
        assert results[name]["perplexity"]["256"] != results["rope"]["perplexity"]["256"]


def test_corpus_split_is_fixed_and_ascii():
    train_ids, valid_ids = corpus.load_splits()
    assert len(train_ids) + len(valid_ids) == len(corpus.CORPUS.read_text(encoding="ascii"))
    assert 0.08 < len(valid_ids) / (len(train_ids) + len(valid_ids)) < 0.12
    assert int(train_ids.max()) < len(corpus.ALPHABET)


def test_learned_model_refuses_positions_past_training_length():
    lm = model.TinyLM("learned", vocab=len(corpus.ALPHABET), dim=16, heads=2, layers=1)
    lm(torch.zeros(1, 128, dtype=torch.long))
    with pytest.raises(ValueError, match="max_positions"):
        lm(torch.zeros(1, 129, dtype=torch.long))


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError, match="method must be one of"):
        model.TinyLM("sandwich", vocab=10)
    with pytest.raises(ValueError, match="methods must be"):  # one set per results file
        train.run("quick", Path("unused.json"), methods=("rope", "xpos"))


def _frequencies(variant: dict, head_dim: int) -> torch.Tensor:
    return posenc.rope_inv_freq(head_dim, base=variant["base"], scaling=variant["scaling"])[0]


def test_rope_variants_stretch_what_each_method_promises():
    """At 4x the training length: PI slows every pair 4x; NTK-aware keeps the fastest pair and
    slows the slowest exactly 4x (so its period covers 4x the positions); YaRN keeps the fast
    pairs and slows the slow ones 4x. At the training length all equal plain RoPE."""
    head_dim, s = 16, 4
    plain = posenc.rope_inv_freq(head_dim)[0]
    variants = train.rope_variants(s * train.TRAIN_LEN, head_dim=head_dim)
    torch.testing.assert_close(_frequencies(variants["rope+pi"], head_dim), plain / s)
    ntk = _frequencies(variants["rope+ntk"], head_dim)
    torch.testing.assert_close(ntk[[0, -1]], torch.stack([plain[0], plain[-1] / s]))
    yarn = _frequencies(variants["rope+yarn"], head_dim)
    torch.testing.assert_close(yarn[[0, -1]], torch.stack([plain[0], plain[-1] / s]))
    for variant in train.rope_variants(train.TRAIN_LEN, head_dim=head_dim).values():
        torch.testing.assert_close(_frequencies(variant, head_dim), plain)


def test_committed_full_results_are_complete():
    report = results_file.load("full")  # checks the schema
    assert report["profile"] == "full"
    assert all(
        report["config"][k] == v for k, v in train.PROFILES["full"].items()
    )  # same as the code
    assert set(report["results"]) == ALL_NAMES
    assert report["wall_seconds"] > 0 and report["hardware"]["threads"] == 1


def test_t5_distances_past_training_share_a_trained_bucket():
    """Chapter 8: in a causal T5 bias with max_distance 128, distances seen in training
    (up to 127) already reach the last bucket, which every longer distance also uses."""
    distances = -torch.tensor([100, 127, 128, 500, 1023])  # key j - query i, past keys
    buckets = posenc.t5_relative_bucket(
        distances, bidirectional=False, num_buckets=32, max_distance=128
    )
    assert buckets.tolist()[1:] == [31, 31, 31, 31] and buckets[0] < 31


# -- several seeds and passkey retrieval (experiments/extrapolation/seeds.py, retrieval.py) -------


@pytest.fixture(scope="module")
def quick_seeds(tmp_path_factory):
    threads = torch.get_num_threads()
    try:
        folder = tmp_path_factory.mktemp("seeds")
        out = folder / "seeds-quick.json"
        report = seeds.main(["--quick", "--out", str(out), "--runs", str(folder / "runs")])
        return report, json.loads(out.read_text()), folder
    finally:
        torch.set_num_threads(threads)


def test_quick_seeds_profile_runs_end_to_end(quick_seeds):
    report, written, folder = quick_seeds
    assert written == json.loads(json.dumps(report))  # the file holds what run() returned
    results_file.validate_seeds(written)
    assert written["profile"] == "quick" and len(written["config"]["seeds"]) >= 2
    for name, by_seed in written["runs"].items():
        for run in by_seed.values():
            for length in ("128", "256", "512", "1024"):
                ppl, accuracy = run["perplexity"][length], run["retrieval"][length]
                if name == "learned" and length != "128":
                    assert ppl is None and accuracy is None  # no table row past position 127
                else:
                    assert math.isfinite(ppl) and 1 < ppl < len(corpus.ALPHABET) * 2
                    assert 0 <= accuracy <= 1
    # a second run reuses the kept jobs: same numbers, no training
    again = seeds.main(
        ["--quick", "--out", str(folder / "again.json"), "--runs", str(folder / "runs")]
    )
    assert again["runs"] == report["runs"] and again["wall_seconds"] < report["wall_seconds"]


def test_seed_changes_the_model_and_seed_0_is_train_py_s(quick_seeds):
    """Seed 0 of the seeds run is the model of train.py (same perplexities); another seed is a
    different model."""
    runs = quick_seeds[1]["runs"]
    assert runs["rope"]["0"]["perplexity"] != runs["rope"]["1"]["perplexity"]
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        train_ids, valid_ids = corpus.load_splits()
        cfg = train.PROFILES["quick"]
        lm, _ = train.train("alibi", train_ids, cfg)
        ppl = train.evaluate(lm, valid_ids, 256, cfg["eval_tokens"])["all"]
    finally:
        torch.set_num_threads(threads)
    assert round(ppl, 4) == runs["alibi"]["0"]["perplexity"]["256"]


def test_passkey_examples_hide_the_needle_at_the_asked_depth():
    train_ids, _ = corpus.load_splits()
    generator = torch.Generator().manual_seed(0)
    depths = torch.tensor([0.0, 0.5, 1.0])
    inputs, digits = retrieval.batch(train_ids, 128, depths, generator)
    assert inputs.shape == (3, 128) and digits.shape == (3, retrieval.DIGITS)
    for row, answer, depth in zip(inputs, digits, depths.tolist(), strict=True):
        marks = (row == retrieval.MARK_ID).nonzero().flatten().tolist()
        assert len(marks) == 2 and marks[1] == 128 - retrieval.DIGITS  # needle and question
        needle = marks[0]
        assert row[needle + 1 : needle + 1 + retrieval.DIGITS].tolist() == answer.tolist()
        assert row[-(retrieval.DIGITS - 1) :].tolist() == answer[:-1].tolist()  # teacher forcing
        # depth 0: at the start; depth 1: the needle ends right before the question
        assert needle == round(depth * (128 + 1 - 2 * retrieval.NEEDLE))


class _Copier(torch.nn.Module):
    """Predicts, after the question mark and each answer digit, the character that followed
    the same context earlier in the window: what an induction head does, by hand."""

    def forward(self, ids):
        logits = torch.zeros(*ids.shape, len(corpus.ALPHABET))
        for b, row in enumerate(ids.tolist()):
            needle = row.index(retrieval.MARK_ID)
            question = len(row) - retrieval.DIGITS
            for i in range(retrieval.DIGITS):
                logits[b, question + i, row[needle + 1 + i]] = 1.0
        return logits


class _Guesser(torch.nn.Module):
    """Always answers 0000: what a model that ignores the needle can do."""

    def forward(self, ids):
        logits = torch.zeros(*ids.shape, len(corpus.ALPHABET))
        logits[..., int(retrieval.DIGIT_IDS[0])] = 1.0
        return logits


def test_passkey_score_is_one_for_a_copier_and_near_chance_without_the_needle():
    _, valid_ids = corpus.load_splits()
    for length in (128, 1024):
        assert retrieval.evaluate(_Copier(), valid_ids, length, 8)["accuracy"] == 1.0
        assert retrieval.evaluate(_Guesser(), valid_ids, length, 8)["accuracy"] < 0.05


def test_committed_seeds_results_match_the_code():
    """The chapter shows results/seeds.json, or the quick profile until that is committed; the
    file's settings are the code's, and the full profile has at least three seeds."""
    report = results_file.committed_seeds()  # checks the schema
    profile = report["profile"]
    assert report["config"]["lm"] == train.PROFILES[profile]  # the same models as train.py
    assert report["config"]["seeds"] == list(seeds.PROFILES[profile]["seeds"])
    assert report["config"]["retrieval"]["chance"] == 10.0**-retrieval.DIGITS
    if profile == "full":
        assert len(report["config"]["seeds"]) >= 3
        # the premise of the passkey table: at the training length every model (every seed)
        # has learned the task far above chance (10^-4), otherwise longer inputs compare
        # nothing; how well each learned it (NoPE least, RoPE 20-100 %) the page shows
        chance = report["config"]["retrieval"]["chance"]
        for name in results_file.LABELS:
            for run in report["runs"][name].values():
                assert run["retrieval"]["128"] >= 500 * chance


# -- chapter 21: the rivals of RoPE in the same experiment (train.py --rivals, seeds.py --rivals) --


@pytest.fixture(scope="module")
def quick_rivals(tmp_path_factory):
    threads = torch.get_num_threads()
    try:
        folder = tmp_path_factory.mktemp("rivals")
        report = train.main(["--quick", "--rivals", "--out", str(folder / "rivals-quick.json")])
        seeds_report = seeds.main(
            ["--quick", "--rivals", "--out", str(folder / "rivals-seeds-quick.json"),
             "--runs", str(folder / "runs")]
        )  # fmt: skip
        return report, seeds_report
    finally:
        torch.set_num_threads(threads)


def test_quick_rivals_profile_runs_end_to_end(quick_rivals):
    report, seeds_report = quick_rivals
    results_file.validate(report, rivals=True)
    results_file.validate_seeds(seeds_report, rivals=True)
    assert set(report["results"]) == set(model.RIVALS) == set(results_file.RIVAL_LABELS)
    for entry in report["results"].values():
        for length in ("128", "256", "512", "1024"):
            assert math.isfinite(entry["perplexity"][length])
        assert entry["final_train_loss"] < math.log(len(corpus.ALPHABET))
    for by_seed in seeds_report["runs"].values():
        for run in by_seed.values():
            assert all(0 <= run["retrieval"][n] <= 1 for n in ("128", "256", "512", "1024"))
    # the same settings as chapter 8's quick runs: comparable numbers
    assert {key: report["config"][key] for key in train.PROFILES["quick"]} == train.PROFILES[
        "quick"
    ]
    assert seeds_report["config"]["lm"] == train.PROFILES["quick"]
    # train.py --rivals records what each rival learned about positions (chapter 21)
    learned = {name: entry["learned_positions"] for name, entry in report["results"].items()}
    assert learned["xpos"] is None
    heads, layers = train.PROFILES["quick"]["heads"], train.PROFILES["quick"]["layers"]
    assert len(learned["kerple"]["r1"]) == len(learned["kerple"]["r2"]) == heads
    assert all(v >= 0.01 for v in learned["kerple"]["r1"] + learned["kerple"]["r2"])
    assert len(learned["fire"]["layers"]) == layers
    assert all(layer["c"] > 0 and layer["L"] > 0 for layer in learned["fire"]["layers"])
    cope = learned["cope"]
    assert cope["last_row"] == train.TRAIN_LEN and len(cope["layers"]) == layers
    for layer in cope["layers"]:
        assert len(layer["row_norms"]) == train.TRAIN_LEN + 1
        for length in ("128", "256", "512", "1024"):
            assert all(0 < g < 1 for g in layer["mean_gate"][length])
            assert all(0 <= f <= 1 for f in layer["clamped_share"][length])
        shares = zip(layer["clamped_share"]["1024"], layer["clamped_share"]["256"], strict=True)
        assert all(long >= short for long, short in shares)  # longer inputs: more pairs clamped


@pytest.mark.parametrize("rival", model.RIVALS)
def test_rivals_start_from_the_same_weights_as_chapter_8s_models(rival):
    """Comparable with chapter 8: the shared layers get the same initial weights with the same
    seed (the rivals' own modules are created after them), and chapter 8's methods gain no
    parameter."""
    options = dict(vocab=len(corpus.ALPHABET), dim=32, heads=2, layers=2)
    torch.manual_seed(0)
    base = model.TinyLM("rope", **options).state_dict()
    torch.manual_seed(0)
    other = model.TinyLM(rival, **options).state_dict()
    for name, tensor in base.items():
        assert torch.equal(other[name], tensor), name
    own = set(other) - set(base)
    assert all(name.startswith(rival) for name in own)
    assert own or rival == "xpos"  # xPos has no weights (its table is not saved)
    for method in model.METHODS:
        torch.manual_seed(0)
        names = set(model.TinyLM(method, **options).state_dict())
        assert not any(name.startswith(model.RIVALS) for name in names)


def test_rivals_are_posencs_modules_placed_as_documented():
    options = dict(vocab=len(corpus.ALPHABET), dim=32, heads=2, layers=2, train_len=128)
    xpos = model.TinyLM("xpos", **options)
    xpos.set_rope_scaling(None)  # what the evaluation loops call after every length
    assert isinstance(xpos.rope, posenc.XPos) and xpos.rope.head_dim == 16
    with pytest.raises(ValueError, match="xpos"):
        xpos.set_rope_scaling({"rope_type": "linear", "factor": 2.0})
    kerple = model.TinyLM("kerple", **options)
    assert isinstance(kerple.kerple, posenc.Kerple) and kerple.kerple.kernel == "log"
    fire = model.TinyLM("fire", **options)
    assert len(fire.fire) == 2 and fire.fire[0] is not fire.fire[1]  # one per layer
    cope = model.TinyLM("cope", **options)
    assert len(cope.cope) == 2 and all(m.num_positions == 129 for m in cope.cope)
    ids = torch.zeros(1, 300, dtype=torch.long)  # longer than trained: every rival runs
    for lm in (xpos, kerple, fire, cope):
        assert lm(ids).shape == (1, 300, len(corpus.ALPHABET))


def test_cope_layer_adds_the_released_term():
    """The CoPE layer computes (q·k + q·e[p]) / sqrt(d) with gates sigmoid(q·k / sqrt(d)), as
    the authors' ContextPosSelfAttn: compared with posenc's test reference of that layer."""
    from tests.lib.references import cope_released_attention

    torch.manual_seed(0)
    block = model.Block(16, 2)
    cope = posenc.CoPE(8, 7)
    with torch.no_grad():
        cope.pos_emb.normal_()
    x = torch.randn(1, 6, 16)
    q, k, v = block.qkv(block.norm1(x)).split(16, dim=-1)
    q, k, v = (t.view(1, 6, 2, 8).transpose(1, 2) for t in (q, k, v))
    expected = cope_released_attention(
        q[0], k[0], v[0], torch.ones(6, 6).tril(), cope.pos_emb[None], 7
    )  # (heads, T, head_dim)
    out = expected.transpose(0, 1).reshape(1, 6, 16)
    expected_x = x + block.proj(out)
    expected_x = expected_x + block.mlp(block.norm2(expected_x))
    torch.testing.assert_close(block(x, cope=cope), expected_x, atol=1e-5, rtol=1e-5)


def test_committed_rivals_results_are_comparable_with_chapter_8s():
    """results/rivals.json: the rivals, with the settings, seed and lengths of chapter 8's
    committed results/full.json."""
    rivals, chapter8 = results_file.load("full", rivals=True), results_file.load("full")
    assert rivals["config"] == chapter8["config"]
    assert rivals["hardware"]["threads"] == 1 and rivals["wall_seconds"] > 0
    # the full run records the learned position parameters (xPos has none)
    assert [n for n, e in rivals["results"].items() if e["learned_positions"] is None] == ["xpos"]


def test_committed_rivals_seeds_are_comparable_with_chapter_8s():
    """results/rivals-seeds.json: the rivals over chapter 8's seeds, with its profile and passkey
    test, and seed 0 the model of results/rivals.json."""
    rivals = results_file.load("full", rivals=True)
    rival_seeds = results_file.load_seeds("full", rivals=True)
    chapter8_seeds = results_file.load_seeds("full")
    assert rival_seeds["config"] == chapter8_seeds["config"]
    assert rival_seeds["config"]["lm"] == train.PROFILES["full"]
    assert rival_seeds["hardware"]["threads"] == 1
    # seed 0 of the seeds run is the model of rivals.json: the same training, so the same
    # perplexities up to float rounding accumulated over a run in another process (chapter 8's
    # two files differ by up to 0.2 % the same way)
    for name in results_file.RIVAL_LABELS:
        seed0 = rival_seeds["runs"][name]["0"]["perplexity"]
        for length, value in rivals["results"][name]["perplexity"].items():
            assert seed0[length] == pytest.approx(value, rel=0.01), (name, length)
