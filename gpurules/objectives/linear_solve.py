"""A small dense symmetric (indefinite) solver for the heads of non-decomposable losses.

mlrl-boomer solves ``(H + R) p = b`` with LAPACK's ``dsysv`` (Bunch-Kaufman ``L D L^T`` with
1x1 and 2x2 pivots). This module does the same factorisation (the algorithm of LAPACK's
``dsytf2`` / ``dsytrs`` with ``uplo='L'``) in plain Python so that it compiles for the CPU and
the GPU from one source; matrices are a few hundred rows at most (K <= ~400, and GBLB makes
them much smaller).

**Singular systems.** When ``dsysv`` meets an exactly zero pivot it returns ``info > 0``
without a solution, and mlrl-boomer 0.15.6 throws ``std::runtime_error("SYSV terminated with
non-zero info code")``, which ends the Python process (reproduced: squared-error loss, two
identical label columns, ``l2_regularization_weight=0``). Here a pivot column whose largest
entry is ``<= n 2^-32 max|A|`` (or NaN) is treated as zero: its multipliers are dropped and
the matching component of ``D^+`` is 0. The result is the stationary point of
``-b.p + 1/2 p.A.p`` over the subspace ``{p : (L^T P^T p)_k = 0 for every zero pivot k}``;
for a consistent system it is an exact solution, and ``A = 0`` gives ``p = 0``. The number
of zero pivots is returned so that callers can tell. With mlrl-boomer's default
``l2_regularization_weight = 1`` the regularised Hessians of all three losses are positive
definite (each loss is convex, so ``H`` is positive semi-definite), and this never happens.

Storage: ``a`` is a flat float64 scratch of at least ``n * n`` values holding an ``n x n``
matrix row-major with stride ``n``; the Bunch-Kaufman functions read and write only its lower
triangle (``a[i * n + j]``, ``j <= i``); the positive definite fast path works on the upper
triangle (:func:`load_packed_upper`, :func:`upper_positive_definite_solve`), where a column of
the lower triangle is a contiguous row. ``ipiv`` is int64 (n,): ``ipiv[k] = r >= 0`` for a 1x1 pivot after rows and
columns ``k`` and ``r`` were swapped, ``ipiv[k] = ipiv[k + 1] = -(r + 1)`` for a 2x2 pivot at
``k, k + 1`` after ``k + 1`` and ``r`` were swapped.
"""

import math

import numpy as np

from gpurules.jit.helpers import register_jitable

# Bunch-Kaufman's pivot threshold (1 + sqrt(17)) / 8, as in LAPACK
_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0
# A pivot column whose entries are all <= n * ZERO_PIVOT * max|A| counts as zero. Round-off
# leaves pivots of about 1e-13 (relative) in exactly rank-deficient matrices, so the plain
# ``n * eps`` of rank decisions misses a fifth of them (measured on random PSD matrices of
# rank r < n <= 40); 2^-32 (2.3e-10) caught all of 2000. It only affects systems with a
# condition number above ~1e9 / n, i.e. never with an L2 weight comparable to the Hessian.
ZERO_PIVOT = 2.0 ** -32


@register_jitable
def load_packed(h, n, a):
    """Unpack the packed symmetric ``h`` (``packed_index`` order, n (n + 1) / 2 values) into
    the lower triangle of ``a`` (stride n)."""
    pos = 0
    for i in range(n):
        for j in range(i + 1):
            a[i * n + j] = h[pos]
            pos += 1


@register_jitable
def packed_quadratic(h, n, x):
    """x^T H x for the packed symmetric ``h`` and float64 ``x`` (n,)."""
    total = 0.0
    pos = 0
    for i in range(n):
        cross = 0.0
        for j in range(i):
            cross += h[pos] * x[j]
            pos += 1
        total += x[i] * (2.0 * cross + h[pos] * x[i])
        pos += 1
    return total


@register_jitable
def _swap(v, i, j):
    t = v[i]
    v[i] = v[j]
    v[j] = t


@register_jitable
def _pivot_tolerance(a, n):
    """n * ZERO_PIVOT * max |a_ij| over the lower triangle."""
    largest = 0.0
    for i in range(n):
        for j in range(i + 1):
            largest = max(largest, abs(a[i * n + j]))
    return n * ZERO_PIVOT * largest


