"""Feature binning (equal-width, equal-frequency, nominal) against hand-computed cases."""

import numpy as np
import pytest

import gpurules.data.binning as binning
from gpurules.data.binning import bin_count, bin_features, drop_empty_bins

NAN = np.nan


def bin_one(values, method, nominal=False, **options):
    X = np.asarray(values, np.float32)[:, None]
    b = bin_features(X, np.array([nominal]), method, **options)
    return b.bin_index[0], int(b.num_bins[0]), b.bin_min, b.bin_max


def reference_bins(x, method, n_bins):
    """Slow reference: bin of every value of one numerical column (NaN -> -1)."""
    present = np.sort(x[~np.isnan(x)])
    out = np.full(x.shape, -1)
    if method == "equal-width":
        lo, hi = present[0], present[-1]
        width = np.float32(hi - lo) / np.float32(n_bins)
        for i, v in enumerate(x):
            if not np.isnan(v):
                out[i] = min(int(np.floor(np.float32(v - lo) / width)), n_bins - 1)
        return out
    per_bin = int(np.ceil(present.size / n_bins))
    bin_of, b, size = {}, 0, 0
    for v in present:  # greedy: a new bin at a new value once the current one is full
        if v not in bin_of:
            if size >= per_bin:
                b, size = b + 1, 0
            bin_of[v] = b
        size += 1
    for i, v in enumerate(x):
        if not np.isnan(v):
            out[i] = bin_of[v]
    return out


def test_equal_width_hand_computed():
    # 11 examples, ceil(0.33 * 11) = 4 bins of width 2.5
    index, num, lo, hi = bin_one(np.arange(11), "equal-width")
    assert num == 4
    np.testing.assert_array_equal(index, [0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 3])
    np.testing.assert_array_equal(lo, [0, 3, 5, 8])
    np.testing.assert_array_equal(hi, [2, 4, 7, 10])


def test_equal_width_counts_examples_not_distinct_values():
    # mlrl-boomer 0.15.6 learns ``x > 5.7575755`` = 10 * 19 / 33 on this column with y = x >= 10:
    # 33 = ceil(0.33 * 100) bins of width 19 / 33 (from 100 examples, not 20 distinct values),
    # so 9 and 10 fall into different bins (see docs/user-guide.md)
    x = np.repeat(np.arange(20), 5)
    index, num, lo, hi = bin_one(x, "equal-width")
    assert num == 33
    width = np.float32(19) / np.float32(33)
    np.testing.assert_array_equal(index, np.minimum(np.floor(x.astype(np.float32) / width), 32))
    assert np.unique(index).size == 20 and np.isnan(lo).sum() == 13
    # missing values count as examples: 66 bins (mlrl-boomer: x > 2.8787878 = 10 * 19 / 66)
    index, num, _, _ = bin_one(np.r_[x, np.full(100, NAN)], "equal-width")
    assert num == 66 and (index[100:] == -1).all()


def test_equal_width_empty_bin_and_missing():
    index, num, lo, hi = bin_one([0, 0.5, 9, 10, NAN, 1], "equal-width", bin_ratio=0.66)
    assert num == 4  # ceil(0.66 * 6): width 2.5: bins [0, 2.5), [2.5, 5), [5, 7.5), [7.5, 10]
    np.testing.assert_array_equal(index, [0, 0, 3, 3, -1, 0])
    np.testing.assert_array_equal(lo, [0, NAN, NAN, 9])
    np.testing.assert_array_equal(hi, [1, NAN, NAN, 10])


def test_equal_frequency_with_ties():
    # n = 9: ceil(0.5 * 9) = 5 bins aimed at, ceil(8 present / 5) = 2 values per bin;
    # sorted 1 1 1 1 | 2 3 | 4 5
    index, num, lo, hi = bin_one([3, 1, 5, 1, 2, 1, 4, 1, NAN], "equal-frequency", bin_ratio=0.5)
    assert num == 3
    np.testing.assert_array_equal(index, [1, 0, 2, 0, 1, 0, 2, 0, -1])
    np.testing.assert_array_equal(lo, [1, 2, 4])
    np.testing.assert_array_equal(hi, [1, 3, 5])


def test_equal_frequency_heavy_tie_leaves_no_empty_bin():
    index, num, lo, hi = bin_one([5] * 6 + [7, 9], "equal-frequency", bin_ratio=1.0)
    assert num == 3
    np.testing.assert_array_equal(index, [0] * 6 + [1, 2])
    np.testing.assert_array_equal(lo, [5, 7, 9])
    np.testing.assert_array_equal(hi, lo)


