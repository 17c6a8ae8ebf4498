"""The data of one TURS fit: cut points, per-feature bins, candidate literals, code tables.

Numeric features get cut points between neighbouring values at evenly spaced ranks
(``n_cut_points`` of them at most, :func:`cut_points`), nominal ones one bin per level.
An example's bin of a numeric feature is the number of cut points ``<=`` its value, so
``x < c_j`` is "bin < j" and ``x >= c_j`` is "bin >= j" (j = 1..m). A missing value (NaN) has
no bin: it never satisfies a literal on that feature.
"""

import math
from dataclasses import dataclass

import numpy as np

from gpurules.objectives import mdl


CUT_POINT_METHODS = ("sorted-ranks", "quantiles")


def cut_points(values, n_cut_points, method="sorted-ranks"):
    """float64 sorted cut points of one numeric feature (NaN ignored): each leaves examples
    on both sides (``min < c <= max``).

    ``method``:
    * ``"sorted-ranks"`` (the authors' ``candidate_cuts_quantile_mid_points``): with the
      non-missing values sorted, ties included, (s_0 .. s_{n-1}), the gaps between
      neighbours at ``m = min(distinct - 1, n_cut_points)`` evenly spaced ranks
      ``floor(linspace(0, n - 2, m + 2))[1:-1]``; a gap between equal values v lies just
      above v (their 1e-6 jitter puts it there), so each cut is the midpoint between s_r and
      the next distinct value above it. Tied ranks give one cut, so frequent values may
      leave fewer than m cuts. A feature of two values gets their midpoint (the authors
      special-case 0/1 features so).
    * ``"quantiles"``: the midpoints between neighbouring distinct values when there are at
      most ``n_cut_points`` of them, else ``np.quantile(..., method="midpoint")`` at the
      ``n_cut_points`` evenly spaced inner quantiles.
    """
    v = values[~np.isnan(values)].astype(np.float64)
    distinct = np.unique(v)
    if len(distinct) < 2 or n_cut_points < 1:
        return np.zeros(0, dtype=np.float64)
    if method == "sorted-ranks":
        cuts = _sorted_rank_cuts(np.sort(v), distinct, n_cut_points)
    elif method != "quantiles":
        raise ValueError(f"cut_point_method={method!r} is not supported; use one of "
                         f"{CUT_POINT_METHODS}")
    elif len(distinct) - 1 <= n_cut_points:
        cuts = (distinct[:-1] + distinct[1:]) / 2
    else:
        q = np.linspace(0, 1, n_cut_points + 2)[1:-1]
        cuts = np.unique(np.quantile(v, q, method="midpoint"))
    return cuts[(cuts > distinct[0]) & (cuts <= distinct[-1])]


def _sorted_rank_cuts(s, distinct, n_cut_points):
    """The ``"sorted-ranks"`` cuts of sorted values ``s`` (n,) with ``distinct`` values."""
    if len(distinct) == 2:  # the authors special-case 0/1 features so; any two values here
        return (distinct[:1] + distinct[1:]) / 2
    m = min(len(distinct) - 1, n_cut_points)
    if len(s) - 1 > m and n_cut_points > 1:
        ranks = np.linspace(0, len(s) - 2, m + 2).astype(np.int64)[1:-1]
    else:  # the authors take every gap here
        ranks = np.arange(len(s) - 1)
    low = s[ranks][s[ranks] < distinct[-1]]  # a gap in the tie of the largest value: no cut
    return np.unique((low + distinct[np.searchsorted(distinct, low, side="right")]) / 2)


