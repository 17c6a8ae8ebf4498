"""CPU prediction: summed heads of the rules that cover each example, the example-wise
predictor of ``objectives.predictors`` compiled with Numba, and the joint probabilities of
the known label vectors (used by the marginalized and GFM predictors and the joint
calibration)."""

import numba as nb
import numpy as np

from gpurules.conditions import satisfies
from gpurules.jit.cache import njit
from gpurules.jit.threads import thread_limit, threads_for
from gpurules.jit.variants import parallel_kernel
from gpurules.objectives import predictors

predict_example_wise = njit(predictors.predict_example_wise)
_log_joint_probabilities = njit(predictors.log_joint_probabilities)


def log_joint_probabilities(scores, vectors, marginal_calibration=None):
    """Logs float64 (n, U) of the chain-rule joint probabilities of the label vectors
    ``vectors`` (uint8 (U, K)) for ``scores`` (float64 (n, K)): the product over the labels
    of the (``marginal_calibration``-calibrated) marginal probability or its complement
    (mlrl-boomer's ``ChainRule``)."""
    log_p, log_q = predictors.log_marginals(np.asarray(scores, np.float64),
                                            marginal_calibration)
    out = np.empty((log_p.shape[0], vectors.shape[0]))
    _log_joint_probabilities(np.ascontiguousarray(log_p), np.ascontiguousarray(log_q),
                             np.ascontiguousarray(vectors, np.uint8), out)
    return out


def joint_probabilities(scores, vectors, marginal_calibration=None, joint_calibration=None):
    """Normalised joint probabilities float64 (n, U) of ``vectors`` (uint8 (U, K)) for
    ``scores`` (float64 (n, K)), calibrated by the given ``IsotonicCalibration`` models
    (mlrl-boomer's ``transformScoresIntoJointProbabilities``)."""
    log_joint = log_joint_probabilities(scores, vectors, marginal_calibration)
    return predictors.normalize_joint(log_joint, joint_calibration)


def _predict_py(X, default_scores, cond_feature, cond_op, cond_threshold, rule_cond_start,
                head_label, head_score, rule_head_start):
    n = X.shape[0]
    K = default_scores.shape[0]
    R = rule_cond_start.shape[0] - 1
    out = np.empty((n, K), dtype=np.float64)
    for i in nb.prange(n):
        for k in range(K):
            out[i, k] = default_scores[k]
        for r in range(R):
            covered = True
            for c in range(rule_cond_start[r], rule_cond_start[r + 1]):
                if not satisfies(cond_op[c], X[i, cond_feature[c]], cond_threshold[c]):
                    covered = False
                    break
            if covered:
                for e in range(rule_head_start[r], rule_head_start[r + 1]):
                    out[i, head_label[e]] += head_score[e]
    return out


_predict = parallel_kernel(_predict_py)


def predict_scores(model, X, n_threads=1):
    """Scores of ``model`` for ``X`` (float32 (n, A), C-contiguous). Returns float64 (n, K)."""
    args = (
        X, model.default_scores, model.cond_feature, model.cond_op, model.cond_threshold,
        model.rule_cond_start, model.head_label, model.head_score, model.rule_head_start,
    )
    work = X.shape[0] * max(1, model.rule_cond_start.shape[0] - 1)  # examples x rules
    with thread_limit(threads_for(work, n_threads)):
        return _predict(*args)


