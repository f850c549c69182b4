"""Tests of the claims in chapter 21, RoPE's rivals (docs/chapters/21-rope-rivals.md and its
Chinese twin), that no printed output shows. The numbers the page prints are checked by
tests/site/test_codeblocks.py; the snippets assert what their blocks print.

Run only this chapter's tests: make test-chapter NAME=rope-rivals
"""

import math
import runpy

import pytest
import torch
import torch.nn.functional as F

import posenc
from tools.layout import ROOT

SNIPPETS = ROOT / "snippets" / "rope_rivals"


@pytest.fixture(scope="module")
def path_code():
    return runpy.run_path(str(SNIPPETS / "path.py"))


@pytest.fixture(scope="module")
def stick_code():
    return runpy.run_path(str(SNIPPETS / "stick_breaking.py"))


@pytest.fixture(scope="module")
def forgetting_code():
    return runpy.run_path(str(SNIPPETS / "forgetting.py"))


# -- xPos ------------------------------------------------------------------------------------


def test_xpos_fast_pairs_fade_first_and_every_pair_fades_to_zero():
    """The page: "the fast pairs, which carry local order, fade first"; each pair's contribution is
    pulled towards 0 (not towards -inf as ALiBi's penalty)."""
    zeta = posenc.xpos_zeta(128).double()
    assert (zeta.diff() > 0).all() and (zeta < 1).all() and (zeta > 0).all()
    assert (zeta ** (2**20 / 512) < 1e-3).all()  # far enough back, every pair is near 0


def test_xpos_key_factor_overflows_float16_only_past_8192_keys():
    """The page: "at 16 384 keys [the key factor] exceeds the largest number float16 can
    hold (65 504)"."""
    code = runpy.run_path(str(SNIPPETS / "xpos.py"))
    largest = torch.finfo(torch.float16).max
    assert largest == 65504
    assert code["key_factor"](8192) < largest < code["key_factor"](16384)


def test_xpos_scores_depend_on_distance_only_for_random_vectors_too():
    """The demo writes one vector everywhere; with a different q and k at every position the
    score of a pair of vectors still depends only on their distance (shift both)."""
    torch.manual_seed(3)
    xpos = posenc.XPos(32)
    q, k = torch.randn(1, 1, 1, 32), torch.randn(1, 1, 1, 32)
    scores = []
    for m, n in ((5, 2), (9, 6), (30, 27)):  # distance 3 at three places
        qs = torch.zeros(1, 1, 31, 32)
        ks = torch.zeros(1, 1, 31, 32)
        qs[..., m, :], ks[..., n, :] = q[..., 0, :], k[..., 0, :]
        q_enc, k_enc = xpos(qs, ks)
        scores.append(float(q_enc[0, 0, m] @ k_enc[0, 0, n]))
    assert scores == pytest.approx([scores[0]] * 3, rel=1e-5)


# -- KERPLE ----------------------------------------------------------------------------------


def _share_beyond(r1, k_len, D, r2=1.0):
    one = torch.ones(1, dtype=torch.float64)
    row = posenc.kerple_bias(1, k_len, r1=r1 * one, r2=r2 * one)[0, 0]
    return float(row.softmax(-1).flip(-1)[D + 1 :].sum())


def test_kerple_log_heads_with_r1_at_most_one_have_no_window():
    """The page: with r1 <= 1 the total weight diverges, so the share beyond a fixed distance
    keeps growing with the input (towards 1); with r1 = 2 the weights converge to a fixed,
    local distribution."""
    for r1 in (0.5, 1.0):
        shares = [_share_beyond(r1, n, 1000) for n in (4096, 16384, 65536)]
        assert shares[0] < shares[1] < shares[2]  # more context, more weight far away
    assert _share_beyond(0.5, 65536, 1000) > 0.85
    assert all(_share_beyond(2.0, n, 1000) < 0.002 for n in (4096, 16384, 65536))


