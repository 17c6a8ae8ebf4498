"""CPU prediction: summed heads of the rules that cover each example, the example-wise
predictor of ``objectives.predictors`` compiled with Numba, and the joint probabilities of
the known label vectors (used by the marginalized and GFM predictors and the joint
calibration)."""

import numba as nb
import numpy as np

from gpurules.jit.cache import njit
from gpurules.jit.threads import thread_limit, threads_for
from gpurules.jit.variants import parallel_kernel
from gpurules.model import satisfies
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
