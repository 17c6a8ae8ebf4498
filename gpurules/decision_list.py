"""DecisionList: separate-and-conquer rules with first-match prediction (NumPy/Numba, CPU).

mlrl-seco predicts each label of an example with the first rule (in learning order) that
covers the example and predicts that label; the default rule, last in the list, predicts
the labels no rule has predicted. A rule set learned as an *unordered* collection (the
random-forest variant of ``gpurules.learners.seco_unordered``) uses the same prediction:
its rules all predict a label's minority value, so the order does not matter, and each
rule carries its heuristic value on the training set so that ``threshold`` (φ) can drop
the weaker rules at prediction time.

Probabilities (mlrl-seco 0.15 has no ``predict_proba``; this is our definition): the
probability that label k is relevant comes from the rule that decides k in ``predict``
(the first active rule that covers the example and predicts k, else the default rule): its
Laplace-corrected confidence ``(c + 1) / (d + 2)`` on the training examples it decided
for k, where ``d`` is their (weighted) number and ``c`` the number of them whose label k
is the value the rule predicts; the probability of relevance is that confidence if the
rule predicts 1, else one minus it. The counts are taken at fit time with the fitted
threshold.

A fitted model holds NumPy arrays only: it pickles and predicts without a GPU.
"""

from dataclasses import dataclass, field, replace

import numba as nb
import numpy as np

from gpurules.conditions import satisfies
from gpurules.jit.threads import thread_limit
from gpurules.jit.variants import parallel_kernel
from gpurules.model import RuleModel, RuleModelBuilder
from gpurules.model_codec import decode_decision_list
from gpurules.model_methods import ModelMethods


@dataclass
class DecisionList(ModelMethods):
    """The rules of a SeCo model.

    Attributes:
        rules: RuleModel whose heads hold the predicted values (0.0 or 1.0) and whose
            ``default_scores`` hold the default rule's values.
        rule_value: float64 (R,), each rule's heuristic value (the unordered variant), or
            -inf (an ordered decision list).
        threshold: float, rules with ``rule_value < threshold`` are not used.
        ordered: bool, whether the rules form a decision list (else an unordered set).
        head_proba: float64 (E,) or None, each head entry's probability that its label
            is relevant (the module docstring); None: unknown (a model built without the
            training labels, or a copy with another threshold).
        default_proba: float64 (K,) or None, the same for the default rule.

    ``save``, ``to_dict``, ``from_dict``, ``to_records``, ``to_frame``, ``explain`` and
    ``feature_importances``: see :class:`gpurules.model_methods.ModelMethods`.
    """

    rules: RuleModel
    rule_value: np.ndarray
    threshold: float = -np.inf
    ordered: bool = True
    label_names: list = field(default=None)
    head_proba: np.ndarray = field(default=None)
    default_proba: np.ndarray = field(default=None)

    kind = "seco"  # the model file's kind (no field: not annotated)

    @classmethod
    def decode_model(cls, node):
        """The model of a model file's ``model`` section (``model_codec``)."""
        return decode_decision_list(node, cls, RuleModel)

    @property
    def num_labels(self):
        return self.rules.num_labels

    @property
    def default_prediction(self):
        """uint8 (K,): the default rule's values."""
        return self.rules.default_scores.astype(np.uint8)

    def active_rules(self):
        """bool (R,): the rules prediction uses (value at least ``threshold``)."""
        return self.rule_value >= self.threshold

    @property
    def num_rules(self):
        """Rules prediction uses, the default rule not counted."""
        return int(self.active_rules().sum())

    def __len__(self):
        """Number of rules prediction uses, the default rule included (as mlrl counts)."""
        return self.num_rules + 1

    def with_threshold(self, threshold):
        """A copy that uses only rules with a heuristic value >= ``threshold``. Its
        probabilities are unknown unless the threshold is the same (they depend on which
        rules decide the training examples)."""
        threshold = float(threshold)
        if threshold == self.threshold:
            return replace(self)
        return replace(self, threshold=threshold, head_proba=None, default_proba=None)

    def predict(self, X, n_threads=1):
        """uint8 (n, K) predictions for float32 C-contiguous ``X`` (n, A); NaN = missing."""
        m = self.rules
        args = (X, m.default_scores, m.cond_feature, m.cond_op, m.cond_threshold,
                m.rule_cond_start, m.head_label, m.head_score, m.rule_head_start,
                self.active_rules())
        with thread_limit(n_threads):
            return _predict(*args)

    def predict_proba(self, X, n_threads=1):
        """float64 (n, K): the probability that each label is relevant (the module
        docstring) for float32 C-contiguous ``X`` (n, A); NaN = missing."""
        if self.head_proba is None:
            raise ValueError("this decision list has no probabilities: they are estimated "
                             "at fit time for the fitted threshold (a copy made by "
                             "with_threshold for another threshold has none)")
        m = self.rules
        args = (X, self.default_proba, m.cond_feature, m.cond_op, m.cond_threshold,
                m.rule_cond_start, m.head_label, self.head_proba, m.rule_head_start,
                self.active_rules())
        with thread_limit(n_threads):
            return _predict_proba(*args)

    def __str__(self):
        m = self.rules
        active = self.active_rules()
        lines = []
        for r in range(m.num_rules):
            if not active[r]:
                continue
            _, head = m.rule(r)
            body = m.format_rule(r).split(" <- ", 1)[1]
            line = f"{_head_text(m, head)} <- {body}"
            if not self.ordered:
                line += f"  [value {self.rule_value[r]:.4f}]"
            lines.append(line)
        default = _head_text(m, list(enumerate(m.default_scores)))
        lines.append(f"{default} <- true  (default rule)")
        return "\n".join(lines)