def test_equal_frequency_greedy_cut_as_mlrl_boomer():
    # mlrl-boomer 0.15.6 learns ``x <= 4.5`` on this column with y = x >= 3: 33 bins aimed
    # at, ceil(100 / 33) = 4 values per bin: {0 x 40}, {1..4}, {5..8}, ..., {57..60}
    x = np.r_[np.zeros(40), np.arange(1, 61)]
    index, num, lo, hi = bin_one(x, "equal-frequency")
    assert num == 16
    np.testing.assert_array_equal(lo, np.r_[0, np.arange(1, 61, 4)])
    np.testing.assert_array_equal(hi, np.r_[0, np.arange(4, 61, 4)])


def test_equal_frequency_balances_distinct_values():
    rng = np.random.default_rng(0)
    index, num, _, _ = bin_one(rng.normal(size=1000), "equal-frequency", bin_ratio=0.01)
    assert num == 10
    np.testing.assert_array_equal(np.bincount(index), np.full(10, 100))


@pytest.mark.parametrize("method", ["equal-width", "equal-frequency"])
@pytest.mark.parametrize("seed", range(3))
def test_matches_slow_reference(method, seed):
    rng = np.random.default_rng(10 + seed)
    n = 700
    X = np.round(rng.normal(size=(n, 5)) * rng.integers(1, 200, size=5)).astype(np.float32)
    X[:, 1] = rng.exponential(size=n) ** 3  # skewed: many empty equal-width bins
    X[rng.random(X.shape) < 0.05] = NAN
    ratio = [0.33, 0.05, 0.5][seed]
    b = bin_features(X, np.zeros(5, bool), method, bin_ratio=ratio, max_bins=300)
    target = int(bin_count(n, ratio, 2, 300))
    for f in range(5):
        want = reference_bins(X[:, f], method, target)
        np.testing.assert_array_equal(b.bin_index[f], want)
        expected_bins = target if method == "equal-width" else want.max() + 1
        assert b.num_bins[f] == expected_bins


@pytest.mark.parametrize("method", ["equal-width", "equal-frequency"])
def test_constant_and_missing_columns(method):
    X = np.array([[2, NAN, 1], [2, NAN, -0.0], [2, NAN, 0.0], [NAN, NAN, 1]], np.float32)
    b = bin_features(X, np.zeros(3, bool), method, min_bins=2)
    np.testing.assert_array_equal(b.num_bins, [1, 0, 2])  # never more bins than values
    np.testing.assert_array_equal(b.bin_offset, [0, 1, 1, 3])
    np.testing.assert_array_equal(b.bin_index, [[0, 0, 0, -1], [-1] * 4, [1, 0, 0, 1]])
    np.testing.assert_array_equal(b.bin_min, [2, 0, 1])  # -0.0 and 0.0 share a bin
    np.testing.assert_array_equal(b.bin_max, [2, 0, 1])


@pytest.mark.parametrize("method", ["equal-width", "equal-frequency"])
def test_nominal_one_bin_per_value(method):
    index, num, lo, hi = bin_one([3, 1, 3, NAN, 2, 7], method, nominal=True, bin_ratio=0.1,
                                 max_bins=2)
    assert num == 4
    np.testing.assert_array_equal(index, [2, 0, 2, -1, 1, 3])
    np.testing.assert_array_equal(lo, [1, 2, 3, 7])
    np.testing.assert_array_equal(hi, lo)


@pytest.mark.parametrize("n, ratio, lo, hi, want", [
    (100, 0.33, 2, 0, 33), (11, 0.33, 2, 0, 4), (10, 0.1, 2, 0, 2), (1000, 0.5, 2, 64, 64),
    (3, 1.0, 5, 0, 3), (1, 0.33, 2, 0, 1), (0, 0.33, 2, 0, 0), (7, 1.0, 1, 0, 7),
    (100, 0.01, 3, 0, 3), (200, 0.33, 2, 0, 66),
    # float32 as in mlrl-boomer: 0.33f * 1500 = 495.00003 -> 496 (yeast), 399.63 -> 400 (scene)
    (1500, 0.33, 2, 0, 496), (1211, 0.33, 2, 0, 400),
])
def test_bin_count(n, ratio, lo, hi, want):
    assert bin_count(n, ratio, lo, hi) == want