# -- FIRE ------------------------------------------------------------------------------------


def test_fire_trained_at_128_tokens_only_sees_inputs_up_to_0662():
    """The page: "a model trained on 128 tokens with L = 512 has only ever fed its MLP inputs up to
    0.662; at 1024 tokens the farthest keys reach inputs it never saw"."""
    trained = posenc.fire_inputs(128, c=0.1, threshold=512.0)  # every query 0..127
    assert round(float(trained.max()), 3) == 0.662
    longer = posenc.fire_inputs(1024, c=0.1, threshold=512.0)
    assert float(longer.max()) > 0.99 and (longer > trained.max()).sum() > 1000


# -- CoPE ------------------------------------------------------------------------------------


def test_cope_counting_every_token_stops_distinguishing_at_the_table_end():
    """With P = training length + 1 rows, a head whose gates are all open gives every key
    P - 1 or more tokens back the same term; a head counting sentences does not hit the clamp
    until P - 1 sentences."""
    torch.manual_seed(0)
    P, T = 9, 20  # a "training length" of 8
    table = torch.randn(4, P)
    q = torch.randn(T, 4)
    every = posenc.cope_positions(torch.full((T, T), 40.0))
    term = posenc.cope_logits(q, every, table)[-1]  # last query: keys 19 .. 0 tokens back
    far = term[: T - (P - 2)]  # keys P - 2 or more back have p = i - j + 1 >= P - 1
    assert torch.allclose(far, far[:1].expand_as(far))
    assert not torch.allclose(term[T - (P - 1)], term[T - (P - 2)])  # nearer ones differ
    stops = torch.zeros(T, dtype=torch.bool)
    stops[[4, 12]] = True
    counted = posenc.cope_positions(torch.where(stops, 40.0, -40.0).expand(T, T))[-1]
    assert float(counted.max()) == pytest.approx(2.0, abs=1e-6) and counted.max() < P - 1


# -- PaTH ------------------------------------------------------------------------------------


def test_path_transitions_have_eigenvalues_in_minus_one_one(path_code):
    """The page: "H_t leaves every direction orthogonal to w_t unchanged and multiplies the
    w_t component by 1 - beta_t"; every eigenvalue lies in (-1, 1], so a key never grows."""
    torch.manual_seed(1)
    w = F.normalize(torch.randn(6, 5, dtype=torch.float64), dim=-1)
    beta = torch.tensor([0.01, 0.5, 1.0, 1.5, 1.99, 2.0], dtype=torch.float64)
    H = path_code["transitions"](w, beta)
    for t in range(6):
        eig = torch.linalg.eigvalsh(H[t]).sort().values
        expected = torch.tensor([1 - float(beta[t])] + [1.0] * 4, dtype=torch.float64).sort().values
        torch.testing.assert_close(eig, expected)
        torch.testing.assert_close(H[t] @ w[t], (1 - beta[t]) * w[t])


def test_path_product_matches_the_decoders_rank_one_updates_on_random_inputs(path_code):
    torch.manual_seed(2)
    T, d = 9, 6
    q, k = torch.randn(2, T, d, dtype=torch.float64).unbind(0)
    w = F.normalize(torch.randn(T, d, dtype=torch.float64), dim=-1)
    beta = 2 * torch.rand(T, dtype=torch.float64)
    product = path_code["path_scores"](q, k, path_code["transitions"](w, beta))
    torch.testing.assert_close(product, path_code["path_scores_recurrent"](q, k, w, beta))
    # the query's own key is not transformed: s_ii = q_i · k_i
    torch.testing.assert_close(product.diagonal(), (q * k).sum(-1))


