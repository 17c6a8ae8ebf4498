"""TursClassifier: probabilistic truly unordered rule sets chosen by MDL (Yang & van Leeuwen)."""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import type_of_target

from gpurules.backends.factory import get_class_histograms
from gpurules.compile_log import logs_compilation
from gpurules.estimators._base import RuleEstimatorMixin, store_params, take_rows
from gpurules.estimators.multi_label import multi_label_classes
from gpurules.estimators.validation import (check_labels, check_seed, count_weights,
                                            nominal_mask)
from gpurules.exceptions import warn
from gpurules.json_fields import encode_floats
from gpurules.learners.turs import TursLearner, to_model
from gpurules.learners.turs_data import CUT_POINT_METHODS, prepare
from gpurules.objectives.mdl import COUNT_CODES, LITERAL_CODES
from gpurules.model_turs import TursBinaryRelevanceModel

MULTI_LABEL = ("binary-relevance", "label-powerset")


class TursClassifier(RuleEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Multi-class probabilistic rule set whose rules may overlap only where their class
    distributions agree, chosen by the MDL principle (no regularisation to tune).

    Args:
        device: ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``: where the candidate
            literals are scored (``"cuda"`` without a usable GPU raises RuntimeError).
        random_state: accepted for scikit-learn compatibility; the search is deterministic
            (ties go to the first literal), so every fit of the same data is the same.
        beam_width: W, the width of both beams and the number of coverage buckets.
        n_cut_points: cut points per numeric feature, at most.
        cut_point_method: where they lie: ``"sorted-ranks"`` (the default, as the
            authors' implementation: between neighbouring training values at evenly spaced
            ranks, ties counted, so frequent values draw cuts; it reproduces their ROC-AUC
            on iris, ``docs/turs.md``) or ``"quantiles"`` (``np.quantile`` midpoints; every
            midpoint between distinct values when there are at most ``n_cut_points + 1``
            of them; the default until 2026-11-26).
        patience: growth steps without improvement before a rule search stops.
        max_rules: upper limit on the number of rules (the MDL score normally stops first);
            0 learns none (the else-rule alone). Unlike BOOMER's and SeCo's ``max_rules=0``
            (mlrl-boomer's "no limit"), there is no unlimited value.
        max_grow_iter: upper limit on the growth steps of one rule search.
        categorical_features: column indices to treat as nominal (``==`` / ``!=``
            literals); pandas categorical columns are nominal anyway.
        literal_count_code: how the model code counts a rule's literals: ``"universal"``
            (the default: Rissanen's integer code, as in the authors' implementation;
            cheaper for short rules, so it tends to keep a few more rules) or
            ``"uniform"`` (log2 of the number of features, as in the thesis; stops early on
            breast_cancer, ROC-AUC 0.927 against 0.949, ``docs/turs.md``).
        literal_code: how the rule code charges a numeric literal: ``"cuts"`` (the
            default, the authors' rule code: ``log2 m`` for ``x < v`` / ``x >= v``,
            ``log2 C(m, 2)`` for an interval, m the non-empty cut points) or
            ``"form-operator-cuts"`` (as the thesis writes it, and the default until
            2026-11-26: one bit more for the form, one-sided or interval, when m >= 2,
            and one for the operator of a one-sided literal). The MDL local test charges
            both bits in either case, as the authors' does. ``docs/turs.md``.
        multi_label: how a 2-D 0/1 label matrix ``Y`` (n, K) is learned (ignored for a
            1-D y): ``"binary-relevance"`` (the default, chosen on emotions and scene:
            lower Hamming loss, higher micro F1, ``docs/turs.md``): K independent binary
            fits, one per label (the search is deterministic, so all use the same
            ``random_state``); ``"label-powerset"``: one multi-class fit whose classes are
            the distinct label vectors of the training data (lower subset 0/1 loss, about
            half the fit time), so a vector never seen in training is never predicted.
        verbose: int >= 0: 0 silent, 1 a progress line per rule (each is a beam search)
            and a summary with the reason the fit stopped, 2 also the rule's literals,
            coverage and classes (logger ``"gpurules"``, see ``gpurules.progress``).

    ``fit(X, y, sample_weight=w)``: non-negative integers (n,), an example of weight w
    counting as w copies of its row (the MDL code lengths are defined on counts; the fit
    repeats the rows, so its cost grows with the total weight); a float weight raises
    ValueError.

    Missing values (NaN) are allowed: an example never satisfies a literal on a feature it
    lacks.

    A 2-D ``Y`` must hold 0/1 only (ValueError otherwise). A label that is constant in
    training is always predicted as that value: binary relevance fits it as a binary
    problem with an empty class (no rule pays off; the else-rule gives probability 0 or 1),
    and in the label powerset every class vector carries that value.

    Fitted attributes:
        model_: ``TursModel`` (rules with their class distributions and coverage, the
            else-rule, the MDL score; ``print(model_)`` shows them); label powerset: the
            same over the label vectors, named by their 0/1 strings (``"010010"``);
            binary relevance: ``TursBinaryRelevanceModel``, with ``models[k]`` label k's
            ``TursModel`` over classes ``[0, 1]``.
        classes_: 1-D y: the sorted class labels; 2-D Y: a list of K arrays ``[0, 1]`` (as
            scikit-learn's multi-output classifiers and BOOMER).
        label_vectors_: label powerset only: uint8 (M, K), the training label vectors,
            row m the class ``m`` of ``model_``.
        n_outputs_ (2-D Y only): K.
        n_features_in_, device_ (``"cpu"`` or ``"cuda:N"``), feature_names_in_ (pandas
        input), history_ (total bits after each added rule; binary relevance: one such
        list per label).

    ``save``/``to_dict``: a ``turs`` model file; a binary-relevance model's file holds its
    K rule sets (``docs/model-format.md``).
    """

    def __init__(self, device="auto", random_state=None, beam_width=10, n_cut_points=20,
                 patience=5, max_rules=500, max_grow_iter=100, categorical_features=None,
                 literal_count_code="universal", multi_label="binary-relevance", verbose=0,
                 cut_point_method="sorted-ranks", literal_code="cuts"):
        store_params(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_label = True
        return tags

    def _check_params(self):
        for name, low in (("beam_width", 1), ("n_cut_points", 1), ("patience", 0),
                          ("max_rules", 0), ("max_grow_iter", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{name} must be an int, got {value!r}")
            if value < low:
                raise ValueError(f"{name} must be >= {low}, got {value}")
        check_seed(self.random_state)
        for name, supported in (("cut_point_method", CUT_POINT_METHODS),
                                ("literal_code", LITERAL_CODES),
                                ("literal_count_code", COUNT_CODES),
                                ("multi_label", MULTI_LABEL)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in supported:
                raise ValueError(f"{name} must be one of {supported}, got {value!r}")

    @logs_compilation
    def fit(self, X, y, sample_weight=None, feature_names=None, nominal_values=None):
        """Learn the rule set from ``X`` (n, A) (array, sparse matrix or DataFrame; NaN =
        missing) and class labels ``y`` (n,) of any type, or a 0/1 label matrix ``Y``
        (n, K), K >= 2, dense or sparse (reduced as ``multi_label`` says);
        ``sample_weight``: optional non-negative integers (n,), each example counted as
        that many copies of its row. ``feature_names`` (A str) and ``nominal_values``
        ({column: value names}) are what the model prints for an array X (display only;
        ``feature_names_in_`` comes from a DataFrame alone)."""
        self._check_params()
        for name in ("label_vectors_", "n_outputs_", "_label_dtype"):  # of an earlier fit
            self.__dict__.pop(name, None)
        info = self._fit_features(X, False, feature_names, nominal_values)
        X = info.X
        Y, label_dtype = _label_matrix(y, X.shape[0])
        if Y is None:
            target, self.classes_ = _encode_labels(y, X.shape[0])
        else:
            target = Y
        weight = count_weights(sample_weight, X.shape[0], type(self).__name__)
        if weight is not None:
            rows = np.repeat(np.arange(X.shape[0]), weight)
            X, target = take_rows(X, rows), target[rows]
        nominal = nominal_mask(X.shape[1], self.categorical_features, info.nominal,
                               param="categorical_features")
        self._resolve_device()
        if Y is None:
            self.model_, self.history_ = self._fit_rule_set(X, target, self.classes_,
                                                            nominal, info)
        elif self.multi_label == "binary-relevance":
            self._fit_binary_relevance(X, target, nominal, info, label_dtype)
        else:
            self._fit_label_powerset(X, target, nominal, info, label_dtype)
        return self

    def _fit_rule_set(self, X, y_codes, classes, nominal, info):
        """One TURS fit: (TursModel, history list of float) for float32 ``X`` (n, A), int
        class codes ``y_codes`` (n,) indexing ``classes`` (C,) and nominal mask (A,)."""
        progress = self._progress(self.max_rules, every=1)
        data = prepare(X, y_codes.astype(np.int32), len(classes), nominal, self.n_cut_points,
                       self.literal_count_code, self.cut_point_method, self.literal_code)
        learner = TursLearner(data, get_class_histograms(self._device, data),
                              self.beam_width, self.patience, self.max_rules,
                              self.max_grow_iter, progress)
        with progress:
            ruleset = learner.fit()
        model = to_model(ruleset, classes, info.names, info.levels or None)
        return model, list(map(float, learner.history))

    def _set_label_outputs(self, n_labels, label_dtype):
        """The fitted attributes of a 2-D Y: ``n_outputs_``, ``classes_`` (one ``[0, 1]``
        per label) and the dtype of ``predict``."""
        self.n_outputs_ = n_labels
        self._label_dtype = label_dtype
        self.classes_ = multi_label_classes(n_labels, label_dtype)

    def _fit_binary_relevance(self, X, Y, nominal, info, label_dtype):
        """K independent binary fits, label k on ``Y[:, k]`` (uint8 (n, K)) with classes
        ``[0, 1]`` (a constant column gives a model of the else-rule alone)."""
        self._set_label_outputs(Y.shape[1], label_dtype)
        fits = [self._fit_rule_set(X, Y[:, k], np.array([0, 1], dtype=label_dtype), nominal,
                                   info) for k in range(Y.shape[1])]
        self.model_ = TursBinaryRelevanceModel([model for model, _ in fits])
        self.history_ = [history for _, history in fits]

    def _fit_label_powerset(self, X, Y, nominal, info, label_dtype):
        """One multi-class fit whose classes are the distinct rows of ``Y`` (uint8
        (n, K)), named by their 0/1 strings (``"0110..."``, sorted)."""
        self._set_label_outputs(Y.shape[1], label_dtype)
        vectors, codes = np.unique(Y, axis=0, return_inverse=True)
        self.label_vectors_ = vectors
        self.model_, self.history_ = self._fit_rule_set(X, codes.reshape(-1),
                                                        _vector_names(vectors), nominal, info)

    def _prediction_state(self):
        """The MDL score after each added rule (``history_``; binary relevance: one list
        per label) and, for a 2-D Y, the label side (``n_outputs``, ``label_dtype``); the
        classes are the model's (label powerset: the label vectors' names)."""
        if isinstance(self.model_, TursBinaryRelevanceModel):
            state = {"history": [encode_floats(history) for history in self.history_]}
        else:
            state = {"history": encode_floats(self.history_)}
        if hasattr(self, "n_outputs_"):
            state.update(n_outputs=int(self.n_outputs_), label_dtype=self._label_dtype.str)
        return state

    def _restore_prediction_state(self, node):
        binary_relevance = isinstance(self.model_, TursBinaryRelevanceModel)
        if binary_relevance:
            self.history_ = [history.floats().tolist() for history
                             in node.get("history").list(self.model_.n_labels)]
        else:
            self.history_ = node.get("history").floats().tolist()
        if node.optional("n_outputs") is None:
            if binary_relevance:
                node.get("n_outputs")  # raises: a binary-relevance fit has a 2-D Y
            self.classes_ = self.model_.classes
            return
        n_labels = node.get("n_outputs").int(low=2)
        if binary_relevance:
            if n_labels != self.model_.n_labels:
                node.get("n_outputs").fail(f"{self.model_.n_labels} (the model's labels)")
        else:
            self.label_vectors_ = _vectors_of_names(self.model_.classes, n_labels, node)
        try:
            label_dtype = np.dtype(node.get("label_dtype").str())
        except TypeError:
            node.get("label_dtype").fail("a NumPy dtype string such as '<i8'")
        self._set_label_outputs(n_labels, label_dtype)

    def predict_proba(self, X):
        """float64: for a 1-D y (n, n_classes), class probabilities in ``classes_`` order;
        for a 2-D Y (n, K), the probability of each label being 1 (label powerset: the sum
        of the probabilities of the label vectors that have it)."""
        X = self._predict_features(X)
        proba = self.model_.predict_proba(X)
        if hasattr(self, "label_vectors_"):
            return proba @ self.label_vectors_.astype(np.float64)
        return proba

    def predict(self, X):
        """For a 1-D y: the most probable class of each example (labels of ``classes_``).
        For a 2-D Y: (n, K) 0/1 of the labels' dtype: binary relevance, label k where
        its probability exceeds 0.5 (as label k's own fit predicts: ties go to 0); label
        powerset, the most probable training label vector (ties to the first in sorted
        order)."""
        X = self._predict_features(X)
        proba = self.model_.predict_proba(X)
        if isinstance(self.model_, TursBinaryRelevanceModel):
            relevant = proba > 0.5
        elif hasattr(self, "label_vectors_"):
            relevant = self.label_vectors_[np.argmax(proba, axis=1)]
        else:
            return self.classes_[np.argmax(proba, axis=1)]
        return relevant.astype(self._label_dtype, copy=False)


def _label_matrix(y, n_examples):
    """(uint8 (n, K) 0/1, the labels' dtype) of a 2-D label matrix with K >= 2 columns
    (dense or sparse), or (None, None) for anything else (a class vector, handled by
    :func:`_encode_labels`). ValueError for values other than 0/1 or a wrong length."""
    if y is None:
        return None, None
    if not sp.issparse(y):
        y = np.asarray(y)
        if y.ndim != 2 or y.shape[1] < 2:
            return None, None
    Y, _, _ = check_labels(y, n_examples)
    if Y.shape[1] < 2:
        raise ValueError(f"a sparse y must have at least 2 label columns, got {Y.shape[1]}; "
                         f"pass one label as a 1-D y")
    dtype = y.dtype
    return Y, (dtype if dtype.kind in "biuf" else np.dtype(np.uint8))


def _vector_names(vectors):
    """The class names of label vectors uint8 (M, K): their 0/1 strings, e.g. ``"0110"``
    (sorted as the rows are)."""
    return np.array(["".join(map(str, row)) for row in vectors.tolist()])


def _vectors_of_names(names, n_labels, node):
    """uint8 (M, K): the label vectors of the names of :func:`_vector_names` (a model
    file's classes); ``node.fail`` if one is no 0/1 string of length ``n_labels``."""
    names = [str(name) for name in names]
    if any(len(n) != n_labels or set(n) - {"0", "1"} for n in names):
        node.get("n_outputs").fail(f"the model's classes as 0/1 strings of length "
                                   f"n_outputs ({n_labels})")
    return np.array([[int(c) for c in n] for n in names], dtype=np.uint8).reshape(
        len(names), n_labels)


def _encode_labels(y, n_examples):
    """(int32 class codes (n,), sorted unique labels) of a 1-D label vector."""
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warn("A column-vector y was passed when a 1d array was expected; it is "
             "used as y.ravel()", DataConversionWarning)
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional (one class per example), got shape "
                         f"{y.shape}")
    if y.shape[0] != n_examples:
        raise ValueError(f"X and y have different numbers of examples: {n_examples} and "
                         f"{y.shape[0]}")
    kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass"):
        raise ValueError(f"Unknown label type: {kind}; TursClassifier needs class labels")
    classes, codes = np.unique(y, return_inverse=True)
    return codes.reshape(-1).astype(np.int32), classes
