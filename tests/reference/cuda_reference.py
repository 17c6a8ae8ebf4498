"""References and tiny problems for the CUDA backend's tests (host only, no CUDA imports).

The CUDA backend's reference is the CPU *histogram* search on the same ``BinnedFeatures``
(DESIGN: same model for a seed on either device), thresholds included. ``exact_bins`` maps
every distinct value to its own bin; there the histogram search scores the exact search's
candidates, but places a threshold next to the nearest bin holding any training example,
covered or not (``backends/thresholds.py``), where the exact search uses the covered values
only. The CPU side is reached through the public ``CpuBackend`` protocol and the NumPy
oracle of ``tests/reference/histogram.py``, one feature at a time, so that every slot of
the CUDA scan's ``out_*`` arrays is compared.
"""

import numpy as np

from gpurules.backends.base import Refinement, SearchSettings
from gpurules.backends.cpu import CpuBackend
from gpurules.backends.base import select_refinement
from gpurules.data.binning import BinnedFeatures
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from tests.reference import histogram as ref_histogram

LOGISTIC = DECOMPOSABLE_LOSSES["logistic-decomposable"]


def exact_bins(X, nominal):
    """BinnedFeatures with one bin per distinct non-missing value of each column.

    Args:
        X: float32 (n, A), NaN = missing; nominal: bool (A,).
    """
    n, A = X.shape
    bin_index = np.full((A, n), -1, np.int32)
    values = []
    for f in range(A):
        present = ~np.isnan(X[:, f])
        distinct, inverse = np.unique(X[present, f], return_inverse=True)
        bin_index[f, present] = inverse
        values.append(distinct.astype(np.float32))
    num_bins = np.array([v.size for v in values], np.int32)
    bin_offset = np.concatenate([[0], np.cumsum(num_bins)]).astype(np.int64)
    flat = np.concatenate(values)
    return BinnedFeatures(bin_index, num_bins, bin_offset, flat.copy(), flat.copy(),
                          np.asarray(nominal, bool))


def random_problem(rng, n, A, K, n_distinct=5, nan_frac=0.1, nominal=(0,)):
    """A tiny search problem.

    Returns:
        X float32 (n, A) with duplicates and NaNs, nominal bool (A,), g int64 (n, K),
        h int64 (n, K) >= 0, weights int32 (n,) in {0, 1, 2}, mask int32 (n,) in {0, 1}
        (covered: indicator 1, about 3/4 of the examples).
    """
    X = (rng.integers(0, n_distinct, size=(n, A)) * 0.37 - 0.5).astype(np.float32)
    X[rng.random((n, A)) < nan_frac] = np.nan
    is_nominal = np.zeros(A, bool)
    is_nominal[list(nominal)] = True
    X[:, is_nominal] = np.floor(np.abs(X[:, is_nominal]) * 3)
    g = rng.integers(-2 ** 20, 2 ** 20, size=(n, K)).astype(np.int64)
    h = rng.integers(0, 2 ** 19, size=(n, K)).astype(np.int64)
    weights = rng.choice(np.array([0, 1, 1, 2], np.int32), size=n)
    mask = (rng.random(n) < 0.75).astype(np.int32)
    return X, is_nominal, g, h, weights, mask


