"""MDL code lengths of TURS (truly unordered rule sets), written once.

All lengths are in bits. The pieces:

* ``log2_regret(n, K)``: log2 of the multinomial NML regret (parametric complexity)
  ``R(n, K) = sum_{h_1+..+h_K=n} n!/(h_1!..h_K!) prod (h_k/n)^h_k``. ``R(n, 2)`` is the
  series ``sum_k n!/((n-k)! n^k)`` truncated where its terms fall below double precision
  (Mononen & Myllymaki 2008: O(sqrt(n)) terms), then ``R(n, K) = R(n, K-1) +
  n/(K-2) R(n, K-2)`` (Kontkanen & Myllymaki 2007). ``regret_table`` caches a whole table.
* ``universal_code(n)``: Rissanen's universal code for positive integers
  (``log2 c0 + log2 n + log2 log2 n + ...``, positive terms only; ``L(0) = 0``).
* literal, rule and model lengths (``literal_bits``, ``rule_bits``, ``model_bits``).
* ``nll_bits(counts)``: the negative log2-likelihood of class counts under their own
  maximum-likelihood distribution.
* ``literal_scores``: the score of one candidate literal from class-count histograms, in
  fixed-point integers (``SCALE`` units per bit) so that the CPU (``numba.njit``) and CUDA
  (``numba.cuda.jit(device=True)``) compilations of this one Python function agree bit for
  bit. It is plain Python: the backends compile it (its helpers are ``register_jitable``).
"""

import functools
import math

import numpy as np

from gpurules.jit.cache import njit
from gpurules.jit.helpers import register_jitable


UNIVERSAL_C0 = 2.865064  # Rissanen's normalising constant
SCALE = 2.0 ** 32  # fixed-point units per bit of the search tables
ONE_BIT = np.int64(1) << 32  # SCALE as an int64
NO_GAIN = np.iinfo(np.int64).min  # gain of an invalid literal

# literal operators (``lit_op``)
OP_LT, OP_GE, OP_EQ, OP_NE = 0, 1, 2, 3
# per-feature state of a rule under construction (``fstate``)
F_FREE, F_LOWER, F_UPPER, F_INTERVAL, F_NOMINAL = 0, 1, 2, 3, 4
# bits of ``out_flags``
VALID_INCL, VALID_EXCL = 1, 2


# -- regret --------------------------------------------------------------------------------
@njit
def _binary_regret(n):
    """R(n, 2) by the truncated series ``sum_k prod_{j<k} (n-j)/n`` (float64)."""
    if n < 1:
        return 1.0
    bound = int(math.ceil(2.0 + math.sqrt(2.0 * n * 17.0 * math.log(10.0))))
    total = 1.0
    term = 1.0
    for k in range(1, min(n, bound) + 1):
        term = term * (n - k + 1) / n
        total += term
    return total


@njit
def _log2_regret(n, K):
    """log2 R(n, K) by the recurrence, rescaled so that large n and K cannot overflow."""
    if K <= 1 or n < 1:
        return 0.0
    prev, cur, log_scale = 1.0, _binary_regret(n), 0.0
    for j in range(3, K + 1):
        prev, cur = cur, cur + n * prev / (j - 2.0)
        if cur > 1e200:
            prev /= 1e200
            cur /= 1e200
            log_scale += 200.0 * math.log2(10.0)
    return math.log2(cur) + log_scale


@njit
def _regret_table(n_max, K):
    out = np.empty(n_max + 1, dtype=np.float64)
    for n in range(n_max + 1):
        out[n] = _log2_regret(n, K)
    return out


def log2_regret(n, K):
    """log2 of the multinomial NML regret R(n, K) for n >= 0 items and K >= 1 classes."""
    if n < 0 or K < 1:
        raise ValueError(f"log2_regret needs n >= 0 and K >= 1, got n={n}, K={K}")
    return float(_log2_regret(int(n), int(K)))


@functools.lru_cache(maxsize=8)
def regret_table(n_max, K):
    """float64 (n_max + 1,): ``log2 R(n, K)`` for n = 0..n_max (cached; read-only)."""
    table = _regret_table(int(n_max), int(K))
    table.setflags(write=False)
    return table


# -- integer and model codes ---------------------------------------------------------------
def universal_code(n):
    """Rissanen's universal code length of a positive integer n (bits); 0 for n = 0."""
    if n < 0:
        raise ValueError(f"universal_code needs n >= 0, got {n}")
    if n == 0:
        return 0.0
    bits = math.log2(UNIVERSAL_C0)
    value = float(n)
    while True:
        value = math.log2(value)
        if value <= 0:
            return bits
        bits += value


