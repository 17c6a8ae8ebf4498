"""``objectives.exponential.exp_nonpositive``: accuracy against a 50-digit reference, the
edges of its range, and the same bits compiled and in Python (the CUDA build is checked
against the host on a GPU, ``tests/test_cuda_gpu.py``)."""

import math
from decimal import Decimal, localcontext

import numpy as np
from numba import njit

from gpurules.objectives import exponential as E
from gpurules.objectives.compiled import exp_nonpositive as inlined_exp
from gpurules.objectives.exponential import EXP_ZERO_BELOW, exp_nonpositive


@njit
def _compiled(xs, out):
    for i in range(xs.shape[0]):
        out[i] = exp_nonpositive(xs[i])
    return out


def _ulp_errors(xs, got):
    """|got - exp(x)| in ulps of the float64 nearest exp(x), for normal results."""
    errors = []
    with localcontext() as ctx:
        ctx.prec = 50
        for x, y in zip(xs, got):
            exact = Decimal(float(x)).exp()
            nearest = float(exact)
            if nearest < 2.3e-308:
                continue
            errors.append(abs(float((Decimal(float(y)) - exact) / Decimal(math.ulp(nearest)))))
    return np.array(errors)


def test_within_a_little_over_half_an_ulp():
    rng = np.random.default_rng(0)
    xs = np.concatenate([-rng.random(6000) * 745.0, -rng.random(3000) * 2.0,
                         -rng.random(1000) * 1e-6])
    got = _compiled(xs, np.empty_like(xs))
    errors = _ulp_errors(xs, got)
    assert errors.max() < 0.52, errors.max()
    # glibc's exp is within half an ulp but for rare cases: almost always the same bits
    # (math.exp is the C library's; np.exp is not on CPUs with AVX-512, where NumPy uses its
    # own vector exp, up to about 1 ulp off: 5 % of these values differ there)
    glibc = np.array([math.exp(x) for x in xs])
    assert np.mean(got != glibc) < 0.01


def test_edges_of_the_range():
    xs = np.array([0.0, -0.0, -1e-300, -5e-324, -math.log(2.0) / 256, -1.0, -708.39,
                   -709.0, -744.0, -745.13, EXP_ZERO_BELOW, -745.3, -1e4, -np.inf])
    got = _compiled(xs, np.empty_like(xs))
    assert got[0] == got[1] == got[2] == got[3] == 1.0
    assert got[5] == np.exp(-1.0)
    # subnormal results round once: within one least subnormal of the C library's
    assert np.all(np.abs(got[:11] - np.exp(xs[:11])) <= np.maximum(
        5e-324, 1.2 * np.spacing(np.exp(xs[:11]))))
    assert got[9] > 0.0 and np.all(got[11:] == 0.0)
    assert np.all(np.diff(_compiled(np.linspace(0.0, -745.2, 200001),
                                    np.empty(200001))) <= 0.0)  # monotone


def test_python_and_compiled_give_the_same_bits():
    xs = -np.random.default_rng(1).random(2000) * 746.0
    python = np.array([exp_nonpositive(float(x)) for x in xs])
    np.testing.assert_array_equal(python, _compiled(xs, np.empty_like(xs)))


def _branchy(x):
    """The algorithm as first written, with branches (before it was made branch-free for
    the vectorised statistics update): the reference that the bits did not change."""
    if x < EXP_ZERO_BELOW:
        return 0.0
    k = int(math.floor(x * E._INV_LN2 + 0.5))
    r = (x - k * E._LN2_HI) - k * E._LN2_LO
    q = ((((r * (1.0 / 120.0) + 1.0 / 24.0) * r + 1.0 / 6.0) * r + 0.5) * r + 1.0) * r
    j = k & (E._N - 1)
    t = E._T_HI[j]
    v = t + (t * q + E._T_LO[j])
    e = -(k >> E._SHIFT)
    if e <= 1022:
        return v * E._SCALE[e]
    return (v * E._SCALE[e - 54]) * E._TWO_M54


@njit
def _inlined(xs, out):
    for i in range(xs.shape[0]):
        out[i] = inlined_exp(xs[i])
    return out


def test_branch_free_form_gives_the_first_forms_bits():
    """Every compiled form (called; inlined into the CPU's losses) against the branchy
    reference, across the range, at its edges and beyond the clamp of the table indices."""
    rng = np.random.default_rng(2)
    xs = np.concatenate([-rng.random(20000) * 746.0, -rng.random(2000) * 1e-3,
                         -708.4 - rng.random(2000) * 37.0,
                         [0.0, -0.0, EXP_ZERO_BELOW, -745.19999, -745.20001, -746.19,
                          -746.21, -1e4, -1e300, -np.inf]])
    want = np.array([_branchy(float(x)) for x in xs])
    np.testing.assert_array_equal(_compiled(xs, np.empty_like(xs)), want)
    np.testing.assert_array_equal(_inlined(xs, np.empty_like(xs)), want)


def test_nan_gives_nan():
    xs = np.array([np.nan])
    assert np.isnan(_compiled(xs, np.empty(1))[0]) and np.isnan(_inlined(xs, np.empty(1))[0])
    assert math.isnan(exp_nonpositive(math.nan))
