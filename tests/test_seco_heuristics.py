"""SeCo heuristics, lift tables and head selection against hand-computed values."""

import math

import numpy as np
import pytest

from gpurules.objectives import heuristics as H
from gpurules.objectives.lift_functions import lift_tables
from gpurules.objectives.quality import side_quality
from tests.reference import seco_reference as ref

NAMES = {"accuracy": H.ACCURACY, "precision": H.PRECISION, "recall": H.RECALL,
         "laplace": H.LAPLACE, "weighted-relative-accuracy": H.WRA,
         "f-measure": H.F_MEASURE, "m-estimate": H.M_ESTIMATE}


def value(name, tp, fp, fn, tn, option=0.0):
    hid = NAMES[name]
    return H.heuristic_value(hid, H.heuristic_parameter(hid, option), float(tp), float(fp),
                             float(fn), float(tn))


# (name, option, tp, fp, fn, tn, expected) computed by hand
HAND = [
    ("precision", 0, 3, 1, 5, 11, 3 / 4),
    ("recall", 0, 3, 1, 5, 11, 3 / 8),
    ("accuracy", 0, 3, 1, 5, 11, 8 / 20),  # mlrl-seco 0.15: (TP + FN) / N
    ("laplace", 0, 3, 1, 5, 11, 4 / 6),
    ("weighted-relative-accuracy", 0, 3, 1, 5, 11, 4 / 20 * (3 / 4 - 8 / 20)),
    ("f-measure", 1.0, 3, 1, 5, 11, 6 / (6 + 5 + 1)),
    ("f-measure", 0.5, 3, 1, 5, 11, 1.25 * 3 / (1.25 * 3 + 0.25 * 5 + 1)),
    ("f-measure", 0.0, 3, 1, 5, 11, 3 / 4),
    ("f-measure", math.inf, 3, 1, 5, 11, 3 / 8),
    ("m-estimate", 2.0, 3, 1, 5, 11, (3 + 2 * 8 / 20) / (4 + 2)),
    ("m-estimate", 0.0, 3, 1, 5, 11, 3 / 4),
    ("m-estimate", math.inf, 3, 1, 5, 11, 4 / 20 * (3 / 4 - 8 / 20)),
    # TP + FP = 0: ratios with a zero denominator are 0, Laplace is 1/2
    ("precision", 0, 0, 0, 5, 11, 0.0),
    ("laplace", 0, 0, 0, 5, 11, 0.5),
    ("weighted-relative-accuracy", 0, 0, 0, 5, 11, 0.0),
    ("f-measure", 0.25, 0, 0, 5, 11, 0.0),
    ("m-estimate", 2.0, 0, 0, 5, 11, (0 + 2 * 5 / 16) / 2),
    ("recall", 0, 0, 4, 0, 11, 0.0),
    ("accuracy", 0, 0, 0, 0, 0, 0.0),
    ("m-estimate", 2.0, 0, 0, 0, 0, 0.0),
]


@pytest.mark.parametrize("name, option, tp, fp, fn, tn, expected", HAND)
def test_hand_computed(name, option, tp, fp, fn, tn, expected):
    assert value(name, tp, fp, fn, tn, option) == pytest.approx(expected, rel=1e-12, abs=0)


def test_matches_reference_on_random_matrices():
    rng = np.random.default_rng(0)
    for _ in range(300):
        tp, fp, fn, tn = (int(x) for x in rng.integers(0, 40, 4))
        for name in NAMES:
            option = {"f-measure": 0.25, "m-estimate": 22.466}.get(name, 0.0)
            # the stored parameter is rounded to 20 bits: compare with the rounded option
            if name == "f-measure":
                option = math.sqrt(H.rounded_parameter(option ** 2))
            elif name == "m-estimate":
                option = H.rounded_parameter(option)
            expected = ref.heuristic(name, tp, fp, fn, tn, option)
            got = value(name, tp, fp, fn, tn, option)
            assert got == pytest.approx(expected, rel=1e-12, abs=1e-15), (name, tp, fp, fn, tn)


def test_rounded_parameter_makes_products_exact():
    for x in (0.25 ** 2, 22.466, 0.3, 1e-7, 123456.789):
        r = H.rounded_parameter(x)
        assert abs(r - x) <= abs(x) * 2.0 ** -19
        mantissa, _ = math.frexp(r)
        assert (mantissa * 2 ** 20).is_integer()
    assert H.rounded_parameter(math.inf) == math.inf
    assert H.rounded_parameter(0.0) == 0.0


def test_lift_tables_by_hand():
    Y = np.zeros((4, 6), np.uint8)
    lift, bound = lift_tables("peak", {"peak_label": 2, "max_lift": 1.08, "curvature": 1.0}, Y)
    # n=1: 1; peak: 1.08; after the peak mlrl-seco's base (n - K)/(K - peak) is negative
    np.testing.assert_allclose(lift, [1.0, 1.08, 1 - 0.75 * 0.08, 1 - 0.5 * 0.08,
                                      1 - 0.25 * 0.08, 1.0])
    np.testing.assert_allclose(bound[:2], [1.08, 1.08])
    lift, bound = lift_tables("kln", {"k": 0.2}, Y)
    np.testing.assert_allclose(lift, 1 + 0.2 * np.log(np.arange(1, 7)))
    np.testing.assert_allclose(bound, 1 + 0.2 * np.log(6))
    lift, bound = lift_tables("none", {}, Y)
    assert (lift == 1).all() and (bound == 1).all()
    Y[:, :3] = 1  # label cardinality 3 for peak_label=0
    lift, _ = lift_tables("peak", {"peak_label": 0, "max_lift": 1.5, "curvature": 1.0}, Y)
    assert lift[2] == 1.5