def _head_text(model, head):
    """``{label: 0/1, ...}``."""
    return "{" + ", ".join(f"{model._label_text(k)}: {int(v)}" for k, v in head) + "}"


class DecisionListBuilder:
    """Collects rules whose heads predict one fixed value per label and, given the
    training labels, counts the examples each rule decides (the probabilities)."""

    def __init__(self, default_prediction, rule_values, Y=None, weight=None):
        """default_prediction: uint8 (K,) default rule; rule_values: uint8 (K,) the value
        every rule predicts for label k (mlrl-seco: the minority value); Y: optional uint8
        (n, K) training labels, weight: optional int or float (n,) their weights (None:
        ones). Without ``Y`` the model has no probabilities."""
        self._builder = RuleModelBuilder(default_prediction.shape[0])
        self._default = np.asarray(default_prediction, np.float64)
        self._builder.set_default_rule(self._default)
        self._values = np.asarray(rule_values, np.float64)
        self._rule_value = []
        self._Y = None if Y is None else np.asarray(Y, dtype=bool)
        if Y is not None:
            n = self._Y.shape[0]
            self._weight = np.ones(n) if weight is None else np.asarray(weight, np.float64)
            self._undecided = np.ones(self._Y.shape, dtype=bool)
            self._counts = []  # per rule: (labels, decided float64 (m,), correct (m,))

    def add_rule(self, conditions, labels, value=-np.inf, covered=None):
        """conditions: list of (feature, op, threshold); labels: int (m,) head labels;
        value: the rule's heuristic value (unordered variant); covered: bool (n,), the
        training examples the rule covers (None: it decides none, e.g. a rule below the
        threshold of an unordered set)."""
        labels = np.asarray(labels, np.int32)
        self._builder.add_rule(conditions, labels, self._values[labels])
        self._rule_value.append(float(value))
        if self._Y is not None:
            self._counts.append((labels, *self._decide(covered, labels)))

    def _decide(self, covered, labels):
        """(decided, correct) float64 (m,): the weighted training examples that the rule
        decides for each head label, and those whose label is the predicted value."""
        if covered is None:
            return np.zeros(labels.shape[0]), np.zeros(labels.shape[0])
        rows = np.flatnonzero(covered)
        block = np.ix_(rows, labels)
        decided = self._undecided[block]
        correct = decided & (self._Y[block] == self._values[labels].astype(bool))
        self._undecided[block] = False
        w = self._weight[rows]
        return w @ decided, w @ correct

    def _probabilities(self):
        """(head_proba float64 (E,), default_proba float64 (K,)), see the module
        docstring."""
        if self._Y is None:
            return None, None
        labels, decided, correct = (
            np.concatenate([np.zeros(0)] + [c[j] for c in self._counts]) for j in range(3))
        head = _relevance(self._values[labels.astype(np.int64)], decided, correct)
        rest = self._weight @ self._undecided
        rest_correct = self._weight @ (self._undecided &
                                       (self._Y == self._default.astype(bool)))
        return head, _relevance(self._default, rest, rest_correct)

    def __len__(self):
        """Rules so far, the default rule included."""
        return len(self._rule_value) + 1

    def build(self, ordered=True, threshold=-np.inf, feature_names=None, label_names=None,
              nominal_values=None):
        head_proba, default_proba = self._probabilities()
        rules = self._builder.build(feature_names, label_names, nominal_values)
        rules.has_default_rule = True
        return DecisionList(rules, np.asarray(self._rule_value, np.float64), float(threshold),
                            ordered, head_proba=head_proba, default_proba=default_proba)