@pytest.mark.parametrize("method", ["equal-width", "equal-frequency"])
def test_layout_invariants(method):
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(500, 6)) * rng.integers(1, 30, size=6)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = NAN
    nominal = np.array([0, 0, 1, 0, 0, 1], bool)
    X[:, nominal] = np.abs(X[:, nominal])
    b = bin_features(X, nominal, method, bin_ratio=0.4, max_bins=8)
    assert b.bin_index.dtype == np.int32 and b.bin_index.shape == (6, 500)
    assert b.num_bins.dtype == np.int32 and b.bin_offset.dtype == np.int64
    assert b.bin_min.dtype == b.bin_max.dtype == np.float32
    assert b.bin_min.shape == b.bin_max.shape == (b.total_bins,)
    np.testing.assert_array_equal(b.bin_offset, np.r_[0, np.cumsum(b.num_bins)])
    for f in range(6):
        x, bins = X[:, f], b.bin_index[f]
        distinct = np.unique(x[~np.isnan(x)]).size
        if nominal[f] or distinct <= 1:
            assert b.num_bins[f] == distinct
        elif method == "equal-width":
            assert b.num_bins[f] == bin_count(500, 0.4, 2, 8)
        else:
            assert 2 <= b.num_bins[f] <= bin_count(500, 0.4, 2, 8)
        np.testing.assert_array_equal(bins < 0, np.isnan(x))
        rows = b.bin_offset[f] + bins[bins >= 0]
        present = x[bins >= 0]
        np.testing.assert_array_equal(b.bin_min[rows], [present[rows == r].min() for r in rows])
        np.testing.assert_array_equal(b.bin_max[rows], [present[rows == r].max() for r in rows])
        lo = b.bin_min[b.bin_offset[f]:b.bin_offset[f + 1]]
        hi = b.bin_max[b.bin_offset[f]:b.bin_offset[f + 1]]
        full = ~np.isnan(lo)
        assert (lo[full] <= hi[full]).all() and (hi[full][:-1] < lo[full][1:]).all()
        assert np.isnan(hi[~full]).all()


def test_equal_width_matches_the_float32_width_formula():
    rng = np.random.default_rng(2)
    x = rng.normal(size=2000).astype(np.float32)
    index, num, _, _ = bin_one(x, "equal-width", bin_ratio=0.02)
    assert num == 40
    lo, hi = x.min(), x.max()
    width = (hi - lo) / np.float32(num)
    assert width.dtype == np.float32
    want = np.minimum(np.floor((x - lo) / width), num - 1)
    np.testing.assert_array_equal(index, want)


def test_any_layout_and_dtype_and_chunking(monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.integers(-5, 40, size=(300, 7)).astype(np.float64)
    X[rng.random(X.shape) < 0.1] = NAN
    nominal = np.arange(7) % 3 == 0
    want = bin_features(X.astype(np.float32), nominal, "equal-frequency")
    monkeypatch.setattr(binning, "_CHUNK_ELEMENTS", 600)  # two columns at a time
    for other in (X, np.asfortranarray(X), X.astype(np.float32)[:, ::-1][:, ::-1]):
        got = bin_features(other, nominal, "equal-frequency")
        for name in ("bin_index", "num_bins", "bin_offset", "bin_min", "bin_max", "nominal"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name))


def test_the_parallel_kernels_bin_as_the_serial_ones(monkeypatch):
    """From ``PARALLEL_VALUES`` values on, the kernels run in their parallel forms (on every
    thread): the same bins, for each kind of column (with empty bins to drop)."""
    rng = np.random.default_rng(6)
    X = np.column_stack([rng.integers(0, 3, 500), rng.integers(0, 40, 500),
                         rng.exponential(size=500) ** 3, rng.normal(size=500)]).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = NAN
    nominal = np.array([1, 1, 0, 0], bool)
    want = [drop_empty_bins(bin_features(X, nominal, method)) for method in binning.METHODS]
    monkeypatch.setattr(binning, "PARALLEL_VALUES", 0)
    monkeypatch.setattr(binning.nb, "get_num_threads", lambda: 2)
    got = [drop_empty_bins(bin_features(X, nominal, method)) for method in binning.METHODS]
    for kernel in (binning._assign_bins, binning._number_filled_bins, binning._renumber_bins):
        assert kernel.compiled_forms().get(True) is not None
    for g, w in zip(got, want):
        for name in ("bin_index", "num_bins", "bin_offset", "bin_min", "bin_max"):
            np.testing.assert_array_equal(getattr(g, name), getattr(w, name))