@njit
def count_covered_columns(indptr, indices, data, n, cond_feature, cond_op, cond_threshold,
                          rule_cond_start):
    """How many of the ``n`` examples satisfy each rule's body, from the columns of X.

    X is given as CSC (``indptr`` int64 (A + 1,), ``indices`` int32 (nnz,), ``data``
    float32 (nnz,), no duplicates); its implicit entries are 0. Conditions are
    ``model.satisfies`` on the stored value, or on 0 for an implicit entry, so the counts
    are those of :func:`predict_scores` on the dense X, but the work per rule is the number
    of stored entries of its features, not ``n`` (data of many mostly-zero columns):

    - a body whose conditions all hold for 0 covers ``n`` minus the examples with a stored
      entry failing some condition (each counted once);
    - else the candidates are the stored entries satisfying the condition that fails 0
      with the fewest stored entries; each other condition drops candidates walking its
      column: one that holds for 0 those whose stored entry fails it, one that fails 0
      those without a stored entry satisfying it.

    ``stamp[i]`` marks example i with a generation number that grows through the call, so
    no marks are cleared. Returns int64 (R,)."""
    R = rule_cond_start.shape[0] - 1
    out = np.zeros(R, np.int64)
    stamp = np.zeros(n, np.int64)
    gen = 0
    zero = np.float32(0.0)
    for r in range(R):
        start, end = rule_cond_start[r], rule_cond_start[r + 1]
        seed = -1
        for c in range(start, end):
            if not satisfies(cond_op[c], zero, cond_threshold[c]):
                f = cond_feature[c]
                if seed < 0 or indptr[f + 1] - indptr[f] < \
                        indptr[cond_feature[seed] + 1] - indptr[cond_feature[seed]]:
                    seed = c
        gen += 1
        if seed < 0:  # every condition holds for 0; stamp == gen: fails one
            failed = 0
            for c in range(start, end):
                f = cond_feature[c]
                for p in range(indptr[f], indptr[f + 1]):
                    i = indices[p]
                    if stamp[i] != gen and not satisfies(cond_op[c], data[p],
                                                         cond_threshold[c]):
                        stamp[i] = gen
                        failed += 1
            out[r] = n - failed
            continue
        count = 0  # stamp == gen: a candidate
        f = cond_feature[seed]
        for p in range(indptr[f], indptr[f + 1]):
            if satisfies(cond_op[seed], data[p], cond_threshold[seed]):
                stamp[indices[p]] = gen
                count += 1
        for c in range(start, end):
            if c == seed:
                continue
            f, op, threshold = cond_feature[c], cond_op[c], cond_threshold[c]
            if satisfies(op, zero, threshold):
                for p in range(indptr[f], indptr[f + 1]):
                    i = indices[p]
                    if stamp[i] == gen and not satisfies(op, data[p], threshold):
                        stamp[i] = -1
                        count -= 1
            else:
                kept = 0
                for p in range(indptr[f], indptr[f + 1]):
                    i = indices[p]
                    if stamp[i] == gen and satisfies(op, data[p], threshold):
                        stamp[i] = gen + 1
                        kept += 1
                gen += 1
                count = kept
        out[r] = count
    return out


@njit
def nonzero_column_counts(X):
    """int64 (A,): the non-zero (NaN included) entries of each column of X (float32
    (n, A), C-contiguous); one pass over its rows."""
    counts = np.zeros(X.shape[1], np.int64)
    for i in range(X.shape[0]):
        for f in range(X.shape[1]):
            if X[i, f] != 0:
                counts[f] += 1
    return counts


@njit
def dense_to_columns(X, counts):
    """X's non-zero entries as CSC (indptr int64 (A + 1,), indices int32 (nnz,) ascending
    per column, data float32 (nnz,)), from X (float32 (n, A), C-contiguous) and its
    :func:`nonzero_column_counts`; the input of :func:`count_covered_columns`."""
    A = X.shape[1]
    indptr = np.zeros(A + 1, np.int64)
    for f in range(A):
        indptr[f + 1] = indptr[f] + counts[f]
    fill = indptr[:-1].copy()
    indices = np.empty(indptr[A], np.int32)
    data = np.empty(indptr[A], np.float32)
    for i in range(X.shape[0]):
        for f in range(A):
            v = X[i, f]
            if v != 0:
                indices[fill[f]] = i
                data[fill[f]] = v
                fill[f] += 1
    return indptr, indices, data