def equal_width_problems(n, seed=5):
    """[(name, X float32 (n, A), nominal bool (A,), options of ``bin_features``)] of what
    equal-width binning meets: missing values, -0.0 and +0.0, a constant column, an
    all-missing one, nominal columns among numerical ones, subnormal values (a device that
    flushed them to zero would bin them apart from the host), a huge range, values one ulp
    apart, empty bins, bin counts set by every option."""
    rng = np.random.default_rng(seed)
    X = (rng.integers(0, 9, size=(n, 7)) * 0.37 - 0.5).astype(np.float32)
    X[rng.random((n, 7)) < 0.15] = np.nan
    X[:, 1] = 2.5  # constant
    X[:, 2] = np.nan  # all missing
    X[::3, 3] = -0.0
    X[1::3, 3] = 0.0
    X[:, 4] = rng.normal(0, 1e30, n).astype(np.float32)
    X[:, 5] = np.float32(1.0) + np.arange(n, dtype=np.float32) * np.float32(2 ** -23)
    X[0, 5] = np.nan
    X[:, 6] = (rng.integers(-40, 40, n) * 2 ** -140).astype(np.float32)  # subnormal
    skewed = np.zeros((n, 1), np.float32)
    skewed[-2:, 0] = (1.0, 1e6)
    plain, nominal = np.zeros(7, bool), np.zeros(7, bool)
    nominal[[0, 3]] = True  # (column 0: 9 values and NaN; column 3: -0.0 and +0.0)
    return [("mixed", X, plain, {}), ("ratio", X, plain, {"bin_ratio": 0.9, "min_bins": 3}),
            ("capped", X, plain, {"max_bins": 4}),
            ("skewed", skewed, np.zeros(1, bool), {"bin_ratio": 0.5}),
            ("one row", X[:1], plain, {}), ("nominal", X, nominal, {"max_bins": 5})]


def assert_same_binned(device, host, asnumpy, name=""):
    """Two BinnedFeatures are the same: ``device``'s ``bin_index`` (read with ``asnumpy``)
    and every other field, dtypes too, the ranges bit for bit (+0.0, never -0.0)."""
    np.testing.assert_array_equal(asnumpy(device.bin_index), host.bin_index, name)
    for field in ("num_bins", "bin_offset", "nominal", "bin_min", "bin_max"):
        a, b = getattr(device, field), getattr(host, field)
        assert a.dtype == b.dtype, (name, field, a.dtype, b.dtype)
        if field in ("bin_min", "bin_max"):
            a, b = a.view(np.uint32), b.view(np.uint32)
        np.testing.assert_array_equal(a, b, f"{name}: {field}")


def assert_device_binned_fit_equals_cpu(make_backend, n, max_rules, seed):
    """A BoomerClassifier fit on ``n`` x 6 continuous values (about 5 % missing) whose
    backend, ``make_backend()`` (a CudaBackend with ``device_binning``), bins on its device:
    made once, it took the device's ``bin_index`` and ranges as they are, and the fit
    learns the CPU fit's rules, thresholds and scores bit for bit, and their training
    coverage (counted on the device's bins: ``CudaBackend.rule_coverage``) equals the
    CPU's on X. Returns the number of rules."""
    from gpurules import BoomerClassifier

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    Y = (rng.random((n, 3)) < 0.3).astype(np.uint8)
    params = {"max_rules": max_rules, "random_state": 1, "feature_binning": "equal-width"}
    cpu = BoomerClassifier(device="cpu", **params).fit(X, Y).model_
    clf, made = BoomerClassifier(device="cpu", **params), []
    clf._make_backend = lambda threads: made.append(make_backend()) or made[-1]
    gpu = clf.fit(X, Y).model_
    assert len(made) == 1 and type(made[0].features).__name__ == "DeviceBinnedFeatures"
    assert made[0].bin_index is made[0].features.bin_index
    assert made[0].bin_min is made[0].features.device_ranges[0]  # (no re-upload)
    for name in ("default_scores", "cond_feature", "cond_op", "cond_threshold",
                 "rule_cond_start", "head_label", "head_score", "rule_head_start",
                 "rule_coverage"):
        np.testing.assert_array_equal(getattr(gpu, name), getattr(cpu, name), err_msg=name)
    assert gpu.n_training_examples == cpu.n_training_examples == n
    return len(gpu)


def histograms(binned, features, mask, indicator, weights, g, h):
    """The histogram contract (NumPy): (hist_g int64 (B, K), hist_h int64 (B, K),
    hist_count int64 (B,)); rows of features that were not sampled are 0."""
    return ref_histogram.histograms(binned, features, mask == indicator, weights, g, h)