@dataclass
class TursData:
    """Arrays of one fit (n examples, A features, C classes, B bins, L literals).

    Attributes:
        y: int32 (n,) class codes 0..C-1.  codes: int32 (A, n) global bin or -1 (missing).
        numeric: bool (A,).  values: per feature, float64 cut points (numeric) or levels.
        bin_offset: int64 (A + 1,).  lit_feat int32, lit_op int8, lit_arg int32: (L,).
        log2_features: int64 fixed-point log2 A.  tables: ``mdl.search_tables(n, C)``.
        count_code: how a rule's literal count is coded (``mdl.literal_count_bits``).
        literal_code: how a numeric literal is coded (``mdl.numeric_literal_bits``).
    """

    y: np.ndarray
    n_classes: int
    codes: np.ndarray
    numeric: np.ndarray
    values: list
    bin_offset: np.ndarray
    lit_feat: np.ndarray
    lit_op: np.ndarray
    lit_arg: np.ndarray
    log2_features: np.int64
    tables: tuple
    count_code: str = "universal"
    literal_code: str = "cuts"

    @property
    def n_examples(self):
        return self.codes.shape[1]

    @property
    def n_features(self):
        return self.codes.shape[0]

    @property
    def n_bins(self):
        return int(self.bin_offset[-1])

    def nonempty_cuts(self, f, cover):
        """The cut points (numeric f) or levels (nominal f) of f that split the examples of
        bool ``cover`` (n,): the value range a new literal on f is coded over."""
        codes = self.codes[f, cover]
        codes = codes[codes >= 0]
        if len(codes) == 0:
            return 0
        if self.numeric[f]:
            return int(codes.max() - codes.min())
        return len(np.unique(codes))

    def literal_mask(self, lit):
        """bool (n,): the examples that satisfy literal ``lit``."""
        f, op, arg = int(self.lit_feat[lit]), int(self.lit_op[lit]), int(self.lit_arg[lit])
        local = self.codes[f] - self.bin_offset[f]
        present = self.codes[f] >= 0
        if op == mdl.OP_LT:
            return present & (local < arg)
        if op == mdl.OP_GE:
            return present & (local >= arg)
        if op == mdl.OP_EQ:
            return present & (local == arg)
        return present & (local != arg)


def prepare(X, y, n_classes, nominal, n_cut_points, count_code="universal",
            cut_point_method="sorted-ranks", literal_code="cuts"):
    """Build the ``TursData`` of float32 ``X`` (n, A) (NaN = missing), int ``y`` (n,) and
    the bool (A,) ``nominal`` mask (``cut_point_method``: :func:`cut_points`; the codes:
    ``TursData``). The defaults are ``TursClassifier``'s."""
    mdl.literal_count_bits(1, 1, count_code)  # validates count_code
    mdl.numeric_literal_bits(1, False, literal_code)  # validates literal_code
    n, A = X.shape
    values, n_bins = [], []
    for f in range(A):
        col = X[:, f]
        if nominal[f]:
            levels = np.unique(col[~np.isnan(col)]).astype(np.float64)
            values.append(levels)
            n_bins.append(len(levels))
        else:
            cuts = cut_points(col, n_cut_points, cut_point_method)
            values.append(cuts)
            n_bins.append(len(cuts) + 1)
    bin_offset = np.zeros(A + 1, dtype=np.int64)
    bin_offset[1:] = np.cumsum(n_bins)
    codes = np.full((A, n), -1, dtype=np.int32)
    for f in range(A):
        col = X[:, f].astype(np.float64)
        ok = ~np.isnan(col)
        if nominal[f]:
            local = np.searchsorted(values[f], col[ok])
        else:
            local = np.searchsorted(values[f], col[ok], side="right")
        codes[f, ok] = local + bin_offset[f]
    feats, ops, args = [], [], []
    for f in range(A):
        m = len(values[f])
        if nominal[f] and m >= 2:
            for v in range(m):
                feats += [f, f]
                ops += [mdl.OP_EQ, mdl.OP_NE]
                args += [v, v]
        elif not nominal[f] and m >= 1:
            for j in range(1, m + 1):
                feats += [f, f]
                ops += [mdl.OP_LT, mdl.OP_GE]
                args += [j, j]
    return TursData(
        y=np.ascontiguousarray(y, dtype=np.int32), n_classes=int(n_classes), codes=codes,
        numeric=~np.asarray(nominal, dtype=bool), values=values, bin_offset=bin_offset,
        lit_feat=np.asarray(feats, dtype=np.int32), lit_op=np.asarray(ops, dtype=np.int8),
        lit_arg=np.asarray(args, dtype=np.int32),
        log2_features=np.int64(mdl.fixed(math.log2(max(A, 1)))), tables=mdl.search_tables(n, int(n_classes)), count_code=count_code,
        literal_code=literal_code)