def log2_comb(n, k):
    """log2 of the binomial coefficient C(n, k) (0 <= k <= n)."""
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(2)


# numeric literal codes (``numeric_literal_bits``); ``literal_scores`` takes their index
LITERAL_CODES = ("cuts", "form-operator-cuts")
LITERAL_CODE_CUTS, LITERAL_CODE_FORM_OPERATOR = 0, 1


def numeric_literal_bits(n_cuts, interval, literal_code="form-operator-cuts"):
    """Bits of one literal on a numeric feature with ``n_cuts`` non-empty cut points (those
    that leave examples of the rule's cover on both sides when the literal is added).

    ``"form-operator-cuts"`` (the thesis): the form (one-sided or interval; free when only
    one cut exists), then for ``x < v`` / ``x >= v`` the operator and one of the cuts, for
    ``v1 <= x < v2`` a pair of cuts. ``"cuts"`` (the authors' rule code,
    ``ModelEncoding.rule_cl_model_dep``): the cut or the pair of cuts only."""
    if literal_code not in LITERAL_CODES:
        raise ValueError(f"literal_code={literal_code!r} is not supported; use one of "
                         f"{LITERAL_CODES}")
    if n_cuts < 1 or (interval and n_cuts < 2):
        raise ValueError(f"no {'interval' if interval else 'one-sided'} literal exists on a "
                         f"feature with {n_cuts} cut point(s)")
    operator = 1.0 if literal_code == "form-operator-cuts" else 0.0
    form = operator if n_cuts >= 2 else 0.0
    return form + (log2_comb(n_cuts, 2) if interval else operator + math.log2(n_cuts))


def nominal_literal_bits(n_levels):
    """Bits of ``x == level`` / ``x != level``: the operator and one of the ``n_levels``
    levels present in the rule's cover when the literal is added."""
    if n_levels < 1:
        raise ValueError("a nominal literal needs at least one level")
    return 1.0 + math.log2(n_levels)


COUNT_CODES = ("uniform", "universal")


def literal_count_bits(n_features, k, count_code="uniform"):
    """Bits of a rule's literal count k: uniform over 1..n_features (``"uniform"``, the
    thesis) or Rissanen's universal code of k (``"universal"``, the authors' code)."""
    if count_code == "uniform":
        return math.log2(n_features)
    if count_code == "universal":
        return universal_code(k)
    raise ValueError(f"count_code={count_code!r} is not supported; use one of {COUNT_CODES}")


def rule_bits(n_features, literal_bits, count_code="uniform"):
    """Bits of one rule: its literal count (``literal_count_bits``), which features
    (log2 C(n_features, k)), and each literal's own bits."""
    k = len(literal_bits)
    return (literal_count_bits(n_features, k, count_code) + log2_comb(n_features, k)
            + float(sum(literal_bits)))


def model_bits(rule_lengths):
    """L(M): universal code of the number of rules + the rules' bits - log2 K! (rules
    form a set, so their order is not paid for)."""
    K = len(rule_lengths)
    return universal_code(K) + float(sum(rule_lengths)) - math.lgamma(K + 1) / math.log(2)


def nll_bits(counts):
    """-log2 likelihood of class ``counts`` under their own ML distribution (float)."""
    c = np.asarray(counts, dtype=np.float64)
    total = c.sum()
    c = c[c > 0]
    return float(-(c * np.log2(c / total)).sum()) if total > 0 else 0.0


def fixed(values):
    """Bits as int64 fixed point (``SCALE`` units per bit, rounded)."""
    return np.rint(np.asarray(values, dtype=np.float64) * SCALE).astype(np.int64)


@functools.lru_cache(maxsize=8)
def search_tables(n, K):
    """Fixed-point lookup tables of one fit with n examples and K classes (read-only int64):
    ``log2(c)`` for c = 0..2n+1 (0 at c = 0), ``c log2 c`` for c = 0..n, and
    ``log2 R(c, K)`` for c = 0..n."""
    c = np.arange(2 * n + 2, dtype=np.float64)
    log2c = np.zeros_like(c)
    log2c[1:] = np.log2(c[1:])
    tables = fixed(log2c), fixed(c[:n + 1] * log2c[:n + 1]), fixed(regret_table(n, K))
    for t in tables:
        t.setflags(write=False)
    return tables