def test_sort_matches_numpy_with_signed_zeros_infinities_and_nans():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(size=3000) * 1e30, rng.integers(-3, 3, 3000), [np.inf,
                        -np.inf, -0.0, 0.0, NAN, -NAN, 1e-45, -1e-45]]).astype(np.float32)
    values = rng.permutation(x)[None, :].copy()
    order = np.empty(values.shape, np.int32)
    original = values[0].copy()
    n_present, n_distinct = np.zeros(1, np.int64), np.zeros(1, np.int64)
    binning._sort_columns.run(1, values, order, np.ones(1, bool), n_present, n_distinct)
    finite = original[~np.isnan(original)]
    assert n_present[0] == finite.size and n_distinct[0] == np.unique(finite).size
    np.testing.assert_array_equal(values[0, :n_present[0]], np.sort(finite))
    np.testing.assert_array_equal(original[order[0]][:n_present[0]], np.sort(finite))
    assert np.isnan(original[order[0][n_present[0]:]]).all()
    assert sorted(order[0]) == list(range(x.size))


@pytest.mark.parametrize("kwargs, message", [
    (dict(method="equal-depth"), "unknown feature binning method 'equal-depth'"),
    (dict(bin_ratio=0.0), r"bin_ratio must be in \(0, 1\]"),
    (dict(bin_ratio=1.5), r"bin_ratio must be in \(0, 1\]"),
    (dict(min_bins=0), "min_bins must be at least 1"),
    (dict(min_bins=2.5), "min_bins must be an integer"),
    (dict(max_bins=-1), "max_bins must be 0"),
    (dict(min_bins=4, max_bins=3), "at least min_bins=4"),
])
def test_invalid_arguments(kwargs, message):
    args = dict(method="equal-width", bin_ratio=0.33, min_bins=2, max_bins=0) | kwargs
    with pytest.raises(ValueError, match=message):
        bin_features(np.zeros((3, 2), np.float32), np.zeros(2, bool), **args)


def test_invalid_data():
    with pytest.raises(ValueError, match="2-D"):
        bin_features(np.zeros(3), np.zeros(1, bool), "equal-width")
    with pytest.raises(ValueError, match=r"nominal_mask must have shape \(2,\)"):
        bin_features(np.zeros((3, 2)), np.zeros(3, bool), "equal-width")
    with pytest.raises(ValueError, match="finite"):
        bin_features(np.array([[0.0], [np.inf]]), np.zeros(1, bool), "equal-width")
    b = bin_features(np.array([[0.0], [np.inf]]), np.zeros(1, bool), "equal-frequency")
    np.testing.assert_array_equal(b.bin_index, [[0, 1]])


def test_drop_empty_bins_keeps_every_example_in_its_bin():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 7, size=(300, 4)).astype(np.float32)
    X[:, 1] *= 10.0  # a few distinct values far apart: mostly empty equal-width bins
    X[rng.random((300, 4)) < 0.1] = NAN
    nominal = np.array([False, False, True, False])
    binned = bin_features(X, nominal, "equal-width")
    before = binned.bin_index.copy()
    compact = drop_empty_bins(binned)
    np.testing.assert_array_equal(binned.bin_index, before)  # the input is left as it was
    assert not np.isnan(compact.bin_min).any() and compact.total_bins < binned.total_bins
    np.testing.assert_array_equal(compact.bin_offset, np.r_[0, np.cumsum(compact.num_bins)])
    for f in range(4):
        old, new = binned.bin_index[f], compact.bin_index[f]
        np.testing.assert_array_equal(new < 0, old < 0)
        ok = old >= 0
        # the same partition of the examples, in the same order, with the same extremes
        np.testing.assert_array_equal(np.unique(new[ok], return_inverse=True)[1],
                                      np.unique(old[ok], return_inverse=True)[1])
        assert (np.diff(new[ok][np.argsort(old[ok], kind="stable")]) >= 0).all()
        np.testing.assert_array_equal(compact.bin_min[compact.bin_offset[f] + new[ok]],
                                      binned.bin_min[binned.bin_offset[f] + old[ok]])
        np.testing.assert_array_equal(compact.bin_max[compact.bin_offset[f] + new[ok]],
                                      binned.bin_max[binned.bin_offset[f] + old[ok]])
    assert drop_empty_bins(compact) is compact


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_drop_empty_while_binning_equals_drop_empty_bins(monkeypatch, parallel):
    """``bin_features(..., drop_empty=True)`` (each equal-width column compacted while it is
    binned, ``bin_index`` renumbered in place) is ``drop_empty_bins`` of the full layout,
    array for array: gaps, a constant, an all-missing and a signed-zero column, nominal
    ones, both methods, ``max_bins``, in chunks of two columns, serial and parallel."""
    rng = np.random.default_rng(12)
    X = np.column_stack([rng.integers(0, 7, 400) * 10.0, rng.normal(size=400) ** 3,
                         np.full(400, 2.5), np.full(400, NAN), rng.integers(0, 3, 400),
                         rng.choice([-0.0, 0.0, 1.0], 400)]).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = NAN
    nominal = np.array([0, 0, 0, 0, 1, 0], bool)
    monkeypatch.setattr(binning, "_CHUNK_ELEMENTS", 800)
    if parallel:
        monkeypatch.setattr(binning, "PARALLEL_VALUES", 0)
        monkeypatch.setattr(binning.nb, "get_num_threads", lambda: 2)
    for method, options in [(m, {}) for m in binning.METHODS] + [("equal-width",
                                                                   {"max_bins": 50})]:
        want = drop_empty_bins(bin_features(X, nominal, method, **options))
        got = bin_features(X, nominal, method, drop_empty=True, **options)
        for name in ("bin_index", "num_bins", "bin_offset", "bin_min", "bin_max", "nominal"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name),
                                          err_msg=f"{method} {options} {name}")
        assert not np.isnan(got.bin_min).any()


