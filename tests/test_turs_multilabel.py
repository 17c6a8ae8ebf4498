"""TursClassifier on a 2-D 0/1 label matrix: binary relevance and label powerset."""

import numpy as np
import pytest
import scipy.sparse as sp

from gpurules import TursClassifier, load_model
from gpurules.model_io import model_from_dict
from gpurules.model_turs import TursBinaryRelevanceModel, TursModel

REDUCTIONS = ("binary-relevance", "label-powerset")


@pytest.fixture(scope="module")
def data():
    """X float64 (120, 4), Y int64 (120, 3) with labels that rules on X can find."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 4))
    Y = np.c_[X[:, 0] > 0, X[:, 1] > 0.5, (X[:, 0] + X[:, 2]) > 0.3].astype(np.int64)
    flip = rng.random(Y.shape) < 0.05
    return X, np.where(flip, 1 - Y, Y)


def _turs(**kw):
    return TursClassifier(device="cpu", beam_width=3, **kw)


@pytest.fixture(scope="module", params=REDUCTIONS)
def fitted(request, data):
    X, Y = data
    return _turs(multi_label=request.param).fit(X, Y)


def test_shapes_dtypes_and_fitted_attributes(fitted, data):
    X, Y = data
    assert fitted.n_features_in_ == 4 and fitted.n_outputs_ == 3
    assert len(fitted.classes_) == 3
    assert all(np.array_equal(c, [0, 1]) for c in fitted.classes_)
    proba = fitted.predict_proba(X)
    assert proba.shape == (120, 3) and proba.dtype == np.float64
    assert ((proba >= 0) & (proba <= 1)).all()
    pred = fitted.predict(X)
    assert pred.shape == (120, 3) and pred.dtype == Y.dtype
    assert set(np.unique(pred)) <= {0, 1}
    assert (pred != Y).mean() < 0.2
    assert fitted.predict(X[:0]).shape == (0, 3)
    assert "rule" in str(fitted.model_)


def test_fit_returns_self(data):
    X, Y = data
    clf = _turs(multi_label="binary-relevance")
    assert clf.fit(X, Y) is clf


def test_binary_relevance_equals_separate_fits(data):
    X, Y = data
    clf = _turs(multi_label="binary-relevance").fit(X, Y)
    assert isinstance(clf.model_, TursBinaryRelevanceModel)
    assert len(clf.history_) == 3
    proba = clf.predict_proba(X)
    for k in range(3):
        single = _turs().fit(X, Y[:, k])
        assert str(single.model_) == str(clf.model_.models[k])
        assert single.history_ == clf.history_[k]
        assert np.array_equal(proba[:, k], single.predict_proba(X)[:, 1])
        assert np.array_equal(clf.predict(X)[:, k], single.predict(X))
    assert len(clf.model_) == sum(len(m) for m in clf.model_.models)


def test_label_powerset_equals_multiclass_fit_on_the_vectors(data):
    X, Y = data
    clf = _turs(multi_label="label-powerset").fit(X, Y)
    vectors, codes = np.unique(Y, axis=0, return_inverse=True)
    assert isinstance(clf.model_, TursModel)
    assert np.array_equal(clf.label_vectors_, vectors) and clf.label_vectors_.dtype == np.uint8
    assert list(clf.model_.classes) == ["".join(map(str, v)) for v in vectors]
    multi = _turs().fit(X, codes.reshape(-1))
    class_proba = multi.predict_proba(X)
    assert np.array_equal(clf.model_.predict_proba(X), class_proba)
    assert clf.history_ == multi.history_
    # per-label marginals: the summed probabilities of the vectors with the label set
    expected = np.stack([class_proba[:, vectors[:, k] == 1].sum(axis=1) for k in range(3)],
                        axis=1)
    assert np.allclose(clf.predict_proba(X), expected, rtol=0, atol=1e-12)
    assert np.array_equal(clf.predict(X), vectors[multi.predict(X)])


def test_label_powerset_predicts_only_training_vectors(data):
    X, Y = data
    keep = ~((Y[:, 0] == 1) & (Y[:, 1] == 1))  # the vectors 11x never occur in training
    clf = _turs(multi_label="label-powerset").fit(X[keep], Y[keep])
    pred = clf.predict(X)
    assert not ((pred[:, 0] == 1) & (pred[:, 1] == 1)).any()


def test_one_d_y_is_unchanged_by_multi_label(data):
    X, Y = data
    base = _turs().fit(X, Y[:, 0])
    for reduction in REDUCTIONS:
        clf = _turs(multi_label=reduction).fit(X, Y[:, 0])
        assert str(clf.model_) == str(base.model_)
        assert list(clf.classes_) == [0, 1] and not hasattr(clf, "n_outputs_")
        assert clf.predict_proba(X).shape == (120, 2)


def test_refit_with_one_d_y_forgets_the_label_vectors(data):
    X, Y = data
    clf = _turs(multi_label="label-powerset").fit(X, Y)
    clf.fit(X, Y[:, 0])
    assert not hasattr(clf, "label_vectors_") and not hasattr(clf, "n_outputs_")
    assert clf.predict(X).shape == (120,)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_constant_label_is_always_predicted_as_in_training(data, reduction):
    X, Y = data
    for value in (0, 1):
        Yc = Y.copy()
        Yc[:, 1] = value
        clf = _turs(multi_label=reduction).fit(X, Yc)
        assert (clf.predict(X)[:, 1] == value).all()
        # label powerset: the sum of the vectors' probabilities, 1 up to rounding
        assert np.allclose(clf.predict_proba(X)[:, 1], value, rtol=0, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bad_label_matrices_raise(data, reduction):
    X, Y = data
    clf = _turs(multi_label=reduction)
    with pytest.raises(ValueError, match="0/1"):
        clf.fit(X, np.where(Y == 1, 2, 0))
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(X, np.where(Y == 1, np.nan, 0.0))
    with pytest.raises(ValueError, match="different numbers of examples"):
        clf.fit(X, Y[:-1])
    with pytest.raises(ValueError, match="at least 2 label columns"):
        clf.fit(X, sp.csr_matrix(Y[:, :1]))


def test_bad_multi_label_value_raises(data):
    X, Y = data
    with pytest.raises(ValueError, match="multi_label must be one of"):
        _turs(multi_label="powerset").fit(X, Y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_sparse_and_float_label_matrices_fit_as_dense(data, reduction):
    X, Y = data
    dense = _turs(multi_label=reduction).fit(X, Y)
    for other in (sp.csr_matrix(Y), Y.astype(np.float32)):
        clf = _turs(multi_label=reduction).fit(X, other)
        assert np.array_equal(clf.predict_proba(X), dense.predict_proba(X))
        assert clf.predict(X).dtype == other.dtype


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_sample_weight_counts_copies(data, reduction):
    X, Y = data
    w = np.arange(120) % 3
    weighted = _turs(multi_label=reduction).fit(X, Y, sample_weight=w)
    repeated = _turs(multi_label=reduction).fit(np.repeat(X, w, axis=0),
                                                np.repeat(Y, w, axis=0))
    assert np.array_equal(weighted.predict_proba(X), repeated.predict_proba(X))


def test_label_powerset_saves_and_loads(data, tmp_path):
    X, Y = data
    clf = _turs(multi_label="label-powerset").fit(X, Y.astype(np.int32))
    clf.save(tmp_path / "lp.json")
    loaded = TursClassifier.load(tmp_path / "lp.json")
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert np.array_equal(loaded.predict(X), clf.predict(X))
    assert loaded.predict(X).dtype == np.int32
    assert np.array_equal(loaded.label_vectors_, clf.label_vectors_)
    assert loaded.n_outputs_ == 3 and len(loaded.classes_) == 3


def test_binary_relevance_saves_and_loads(data, tmp_path):
    """All K rule sets in one file: the loaded estimator and model predict the same, keep
    the label dtype and the per-label histories."""
    X, Y = data
    clf = _turs(multi_label="binary-relevance").fit(X, Y.astype(np.int32))
    clf.save(tmp_path / "br.json")
    loaded = TursClassifier.load(tmp_path / "br.json")
    assert isinstance(loaded.model_, TursBinaryRelevanceModel)
    assert loaded.model_.n_labels == Y.shape[1]
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert np.array_equal(loaded.predict(X), clf.predict(X))
    assert loaded.predict(X).dtype == np.int32
    assert loaded.history_ == clf.history_ and loaded.n_outputs_ == Y.shape[1]
    assert not hasattr(loaded, "label_vectors_")
    model = load_model(tmp_path / "br.json")
    assert isinstance(model, TursBinaryRelevanceModel)
    assert [str(m) for m in model.models] == [str(m) for m in clf.model_.models]
    assert np.array_equal(TursBinaryRelevanceModel.from_dict(clf.to_dict()).predict_proba(X),
                          clf.model_.predict_proba(X))
    with pytest.raises(ValueError, match="TursBinaryRelevanceModel, not a TursModel"):
        TursModel.from_dict(clf.model_.to_dict())


def test_binary_relevance_file_with_one_label_is_rejected(data):
    X, Y = data
    doc = _turs(multi_label="binary-relevance").fit(X, Y).model_.to_dict()
    doc["model"]["binary_relevance"] = doc["model"]["binary_relevance"][:1]
    with pytest.raises(ValueError, match="at least two TURS models"):
        model_from_dict(doc)


def test_binary_relevance_combined_tables_raise_not_implemented(data):
    X, Y = data
    clf = _turs(multi_label="binary-relevance").fit(X, Y)
    for call in (lambda: clf.explain(X), lambda: clf.feature_importances_,
                 clf.model_.to_records):
        with pytest.raises(NotImplementedError, match="one per label"):
            call()
