"""The Bunch-Kaufman L D L^T solver of ``objectives.linear_solve`` against ``np.linalg.solve``
on SPD, indefinite and singular systems (packed input as the heads pass it)."""

import numba as nb
import numpy as np
import pytest

from gpurules.objectives import linear_solve
from tests.reference.non_decomposable_reference import pack, unpack


@nb.njit
def _solve_packed(h, n, b):
    a = np.empty(n * n)
    ipiv = np.empty(n, np.int64)
    linear_solve.load_packed(h, n, a)
    x = b.copy()
    zero = linear_solve.factor_solve(a, n, ipiv, x)
    return x, zero


@nb.njit
def _quadratic(h, n, x):
    return linear_solve.packed_quadratic(h, n, x)


def solve(A, b):
    return _solve_packed(pack(A), A.shape[0], np.asarray(b, dtype=np.float64))


def _random_system(rng, n, kind):
    M = rng.normal(size=(n, n))
    if kind == "spd":
        A = M @ M.T + 0.1 * np.eye(n)
    elif kind == "indefinite":
        A = M + M.T
    else:  # zero diagonal: Bunch-Kaufman must take 2x2 pivots
        A = M + M.T
        A[np.diag_indices(n)] = 0.0
    return A, rng.normal(size=n)


@pytest.mark.parametrize("kind", ["spd", "indefinite", "zero-diagonal"])
def test_matches_numpy_solve(kind):
    rng = np.random.default_rng(1)
    for _ in range(150):
        n = int(rng.integers(2 if kind == "zero-diagonal" else 1, 25))
        A, b = _random_system(rng, n, kind)
        x, zero = solve(A, b)
        ref = np.linalg.solve(A, b)
        assert zero == 0
        tol = 1e-12 * np.linalg.cond(A) * max(1.0, np.abs(ref).max())
        np.testing.assert_allclose(x, ref, rtol=0, atol=tol)


def test_large_system_like_a_complete_head_of_400_labels():
    rng = np.random.default_rng(2)
    n = 400
    M = rng.normal(size=(n, n)) / np.sqrt(n)
    A = M @ M.T + np.eye(n)
    b = rng.normal(size=n)
    x, zero = solve(A, b)
    assert zero == 0
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-10, atol=1e-10)


def test_zero_matrix_gives_zero_solution():
    x, zero = solve(np.zeros((3, 3)), np.ones(3))
    assert zero == 3
    np.testing.assert_array_equal(x, 0.0)


def test_consistent_singular_system_is_solved_exactly():
    rng = np.random.default_rng(3)
    for rank in (1, 3, 5):
        M = rng.normal(size=(7, rank))
        A = M @ M.T                        # PSD of the given rank
        b = A @ rng.normal(size=7)         # in the range of A
        x, zero = solve(A, b)
        assert zero == 7 - rank
        np.testing.assert_allclose(A @ x, b, atol=1e-9 * np.abs(b).max())


def test_inconsistent_singular_system_minimises_over_the_nonzero_pivots():
    """mlrl-boomer aborts here (dsysv info > 0); the result is finite, deterministic, and no
    worse than p = 0 for the quadratic -b.p + 1/2 p.A.p of a PSD matrix."""
    c = 0.7
    A = c * np.array([[1.0, -1.0], [-1.0, 1.0]])   # squared error, two identical labels
    b = np.array([-1.0, -1.0])                      # not in the range of A
    x, zero = solve(A, b)
    assert zero == 1
    np.testing.assert_allclose(x, [-1.0 / c, 0.0])
    rng = np.random.default_rng(4)
    for _ in range(50):
        M = rng.normal(size=(6, 3))
        A = M @ M.T
        b = rng.normal(size=6)
        x, zero = solve(A, b)
        assert zero == 3 and np.isfinite(x).all()
        assert -b @ x + 0.5 * x @ A @ x <= 1e-12


def test_nan_column_counts_as_zero_pivot():
    A = np.array([[np.nan, 0.0], [0.0, 2.0]])
    x, zero = solve(A, np.array([1.0, 4.0]))
    assert zero >= 1 and x[1] == 2.0


def test_packed_quadratic_and_unpacking():
    rng = np.random.default_rng(5)
    for n in (1, 2, 5, 9):
        A = rng.normal(size=(n, n))
        A = A + A.T
        x = rng.normal(size=n)
        assert _quadratic(pack(A), n, x) == pytest.approx(x @ A @ x, rel=1e-12, abs=1e-12)
        np.testing.assert_array_equal(unpack(pack(A), n), A)


@nb.njit
def _pd_solve_packed(h, n, b):
    a = np.empty(n * n)
    linear_solve.load_packed(h, n, a)
    x = b.copy()
    ok = linear_solve.positive_definite_solve(a, n, x)
    return x, ok


def _ldl_reference(A, b):
    """Unpivoted L D L^T in plain Python floats, right-looking, column by column: the
    operation order positive_definite_solve documents (IEEE doubles, no fused multiply-add),
    so its result must match bit for bit."""
    n = A.shape[0]
    a = [[float(A[i, j]) for j in range(n)] for i in range(n)]
    for k in range(n):
        inv = 1.0 / a[k][k]
        for j in range(k + 1, n):
            f = a[j][k] * inv
            for i in range(j, n):
                a[i][j] -= a[i][k] * f
        for i in range(k + 1, n):
            a[i][k] *= inv
    x = [float(v) for v in b]
    for k in range(n):
        for i in range(k + 1, n):
            x[i] -= a[i][k] * x[k]
    for k in range(n):
        x[k] /= a[k][k]
    for k in range(n - 1, -1, -1):
        s = 0.0
        for i in range(k + 1, n):
            s += a[i][k] * x[i]
        x[k] -= s
    return np.array(x)


def test_positive_definite_solve_is_bit_identical_to_the_plain_ldl():
    """The vectorised row form performs each entry's operations in the plain order."""
    rng = np.random.default_rng(6)
    for n in (1, 2, 3, 7, 16, 45, 53):
        M = rng.normal(size=(n, 2 * n))
        A = M @ M.T / n + np.eye(n)
        b = rng.normal(size=n)
        x, ok = _pd_solve_packed(pack(A), n, b)
        assert ok
        np.testing.assert_array_equal(x, _ldl_reference(A, b))
        np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-9, atol=1e-12)


def test_positive_definite_solve_declines_indefinite_systems():
    A = np.array([[1.0, 2.0], [2.0, 1.0]])
    _, ok = _pd_solve_packed(pack(A), 2, np.ones(2))
    assert not ok
