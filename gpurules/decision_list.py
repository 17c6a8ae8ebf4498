"""DecisionList: separate-and-conquer rules with first-match prediction (NumPy/Numba, CPU).

mlrl-seco predicts each label of an example with the first rule (in learning order) that
covers the example and predicts that label; the default rule, last in the list, predicts
the labels no rule has predicted. A rule set learned as an *unordered* collection (the
random-forest variant of ``gpurules.learners.seco_unordered``) uses the same prediction:
its rules all predict a label's minority value, so the order does not matter, and each
rule carries its heuristic value on the training set so that ``threshold`` (φ) can drop
the weaker rules at prediction time.

A fitted model holds NumPy arrays only: it pickles and predicts without a GPU.
"""

from dataclasses import dataclass, field, replace

import numba as nb
import numpy as np

from gpurules.backends.cpu.jit import parallel_kernel
from gpurules.backends.cpu.threads import thread_limit
from gpurules.model import RuleModel, RuleModelBuilder, satisfies
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

    ``save``, ``to_dict``, ``from_dict``, ``to_records``, ``to_frame``, ``explain`` and
    ``feature_importances``: see :class:`gpurules.model_methods.ModelMethods`.
    """

    rules: RuleModel
    rule_value: np.ndarray
    threshold: float = -np.inf
    ordered: bool = True
    label_names: list = field(default=None)

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
        """A copy that uses only rules with a heuristic value >= ``threshold``."""
        return replace(self, threshold=float(threshold))

    def predict(self, X, n_threads=1):
        """uint8 (n, K) predictions for float32 C-contiguous ``X`` (n, A); NaN = missing."""
        m = self.rules
        args = (X, m.default_scores, m.cond_feature, m.cond_op, m.cond_threshold,
                m.rule_cond_start, m.head_label, m.head_score, m.rule_head_start,
                self.active_rules())
        with thread_limit(n_threads):
            return _predict(*args)

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
        lines.append(_head_text(m, list(enumerate(m.default_scores))) + " <- true  (default rule)")
        return "\n".join(lines)


def _head_text(model, head):
    """``{label: 0/1, ...}``."""
    return "{" + ", ".join(f"{model._label(k)}: {int(v)}" for k, v in head) + "}"


class DecisionListBuilder:
    """Collects rules whose heads predict one fixed value per label."""

    def __init__(self, default_prediction, rule_values):
        """default_prediction: uint8 (K,) default rule; rule_values: uint8 (K,) the value
        every rule predicts for label k (mlrl-seco: the minority value)."""
        self._builder = RuleModelBuilder(default_prediction.shape[0])
        self._builder.set_default_rule(np.asarray(default_prediction, np.float64))
        self._values = np.asarray(rule_values, np.float64)
        self._rule_value = []

    def add_rule(self, conditions, labels, value=-np.inf):
        """conditions: list of (feature, op, threshold); labels: int (m,) head labels;
        value: the rule's heuristic value (unordered variant)."""
        labels = np.asarray(labels, np.int32)
        self._builder.add_rule(conditions, labels, self._values[labels])
        self._rule_value.append(float(value))

    def __len__(self):
        """Rules so far, the default rule included."""
        return len(self._rule_value) + 1

    def build(self, ordered=True, threshold=-np.inf, feature_names=None, label_names=None,
              nominal_values=None):
        rules = self._builder.build(feature_names, label_names, nominal_values)
        rules.has_default_rule = True
        return DecisionList(rules, np.asarray(self._rule_value, np.float64), float(threshold),
                            ordered)


def _predict_py(X, default_values, cond_feature, cond_op, cond_threshold, rule_cond_start,
                head_label, head_value, rule_head_start, active):
    n = X.shape[0]
    K = default_values.shape[0]
    R = rule_cond_start.shape[0] - 1
    out = np.empty((n, K), dtype=np.uint8)
    for i in nb.prange(n):
        # the first covering rule's value per label, -1 while none; every element of
        # out[i] is then stored unconditionally (a conditional store of the defaults after
        # a done-mask was miscompiled on an AVX-512 host with numba 0.68 / llvmlite 0.50)
        value = np.full(K, -1.0)
        for r in range(R):
            if active[r] and _covers(X, i, cond_feature, cond_op, cond_threshold,
                                     rule_cond_start[r], rule_cond_start[r + 1]):
                for e in range(rule_head_start[r], rule_head_start[r + 1]):
                    k = head_label[e]
                    if value[k] < 0.0:
                        value[k] = head_value[e]
        for j in range(K):
            v = value[j] if value[j] >= 0.0 else default_values[j]
            out[i, j] = 1 if v > 0.0 else 0
    return out


@nb.njit(inline="always")
def _covers(X, i, cond_feature, cond_op, cond_threshold, start, stop):
    """Whether example ``i`` satisfies conditions ``start .. stop - 1``."""
    for c in range(start, stop):
        if not satisfies(cond_op[c], X[i, cond_feature[c]], cond_threshold[c]):
            return False
    return True


_predict = parallel_kernel(_predict_py)
