"""Slow references of the holdout strata (``gpurules.learners.holdout``): plain loops."""

import numpy as np


def output_wise_strata(Y):
    """mlrl-boomer's output-wise strata: repeatedly the label with the fewest examples not
    yet in a stratum (ties: lower index) takes those examples; then the label-less ones."""
    n, K = Y.shape
    assigned = [False] * n
    strata = []
    while True:
        counts = [sum(1 for i in range(n) if Y[i, k] and not assigned[i]) for k in range(K)]
        candidates = [(c, k) for k, c in enumerate(counts) if c > 0]
        if not candidates:
            break
        _, label = min(candidates)
        stratum = [i for i in range(n) if Y[i, label] and not assigned[i]]
        for i in stratum:
            assigned[i] = True
        strata.append(stratum)
    rest = [i for i in range(n) if not assigned[i]]
    return strata + ([rest] if rest else [])


def example_wise_strata(Y):
    """One stratum per distinct label vector, rarest first, ties by first occurrence."""
    groups = {}
    for i, row in enumerate(map(tuple, np.asarray(Y))):
        groups.setdefault(row, []).append(i)
    first = {key: members[0] for key, members in groups.items()}
    return [groups[key] for key in sorted(groups, key=lambda k: (len(groups[k]), first[k]))]
