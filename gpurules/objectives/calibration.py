"""Isotonic calibration of marginal and joint probabilities, as mlrl-boomer 0.15.6 fits and
applies it (the same fit: per output, or per known label vector for the joint ones).

mlrl-boomer (``IsotonicProbabilityCalibrationModel``) keeps, per output (per label vector),
a list of bins ``(threshold, probability)`` fitted to the predicted probabilities ``p_i``
and the true labels ``y_i`` (0 or 1) of the calibration examples:

1. **Sort and merge ties.** One bin ``(p_i, y_i)`` per example, sorted by threshold; bins
   with equal thresholds are merged into one holding the (unweighted, running) mean of
   their ``y``. Except the last group of equal thresholds: mlrl-boomer keeps the last bin
   of that group unmerged (``bins[n] = bins[numBins - 1]``), so its probability is one
   member's label. We take the label of the group's last example in a stable sort (the
   last in example order); mlrl-boomer's ``std::sort`` leaves that order unspecified.
2. **Pool adjacent violators, mlrl-boomer's variant.** Scanning pools from the left, when
   the next pool's value is not greater than the current pool's, the current pool absorbs
   it and every following pool while each is not greater than the one absorbed before it;
   the pool's value becomes the *unweighted* mean of the values absorbed (a pool absorbed
   counts as one value, whatever its size; so this is not least-squares isotonic
   regression), and the scan resumes at the pool before. A pool keeps its first bin's
   threshold.
3. **Interpolate.** A probability ``p`` is mapped by linear interpolation between the last
   bin with threshold < ``p`` (or ``(0, 0)``) and the first bin with threshold >= ``p``
   (or ``(1, 1)``); at a threshold it takes that bin's probability.
"""

from dataclasses import dataclass

import numpy as np

from gpurules.json_fields import encode_floats


def _running_mean(n, value, mean):
    """mlrl-boomer's ``iterativeArithmeticMean``: the mean of n values from the mean of
    the first n - 1 and the n-th ``value``."""
    return mean + (value - mean) / n


def merge_ties(thresholds, truths):
    """Step 1 of the module: bins sorted by threshold, one per distinct threshold.

    Args:
        thresholds: float64 (m,), m >= 1, the predicted probabilities.
        truths: float64 (m,), the true labels (0.0 or 1.0).

    Returns:
        (float64 (B,) ascending distinct thresholds, float64 (B,) their probabilities).
    """
    order = np.argsort(thresholds, kind="stable")
    thresholds, truths = thresholds[order], truths[order]
    out_t, out_p = [], []
    start = 0
    for j in range(1, thresholds.shape[0] + 1):
        if j < thresholds.shape[0] and thresholds[j] == thresholds[start]:
            continue
        mean = truths[start]
        for count in range(2, j - start + 1):
            mean = _running_mean(count, truths[start + count - 1], mean)
        out_t.append(thresholds[start])
        out_p.append(mean)
        start = j
    out_p[-1] = truths[-1]  # mlrl-boomer: the last group keeps its last bin
    return np.array(out_t, np.float64), np.array(out_p, np.float64)


def pool_violators(values):
    """Step 2 of the module on the values of sorted bins.

    Args:
        values: float64 (B,), B >= 1.

    Returns:
        (int64 (P,) the first bin of each pool, float64 (P,) each pool's value).
    """
    values = np.array(values, np.float64)
    num = values.shape[0]
    pool_end = np.arange(num)  # at a pool's first bin: its last; at its last: its first
    i = 0
    while i < num and pool_end[i] + 1 < num:
        j = pool_end[i] + 1
        if values[j] > values[i]:
            i = j
            continue
        count, previous = 2, values[j]
        values[i] = _running_mean(count, previous, values[i])
        j = pool_end[j] + 1
        while j < num and values[j] <= previous:
            count += 1
            values[i] = _running_mean(count, values[j], values[i])
            previous = values[j]
            j = pool_end[j] + 1
        pool_end[i], pool_end[j - 1] = j - 1, i
        if i > 0:
            i = pool_end[i - 1]
    starts = []
    i = 0
    while i < num:
        starts.append(i)
        i = pool_end[i] + 1
    starts = np.array(starts, np.int64)
    return starts, values[starts]


def fit_bins(probabilities, truths):
    """mlrl-boomer's bins of one output (steps 1 and 2 of the module).

    Args:
        probabilities: float64 (m,), m >= 1; truths: 0/1 (m,).

    Returns:
        (float64 (P,) ascending thresholds, float64 (P,) probabilities).
    """
    thresholds, values = merge_ties(np.asarray(probabilities, np.float64),
                                    np.asarray(truths, np.float64))
    starts, pooled = pool_violators(values)
    return thresholds[starts], pooled