def _params(name, option, tot_g, tot_h, lift=None, select=True):
    hid = NAMES[name]
    K = tot_g.shape[0]
    lift = (np.ones(K), np.ones(K)) if lift is None else lift
    return H.seco_params(hid, H.heuristic_parameter(hid, option), *lift, tot_g, tot_h, select)


def test_single_quality_picks_first_best_label_and_complements():
    tot_g = np.array([6, 4, 9], np.int64)  # uncovered examples with y == p
    tot_h = np.array([20, 20, 15], np.int64)  # uncovered examples
    run_g = np.array([3, 3, 0], np.int64)
    run_h = np.array([4, 3, 5], np.int64)
    labels = np.arange(3, dtype=np.int32)
    params = _params("precision", 0, tot_g, tot_h)
    q, k = side_quality(run_g, run_h, tot_g, tot_h, False, labels, H.HEAD_SECO_SINGLE, 1.0,
                        params)
    assert (q, k) == (1.0, 1)
    # complement: covered = tot - run -> precisions 3/16, 1/17, 9/10
    q, k = side_quality(run_g, run_h, tot_g, tot_h, True, labels, H.HEAD_SECO_SINGLE, 1.0,
                        params)
    assert k == 2 and q == pytest.approx(0.9)
    # FN and TN come from the totals in params: recall of label 0 = 3 / 6
    params = _params("recall", 0, tot_g, tot_h)
    q, k = side_quality(run_g, run_h, tot_g, tot_h, False, labels[:1], H.HEAD_SECO_SINGLE,
                        1.0, params)
    assert (q, k) == (0.5, 0)


def _partial_reference(run_g, run_h, params, labels, lift, bound):
    """mlrl-seco's sorted-prefix search with its early stop, written plainly."""
    values = [H.label_value(run_g, run_h, run_g, run_h, False, int(k), params) for k in labels]
    order = sorted(range(len(labels)), key=lambda i: (-values[i], i))
    total = values[order[0]]
    best, best_n, max_lift = total * lift[0], 1, bound[0]
    for n in range(2, len(labels) + 1):
        total += values[order[n - 1]]
        q = total / n * lift[n - 1]
        if q > best:
            best, best_n = q, n
            if n < len(labels):
                max_lift = bound[n - 1]
        if q * max_lift < best:
            break
    return best, best_n


@pytest.mark.parametrize("lift_name, options", [
    ("peak", {"peak_label": 2, "max_lift": 1.08, "curvature": 1.0}),
    ("peak", {"peak_label": 3, "max_lift": 1.5, "curvature": 1.0}),
    ("kln", {"k": 0.2}), ("none", {})])
def test_partial_quality_against_reference(lift_name, options):
    rng = np.random.default_rng(1)
    K = 7
    Y = np.zeros((3, K), np.uint8)
    lift, bound = lift_tables(lift_name, options, Y)
    labels = np.arange(K, dtype=np.int32)
    for _ in range(200):
        tot_h = rng.integers(5, 30, K)
        tot_g = (tot_h * rng.random(K)).astype(np.int64)
        run_h = (tot_h * rng.random(K)).astype(np.int64)
        run_g = np.minimum(run_h, (tot_g * rng.random(K)).astype(np.int64))
        params = _params("f-measure", 0.5, tot_g, tot_h, (lift, bound))
        q, n = side_quality(run_g, run_h, tot_g, tot_h, False, labels, H.HEAD_SECO_PARTIAL,
                            1.0, params)
        eq, en = _partial_reference(run_g, run_h, params, labels, lift, bound)
        assert q == eq and n == en


def test_partial_quality_with_monotone_lift_is_best_subset():
    """With lift 1 (none), the best head is the best single label: the exhaustive subset
    oracle agrees on the quality."""
    rng = np.random.default_rng(2)
    n, K = 30, 4
    correct = rng.random((n, K)) < 0.4
    uncovered = rng.random((n, K)) < 0.8
    weights = np.ones(n, np.int64)
    covered = rng.random(n) < 0.5
    g, h = (correct & uncovered).astype(np.int64), uncovered.astype(np.int64)
    params = _params("laplace", 0, g.sum(0), h.sum(0))
    q, _ = side_quality(g[covered].sum(0), h[covered].sum(0), g.sum(0), h.sum(0), False,
                        np.arange(K, dtype=np.int32), H.HEAD_SECO_PARTIAL, 1.0, params)
    eq, _ = ref.partial_head(covered, correct, uncovered, weights, np.arange(K), "laplace",
                             None, np.ones(K))
    assert q == pytest.approx(eq, rel=1e-12)


def test_partial_without_selection_predicts_every_label():
    tot_g = np.array([6, 4, 9], np.int64)
    tot_h = np.array([20, 20, 15], np.int64)
    run_g = np.array([3, 3, 0], np.int64)
    run_h = np.array([4, 3, 5], np.int64)
    lift = (np.array([1.0, 1.1, 1.2]), np.ones(3))
    params = _params("precision", 0, tot_g, tot_h, lift, select=False)
    labels = np.array([0, 2], np.int32)
    q, n = side_quality(run_g, run_h, tot_g, tot_h, False, labels, H.HEAD_SECO_PARTIAL, 1.0,
                        params)
    assert n == 2 and q == pytest.approx((0.75 + 0.0) / 2 * 1.1)
