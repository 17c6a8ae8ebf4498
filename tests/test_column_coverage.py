"""The coverage counts over X's columns (``prediction.count_covered_columns``, used by
``rule_importance.coverage`` for mostly-zero X) against the prediction kernel's covering
matrix, the reference: every operator, thresholds at, between and beside the stored
values, NaN (missing), explicit zeros, negative values, empty bodies, dense and CSR X."""

import numpy as np
import pytest
import scipy.sparse as sp

from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ
from gpurules.model import RuleModel
from gpurules.prediction import count_covered_columns
from gpurules.rule_importance import _sparse_columns, coverage, covering_matrix


def _random_case(seed, n=60, A=7, R=40):
    rng = np.random.default_rng(seed)
    X = rng.choice(np.array([0.0] * 15 + [1.0, 2.0, -1.5, np.nan], np.float32), (n, A))
    ops = rng.choice([OP_LEQ, OP_GR, OP_EQ, OP_NEQ], R * 3).astype(np.int8)
    thresholds = rng.choice(np.array([0.0, 1.0, 2.0, -1.5, 0.5, -0.75, 1.5], np.float32),
                            R * 3)
    starts = np.concatenate([[0], np.cumsum(rng.integers(0, 4, R))]).astype(np.int64)
    C = int(starts[-1])
    model = RuleModel(np.zeros(1), False, rng.integers(0, A, C).astype(np.int32), ops[:C],
                      thresholds[:C], starts, np.zeros(R, np.int32), np.ones(R),
                      np.arange(R + 1, dtype=np.int64))
    return X, model


def _column_coverage(model, X):
    columns = _sparse_columns(X)
    assert columns is not None
    return count_covered_columns(*columns, X.shape[0], model.cond_feature, model.cond_op,
                                 model.cond_threshold, model.rule_cond_start)


@pytest.mark.parametrize("seed", range(6))
def test_column_counts_equal_the_covering_matrix(seed):
    X, model = _random_case(seed)
    expected = covering_matrix(model, X).sum(axis=0)
    assert np.array_equal(_column_coverage(model, X), expected)
    csr = sp.csr_matrix(X)
    csr.data[::5] = 0.0  # explicit zeros stay stored: they must count as 0
    assert np.array_equal(_column_coverage(model, csr),
                          covering_matrix(model, csr.toarray()).sum(axis=0))


def test_coverage_of_mostly_zero_data_uses_the_columns():
    X, model = _random_case(0, n=200, A=30)
    X[:, 2:] = 0.0  # 2 of 30 columns non-zero: below the share
    counts, n = coverage(model, X)
    assert n == 200
    assert np.array_equal(counts, covering_matrix(model, X).sum(axis=0))


def test_dense_data_keeps_the_prediction_kernel():
    X = np.ones((10, 4), np.float32)
    assert _sparse_columns(X) is None
    assert _sparse_columns(sp.csr_matrix(X)) is None


def test_dense_counts_block_by_block_equal_the_covering_matrix(monkeypatch):
    """Dense data counts its coverage block by block of rows (never the whole (n, R)
    matrix): with blocks of 3 rows (the last one shorter), the covering matrix's sums."""
    from gpurules import rule_importance

    X, model = _random_case(3, n=61)
    X[np.isnan(X)] = 1.0
    X[X == 0] = 2.0  # dense: the prediction kernel, not the columns
    assert _sparse_columns(X) is None
    expected = covering_matrix(model, X).sum(axis=0)
    monkeypatch.setattr(rule_importance, "_CHUNK_ENTRIES", 3 * model.num_rules)
    counts, n = coverage(model, X)
    assert n == 61 and np.array_equal(counts, expected)
    np.testing.assert_array_equal(covering_matrix(model, X).sum(axis=0), expected)
