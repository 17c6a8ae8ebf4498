"""Slow, obvious NumPy oracles for TURS: regret by enumeration, the total score of a rule
set example by example, and every candidate literal's scores by masking the data."""

import itertools
import math

import numpy as np

from gpurules.objectives import mdl


def brute_regret(n, K):
    """R(n, K) by enumerating every count vector (h_1..h_K) summing to n."""
    if n == 0:
        return 1.0
    total = 0.0
    for cut in itertools.combinations(range(n + K - 1), K - 1):  # stars and bars
        bounds = (-1,) + cut + (n + K - 1,)
        h = [bounds[i + 1] - bounds[i] - 1 for i in range(K)]
        coef = math.factorial(n)
        for hk in h:
            coef //= math.factorial(hk)
        total += coef * math.prod((hk / n) ** hk for hk in h if hk > 0)
    return total


def nll(counts):
    counts = np.asarray(counts, float)
    s = counts.sum()
    return float(-sum(c * math.log2(c / s) for c in counts if c > 0))


def total_bits(y, C, covers, rule_bits_list):
    """The score of a rule set, example by example: each example's class costs -log2 of
    the distribution of the union of the covers of the rules covering it (the else-rule's if
    none does), plus the regret of every rule's cover and of the else-rule, plus L(M).

    Args: y int (n,); covers bool (K, n); rule_bits_list: L(rule) per rule.
    """
    n = len(y)
    covers = np.asarray(covers, bool).reshape(-1, n)
    K = covers.shape[0]
    uncovered = ~covers.any(axis=0)
    else_p = np.bincount(y[uncovered], minlength=C) / max(uncovered.sum(), 1)
    bits = 0.0
    for i in range(n):
        rules = np.flatnonzero(covers[:, i])
        if len(rules) == 0:
            p = else_p
        else:
            union = covers[rules].any(axis=0)
            p = np.bincount(y[union], minlength=C) / union.sum()
        bits -= math.log2(p[y[i]])
    for size in list(covers.sum(axis=1)) + [uncovered.sum()]:
        bits += math.log2(brute_or_fast_regret(int(size), C))
    model = mdl.universal_code(K) + sum(rule_bits_list) - math.lgamma(K + 1) / math.log(2)
    return bits + model


def brute_or_fast_regret(n, K):
    return brute_regret(n, K) if n <= 12 and K <= 3 else 2.0 ** mdl.log2_regret(n, K)


def literal_scores(ruleset, rule):
    """Per literal (float bits): (gain_incl, gain_excl, cov_incl, cov_excl, valid_incl,
    valid_excl), or None for a literal the search may not use (it leaves one side of the
    not-yet-covered part empty, or its feature is nominal and already in the rule)."""
    data = ruleset.data
    y, C, A = data.y, data.n_classes, data.n_features
    reg = lambda m: mdl.log2_regret(int(m), C)  # noqa: E731
    unc = ruleset.grp == 0
    counts = lambda mask: np.bincount(y[mask], minlength=C)  # noqa: E731
    else_now = nll(counts(unc)) + reg(unc.sum())
    out = []
    for lit in range(len(data.lit_feat)):
        f = int(data.lit_feat[lit])
        present = data.codes[f] >= 0
        sat = data.literal_mask(lit)
        new = rule.cover & sat
        excl = new & unc
        excl_all = rule.cover & unc & present
        if rule.fstate[f] == mdl.F_NOMINAL or excl.sum() == 0 or excl.sum() == excl_all.sum():
            out.append(None)
            continue
        child = rule.refined(lit)
        d_model = ruleset.model_change(child)  # L(M + child) - L(M)
        else_after = nll(counts(unc & ~new)) + reg((unc & ~new).sum())
        R = counts(new)
        S = R.sum()
        gain_excl = else_now - else_after - (nll(counts(excl)) + reg(excl.sum())) - d_model
        mixed = 0.0
        for g in range(1, len(ruleset.groups)):
            in_g = new & (ruleset.grp == g)
            U = ruleset.union_counts[g]
            q = (U + R) / (U.sum() + S)
            p = U / U.sum()
            for k, c in enumerate(counts(in_g)):
                if c:
                    mixed += c * (math.log2(p[k]) - math.log2(q[k]))
        nonoverlap = -sum(c * math.log2(R[k] / S) for k, c in enumerate(counts(excl)) if c)
        gain_incl = else_now - else_after - mixed - nonoverlap - reg(S) - d_model
        cost = math.log2(A) + _new_literal_bits(data, f, rule.cover)
        valid = []
        for base in (rule.cover & present, excl_all):
            left, right = base & sat, base & ~sat
            local = (nll(counts(base)) + reg(base.sum()) - nll(counts(left)) - reg(left.sum())
                     - nll(counts(right)) - reg(right.sum()) - cost)
            valid.append(local)
        out.append((gain_incl, gain_excl, int(S), int(excl.sum()), valid[0], valid[1]))
    return out


def _new_literal_bits(data, f, cover):
    n = data.nonempty_cuts(f, cover)
    if data.numeric[f]:
        return mdl.numeric_literal_bits(n, False)
    return mdl.nominal_literal_bits(n)
