"""Which rules cover which examples, and the feature importances built on it.

Coverage of a BOOMER or SeCo rule is computed by the model's own compiled prediction
kernel (``RuleModel.predict_scores``) on an indicator model (rule r adds 1 to output r), so
a condition holds here exactly where prediction says it does (``conditions.satisfies``). The
counts alone (:func:`coverage`) of mostly-zero data come from X's columns
(``prediction.count_covered_columns``, the same ``satisfies``): their work per rule is the
stored entries of its features, not the number of examples.

Feature importance (``docs/model-format.md``): each rule r gets a weight ``w_r``,
``coverage_r`` times what it contributes per example it covers:

- BOOMER: ``sum_k |score_rk|`` over its head;
- SeCo: the number of labels in its head (rules the threshold drops: 0);
- TURS: ``sum_c |P_r(c) - P(c)|``, the L1 distance of its class distribution from the
  training class distribution.

``w_r`` is split evenly among rule r's conditions, each share going to the condition's
feature; the importances are these sums divided by their total (all 0 if the total is 0,
e.g. a model of the default rule alone).

The functions take any of the model classes and tell them apart by their ``kind``
(``"boomer"``, ``"seco"``, ``"turs"``): this module sits below the model classes (their
methods call it), so it imports none of them.
"""

import numpy as np
import scipy.sparse as sp

from gpurules.prediction import (count_covered_columns, dense_to_columns,
                                  nonzero_column_counts)

_CHUNK_ENTRIES = 1 << 22  # examples x rules per call of the prediction kernel
# at most this share of stored (non-zero) entries: count coverage over X's columns
_SPARSE_SHARE = 0.25


def rule_list(model):
    """The ``RuleModel`` of a BOOMER model or of a SeCo ``DecisionList``."""
    return model.rules if model.kind == "seco" else model


def rule_features(model):
    """The feature of each condition, per rule: a list of int arrays."""
    if model.kind == "turs":
        return [r.feature for r in model.rules]
    m = rule_list(model)
    starts = m.rule_cond_start
    return [m.cond_feature[starts[r]:starts[r + 1]] for r in range(m.num_rules)]


def check_features(model, X):
    """X as float32 2-D C-contiguous ndarray or CSR matrix, with enough columns for every
    feature the model tests (ValueError naming the shortfall)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float32)
    else:
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_examples, n_features), got shape {X.shape}")
    used = [f for fs in rule_features(model) for f in fs]
    if used and X.shape[1] <= max(used):
        raise ValueError(f"X has {X.shape[1]} features, but the model tests feature "
                         f"{max(used)}")
    return X


def covering_matrix(model, X, n_threads=1):
    """bool (n, R): whether each example of X satisfies each rule's body (TURS: each
    rule's literals). X: as :func:`check_features` returns it."""
    if model.kind == "turs":
        return model.coverage_matrix(X.toarray() if sp.issparse(X) else X)
    out = np.empty((X.shape[0], rule_list(model).num_rules), dtype=bool)
    for start, block in _covering_blocks(model, X, n_threads):
        out[start:start + block.shape[0]] = block
    return out