# -- the score of one candidate literal (compiled by the backends) -------------------------
@register_jitable
def literal_count(lit, g, k, lit_feat, lit_op, lit_arg, bin_offset, hist, totals):
    """Class-k count of local group g among the examples that satisfy literal ``lit``.

    ``hist`` holds per-bin counts of nominal features and running (inclusive prefix) sums
    over the bins of numeric ones; ``totals[f]`` the counts with a non-missing value of f."""
    f = lit_feat[lit]
    op = lit_op[lit]
    row = bin_offset[f] + lit_arg[lit]
    if op == OP_LT:
        return hist[row - 1, g, k]
    if op == OP_GE:
        return totals[f, g, k] - hist[row - 1, g, k]
    if op == OP_EQ:
        return hist[row, g, k]
    return totals[f, g, k] - hist[row, g, k]


@register_jitable
def nonempty_bins(hist, bin_offset, numeric, f):
    """The cut points (numeric f: last minus first occupied bin) or levels (nominal f:
    occupied bins) of feature f that split the examples counted in ``hist`` (raw counts,
    not yet running sums)."""
    first = -1
    last = -1
    occupied = 0
    for b in range(bin_offset[f], bin_offset[f + 1]):
        s = 0
        for g in range(hist.shape[1]):
            for k in range(hist.shape[2]):
                s += hist[b, g, k]
        if s > 0:
            occupied += 1
            if first < 0:
                first = b
            last = b
    if numeric[f]:
        return last - first if first >= 0 else 0
    return occupied


@register_jitable
def feature_running_sums(hist, bin_offset, numeric, f, totals):
    """Feature ``f``'s part of the batched candidate evaluation, in place, after
    :func:`nonempty_bins` has read the raw counts: inclusive prefix sums of ``hist``
    (int (B, G, C)) over its bins if it is numeric, and ``totals[f]`` (G, C) = its
    non-missing counts."""
    for g in range(hist.shape[1]):
        for k in range(hist.shape[2]):
            s = 0
            for b in range(bin_offset[f], bin_offset[f + 1]):
                s += hist[b, g, k]
                if numeric[f]:
                    hist[b, g, k] = s
            totals[f, g, k] = s


@register_jitable
def one_sided_fixed(numeric, n, L2):
    """Fixed-point ``numeric_literal_bits(n, False)`` / ``nominal_literal_bits(n)`` from the
    ``log2`` table (-1 if no such literal exists)."""
    if n < 1:
        return -1
    if numeric:
        return (ONE_BIT if n >= 2 else 0) + ONE_BIT + L2[n]
    return ONE_BIT + L2[n]


@register_jitable
def _nll_fixed(CL, counts, m, total):
    """Fixed-point ML negative log-likelihood of ``counts[m, :]`` summing to ``total``."""
    s = CL[total]
    for k in range(counts.shape[1]):
        s -= CL[counts[m, k]]
    return s


