"""``statistic_type``: how fine the fixed-point scale may be, and how the CPU backend stores
the statistics (``fixed_point.choose_scale``, ``learners.boosting.statistic_dtype``).

"32-bit" (the default, as mlrl-boomer's) keeps each example's statistics of the logistic
losses within an int32, which the CPU backend then stores them in; the storage must not
change a single bit of the model, and no value may wrap.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from gpurules import BoomerClassifier, BoomerRegressor
from gpurules.backends.cpu.backend import CpuBackend
from gpurules.objectives import fixed_point
from tests.test_boomer import assert_same_model


@pytest.mark.parametrize("total, bound, weight", [
    (1e5, 1.0, 1.0), (1e6, 1.0, 1.0), (50.0, 1.0, 1.0), (1e4, 1.0, 1000.0),
    (1e4, 1.0, 1e-3), (1e3, 37.5, 2.5), (1.0, 1.0, 1.0)])
def test_example_weight_keeps_each_statistic_within_an_int32(total, bound, weight):
    coarse = fixed_point.choose_scale(total, bound, weight)
    fine = fixed_point.choose_scale(total, bound)
    assert math.log2(coarse).is_integer()
    assert coarse <= fine  # never finer than the sums allow
    largest = fixed_point.quantize(bound * weight, coarse)
    assert largest <= 2 ** 30 < np.iinfo(np.int32).max
    # as fine as that allows: the next power of two would break the bound (or the sums')
    assert coarse == fine or fixed_point.quantize(bound * weight, 2 * coarse) > 2 ** 30


def _data(seed, n=300, A=6, K=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, A)).astype(np.float32)
    X[:, 0] = np.round(X[:, 0])  # repeated values
    Y = (X[:, :K] + rng.normal(0.0, 0.7, (n, K)) > 0).astype(np.uint8)
    return X, Y


class _Recorder:
    """Wraps ``CpuBackend.start_fit`` for one test: records the dtype it is asked for and,
    with ``force``, stores the statistics in that dtype instead."""

    def __init__(self, monkeypatch, force=None):
        self.dtypes, self.backends = [], []
        original = CpuBackend.start_fit

        def start_fit(backend, features, Y, loss, base_weight, scale,
                      statistic_dtype=np.int64):
            self.dtypes.append(np.dtype(statistic_dtype))
            self.backends.append(backend)
            original(backend, features, Y, loss, base_weight, scale, force or statistic_dtype)

        monkeypatch.setattr(CpuBackend, "start_fit", start_fit)


@pytest.mark.parametrize("params", [
    dict(feature_binning="none", instance_sampling="with-replacement"),
    dict(feature_binning="equal-width"),
    dict(feature_binning="none", sparse=True),
    dict(feature_binning="equal-width", loss="logistic-non-decomposable",
         head_type="complete"),
], ids=["exact-sampled", "histogram", "sparse", "non-decomposable"])
def test_int32_storage_learns_the_int64_model(monkeypatch, params):
    """With "32-bit" the CPU backend stores int32; the same fit with the statistics stored
    as int64 (the same scale, so the same integers) gives the same model, bit for bit,
    weighted examples (and instance samples' counts) included. One case per search module
    and kind of statistics: each compiles its rule loop for both dtypes."""
    params = dict(params)
    X, Y = _data(3)
    if params.pop("sparse", False):
        X = sp.csr_matrix(np.where(np.abs(X) < 0.8, 0.0, X).astype(np.float32))
    weights = np.random.default_rng(4).uniform(0.0, 40.0, Y.shape[0])
    fits = []
    for force in (None, np.int64):
        recorder = _Recorder(monkeypatch, force)
        clf = BoomerClassifier(max_rules=25, random_state=2, **params)
        fits.append(clf.fit(X, Y, sample_weight=weights))
        assert recorder.dtypes == [np.dtype(np.int32)]
        g, h = recorder.backends[0].g, recorder.backends[0].h
        assert g.dtype == (np.int32 if force is None else np.int64)
        assert max(np.abs(g).max(), np.abs(h).max()) <= 2 ** 30
    assert_same_model(fits[0].model_, fits[1].model_)


def test_32_bit_storage_is_the_default_for_the_logistic_losses(monkeypatch):
    X, Y = _data(5, n=80)
    recorder = _Recorder(monkeypatch)
    for statistic_type in (None, "32-bit", "float32", "64-bit", "float64"):
        BoomerClassifier(max_rules=3, statistic_type=statistic_type).fit(X, Y)
    BoomerClassifier(max_rules=3, loss="squared-error-decomposable").fit(X, Y)
    BoomerRegressor(max_rules=3).fit(X, Y.astype(float) * 1e9)
    assert recorder.dtypes == [np.dtype(t) for t in (
        np.int32, np.int32, np.int32, np.int64, np.int64, np.int64, np.int64)]


def test_64_bit_is_finer_and_gives_an_equally_good_model():
    """"64-bit" keeps today's finest scale; on these data both find models of the same
    training loss to within rounding."""
    X, Y = _data(6)
    scores = [BoomerClassifier(max_rules=30, statistic_type=t, random_state=1).fit(X, Y)
              .decision_function(X) for t in ("32-bit", "64-bit")]
    np.testing.assert_allclose(scores[0], scores[1], atol=1e-6)


def test_unknown_statistic_type_is_refused():
    X, Y = _data(7, n=40)
    with pytest.raises(ValueError, match="statistic_type"):
        BoomerClassifier(statistic_type="16-bit").fit(X, Y)