def _relevance(value, decided, correct):
    """float64: P(label relevant) of rules predicting ``value`` (0/1) with Laplace
    confidence ``(correct + 1) / (decided + 2)``."""
    confidence = (correct + 1.0) / (decided + 2.0)
    return np.where(value > 0, confidence, 1.0 - confidence)


@nb.njit(inline="always")
def _first_values(X, i, value, cond_feature, cond_op, cond_threshold, rule_cond_start,
                  head_label, head_value, rule_head_start, active):
    """``value`` float64 (K,), -1 on entry: per label, the head value of the first active
    rule that covers example ``i`` and predicts it (left -1 where none does)."""
    for r in range(rule_cond_start.shape[0] - 1):
        if active[r] and _covers(X, i, cond_feature, cond_op, cond_threshold,
                                 rule_cond_start[r], rule_cond_start[r + 1]):
            for e in range(rule_head_start[r], rule_head_start[r + 1]):
                k = head_label[e]
                if value[k] < 0.0:
                    value[k] = head_value[e]


def _predict_py(X, default_values, cond_feature, cond_op, cond_threshold, rule_cond_start,
                head_label, head_value, rule_head_start, active):
    n = X.shape[0]
    K = default_values.shape[0]
    out = np.empty((n, K), dtype=np.uint8)
    for i in nb.prange(n):
        # the first covering rule's value per label, -1 while none; every element of
        # out[i] is then stored unconditionally (a conditional store of the defaults after
        # a done-mask was miscompiled on an AVX-512 host with numba 0.68 / llvmlite 0.50)
        value = np.full(K, -1.0)
        _first_values(X, i, value, cond_feature, cond_op, cond_threshold, rule_cond_start,
                      head_label, head_value, rule_head_start, active)
        for j in range(K):
            v = value[j] if value[j] >= 0.0 else default_values[j]
            out[i, j] = 1 if v > 0.0 else 0
    return out


def _predict_proba_py(X, default_proba, cond_feature, cond_op, cond_threshold,
                      rule_cond_start, head_label, head_proba, rule_head_start, active):
    n = X.shape[0]
    K = default_proba.shape[0]
    out = np.empty((n, K), dtype=np.float64)
    for i in nb.prange(n):
        # as _predict_py: the first covering rule's probability per label, -1 while none
        value = np.full(K, -1.0)
        _first_values(X, i, value, cond_feature, cond_op, cond_threshold, rule_cond_start,
                      head_label, head_proba, rule_head_start, active)
        for j in range(K):
            out[i, j] = value[j] if value[j] >= 0.0 else default_proba[j]
    return out


@nb.njit(inline="always")
def _covers(X, i, cond_feature, cond_op, cond_threshold, start, stop):
    """Whether example ``i`` satisfies conditions ``start .. stop - 1``."""
    for c in range(start, stop):
        if not satisfies(cond_op[c], X[i, cond_feature[c]], cond_threshold[c]):
            return False
    return True


_predict = parallel_kernel(_predict_py)
_predict_proba = parallel_kernel(_predict_proba_py)