def literal_scores(lit, lit_feat, lit_op, lit_arg, bin_offset, numeric, hist, totals,
                   nonempty, fstate, ncuts, else_counts, union_counts, union_size, L2, CL,
                   REG, base_model, new_feature_model, log2_features, literal_code, work,
                   out_gain_incl, out_gain_excl, out_cov_incl, out_cov_excl, out_flags):
    """Score literal ``lit`` as a refinement of the beam rule whose histograms are given.

    Local groups: 0 = the examples no rule of the set covers, g >= 1 = the examples covered
    by exactly one combination of rules (a modelling group) whose union of covers has class
    counts ``union_counts[g]`` (int64 (G, C)) and size ``union_size[g]``.
    ``else_counts`` (C,): class counts of all uncovered examples. ``L2``, ``CL``, ``REG``:
    ``search_tables``. Model bits (fixed point): ``base_model`` = L(M + rule) - L(M) before
    the literal, ``new_feature_model`` = the change of log2 C(A, k) for one more feature,
    ``log2_features`` = log2 A. A new literal on f costs ``numeric_literal_bits`` /
    ``nominal_literal_bits`` of the ``nonempty[f]`` cut points (levels) of f that split the
    rule's cover, in the code ``literal_code`` (``LITERAL_CODE_CUTS`` or
    ``LITERAL_CODE_FORM_OPERATOR``); turning the rule's one-sided literal on f into an
    interval costs the difference to a pair of its ``ncuts[f]`` cut points (counted when f
    entered the rule). The local test charges log2 A + a one-sided literal with its form
    and operator bits (``one_sided_fixed``) in either code. ``work`` int64 (L, 4, C)
    scratch.

    Writes (fixed point): the gains ``L(M) - L(M + refined rule)`` with the rule's overlap
    modelled (incl) and ignored (excl), the rule's coverage (all, not yet covered) and the
    flags VALID_INCL / VALID_EXCL (the literal leaves both sides of the not-yet-covered part
    non-empty and passes the MDL local test).
    """
    C = union_counts.shape[1]
    G = union_counts.shape[0]
    f = lit_feat[lit]
    op = lit_op[lit]
    out_flags[lit] = 0
    out_gain_incl[lit] = NO_GAIN
    out_gain_excl[lit] = NO_GAIN
    st = fstate[f]
    # 0: incl counts R, 1: excl counts N0, 2: incl non-missing totals, 3: excl totals
    S = 0
    E = 0
    S_all = 0
    E_all = 0
    for k in range(C):
        r = 0
        t = 0
        for g in range(G):
            r += literal_count(lit, g, k, lit_feat, lit_op, lit_arg, bin_offset, hist, totals)
            t += totals[f, g, k]
        e = literal_count(lit, 0, k, lit_feat, lit_op, lit_arg, bin_offset, hist, totals)
        work[lit, 0, k] = r
        work[lit, 1, k] = e
        work[lit, 2, k] = t
        work[lit, 3, k] = totals[f, 0, k]
        S += r
        E += e
        S_all += t
        E_all += totals[f, 0, k]
    out_cov_incl[lit] = S
    out_cov_excl[lit] = E
    if st == F_NOMINAL or E == 0 or E == E_all:
        return
    # model bits the literal adds to the rule
    literal_bits = one_sided_fixed(numeric[f], nonempty[f], L2)
    if literal_bits < 0:
        return
    if st == F_FREE:
        if numeric[f] and literal_code == LITERAL_CODE_CUTS:
            d_model = base_model + new_feature_model + L2[nonempty[f]]
        else:
            d_model = base_model + new_feature_model + literal_bits
    elif (st == F_LOWER and op == OP_LT) or (st == F_UPPER and op == OP_GE):
        if ncuts[f] < 2:
            return
        # log2 C(n, 2) - log2 n = log2 (n - 1) - 1, less the operator bit if it was paid
        d_model = base_model + L2[ncuts[f] - 1] - ONE_BIT
        if literal_code == LITERAL_CODE_FORM_OPERATOR:
            d_model -= ONE_BIT
    else:  # tightening a bound the rule already has
        d_model = base_model
    # the else-rule before and after
    U = 0
    U_new = 0
    else_before = 0
    else_after = 0
    for k in range(C):
        U += else_counts[k]
        U_new += else_counts[k] - work[lit, 1, k]
        else_before -= CL[else_counts[k]]
        else_after -= CL[else_counts[k] - work[lit, 1, k]]
    else_before += CL[U] + REG[U]
    else_after += CL[U_new] + REG[U_new]
    else_gain = else_before - else_after
    # excl: the rule's not-yet-covered part on its own
    out_gain_excl[lit] = else_gain - (_nll_fixed(CL, work[lit], 1, E) + REG[E]) - d_model
    # incl: not-yet-covered part under the rule's distribution, overlaps under the
    # coverage-weighted mix of the group's union and the rule
    nonoverlap = E * L2[S]
    for k in range(C):
        nonoverlap -= work[lit, 1, k] * L2[work[lit, 0, k]]
    mixed = 0
    for g in range(1, G):
        for k in range(C):
            n_gk = literal_count(lit, g, k, lit_feat, lit_op, lit_arg, bin_offset, hist,
                                 totals)
            if n_gk > 0:
                u_gk = union_counts[g, k]
                mixed += n_gk * (L2[u_gk] - L2[union_size[g]] - L2[u_gk + work[lit, 0, k]]
                                 + L2[union_size[g] + S])
    out_gain_incl[lit] = else_gain - mixed - nonoverlap - REG[S] - d_model
    # MDL local tests: splitting the rule's cover by the literal must pay for the literal
    flags = 0
    for side in range(2):
        full = S_all if side == 0 else E_all
        part = S if side == 0 else E
        parent = _nll_fixed(CL, work[lit], 2 + side, full) + REG[full]
        left = _nll_fixed(CL, work[lit], side, part) + REG[part]
        right = CL[full - part] + REG[full - part]
        for k in range(C):
            right -= CL[work[lit, 2 + side, k] - work[lit, side, k]]
        if parent - left - right - log2_features - literal_bits > 0:
            flags |= VALID_INCL if side == 0 else VALID_EXCL
    out_flags[lit] = flags
