"""RuleModel: the fitted rules as plain NumPy arrays, with prediction and text export.

A model is a default rule plus ``R`` rules ``head <- body``. Bodies are conjunctions of
conditions on raw feature values; heads are (label, score) lists. Everything is NumPy so
that a model pickles and predicts on a machine without a GPU.
"""

from dataclasses import dataclass, field

import numpy as np

from gpurules.conditions import OP_EQ, OP_NEQ, OP_SYMBOLS, name_text
from gpurules.model_codec import decode_rule_model
from gpurules.model_methods import ModelMethods
from gpurules.prediction import predict_scores

@dataclass
class RuleModel(ModelMethods):
    """Arrays describing the rules.

    Attributes:
        default_scores: float64 (K,), the default rule's head (zeros if there is none).
        has_default_rule: bool.
        cond_feature: int32 (C,), cond_op: int8 (C,), cond_threshold: float32 (C,):
            all conditions, rule after rule.
        rule_cond_start: int64 (R + 1,), rule r's conditions are
            ``cond_*[rule_cond_start[r]:rule_cond_start[r + 1]]``.
        head_label: int32 (E,), head_score: float64 (E,): all head entries.
        rule_head_start: int64 (R + 1,), likewise for the heads.
        feature_names, label_names: optional lists of str for ``str()``.
        nominal_values: optional dict column -> list of str, to print nominal codes.
        label_vectors: optional uint8 (U, K), the distinct training label vectors (first
            appearance order) that the example-wise and marginalized predictors choose from;
        label_vector_counts: optional int64 (U,), how often each occurs in the training data.
        rule_coverage: optional int64 (R,), how many training examples satisfy each rule's
            body, and n_training_examples: optional int, how many there were (the
            estimators set both after a fit; ``to_records`` and ``feature_importances``
            use them).

    ``save``, ``to_dict``, ``from_dict``, ``to_records``, ``to_frame``, ``explain`` and
    ``feature_importances``: see :class:`gpurules.model_methods.ModelMethods`.
    """

    default_scores: np.ndarray
    has_default_rule: bool
    cond_feature: np.ndarray
    cond_op: np.ndarray
    cond_threshold: np.ndarray
    rule_cond_start: np.ndarray
    head_label: np.ndarray
    head_score: np.ndarray
    rule_head_start: np.ndarray
    feature_names: list = field(default=None)
    label_names: list = field(default=None)
    nominal_values: dict = field(default=None)
    label_vectors: np.ndarray = field(default=None)
    label_vector_counts: np.ndarray = field(default=None)
    rule_coverage: np.ndarray = field(default=None)
    n_training_examples: int = field(default=None)

    kind = "boomer"  # the model file's kind (no field: not annotated)

    @classmethod
    def decode_model(cls, node):
        """The model of a model file's ``model`` section (``model_codec``)."""
        return decode_rule_model(node, cls)

    @property
    def num_labels(self):
        return self.default_scores.shape[0]

    @property
    def num_rules(self):
        """Rules learned after the default rule."""
        return self.rule_cond_start.shape[0] - 1

    def __len__(self):
        """Number of rules including the default rule (as mlrl-boomer counts them)."""
        return self.num_rules + (1 if self.has_default_rule else 0)

    def predict_scores(self, X, n_threads=1):
        """Summed heads of the covering rules.

        Args:
            X: float32 ndarray (n, A), C-contiguous; NaN = missing (never satisfies).
            n_threads: CPU threads to use.

        Returns:
            float64 ndarray (n, K).
        """
        return predict_scores(self, X, n_threads)

    def rule(self, r):
        """Rule ``r`` as ``(conditions, head)``: lists of (feature, op, threshold) and
        (label, score)."""
        c0, c1 = self.rule_cond_start[r], self.rule_cond_start[r + 1]
        h0, h1 = self.rule_head_start[r], self.rule_head_start[r + 1]
        conds = [
            (int(self.cond_feature[c]), int(self.cond_op[c]), float(self.cond_threshold[c]))
            for c in range(c0, c1)
        ]
        head = [(int(self.head_label[e]), float(self.head_score[e])) for e in range(h0, h1)]
        return conds, head

    def _feature(self, f):
        return self.feature_names[f] if self.feature_names is not None else f"x{f}"

    def _label(self, k):
        return self.label_names[k] if self.label_names is not None else f"y{k}"

    def _feature_text(self, f):
        return name_text(self._feature(f))

    def _label_text(self, k):
        return name_text(self._label(k))

    def _head_text(self, head):
        """``{label: score, ...}`` of (label, score) pairs."""
        return "{" + ", ".join(f"{self._label_text(k)}: {s:+.4f}" for k, s in head) + "}"

    def _value(self, f, op, t):
        if op in (OP_EQ, OP_NEQ) and self.nominal_values and f in self.nominal_values:
            values = self.nominal_values[f]
            if 0 <= int(t) < len(values):
                return repr(values[int(t)])
        if op in (OP_EQ, OP_NEQ):
            return f"{t:g}"
        return f"{t:.6g}"

    def format_rule(self, r):
        """One rule as ``{label: score, ...} <- cond & cond``."""
        conds, head = self.rule(r)
        body = " & ".join(
            f"{self._feature_text(f)} {OP_SYMBOLS[op]} {self._value(f, op, t)}"
            for f, op, t in conds
        )
        return f"{self._head_text(head)} <- {body or 'true'}"

    def __str__(self):
        lines = []
        if self.has_default_rule:
            default = self._head_text(enumerate(self.default_scores))
            lines.append(f"{default} <- true  (default rule)")
        lines.extend(self.format_rule(r) for r in range(self.num_rules))
        return "\n".join(lines)