def slot_layout(binned, features):
    """The CUDA histograms' rows for the sampled ``features`` (int64 (S,)): (slot_offset
    int64 (S + 1,), rows int64 (R,)): slot s owns rows slot_offset[s] .. slot_offset[s+1]-1,
    and ``rows`` maps each of them to its row of the data set's histograms
    (``binned.bin_offset[f] + b``)."""
    num_bins = np.diff(binned.bin_offset)[features]
    slot_offset = np.concatenate([[0], np.cumsum(num_bins)]).astype(np.int64)
    rows = np.concatenate([np.arange(binned.bin_offset[f], binned.bin_offset[f + 1])
                           for f in features] + [np.zeros(0, np.int64)]).astype(np.int64)
    return slot_offset, rows


def slot_histograms(binned, features, mask, indicator, weights, g, h):
    """:func:`histograms` in the CUDA layout: (slot_offset, hist_g, hist_h, hist_count) with
    the rows of :func:`slot_layout`."""
    slot_offset, rows = slot_layout(binned, features)
    hists = histograms(binned, features, mask, indicator, weights, g, h)
    return (slot_offset, *(np.ascontiguousarray(a[rows]) for a in hists))


def dataset_histograms(backend):
    """A CudaBackend's last histograms (slot layout, ``backend.slots``) in the data set's
    layout: (hist_g int64 (B, K), hist_h int64 (B, W), hist_count int64 (B,)), rows of
    features that were not sampled 0."""
    features, _ = backend.slots
    binned = backend.features
    _, rows = slot_layout(binned, features)
    out = []
    for a in (backend.hist_g, backend.hist_h, backend.hist_count):
        a = backend.cp.asnumpy(a)
        full = np.zeros((binned.total_bins,) + a.shape[1:], np.int64)
        full[rows] = a[:rows.size]
        out.append(full)
    return tuple(out)


def empty_outputs(S, K):
    """Fresh ``out_*`` arrays (q, op, thr, cnt, label, g, h), initialised as the backends do."""
    return (np.full(S, -np.inf), np.full(S, -1, np.int8), np.zeros(S, np.float32),
            np.zeros(S, np.int64), np.full(S, -1, np.int32), np.zeros((S, K), np.int64),
            np.zeros((S, K), np.int64))


def slot_refinements(features, out):
    """One Refinement (or None) per slot of a search's ``out_*`` arrays."""
    return [select_refinement(features[j:j + 1], tuple(a[j:j + 1] for a in out))
            for j in range(features.shape[0])]


def cpu_backend(features, g, h, mask, indicator):
    """A CpuBackend holding the given statistics and coverage; ``features``: BinnedFeatures
    (histogram search) or a pre-sorted representation (exact search)."""
    n, K = g.shape
    backend = CpuBackend()
    backend.start_fit(features, np.zeros((n, K), np.uint8), LOGISTIC, np.ones(n), 2.0 ** 20)
    backend.set_statistics(g, h)  # through the protocol: the histogram build's copy follows
    backend.mask[:] = mask
    backend.indicator = indicator
    return backend


def histogram_per_feature(binned, features, mask, indicator, weights, g, h, labels, search):
    """The CPU histogram search's best refinement of each feature alone on ``binned``
    (BinnedFeatures; scale 2**20)."""
    backend = cpu_backend(binned, g, h, mask, indicator)
    totals = backend.covered_totals(weights)
    return [backend.find_best_refinement(np.array([f], np.int64), labels, weights, totals,
                                         search) for f in features]


def uncovered_bin_problem():
    """A hand-built feature whose boundary is decided by a bin without covered examples:
    values 10, 11, 12 (one bin each), the example at 11 not covered, the ones at 10 and 12
    covered with opposite gradients. The histogram search must cut at 11.5 (next to the
    bin holding 11), not at the midpoint 11.0 of the covered values 10 and 12.

    Returns (binned, g int64 (4, 1), h int64 (4, 1), weights int32 (4,), mask int32 (4,),
    the expected threshold float32)."""
    X = np.array([[10.0], [11.0], [12.0], [12.0]], np.float32)
    g = np.array([[-3], [5], [2], [2]], np.int64) * 2 ** 20
    h = np.full((4, 1), 2 ** 20, np.int64)
    mask = np.array([1, 0, 1, 1], np.int32)
    return (exact_bins(X, np.zeros(1, bool)), g, h, np.ones(4, np.int32), mask,
            np.float32(11.5))