def test_path_product_over_an_odd_number_of_tokens_is_never_a_rotation(path_code):
    """Exercise 2: det of the product is prod (1 - beta_t); below 1 in size unless every
    beta_t = 2, and then (-1)^n, so no odd-length product is a rotation (det 1)."""
    torch.manual_seed(3)
    w = F.normalize(torch.randn(3, 4, dtype=torch.float64), dim=-1)
    for beta in (torch.full((3,), 2.0), 2 * torch.rand(3)):
        beta = beta.double()
        P = torch.linalg.multi_dot(list(path_code["transitions"](w, beta)))
        det = float(torch.linalg.det(P))
        assert det == pytest.approx(float(torch.prod(1 - beta)))
        assert not math.isclose(det, 1.0)


# -- Forgetting Transformer ------------------------------------------------------------------


def test_forget_bias_never_increases_with_distance(forgetting_code):
    torch.manual_seed(4)
    log_f = F.logsigmoid(torch.randn(3, 40) * 3)
    bias = forgetting_code["forget_bias"](log_f)
    rows = bias[:, -1]  # last query against keys 0 .. 39
    assert (rows.diff(dim=-1) >= 0).all() and (rows[:, -1] == 0).all()
    past = torch.ones(40, 40, dtype=torch.bool).tril()
    assert (bias[:, past] <= 0).all()


def test_forgetting_with_data_dependent_gates_is_not_a_distance_bias(forgetting_code):
    """With gates from the tokens, two pairs at the same distance get different biases (no
    ALiBi slope reproduces them); with constant gates they get the same."""
    log_f = torch.full((12,), 0.9).log()
    log_f[6] = torch.tensor(0.05).log()
    bias = forgetting_code["forget_bias"](log_f)
    assert not math.isclose(float(bias[8, 5]), float(bias[4, 1]))  # distance 3 both times
    constant = forgetting_code["forget_bias"](torch.full((12,), 0.9).log())
    assert math.isclose(float(constant[8, 5]), float(constant[4, 1]), rel_tol=1e-6)


# -- stick-breaking --------------------------------------------------------------------------


def test_stick_breaking_leftover_is_the_product_of_the_misses(stick_code):
    """The weights add up to 1 - prod_j (1 - beta_ij): what no key took."""
    torch.manual_seed(5)
    z = torch.randn(10, 10, dtype=torch.float64) * 2
    _, left = stick_code["stick_breaking"](z)
    for i in range(10):
        misses = torch.prod(1 - torch.sigmoid(z[i, :i]))
        assert float(left[i]) == pytest.approx(float(misses), abs=1e-12)
    assert float(left[0]) == 1.0  # the first token has no key before it


@pytest.mark.parametrize("z", [-2.0, 1.0, 3.0])
def test_stick_breaking_equal_scores_are_alibi_proportions(stick_code, z):
    """The page: "the key r tokens back gets sigma(z)(1 - sigma(z))^(r-1) ... the same
    proportions as ALiBi's softmax with slope log(1 + e^z)" for any z, strictly decreasing."""
    T = 16
    weights, _ = stick_code["stick_breaking"](torch.full((T, T), z, dtype=torch.float64))
    last = weights[-1, :-1].flip(0)  # nearest first
    s = torch.sigmoid(torch.tensor(z, dtype=torch.float64))
    r = torch.arange(1, T, dtype=torch.float64)
    torch.testing.assert_close(last, s * (1 - s) ** (r - 1))
    assert (last.diff() < 0).all()
    slope = math.log1p(math.exp(z))
    torch.testing.assert_close(last / last.sum(), (-slope * r).softmax(-1))


# -- the experiment --------------------------------------------------------------------------


def test_experiment_rows_come_from_the_two_committed_sets():
    code = runpy.run_path(str(SNIPPETS / "experiment.py"))
    assert [name for name, _ in code["ROWS"]][:2] == ["rope", "alibi"]
    assert code["rivals"]["profile"] == code["chapter8"]["profile"] == "full"
    assert set(code["rival_seeds"]["runs"]) == {"xpos", "kerple", "fire", "cope"}
