"""Work split into parts of about equal size, for the parallel forms of the kernels.

A kernel's ``prange`` over its items (sampled features) gives each thread a contiguous run
of them, as many items each; where the items' costs differ (a feature whose rows were kept
from an earlier step of the rule against one read in full), one thread works while the
other waits. :func:`balanced_parts` assigns the items by their cost instead.
"""

import numba as nb
import numpy as np


@nb.njit
def balanced_parts(rows, parts):
    """The part (int64 (S,), ``0 .. parts - 1``) of each of S items that cost ``rows``
    (int64 (S,), e.g. the rows a feature's search or build visits): the largest first,
    each to the part with the fewest rows so far (ties: the lower item, the lower part; so
    the split depends on nothing but ``rows``). With equal costs the parts get
    ``ceil(S / parts)`` or ``floor(S / parts)`` items; one part (or none) gets all."""
    if parts <= 1:  # (the serial forms: no sort)
        return np.zeros(rows.shape[0], np.int64)
    part = np.empty(rows.shape[0], np.int64)
    load = np.zeros(parts, np.int64)
    for j in np.argsort(-rows, kind="mergesort"):
        t = np.argmin(load)
        part[j] = t
        load[t] += rows[j]
    return part