def reference_per_feature(binned, features, mask, indicator, weights, g, h, labels, search):
    """The NumPy histogram reference's best refinement of each feature alone, as
    Refinements (scale 2**20)."""
    out = []
    for f in features:
        best = ref_histogram.best_refinement(
            binned, mask == indicator, weights, g, h, [f], labels,
            search.head_mode == HEAD_SINGLE, *search.params, 2.0 ** -20,
            search.min_coverage, search.min_quality)
        out.append(None if best is None else Refinement(
            best[1], best[2], np.float32(best[3]), float(best[0]), best[4], best[5], best[6],
            best[7]))
    return out


def assert_same_refinements(got, want, exact_quality=True):
    """Per-slot equality of two lists of Refinement-or-None; sums and conditions exactly,
    qualities bit for bit (or to 1e-12 relative for the NumPy reference)."""
    assert len(got) == len(want)
    for j, (a, b) in enumerate(zip(got, want)):
        assert (a is None) == (b is None), f"slot {j}: {a} != {b}"
        if a is None:
            continue
        assert (a.feature, a.op, a.threshold, a.count, a.label) == \
            (b.feature, b.op, b.threshold, b.count, b.label), f"slot {j}: {a} != {b}"
        np.testing.assert_array_equal(a.g_sum, b.g_sum, err_msg=f"slot {j}: g_sum")
        np.testing.assert_array_equal(a.h_sum, b.h_sum, err_msg=f"slot {j}: h_sum")
        if exact_quality:
            assert a.quality == b.quality, f"slot {j}: {a.quality!r} != {b.quality!r}"
        else:
            assert abs(a.quality - b.quality) <= 1e-12 * abs(b.quality), f"slot {j}"


def assert_same_totals(got, want):
    np.testing.assert_array_equal(got[0], want[0], err_msg="g totals")
    np.testing.assert_array_equal(got[1], want[1], err_msg="h totals")
    assert got[2] == want[2], f"count {got[2]} != {want[2]}"


def assert_same_statistics(cpu, gpu):
    """Scores, g and h of a CpuBackend and a CudaBackend, bit for bit."""
    np.testing.assert_array_equal(gpu.training_scores(), cpu.training_scores(), "scores")
    np.testing.assert_array_equal(gpu.cp.asnumpy(gpu.g), cpu.g, err_msg="g")
    np.testing.assert_array_equal(gpu.cp.asnumpy(gpu.h), cpu.h, err_msg="h")


def compare_backends(cpu, gpu, rng, rules=2, conditions=2):
    """Drive a CpuBackend and a CudaBackend (after ``start_fit`` on the same binned data, so
    both run the histogram search) through the learner's phases:
    per rule reset, totals, refinements over all features (unit weights for the first rule,
    drawn weights after), coverage, a head update; then a new scale. Every result must be
    equal, so the loss must be one whose statistics involve no ``exp``."""
    n, K = cpu.g.shape
    features = np.arange(gpu.features.num_features, dtype=np.int64)
    labels = np.arange(K, dtype=np.int32)
    for rule in range(rules):
        weights = None if rule == 0 else rng.choice(np.array([0, 1, 2], np.int32), size=n)
        search = SearchSettings.boosting(HEAD_SINGLE if rule % 2 else HEAD_COMPLETE, 0.0, 1.0,
                                         2, -np.inf)
        for backend in (cpu, gpu):
            backend.reset_coverage()
        for _ in range(conditions):
            totals = cpu.covered_totals(weights)
            assert_same_totals(gpu.covered_totals(weights), totals)
            want = cpu.find_best_refinement(features, labels, weights, totals, search)
            got = gpu.find_best_refinement(features, labels, weights, totals, search)
            assert_same_refinements([got], [want])
            if want is None:
                break
            cpu.apply_refinement(want)
            gpu.apply_refinement(got)
        scores = rng.normal(0.0, 0.5, size=K)
        cpu.update_statistics(labels, scores)
        gpu.update_statistics(labels, scores)
        assert_same_statistics(cpu, gpu)
    cpu.set_scale(cpu.scale / 2)
    gpu.set_scale(gpu.scale / 2)
    assert_same_statistics(cpu, gpu)
