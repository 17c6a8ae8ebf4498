"""Non-decomposable losses, complete/single/partial heads and predictors against NumPy
references (``tests/reference/non_decomposable_reference.py``), and a ``compile_ptx`` gate
(cc 9.0) for every device-compilable function, run in a fresh interpreter
(``python -m tests.test_non_decomposable``) as ``tests/test_cuda_compile.py`` does."""

import types as pytypes
from functools import partial

import numba as nb
import numpy as np
import pytest

from gpurules.objectives import complete_head as ch
from gpurules.objectives import fixed_point, predictors
from gpurules.objectives import non_decomposable as nd
from gpurules.objectives.multi_output import SELECT_DYNAMIC, multi_output_params
from tests.reference import non_decomposable_reference as ref
from tests.reference.cuda_support import require, run_checks, run_isolated

LOSSES = {"logistic": nd.LOGISTIC, "squared-error": nd.SQUARED_ERROR,
          "squared-hinge": nd.SQUARED_HINGE}
CC = (9, 0)


# -- compiled entry points for the tests ----------------------------------------------------
@nb.njit
def _statistics(loss, y, p):
    K = p.shape[0]
    g = np.empty(K)
    h = np.empty(K * (K + 1) // 2)
    nd.gradient_hessian(loss, y, p, g, h)
    return g, h


@nb.njit
def _largest(loss, g, h):
    return nd.largest_statistic(loss, g, h)


@nb.njit
def _loss_value(loss, y, p):
    return nd.loss_value(loss, y, p)


@nb.njit
def _encode(loss, y, p, weight, scale):
    K = p.shape[0]
    P = K * (K + 1) // 2
    gi = np.empty(K, np.int64)
    hi = np.empty(P, np.int64)
    nd.encode(loss, y, p, weight, scale, np.empty(K), np.empty(P), gi, hi)
    return gi, hi


@nb.njit
def _complete(g, h, l1, l2):
    m = g.shape[0]
    scores = np.empty(m)
    gain, zero = ch.complete_head(g, h, m, l1, l2, np.empty(m * m), np.empty(m, np.int64),
                                  scores)
    return scores, gain, zero


@nb.njit
def _gather(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale):
    m = labels.shape[0]
    g = np.empty(m)
    h = np.empty(m * (m + 1) // 2)
    ch.gather_side(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g, h)
    return g, h


@nb.njit
def _single(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2):
    return ch.single_head_sums(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                               l1, l2)


@nb.njit
def _criteria(g, h, packed, l1, l2):
    out = np.empty(g.shape[0])
    ch.output_criteria(g, h, g.shape[0], packed, l1, l2, out)
    return out


@nb.njit
def _select_fixed(crit, count):
    sel = np.empty(crit.shape[0], np.int64)
    n = ch.select_fixed(crit, crit.shape[0], count, sel)
    return sel[:n]


def _select_dynamic(crit, threshold, exponent):
    return _select_dynamic_jit(crit, threshold, exponent, ch.dynamic_root(threshold, exponent))


@nb.njit
def _select_dynamic_jit(crit, threshold, exponent, root):
    sel = np.empty(crit.shape[0], np.int64)
    n = ch.select_dynamic(crit, crit.shape[0], threshold, exponent, root, sel)
    return sel[:n]


@nb.njit
def _bounded_fraction(n, fraction, minimum, maximum):
    return ch.bounded_fraction(n, fraction, minimum, maximum)


@nb.njit
def _partial_complete(g, h, sel, l1, l2):
    n = sel.shape[0]
    scores = np.empty(n)
    gain, zero = ch.partial_complete_head(g, h, sel, n, l1, l2, np.empty(n),
                                          np.empty(n * (n + 1) // 2), np.empty(n * n),
                                          np.empty(n, np.int64), scores)
    return scores, gain


@nb.njit
def _output_wise(g, h, sel, l1, l2):
    scores = np.empty(sel.shape[0])
    gain = ch.output_wise_head(g, h, sel, sel.shape[0], l1, l2, scores)
    return scores, gain


@nb.njit
def _example_wise(scores, vectors, counts, loss):
    out = np.empty(scores.shape, np.uint8)
    predictors.predict_example_wise(scores, vectors, counts, loss, out)
    return out


def _marginalized(scores, vectors):
    from gpurules.prediction import joint_probabilities

    return predictors.marginalized(joint_probabilities(scores, vectors), vectors)


def _random_case(rng, K, scale=2.0):
    y = (rng.random(K) < 0.4).astype(np.uint8)
    p = rng.normal(scale=scale, size=K)
    return y, p


def _random_system(rng, m, spd=True):
    M = rng.normal(size=(m, m))
    H = M @ M.T / m if spd else (M + M.T) / 2
    return rng.normal(size=m), H


# -- losses ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", LOSSES)
def test_statistics_match_closed_forms(name):
    rng = np.random.default_rng(0)
    for K in (1, 2, 5, 17):
        for _ in range(20):
            y, p = _random_case(rng, K)
            g, h = _statistics(LOSSES[name], y, p)
            g_ref, H_ref = ref.statistics(name, y, p)
            np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(ref.unpack(h, K), H_ref, rtol=1e-11, atol=1e-14)
            assert _loss_value(LOSSES[name], y, p) == pytest.approx(ref.loss(name, y, p),
                                                                    rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("name", LOSSES)
def test_statistics_match_finite_differences(name):
    """Away from kinks the gradient and Hessian are the loss's derivatives (for the squared
    hinge with every label violated: mlrl-boomer's H_kk = 1 of a satisfied label is a
    convention, not a derivative)."""
    rng = np.random.default_rng(1)
    for K in (1, 3, 6):
        for _ in range(5):
            y, p = _random_case(rng, K, scale=0.8)
            if name == "squared-hinge":
                p = np.where(y > 0, -np.abs(p) - 0.1, np.abs(p) + 0.1)  # all violated
            g, h = _statistics(LOSSES[name], y, p)
            g_fd, H_fd = ref.finite_difference(name, y, p)
            np.testing.assert_allclose(g, g_fd, atol=1e-7)
            np.testing.assert_allclose(ref.unpack(h, K), H_fd, atol=1e-5)


def test_logistic_loss_is_stable_for_huge_scores():
    y = np.array([1, 0, 1, 0], np.uint8)
    for scale in (1e3, 1e6, 1e300):
        p = np.array([-1.0, 1.0, 0.5, -2.0]) * scale
        g, h = _statistics(nd.LOGISTIC, y, p)
        assert np.isfinite(g).all() and np.isfinite(h).all()
        assert np.abs(g).max() <= 1.0 and np.abs(h).max() <= 0.25
        # two labels wrong by `scale`: log(1 + 2 e^scale + ...) = scale + log 2
        assert _loss_value(nd.LOGISTIC, y, p) == pytest.approx(scale + np.log(2.0), rel=1e-12)
    # confident and right: loss log(1 + small) ~ small, statistics ~ 0
    p = np.array([50.0, -50.0, 50.0, -50.0])
    assert _loss_value(nd.LOGISTIC, y, p) == pytest.approx(4 * np.exp(-50.0), rel=1e-9)


def test_includes_the_one_in_the_logistic_sum():
    """mlrl-boomer's example-wise logistic loss is log(1 + sum exp(-y'p)): at p = 0 with K
    labels the loss is log(K + 1) and every |g_k| = 1 / (K + 1)."""
    for K in (1, 4, 9):
        y = np.zeros(K, np.uint8)
        g, _ = _statistics(nd.LOGISTIC, y, np.zeros(K))
        np.testing.assert_allclose(g, 1.0 / (K + 1))
        assert _loss_value(nd.LOGISTIC, y, np.zeros(K)) == pytest.approx(np.log(K + 1))


def test_residual_losses_predicted_exactly_give_zero_statistics():
    y = np.array([1, 0, 1], np.uint8)
    g, h = _statistics(nd.SQUARED_ERROR, y, np.array([1.0, -1.0, 1.0]))
    assert not g.any() and not h.any()
    g, h = _statistics(nd.SQUARED_HINGE, y, np.array([2.0, -1.0, 1.0]))
    assert not g.any()
    np.testing.assert_array_equal(ref.unpack(h, 3), np.eye(3))


@nb.njit
def _packed_index(i, j):
    return nd.packed_index(i, j)


def test_packing_is_row_major_lower_triangle():
    K = 5
    expected = [(i, j) for i in range(K) for j in range(i + 1)]
    for pos, (i, j) in enumerate(expected):
        assert _packed_index(i, j) == pos
        assert _packed_index(j, i) == pos
    assert nd.packed_size(K) == len(expected)


@pytest.mark.parametrize("name", LOSSES)
def test_fixed_point_encoding(name):
    rng = np.random.default_rng(2)
    y, p = _random_case(rng, 6)
    scale = fixed_point.choose_scale(1000.0, 1.0)
    gi, hi = _encode(LOSSES[name], y, p, 1.5, scale)
    g, h = _statistics(LOSSES[name], y, p)
    np.testing.assert_array_equal(gi, np.floor(g * 1.5 * scale + 0.5).astype(np.int64))
    np.testing.assert_array_equal(hi, np.floor(h * 1.5 * scale + 0.5).astype(np.int64))


@pytest.mark.parametrize("name", LOSSES)
def test_largest_statistic_is_the_largest_entry(name):
    """The logistic loss's O(K) shortcut (two largest |g_k|) gives the exact maximum."""
    rng = np.random.default_rng(7)
    for trial in range(200):
        K = int(rng.integers(1, 12))
        y = (rng.random(K) < 0.4).astype(np.uint8)
        p = rng.normal(0.0, 3.0, K) if trial % 2 else np.zeros(K)
        g, h = _statistics(LOSSES[name], y, p)
        assert _largest(LOSSES[name], g, h) == max(np.abs(g).max(), np.abs(h).max())


def test_statistic_bound():
    rng = np.random.default_rng(3)
    spec = nd.NON_DECOMPOSABLE_LOSSES["logistic-non-decomposable"]
    for _ in range(50):
        y, p = _random_case(rng, 7, scale=10.0)
        g, h = _statistics(nd.LOGISTIC, y, p)
        assert nd.max_abs_statistic(g, h) <= spec.statistic_bound(10.0)
    spec = nd.NON_DECOMPOSABLE_LOSSES["squared-error-non-decomposable"]
    y = np.array([1, 0], np.uint8)
    g, h = _statistics(nd.SQUARED_ERROR, y, np.array([1.0 + 1e-6, -1.0]))  # ~1/||d||
    observed = nd.max_abs_statistic(g, h)
    assert observed > 1e5 and spec.statistic_bound(1.0, observed) == observed
    assert spec.statistic_bound(1.0) == 1.0


# -- heads ----------------------------------------------------------------------------------
@pytest.mark.parametrize("l1,l2", [(0.0, 1.0), (0.0, 0.0), (0.3, 1.0), (0.7, 0.1)])
def test_complete_head_matches_numpy(l1, l2):
    rng = np.random.default_rng(4)
    for m in (1, 2, 4, 11):
        for _ in range(10):
            g, H = _random_system(rng, m)
            H += 0.05 * np.eye(m)
            scores, gain, zero = _complete(g, ref.pack(H), l1, l2)
            p_ref, gain_ref = ref.complete_head(g, H, l1, l2)
            assert zero == 0
            np.testing.assert_allclose(scores, p_ref, rtol=1e-9, atol=1e-12)
            assert gain == pytest.approx(gain_ref, rel=1e-9, abs=1e-12)


def test_complete_head_of_one_output_is_the_label_wise_head():
    for g, h, l1, l2 in [(2.0, 0.5, 0.0, 1.0), (-3.0, 1.0, 0.5, 1.0), (0.4, 2.0, 0.1, 0.0)]:
        scores, gain, _ = _complete(np.array([g]), np.array([h]), l1, l2)
        assert scores[0] == pytest.approx(ref.label_score(g, h, l1, l2))
        assert gain == pytest.approx(ref.label_gain(g, h, l1, l2))


def test_complete_head_l1_leaves_small_gradients_unshrunk_like_mlrl_boomer():
    """|g| <= l1: mlrl-boomer keeps the ordinate -g (the score is not set to 0)."""
    scores, gain, _ = _complete(np.array([0.2]), np.array([1.0]), 0.5, 1.0)
    assert scores[0] == pytest.approx(-0.1)
    assert gain == pytest.approx(-(0.2 * -0.1 + 0.5 * 1.0 * 0.01 + 0.5 * 0.1 + 0.5 * 0.01))


def test_complete_head_on_logistic_statistics_of_a_real_sum():
    rng = np.random.default_rng(5)
    K, n = 6, 40
    Y = (rng.random((n, K)) < 0.3).astype(np.uint8)
    P = rng.normal(size=(n, K))
    stats = [_statistics(nd.LOGISTIC, Y[i], P[i]) for i in range(n)]
    g = sum(s[0] for s in stats)
    h = sum(s[1] for s in stats)
    scores, gain, _ = _complete(g, h, 0.0, 1.0)
    p_ref, gain_ref = ref.complete_head(g, ref.unpack(h, K), 0.0, 1.0)
    np.testing.assert_allclose(scores, p_ref, rtol=1e-10)
    assert gain == pytest.approx(gain_ref) and gain > 0


def _fixed_point_sums(rng, K, n, scale):
    run_g = np.zeros(K, np.int64)
    run_h = np.zeros(K * (K + 1) // 2, np.int64)
    tot_g, tot_h = run_g.copy(), run_h.copy()
    for i in range(n):
        y, p = _random_case(rng, K)
        gi, hi = _encode(nd.LOGISTIC, y, p, 1.0, scale)
        tot_g += gi
        tot_h += hi
        if i < n // 3:
            run_g += gi
            run_h += hi
    return run_g, run_h, tot_g, tot_h


def test_gather_side_and_single_head_from_fixed_point_sums():
    rng = np.random.default_rng(6)
    K, scale = 7, 2.0 ** 40
    run_g, run_h, tot_g, tot_h = _fixed_point_sums(rng, K, 30, scale)
    labels = np.array([5, 1, 2], np.int64)
    for complement in (False, True):
        g, h = _gather(run_g, run_h, tot_g, tot_h, complement, labels, 1.0 / scale)
        G = (tot_g - run_g if complement else run_g) / scale
        H = ref.unpack((tot_h - run_h if complement else run_h) / scale, K)
        np.testing.assert_allclose(g, G[labels])
        np.testing.assert_allclose(ref.unpack(h, 3), H[np.ix_(labels, labels)])
        gain, label = _single(run_g, run_h, tot_g, tot_h, complement, labels, 1.0 / scale,
                              0.1, 1.0)
        gains = [ref.label_gain(G[k], H[k, k], 0.1, 1.0) for k in labels]
        assert label == labels[int(np.argmax(gains))]
        assert gain == pytest.approx(max(gains))


# -- partial heads --------------------------------------------------------------------------
def test_bounded_fraction_matches_mlrl_boomer():
    # float32 arithmetic: 0.04f * 25 rounds to 1.0f, ceil -> 1
    assert _bounded_fraction(25, 0.04, 1, 0) == 1
    assert _bounded_fraction(26, 0.04, 1, 0) == 2
    assert _bounded_fraction(3, 0.1, 2, 0) == 2      # at least min_outputs
    assert _bounded_fraction(1, 0.1, 2, 0) == 1      # but not more than n
    assert _bounded_fraction(100, 0.5, 2, 10) == 10  # at most max when max >= min
    rng = np.random.default_rng(7)
    for _ in range(300):
        n, ratio = int(rng.integers(0, 500)), float(rng.random())
        lo, hi = int(rng.integers(1, 5)), int(rng.integers(0, 20))
        assert _bounded_fraction(n, ratio, lo, hi) == ref.bounded_fraction(n, ratio, lo, hi)


def test_output_criteria_are_label_wise_scores():
    rng = np.random.default_rng(8)
    g, H = _random_system(rng, 6)
    crit = _criteria(g, ref.pack(H), True, 0.2, 1.0)
    np.testing.assert_allclose(crit, [ref.label_score(g[k], H[k, k], 0.2, 1.0)
                                      for k in range(6)])
    np.testing.assert_array_equal(_criteria(g, np.diag(H).copy(), False, 0.2, 1.0), crit)


def test_select_fixed_and_dynamic_match_reference():
    rng = np.random.default_rng(9)
    for _ in range(200):
        m = int(rng.integers(1, 15))
        crit = np.round(rng.normal(size=m), 1)  # ties
        count = int(rng.integers(0, m + 2))
        np.testing.assert_array_equal(_select_fixed(crit, count),
                                      ref.select_fixed(crit, min(count, m)))
        thr, exp = float(rng.uniform(0.01, 0.99)), float(rng.choice([1.0, 2.0, 1.5]))
        np.testing.assert_array_equal(_select_dynamic(crit, thr, exp),
                                      ref.select_dynamic(crit, thr, exp))


def test_dynamic_selection_without_pow_selects_as_the_powers():
    """Exponents other than 2 compare ``|c| - min|c|`` with ``dynamic_root`` times the span
    (no ``pow`` per output, so no libm/libdevice difference): the outputs of the powers'
    definition on continuous criteria, and ``multi_output_params`` carries the root."""
    rng = np.random.default_rng(10)
    for _ in range(300):
        crit = rng.normal(size=int(rng.integers(1, 30)))
        thr, exp = float(rng.uniform(0.001, 0.999)), float(rng.uniform(1.0, 6.0))
        np.testing.assert_array_equal(_select_dynamic(crit, thr, exp),
                                      ref.select_dynamic(crit, thr, exp))
    params = multi_output_params(0.0, 1.0, True, SELECT_DYNAMIC, (0.3, 1.5, 0.0))
    assert params[6] == ch.dynamic_root(0.3, 1.5) == float(np.float32(0.7)) ** (1 / 1.5)


def test_dynamic_selection_with_mlrl_boomer_defaults_keeps_the_extremes():
    crit = np.array([0.1, -1.0, 0.5, 0.995, -0.2])
    # threshold 0.02, exponent 2: keep (|c| - 0.1)^2 >= 0.98 * 0.9^2
    np.testing.assert_array_equal(_select_dynamic(crit, 0.02, 2.0), [1, 3])
    np.testing.assert_array_equal(_select_dynamic(np.full(3, 0.5), 0.02, 2.0), [0, 1, 2])


def test_partial_heads_for_both_kinds_of_statistics():
    rng = np.random.default_rng(10)
    g, H = _random_system(rng, 8)
    H += 0.1 * np.eye(8)
    crit = _criteria(g, ref.pack(H), True, 0.0, 1.0)
    sel = _select_fixed(crit, ref.bounded_fraction(8, 0.4, 2, 0))
    scores, gain = _partial_complete(g, ref.pack(H), sel, 0.0, 1.0)
    p_ref, gain_ref = ref.complete_head(g[sel], H[np.ix_(sel, sel)], 0.0, 1.0)
    np.testing.assert_allclose(scores, p_ref, rtol=1e-10)
    assert gain == pytest.approx(gain_ref)
    h_diag = np.abs(np.diag(H)).copy()
    scores, gain = _output_wise(g, h_diag, sel, 0.1, 1.0)
    np.testing.assert_allclose(scores, [ref.label_score(g[k], h_diag[k], 0.1, 1.0) for k in sel])
    assert gain == pytest.approx(sum(ref.label_gain(g[k], h_diag[k], 0.1, 1.0) for k in sel))


# -- predictors -----------------------------------------------------------------------------
@pytest.mark.parametrize("loss", [nd.LOGISTIC, nd.SQUARED_ERROR, nd.SQUARED_HINGE, 0, 1, 2])
def test_example_wise_predictor_matches_brute_force(loss):
    rng = np.random.default_rng(11)
    Y = (rng.random((40, 4)) < 0.4).astype(np.uint8)
    Y[:10] = Y[0]                                  # a frequent vector for ties
    scores = rng.normal(size=(25, 4))
    scores[:3] = 0.0                               # equal distances to symmetric vectors
    vectors, counts = predictors.unique_label_vectors(Y)

    def distance(y, p):
        return _example_distance(loss, y, p)

    out = _example_wise(scores, vectors, counts, loss)
    np.testing.assert_array_equal(out, ref.example_wise(scores, Y, distance))


@nb.njit
def _distance_impl(loss, y, p):
    return predictors.example_distance(loss, y, p)


def _example_distance(loss, y, p):
    y = np.asarray(y, np.uint8)
    p = np.asarray(p, np.float64)
    d = _distance_impl(loss, y, p)
    if loss in (nd.LOGISTIC, nd.SQUARED_ERROR, nd.SQUARED_HINGE):
        assert d == pytest.approx(ref.loss({nd.LOGISTIC: "logistic", nd.SQUARED_ERROR:
                                            "squared-error", nd.SQUARED_HINGE:
                                            "squared-hinge"}[loss], y, p))
    return d


def test_unique_label_vectors_keep_first_appearance_order():
    Y = np.array([[1, 0], [0, 0], [1, 0], [1, 1], [0, 0], [1, 0]], np.uint8)
    vectors, counts = predictors.unique_label_vectors(Y)
    np.testing.assert_array_equal(vectors, [[1, 0], [0, 0], [1, 1]])
    np.testing.assert_array_equal(counts, [3, 2, 1])


def test_marginalized_probabilities_match_reference():
    rng = np.random.default_rng(12)
    vectors = ref.all_label_vectors(4)[rng.permutation(16)[:9]]
    scores = rng.normal(size=(20, 4))
    out = _marginalized(scores, vectors)
    np.testing.assert_allclose(out, ref.marginalized(scores, vectors), rtol=1e-12, atol=1e-15)
    # with every label vector the marginals are the output-wise probabilities
    np.testing.assert_allclose(_marginalized(scores, ref.all_label_vectors(4)),
                               predictors.marginal_probabilities(scores), rtol=1e-12)
    # no underflow for confident scores over many labels
    big = np.full((1, 300), 40.0)
    vec = np.vstack([np.ones(300, np.uint8), np.zeros(300, np.uint8)])
    np.testing.assert_allclose(_marginalized(big, vec), 1.0)


def test_auto_rules_of_mlrl_boomer():
    nd_loss, d_loss = "logistic-non-decomposable", "logistic-decomposable"
    assert predictors.resolve_head_type("auto", nd_loss) == "complete"
    assert predictors.resolve_head_type("auto", "squared-hinge-non-decomposable") == "complete"
    # complete with dense statistics for every loss (mlrl-boomer 0.15.6, checked by running
    # it); single-output only where it builds sparse statistics (test_statistic_format.py)
    assert predictors.resolve_head_type("auto", "squared-error-decomposable") == "complete"
    assert predictors.resolve_head_type("auto", "squared-hinge-decomposable") == "complete"
    assert predictors.resolve_head_type("auto", "squared-hinge-decomposable", True) == \
        "single"
    assert predictors.resolve_head_type("partial-fixed", nd_loss) == "partial-fixed"
    assert predictors.resolve_label_binning("auto", nd_loss, "auto") == "equal-width"
    assert predictors.resolve_label_binning("auto", nd_loss, "partial-dynamic") == "equal-width"
    assert predictors.resolve_label_binning("auto", nd_loss, "single") == "none"
    assert predictors.resolve_label_binning("auto", d_loss, "complete") == "none"
    assert predictors.resolve_label_binning("none", nd_loss, "auto") == "none"
    assert predictors.resolve_binary_predictor("auto", nd_loss) == "example-wise"
    assert predictors.resolve_binary_predictor("auto", d_loss) == "output-wise"
    assert predictors.resolve_probability_predictor("auto", nd_loss) == "marginalized"
    assert predictors.resolve_probability_predictor("auto", d_loss) == "output-wise"
    with pytest.raises(ValueError, match="probabilities"):
        predictors.resolve_probability_predictor("auto", "squared-error-non-decomposable")


def test_specs():
    specs = nd.NON_DECOMPOSABLE_LOSSES
    assert set(specs) == {"logistic-non-decomposable", "squared-error-non-decomposable",
                          "squared-hinge-non-decomposable"}
    assert specs["squared-hinge-non-decomposable"].decision_threshold == 0.5
    assert specs["logistic-non-decomposable"].has_probabilities


# -- compile_ptx gate -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def ptx_results():
    require("numba_cuda")
    return run_isolated("tests.test_non_decomposable", {"NUMBA_ENABLE_CUDASIM": None})


def test_device_functions_compile_for_cc90(ptx_results):
    assert set(ptx_results) == {"statistics", "solve", "heads", "binning", "predict"}
    failed = {k: v for k, v in ptx_results.items() if v is not None}
    assert not failed, "\n".join(f"{k}:\n{v}" for k, v in failed.items())


def _kernels():
    """Tiny kernels that call each device-compilable function, with their signatures."""
    from numba import cuda, types

    from gpurules.objectives import label_binning as lb
    from gpurules.objectives import linear_solve as ls

    f8, i8, u1 = types.float64[::1], types.int64[::1], types.uint8[::1]

    def statistics(loss, y, p, g, h, gi, hi, out):
        nd.gradient_hessian(loss, y, p, g, h)
        out[0] = nd.loss_value(loss, y, p)
        nd.encode(loss, y, p, 1.0, 1024.0, g, h, gi, hi)

    def solve(h, n, a, ipiv, b, out):
        ls.load_packed(h, n, a)
        out[0] = ls.factor_solve(a, n, ipiv, b) + ls.packed_quadratic(h, n, b)

    def heads_(rg, rh, tg, th, labels, g, h, a, ipiv, scores, sel, out):
        m = labels.shape[0]
        ch.gather_side(rg, rh, tg, th, True, labels, 0.5, g, h)
        gain, zero = ch.complete_head(g, h, m, 0.0, 1.0, a, ipiv, scores)
        best, label = ch.single_head_sums(rg, rh, tg, th, False, labels, 0.5, 0.0, 1.0)
        ch.output_criteria(g, h, m, True, 0.0, 1.0, scores)
        n = ch.select_fixed(scores, m, ch.bounded_fraction(m, 0.3, 2, 0), sel)
        n += ch.select_dynamic(scores, m, 0.02, 2.0, 0.98 ** 0.5, sel)
        gain2, zero2 = ch.partial_complete_head(g, h, sel, 1, 0.0, 1.0, scores, out, a, ipiv,
                                                scores)
        out[0] = gain + best + gain2 + zero + label + n + zero2
        out[1] = ch.output_wise_head(g, g, sel, 1, 0.0, 1.0, scores)

    def binning(g, h, crit, bin_of, counts, remap, g_bin, h_bin, a, ipiv, p_bin, scores, out):
        gain, nbins, zero = lb.binned_head(g, h, g.shape[0], True, 0.0, 1.0, 0.04, 1, 0,
                                           crit, bin_of, counts, remap, g_bin, h_bin, a, ipiv,
                                           p_bin, scores)
        out[0] = gain + nbins + zero

    def predict(scores, vectors, counts, log_q, out_labels, out_log_joint):
        predictors.predict_example_wise(scores, vectors, counts, nd.LOGISTIC, out_labels)
        predictors.log_joint_probabilities(scores, log_q, vectors, out_log_joint)

    f82, u12 = types.float64[:, ::1], types.uint8[:, ::1]
    return cuda, {
        "statistics": (statistics, (types.int64, u1, f8, f8, f8, i8, i8, f8)),
        "solve": (solve, (f8, types.int64, f8, i8, f8, f8)),
        "heads": (heads_, (i8, i8, i8, i8, i8, f8, f8, f8, i8, f8, i8, f8)),
        "binning": (binning, (f8, f8, f8, i8, f8, i8, f8, f8, f8, i8, f8, f8, f8)),
        "predict": (predict, (f82, u12, i8, f82, u12, f82)),
    }


def _compile(cuda, kernel, signature):
    ptx, return_type = cuda.compile_ptx(kernel, signature, cc=CC)
    assert ".target sm_90" in ptx and ".entry" in ptx
    assert str(return_type) == "none"


def main():
    import numba.cuda.dispatcher as dispatcher

    # numba-cuda compiles called device functions for the current device's compute
    # capability (a driver call); stand in the cc of the PTX target instead
    dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=CC)
    cuda, kernels = _kernels()
    checks = {name: partial(_compile, cuda, fn, sig) for name, (fn, sig) in kernels.items()}
    run_checks(checks)


if __name__ == "__main__":
    main()