@register_jitable
def _choose_pivot(a, n, k, absakk, colmax, imax):
    """Bunch-Kaufman's choice for column k. Returns (kp, kstep)."""
    if absakk >= _ALPHA * colmax:
        return k, 1
    rowmax = 0.0
    for j in range(k, imax):
        rowmax = max(rowmax, abs(a[imax * n + j]))
    for j in range(imax + 1, n):
        rowmax = max(rowmax, abs(a[j * n + imax]))
    if absakk >= _ALPHA * colmax * (colmax / rowmax):
        return k, 1
    if abs(a[imax * n + imax]) >= _ALPHA * rowmax:
        return imax, 1
    return imax, 2


@register_jitable
def _interchange(a, n, k, kk, kp, kstep):
    """Symmetric swap of rows/columns kk and kp (kp > kk) of the trailing lower triangle."""
    for i in range(kp + 1, n):
        _swap(a, i * n + kk, i * n + kp)
    for j in range(kk + 1, kp):
        _swap(a, j * n + kk, kp * n + j)
    _swap(a, kk * n + kk, kp * n + kp)
    if kstep == 2:
        _swap(a, (k + 1) * n + k, kp * n + k)


@register_jitable
def _eliminate_1x1(a, n, k):
    d11 = 1.0 / a[k * n + k]
    for j in range(k + 1, n):
        f = a[j * n + k] * d11
        if f != 0.0:
            for i in range(j, n):
                a[i * n + j] -= a[i * n + k] * f
    for i in range(k + 1, n):
        a[i * n + k] *= d11


@register_jitable
def _eliminate_2x2(a, n, k):
    if k + 2 >= n:
        return
    d21 = a[(k + 1) * n + k]
    d11 = a[(k + 1) * n + k + 1] / d21
    d22 = a[k * n + k] / d21
    d21 = (1.0 / (d11 * d22 - 1.0)) / d21
    for j in range(k + 2, n):
        wk = d21 * (d11 * a[j * n + k] - a[j * n + k + 1])
        wkp1 = d21 * (d22 * a[j * n + k + 1] - a[j * n + k])
        for i in range(j, n):
            a[i * n + j] -= a[i * n + k] * wk + a[i * n + k + 1] * wkp1
        a[j * n + k] = wk
        a[j * n + k + 1] = wkp1


@register_jitable
def ldl_factor(a, n, ipiv):
    """Factorise the symmetric matrix in ``a`` in place as P L D L^T P^T.

    Returns the number of pivots treated as zero (0 for a non-singular matrix).
    """
    tol = _pivot_tolerance(a, n)
    zero_pivots = 0
    k = 0
    while k < n:
        absakk = abs(a[k * n + k])
        imax = k
        colmax = 0.0
        for i in range(k + 1, n):
            v = abs(a[i * n + k])
            if v > colmax:
                colmax = v
                imax = i
        if not max(absakk, colmax) > tol:  # zero (or NaN) column: D_kk = 0, no multipliers
            for i in range(k, n):
                a[i * n + k] = 0.0
            ipiv[k] = k
            zero_pivots += 1
            k += 1
            continue
        kp, kstep = _choose_pivot(a, n, k, absakk, colmax, imax)
        kk = k + kstep - 1
        if kp != kk:
            _interchange(a, n, k, kk, kp, kstep)
        if kstep == 1:
            _eliminate_1x1(a, n, k)
            ipiv[k] = kp
        else:
            _eliminate_2x2(a, n, k)
            ipiv[k] = -(kp + 1)
            ipiv[k + 1] = -(kp + 1)
        k += kstep
    return zero_pivots


@register_jitable
def _solve_2x2_block(a, n, k, b):
    """b[k:k+2] = D_k^-1 b[k:k+2] for the 2x2 pivot block at k (LAPACK's dsytrs)."""
    akm1k = a[(k + 1) * n + k]
    akm1 = a[k * n + k] / akm1k
    ak = a[(k + 1) * n + k + 1] / akm1k
    denom = akm1 * ak - 1.0
    bkm1 = b[k] / akm1k
    bk = b[k + 1] / akm1k
    b[k] = (ak * bkm1 - bk) / denom
    b[k + 1] = (akm1 * bk - bkm1) / denom