def reference_layout(X, nominal, method, **options):
    """Slow reference of :func:`bin_features`: (bin_index (A, n), num_bins, bin_min,
    bin_max) with -0.0 read as +0.0."""
    n, A = X.shape
    target = int(bin_count(n, options.get("bin_ratio", 0.33), 2, options.get("max_bins", 0)))
    index, counts, lows, highs = np.full((A, n), -1), [], [], []
    for f in range(A):
        x = np.where(X[:, f] == 0, np.float32(0), X[:, f])
        distinct = np.unique(x[~np.isnan(x)])
        if nominal[f] or distinct.size <= 1:
            index[f] = [-1 if np.isnan(v) else np.searchsorted(distinct, v) for v in x]
            num = distinct.size
        else:
            index[f] = reference_bins(x, method, target)
            num = target if method == "equal-width" else index[f].max() + 1
        present = index[f] >= 0
        counts.append(num)
        for b in range(num):
            inside = x[present & (index[f] == b)]
            lows.append(inside.min() if inside.size else np.nan)
            highs.append(inside.max() if inside.size else np.nan)
    return index, np.array(counts), np.array(lows, np.float32), np.array(highs, np.float32)


@pytest.mark.parametrize("method", ["equal-width", "equal-frequency"])
def test_columns_binned_without_sorting_match_the_reference(method):
    """Equal-width columns and nominal ones with at most ``_FEW`` values are binned in one
    pass without a sort; those with more values are sorted. Both match the reference,
    signed zeros and missing values included."""
    rng = np.random.default_rng(5)
    n = 400
    few = binning._FEW
    columns = [rng.integers(-2, 2, n), rng.integers(0, few, n), rng.integers(0, few + 1, n),
               rng.integers(0, 40, n) * 0.5, np.full(n, 3.0), np.full(n, NAN),
               rng.normal(size=n), rng.exponential(size=n) ** 3, np.repeat([-0.0, 0.0, 1.0],
                                                                           [150, 150, 100])]
    X = np.column_stack(columns).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = NAN
    X[:, 8] = np.where(np.isnan(X[:, 8]), -0.0, X[:, 8])
    for nominal in (np.array([1, 1, 1, 1, 1, 0, 0, 0, 1], bool), np.zeros(9, bool),
                    np.ones(9, bool)):
        b = bin_features(X, nominal, method, bin_ratio=0.1)
        index, counts, lows, highs = reference_layout(X, nominal, method, bin_ratio=0.1)
        np.testing.assert_array_equal(b.bin_index, index)
        np.testing.assert_array_equal(b.num_bins, counts)
        np.testing.assert_array_equal(b.bin_min, lows)
        np.testing.assert_array_equal(b.bin_max, highs)
        zero = (b.bin_min == 0) | (b.bin_max == 0)
        assert not np.signbit(b.bin_min[zero]).any() and not np.signbit(b.bin_max[zero]).any()
