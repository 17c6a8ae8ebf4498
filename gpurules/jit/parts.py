"""Work split into parts of about equal size, for the parallel forms of the kernels.

A kernel's ``prange`` over its items (sampled features) gives each thread a contiguous run
of them, as many items each; where the items' costs differ (in the histogram build, a
feature whose rows are brought up to date by taking out the examples that left the
coverage since the rule's first step, against one since the last step), one thread works
while the other waits. :func:`balanced_parts` assigns the items by their cost instead.
(Where the cost is not what it looks like, it does worse: the exact search's features by
the entries they read made two-thread fits slower, ``docs/benchmarks.md``, session 26.)
"""

import numpy as np

from gpurules.jit.cache import njit


@njit
def balanced_parts(rows, parts):
    """The part (int64 (S,), ``0 .. parts - 1``) of each of S items that cost ``rows``
    (int64 (S,), e.g. the rows a feature's search or build visits): the largest first,
    each to the part with the fewest rows so far (ties: the lower item, the lower part; so
    the split depends on nothing but ``rows``). With equal costs the parts get
    ``ceil(S / parts)`` or ``floor(S / parts)`` items; one part (or none) gets all."""
    S = rows.shape[0]
    part = np.zeros(S, np.int64)
    if parts <= 1:
        return part
    order = np.empty(S, np.int64)  # the items by rows, descending (an insertion sort: a
    for j in range(S):  # few items; np.argsort added a second of compilation per kernel)
        k = j
        while k > 0 and rows[order[k - 1]] < rows[j]:
            order[k] = order[k - 1]
            k -= 1
        order[k] = j
    load = np.zeros(parts, np.int64)
    for j in order:
        t = 0
        for u in range(1, parts):
            if load[u] < load[t]:
                t = u
        part[j] = t
        load[t] += rows[j]
    return part