class RuleModelBuilder:
    """Collects rules during a fit and freezes them into a :class:`RuleModel`."""

    def __init__(self, num_labels):
        self.default_scores = np.zeros(num_labels, dtype=np.float64)
        self.has_default_rule = False
        self._conditions = []
        self._heads = []

    def set_default_rule(self, scores):
        self.default_scores = np.asarray(scores, dtype=np.float64).copy()
        self.has_default_rule = True

    def add_rule(self, conditions, labels, scores):
        """conditions: list of (feature, op, threshold); labels int (m,), scores float (m,)."""
        self._conditions.append(list(conditions))
        self._heads.append((np.asarray(labels, np.int32), np.asarray(scores, np.float64)))

    def __len__(self):
        return len(self._heads) + (1 if self.has_default_rule else 0)

    @property
    def num_rules(self):
        """Rules added so far, the default rule not counted."""
        return len(self._heads)

    def rule(self, i):
        """Rule ``i`` (0-based, the default rule not counted) as (conditions: list of
        (feature, op, threshold), labels int32 (m,), scores float64 (m,)); copies."""
        labels, scores = self._heads[i]
        return list(self._conditions[i]), labels.copy(), scores.copy()

    def replace_rule(self, i, conditions, labels, scores):
        """Replace rule ``i`` (0-based, the default rule not counted) in place, keeping the
        order of the others; arguments as :meth:`add_rule`. Raises IndexError if there is
        no rule ``i``."""
        if not 0 <= i < len(self._heads):
            raise IndexError(f"rule {i} of {len(self._heads)}")
        self._conditions[i] = list(conditions)
        self._heads[i] = (np.asarray(labels, np.int32).copy(),
                          np.asarray(scores, np.float64).copy())

    def truncate(self, num_rules):
        """Keep the first ``num_rules`` rules (the default rule counted, as by ``len``)."""
        keep = max(num_rules - (1 if self.has_default_rule else 0), 0)
        del self._conditions[keep:]
        del self._heads[keep:]

    def build(self, feature_names=None, label_names=None, nominal_values=None):
        conds = [c for rule in self._conditions for c in rule]
        cond_start = np.zeros(len(self._conditions) + 1, dtype=np.int64)
        cond_start[1:] = np.cumsum([len(rule) for rule in self._conditions])
        head_start = np.zeros(len(self._heads) + 1, dtype=np.int64)
        head_start[1:] = np.cumsum([len(labels) for labels, _ in self._heads])
        empty_i, empty_f = np.zeros(0, np.int32), np.zeros(0, np.float64)
        return RuleModel(
            default_scores=self.default_scores,
            has_default_rule=self.has_default_rule,
            cond_feature=np.array([c[0] for c in conds], dtype=np.int32),
            cond_op=np.array([c[1] for c in conds], dtype=np.int8),
            cond_threshold=np.array([c[2] for c in conds], dtype=np.float32),
            rule_cond_start=cond_start,
            head_label=np.concatenate([h[0] for h in self._heads]) if self._heads else empty_i,
            head_score=np.concatenate([h[1] for h in self._heads]) if self._heads else empty_f,
            rule_head_start=head_start,
            feature_names=feature_names,
            label_names=label_names,
            nominal_values=nominal_values,
        )