@register_jitable
def ldl_solve(a, n, ipiv, b):
    """Overwrite float64 ``b`` (n,) with the solution of A x = b from ``ldl_factor``'s result."""
    k = 0
    while k < n:  # L D y = P^T b
        if ipiv[k] >= 0:
            if ipiv[k] != k:
                _swap(b, k, ipiv[k])
            bk = b[k]
            for i in range(k + 1, n):
                b[i] -= a[i * n + k] * bk
            d = a[k * n + k]
            b[k] = 0.0 if d == 0.0 else bk / d
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                _swap(b, k + 1, kp)
            for i in range(k + 2, n):
                b[i] -= a[i * n + k] * b[k] + a[i * n + k + 1] * b[k + 1]
            _solve_2x2_block(a, n, k, b)
            k += 2
    k = n - 1
    while k >= 0:  # L^T P^T x = y
        step = 1 if ipiv[k] >= 0 else 2
        for c in range(k - step + 1, k + 1):
            s = 0.0
            for i in range(k + 1, n):
                s += a[i * n + c] * b[i]
            b[c] -= s
        kp = ipiv[k] if ipiv[k] >= 0 else -ipiv[k] - 1
        if kp != k:
            _swap(b, k, kp)
        k -= step


@register_jitable
def _sub_scaled(dst, d0, src, s0, lo, hi, f):
    """dst[d0 + i] -= src[s0 + i] * f for lo <= i < hi. Unsigned indices: Numba then emits
    no negative-index wraparound and LLVM vectorises the loop (2x faster at n = 45)."""
    d0 = np.uint64(d0)
    s0 = np.uint64(s0)
    for i in range(np.uint64(lo), np.uint64(hi)):
        dst[d0 + i] -= src[s0 + i] * f


@register_jitable
def positive_definite_solve(a, n, b):
    """Solve A x = b in place by an unpivoted L D L^T if every pivot is clearly positive
    (``> n 2^-32 max|A|``, i.e. A is numerically positive definite, the usual case of
    ``H + l2 I``); about 5x faster than :func:`factor_solve` for small n.

    ``a`` holds A's lower triangle (as everywhere in this module); it is mirrored into the
    upper triangle and factorised there by :func:`upper_positive_definite_solve`.

    Returns False, with ``a`` and ``b`` overwritten, when a pivot is not; the caller then
    reloads the system and calls :func:`factor_solve`.
    """
    tol = _pivot_tolerance(a, n)
    for i in range(n):  # upper triangle, row j = column j of the lower one
        for j in range(i):
            a[j * n + i] = a[i * n + j]
    return upper_positive_definite_solve(a, n, b, tol)


@register_jitable
def load_packed_upper(h, n, a):
    """Unpack the packed symmetric ``h`` into the *upper* triangle of ``a`` (row j holds
    column j of the lower triangle: ``a[j n + i] = H_ij`` for i >= j). Returns the largest
    |H_ij| off the diagonal (the caller adds the diagonal's, after regularising it)."""
    pos = 0
    largest = 0.0
    for i in range(n):
        for j in range(i):
            v = h[pos]
            a[j * n + i] = v
            largest = max(largest, abs(v))
            pos += 1
        a[i * n + i] = h[pos]
        pos += 1
    return largest


@register_jitable
def upper_positive_definite_solve(a, n, b, tol):
    """:func:`positive_definite_solve` on a matrix held in the upper triangle of ``a`` (see
    :func:`load_packed_upper`), with the zero-pivot tolerance ``tol`` (``n 2^-32 max|A|``).

    Column k of L is the contiguous ``a[k n + k + 1 : k n + n]``, so the rank-1 updates run
    along rows and vectorise (a 45 x 45 system: 31 us with column-strided loops, 8 us so).
    Every entry sees the operations of the plain right-looking L D L^T in the same order, so
    the result is bit-identical to it (tests/test_linear_solve.py).
    """
    for k in range(n):
        rk = k * n
        d = a[rk + k]
        if not d > tol:
            return False
        inv = 1.0 / d
        for j in range(k + 1, n):
            _sub_scaled(a, j * n, a, rk, j, n, a[rk + j] * inv)
        for i in range(k + 1, n):
            a[rk + i] *= inv
    for k in range(n):  # L y = b
        _sub_scaled(b, 0, a, k * n, k + 1, n, b[k])
    for k in range(n):  # D z = y
        b[k] /= a[k * n + k]
    for k in range(n - 1, -1, -1):  # L^T x = z
        s = 0.0
        rk = k * n
        for i in range(k + 1, n):
            s += a[rk + i] * b[i]
        b[k] -= s
    return True


@register_jitable
def factor_solve(a, n, ipiv, b):
    """Solve A x = b in place (``a`` holds A's lower triangle and is overwritten).

    Returns the number of zero pivots (see the module docstring for what x is then).
    """
    zero_pivots = ldl_factor(a, n, ipiv)
    ldl_solve(a, n, ipiv, b)
    return zero_pivots
