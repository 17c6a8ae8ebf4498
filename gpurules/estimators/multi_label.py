"""The multi-label classifiers' side of the estimators (BOOMER, SeCo): 0/1 labels in,
predictions shaped as the labels came (the classes of a 1-D y, the labels' dtype, dense or
sparse), and the ``classes_`` scikit-learn's multi-output scorers read.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin

from gpurules.estimators._base import MultiOutputRuleLearner
from gpurules.estimators.validation import check_labels
from gpurules.json_fields import encode_values


def multi_label_classes(num_labels, label_dtype):
    """``classes_`` of a model fitted on a 2-D label matrix: one ``[0, 1]`` array per
    label (of the labels' dtype when numeric, else uint8), as scikit-learn's multi-output
    classifiers expose them (its scorers read it)."""
    dtype = label_dtype if label_dtype.kind in "biuf" else np.uint8
    return [np.array([0, 1], dtype=dtype) for _ in range(num_labels)]


class MultiLabelRuleClassifier(MultiOutputRuleLearner, ClassifierMixin, BaseEstimator):
    """Base of the multi-label learners (BOOMER, SeCo): :class:`MultiOutputRuleLearner`
    with 0/1 labels. Fitted attributes set here: ``classes_`` and those of
    :class:`MultiOutputRuleLearner`.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.multi_label = True
        return tags

    def _fit_targets(self, y, n_examples):
        """The labels: uint8 (n, K) of 0/1 (``validation.check_labels``); sets
        ``classes_``, ``_one_d`` and ``_label_dtype``."""
        Y, self.classes_, self._one_d = check_labels(y, n_examples)
        self._label_dtype = y.dtype if hasattr(y, "toarray") else np.asarray(y).dtype
        if not self._one_d:
            self.classes_ = multi_label_classes(Y.shape[1], self._label_dtype)
        return Y

    def _prediction_state(self):
        """Adds the label side of prediction, classes and label dtype, to
        :meth:`MultiOutputRuleLearner._prediction_state`."""
        state = super()._prediction_state()
        return {**state, "label_dtype": self._label_dtype.str,
                "classes": encode_values(self.classes_, "classes_") if state["one_d"] else
                None}

    def _restore_prediction_state(self, node):
        super()._restore_prediction_state(node)
        try:
            self._label_dtype = np.dtype(node.get("label_dtype").str())
        except TypeError:
            node.get("label_dtype").fail("a NumPy dtype string such as '<i8'")
        self.classes_ = node.get("classes").values() if self._one_d else \
            multi_label_classes(self.n_outputs_, self._label_dtype)

    def _label_output(self, relevant):
        """What ``predict`` returns for ``relevant`` ((n, K) of 0/1 or bool): the classes of
        a 1-D y (from column 0), else the labels in y's dtype (uint8 for a non-numeric
        one), as CSR if ``prediction_format='sparse'``."""
        if self._one_d:
            codes = relevant[:, 0].astype(np.intp)
            return self.classes_[codes] if len(self.classes_) == 2 else \
                np.full(codes.shape, self.classes_[0])
        dtype = self._label_dtype if self._label_dtype.kind in "biuf" else np.uint8
        out = relevant.astype(dtype, copy=False)
        if self._option("prediction_format")[0] == "sparse":
            return sp.csr_matrix(out)
        return out