def _covering_blocks(model, X, n_threads):
    """(first row, bool (rows, R)) of :func:`covering_matrix` of a BOOMER or SeCo model,
    block by block of about ``_CHUNK_ENTRIES`` entries."""
    m = rule_list(model)
    R = m.num_rules
    indicator = type(m)(np.zeros(R), False, m.cond_feature, m.cond_op, m.cond_threshold,
                        m.rule_cond_start, np.arange(R, dtype=np.int32), np.ones(R),
                        np.arange(R + 1, dtype=np.int64))
    step = max(1, _CHUNK_ENTRIES // max(R, 1))
    for start in range(0, X.shape[0], step):
        rows = X[start:start + step]
        rows = rows.toarray() if sp.issparse(rows) else rows
        yield start, indicator.predict_scores(rows, n_threads) > 0.0


def coverage(model, X=None, n_threads=1):
    """(int64 (R,) examples satisfying each rule's body, number of examples) on X, else
    the training coverage the model knows (TURS: always; BOOMER/SeCo: recorded at fit),
    else None."""
    if X is not None:
        X = check_features(model, X)
        columns = None if model.kind == "turs" else _sparse_columns(X)
        if columns is not None:
            m = rule_list(model)
            return count_covered_columns(*columns, X.shape[0], m.cond_feature, m.cond_op,
                                         m.cond_threshold, m.rule_cond_start), X.shape[0]
        if model.kind == "turs":
            return covering_matrix(model, X).sum(axis=0).astype(np.int64), X.shape[0]
        counts = np.zeros(rule_list(model).num_rules, np.int64)
        for _, block in _covering_blocks(model, X, n_threads):  # not the (n, R) matrix
            counts += block.sum(axis=0)
        return counts, X.shape[0]
    if model.kind == "turs":
        return np.array([r.coverage for r in model.rules], np.int64), int(model.y.shape[0])
    m = rule_list(model)
    if m.rule_coverage is None:
        return None
    return m.rule_coverage, m.n_training_examples


def _sparse_columns(X):
    """X's columns as CSC (indptr int64, indices int32, data float32; see
    ``prediction.count_covered_columns``) when at most ``_SPARSE_SHARE`` of its entries
    are stored (CSR) or non-zero (dense), else None. X: as :func:`check_features` returns
    it."""
    n, A = X.shape
    if sp.issparse(X):
        if X.nnz > _SPARSE_SHARE * n * A:
            return None
        csc = sp.csc_matrix(X, dtype=np.float32, copy=True)
        csc.sum_duplicates()
        return csc.indptr.astype(np.int64), csc.indices.astype(np.int32), csc.data
    counts = nonzero_column_counts(X)
    if counts.sum() > _SPARSE_SHARE * n * A:
        return None
    return dense_to_columns(X, counts)


def record_training_coverage(model, X, n_threads=1):
    """Store the coverage of a BOOMER or SeCo model on its training features X in
    ``rule_coverage`` and ``n_training_examples``, unless the fit stored it already (a
    CUDA fit counts it on the device: ``CudaBackend.rule_coverage``; TURS models know
    theirs)."""
    if model.kind == "turs" or rule_list(model).rule_coverage is not None:
        return
    m = rule_list(model)
    m.rule_coverage, m.n_training_examples = coverage(model, X, n_threads)


def rule_weights(model, covered):
    """float64 (R,): each rule's weight (module docstring); ``covered``: int64 (R,)."""
    if model.kind == "turs":
        prior = np.bincount(model.y, minlength=model.n_classes) / max(model.y.shape[0], 1)
        per_example = np.array([np.abs(r.probabilities - prior).sum() for r in model.rules])
    elif model.kind == "seco":
        heads = np.diff(model.rules.rule_head_start).astype(np.float64)
        per_example = np.where(model.active_rules(), heads, 0.0)
    else:
        starts, scores = model.rule_head_start, np.abs(model.head_score)
        per_example = np.array([scores[starts[r]:starts[r + 1]].sum()
                                for r in range(model.num_rules)])
    return covered.astype(np.float64) * per_example.reshape(-1)


def feature_importances(model, n_features=None, X=None):
    """float64 (n_features,): the normalised importances (module docstring)."""
    found = coverage(model, X)
    if found is None:
        raise ValueError("the model does not know its training coverage (the estimators "
                         "record it at fit); pass X to count coverage on")
    features = rule_features(model)
    if n_features is None:
        names = model.feature_names if model.kind != "seco" else \
            model.rules.feature_names
        used = [int(f) for fs in features for f in fs]
        n_features = len(names) if names is not None else (max(used) + 1 if used else 0)
    out = np.zeros(n_features, dtype=np.float64)
    for weight, fs in zip(rule_weights(model, found[0]), features):
        if len(fs):
            np.add.at(out, np.asarray(fs, np.intp), weight / len(fs))
    total = out.sum()
    return out / total if total > 0 else out