def interpolate(thresholds, values, probabilities):
    """Step 3 of the module: calibrated float64 (n,) of ``probabilities`` (n,) with the
    bins ``thresholds`` (P,) ascending, P >= 1, and ``values`` (P,).

    mlrl-boomer divides by zero where the two bounds share a threshold (a probability 0
    with a bin at 0): that gives the upper bin's probability here, NaN there."""
    p = np.asarray(probabilities, np.float64)
    lower_t = np.concatenate(([0.0], thresholds))
    lower_v = np.concatenate(([0.0], values))
    upper_t = np.concatenate((thresholds, [1.0]))
    upper_v = np.concatenate((values, [1.0]))
    k = np.searchsorted(thresholds, p, side="left")
    width = upper_t[k] - lower_t[k]
    safe = np.where(width == 0.0, 1.0, width)
    t = np.where(width == 0.0, 1.0, (p - lower_t[k]) / safe)
    return lower_v[k] + t * (upper_v[k] - lower_v[k])


@dataclass(frozen=True)
class _Calibrator:
    """An isotonic calibrator's choice of examples: the holdout examples when
    ``use_holdout_set`` and the fit has a holdout set, else the training examples."""

    use_holdout_set: bool = True

    def examples(self, holdout, num_examples):
        """int64 (m,): the examples to fit on; ``holdout``: bool (n,) or None."""
        if holdout is None:
            return np.arange(num_examples, dtype=np.int64)
        return np.flatnonzero(holdout if self.use_holdout_set else ~holdout)


class MarginalCalibration(_Calibrator):
    """``marginal_probability_calibration="isotonic{use_holdout_set=...}"``
    (mlrl-boomer's ``IsotonicMarginalProbabilityCalibrator``)."""

    @staticmethod
    def fit(probabilities, Y):
        """The :class:`IsotonicCalibration` of marginal ``probabilities`` float64 (m, K)
        against the labels ``Y`` (uint8 (m, K)): one list per output."""
        return IsotonicCalibration.fit(probabilities, Y)


class JointCalibration(_Calibrator):
    """``joint_probability_calibration="isotonic{use_holdout_set=...}"`` (mlrl-boomer's
    ``IsotonicJointProbabilityCalibrator``): one list of bins per known label vector, fitted
    to its (unnormalised, chain-rule) joint probability for each calibration example against
    whether it is that example's label vector."""

    @staticmethod
    def fit(joint, Y, vectors):
        """The :class:`IsotonicCalibration` of the joint probabilities ``joint`` float64
        (m, U) of the label vectors ``vectors`` (uint8 (U, K), distinct, holding every row
        of ``Y``) against the labels ``Y`` (uint8 (m, K)): one list per label vector."""
        index = {row.tobytes(): u for u, row in enumerate(np.asarray(vectors, np.uint8))}
        rows = np.ascontiguousarray(Y, np.uint8)
        truths = np.zeros(joint.shape, np.float64)
        truths[np.arange(rows.shape[0]), [index[row.tobytes()] for row in rows]] = 1.0
        return IsotonicCalibration.fit(joint, truths)


@dataclass(frozen=True)
class IsotonicCalibration:
    """A fitted isotonic calibration model: the bins of list l (an output) are
    ``thresholds[offsets[l]:offsets[l + 1]]`` (float64, ascending) and
    ``probabilities[...]`` (float64); ``offsets``: int64 (L + 1,)."""

    thresholds: np.ndarray
    probabilities: np.ndarray
    offsets: np.ndarray

    @classmethod
    def fit(cls, probabilities, truths):
        """One list of bins per column of ``probabilities`` (float64 (m, L), m >= 1) and
        ``truths`` (0/1 (m, L))."""
        if probabilities.shape[0] == 0:
            raise ValueError("isotonic calibration needs at least one example")
        bins = [fit_bins(probabilities[:, l], truths[:, l])
                for l in range(probabilities.shape[1])]
        offsets = np.zeros(len(bins) + 1, np.int64)
        offsets[1:] = np.cumsum([len(t) for t, _ in bins])
        return cls(np.concatenate([t for t, _ in bins]),
                   np.concatenate([v for _, v in bins]), offsets)

    @property
    def num_lists(self):
        return self.offsets.shape[0] - 1

    def bins(self, index):
        """(thresholds, probabilities) of list ``index``: float64 (P,) each."""
        lo, hi = self.offsets[index], self.offsets[index + 1]
        return self.thresholds[lo:hi], self.probabilities[lo:hi]

    def apply(self, probabilities):
        """Calibrated float64 (n, L) of ``probabilities`` float64 (n, L)."""
        out = np.empty(probabilities.shape, np.float64)
        for l in range(self.num_lists):
            out[:, l] = interpolate(*self.bins(l), probabilities[:, l])
        return out

    def to_dict(self):
        """The JSON object of the model file (``docs/model-format.md``): exact floats."""
        return {"thresholds": encode_floats(self.thresholds),
                "probabilities": encode_floats(self.probabilities),
                "offsets": self.offsets.tolist()}

    @classmethod
    def from_node(cls, node, num_lists):
        """The model of :meth:`to_dict` read from ``node`` (``json_fields.Node``) with
        ``num_lists`` lists, each with at least one bin; ValueError naming the path if
        malformed."""
        offsets = node.get("offsets").ints(low=0, length=num_lists + 1)
        if offsets[0] != 0 or (np.diff(offsets) < 1).any():
            node.get("offsets").fail("0 then strictly increasing bin offsets")
        size = int(offsets[-1])
        thresholds = node.get("thresholds").floats(length=size)
        probabilities = node.get("probabilities").floats(length=size)
        return cls(thresholds, probabilities, offsets)
