"""The fitted TURS rule set: NumPy arrays only (pickles, predicts without a GPU).

Prediction (Yang & van Leeuwen): an example covered by one rule gets that rule's class
distribution on the training data; one covered by several rules gets the distribution of the
union of their training covers (for disjoint covers the coverage-weighted mix of the rules'
distributions); one covered by none gets the else-rule's. Distributions are maximum
likelihood (relative frequencies). A missing value (NaN) never satisfies a literal.
"""

import numpy as np

from gpurules.conditions import KIND_EQ, KIND_NUMERIC, name_text
from gpurules.model_codec import decode_turs
from gpurules.model_methods import ModelMethods


class TursRule:
    """One rule: a conjunction of literals and its training class counts.

    Attributes:
        feature: int32 (k,).  kind: int8 (k,) ``KIND_*``.  low, high: float64 (k,): a
        numeric literal is ``low <= x < high`` (-inf / inf for a missing side); a nominal
        one ``x == low`` or ``x != low``.  counts: int64 (C,) class counts of its cover.
    """

    def __init__(self, feature, kind, low, high, counts):
        self.feature = np.asarray(feature, np.int32)
        self.kind = np.asarray(kind, np.int8)
        self.low = np.asarray(low, np.float64)
        self.high = np.asarray(high, np.float64)
        self.counts = np.asarray(counts, np.int64)

    @property
    def coverage(self):
        return int(self.counts.sum())

    @property
    def probabilities(self):
        return self.counts / max(self.coverage, 1)

    def covers(self, X):
        """bool (n,): the examples of float ``X`` (n, A) that satisfy every literal."""
        out = np.ones(X.shape[0], dtype=bool)
        for f, kind, low, high in zip(self.feature, self.kind, self.low, self.high):
            x = X[:, f].astype(np.float64)
            if kind == KIND_NUMERIC:
                out &= (x >= low) & (x < high)
            elif kind == KIND_EQ:
                out &= x == low
            else:
                out &= (x != low) & ~np.isnan(x)
        return out

    def describe(self, feature_names=None, levels=None):
        """The condition as text, e.g. ``petal width < 0.8 AND 1 <= sepal length < 5``."""
        parts = []
        for f, kind, low, high in zip(self.feature, self.kind, self.low, self.high):
            name = name_text(feature_names[f]) if feature_names is not None else f"x{f}"
            if kind == KIND_NUMERIC:
                if np.isfinite(low) and np.isfinite(high):
                    parts.append(f"{low:.6g} <= {name} < {high:.6g}")
                elif np.isfinite(low):
                    parts.append(f"{name} >= {low:.6g}")
                else:
                    parts.append(f"{name} < {high:.6g}")
            else:
                value = _level_name(levels, f, low)
                parts.append(f"{name} {'==' if kind == KIND_EQ else '!='} {value}")
        return " AND ".join(parts) if parts else "TRUE"


def _level_name(levels, f, value):
    if levels and f in levels and float(value).is_integer() and 0 <= value < len(levels[f]):
        return name_text(levels[f][int(value)])
    return f"{value:.6g}"


class TursModel(ModelMethods):
    """A fitted truly unordered rule set.

    Attributes:
        rules: list of TursRule.  else_counts: int64 (C,) class counts of the examples no
        rule covers.  classes: the class labels (``classes_`` order).  covers: uint8
        (K, ceil(n/8)) packed training covers and y: int32 (n,) training classes, for the
        union distributions.  data_bits, model_bits, total_bits: the MDL score (bits).
        feature_names: list of str or None.  levels: {feature: level names} or None.

    ``save``, ``to_dict``, ``from_dict``, ``to_records``, ``to_frame``, ``explain`` and
    ``feature_importances``: see :class:`gpurules.model_methods.ModelMethods`.
    """

    kind = "turs"  # the model file's kind

    @classmethod
    def decode_model(cls, node):
        """The model of a model file's ``model`` section (``model_codec``): a
        :class:`TursBinaryRelevanceModel` if it holds several labels."""
        return decode_turs(node, TursModel, TursRule, TursBinaryRelevanceModel)

    def __init__(self, rules, else_counts, classes, covers, y, data_bits, model_bits,
                 feature_names=None, levels=None):
        self.rules = list(rules)
        self.else_counts = np.asarray(else_counts, np.int64)
        self.classes = np.asarray(classes)
        self.covers = np.asarray(covers, np.uint8)
        self.y = np.asarray(y, np.int32)
        self.data_bits = float(data_bits)
        self.model_bits = float(model_bits)
        self.feature_names = feature_names
        self.levels = levels

    @property
    def total_bits(self):
        return self.data_bits + self.model_bits

    @property
    def n_classes(self):
        return len(self.classes)

    def __len__(self):
        """The number of rules (the else-rule not counted)."""
        return len(self.rules)

    @property
    def n_literals(self):
        return int(sum(len(r.feature) for r in self.rules))

    def else_probabilities(self):
        """The else-rule's distribution (the training distribution if it covers nothing)."""
        counts = self.else_counts
        if counts.sum() == 0:
            counts = np.bincount(self.y, minlength=self.n_classes)
        return counts / counts.sum()

    def coverage_matrix(self, X):
        """bool (n, K): which rules cover each example of float ``X`` (n, A)."""
        X = np.asarray(X)
        return np.array([r.covers(X) for r in self.rules], dtype=bool).reshape(
            len(self.rules), X.shape[0]).T

    def union_probabilities(self, rule_indices):
        """float64 (C,): the class distribution of the union of the training covers of
        ``rule_indices`` (the else-rule's for none)."""
        if len(rule_indices) == 0:
            return self.else_probabilities()
        n = len(self.y)
        union = np.bitwise_or.reduce(self.covers[list(rule_indices)], axis=0)
        mask = np.unpackbits(union)[:n].astype(bool)
        counts = np.bincount(self.y[mask], minlength=self.n_classes)
        return counts / counts.sum()

    def predict_proba(self, X):
        """float64 (n, C): class probabilities, columns in ``classes`` order."""
        cov = self.coverage_matrix(X)
        out = np.empty((cov.shape[0], self.n_classes))
        if cov.shape[0] == 0:
            return out
        keys, inverse = np.unique(np.packbits(cov, axis=1), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        K = len(self.rules)
        for g, key in enumerate(keys):
            members = np.flatnonzero(np.unpackbits(key)[:K])
            out[inverse == g] = self.union_probabilities(members)
        return out

    def random_pick_proba(self, X, random_state=None):
        """float64 (n, C): each example gets the distribution of ONE of its covering rules,
        chosen at random (the else-rule's if none covers it) — the test that the rules are
        truly unordered: if overlapping rules agree, this scores like ``predict_proba``."""
        rng = np.random.default_rng(random_state)
        cov = self.coverage_matrix(X)
        probs = np.array([r.probabilities for r in self.rules]).reshape(-1, self.n_classes)
        out = np.tile(self.else_probabilities(), (cov.shape[0], 1))
        for i in np.flatnonzero(cov.any(axis=1)):
            out[i] = probs[rng.choice(np.flatnonzero(cov[i]))]
        return out

    def __str__(self):
        names = ", ".join(name_text(c) for c in self.classes)
        lines = [f"TURS rule set: {len(self)} rules, {self.n_literals} literals, MDL score "
                 f"{self.total_bits:.2f} bits (data {self.data_bits:.2f} + model "
                 f"{self.model_bits:.2f}); distributions over ({names})"]
        for i, rule in enumerate(self.rules, 1):
            lines.append(f"  rule {i}: IF {rule.describe(self.feature_names, self.levels)} "
                         f"THEN P = {_fmt(rule.probabilities)}  [coverage {rule.coverage}]")
        lines.append(f"  else-rule: P = {_fmt(self.else_probabilities())}  "
                     f"[coverage {int(self.else_counts.sum())}]")
        return "\n".join(lines)

    __repr__ = __str__


def _fmt(p):
    return "(" + ", ".join(f"{v:.3f}" for v in p) + ")"


class TursBinaryRelevanceModel(ModelMethods):
    """The multi-label TURS model of binary relevance: one :class:`TursModel` per label,
    each fitted on that label's 0/1 column (classes ``[0, 1]``).

    Attributes:
        models: list of K TursModel (label order).

    ``save``/``to_dict``/``from_dict`` write and read all K rule sets as one ``turs``
    model file (``docs/model-format.md``). Inspect a label's rules through ``models[k]``
    (``print``, ``to_records``, ``explain``); the combined model has no single rule table
    (NotImplementedError).
    """

    kind = "turs"  # the model file's kind
    decode_model = TursModel.decode_model

    def __init__(self, models):
        self.models = list(models)

    @property
    def n_labels(self):
        return len(self.models)

    def __len__(self):
        """The number of rules of all labels (else-rules not counted)."""
        return sum(len(m) for m in self.models)

    @property
    def n_literals(self):
        return sum(m.n_literals for m in self.models)

    def predict_proba(self, X):
        """float64 (n, K): the probability of each label being 1 under its rule set."""
        X = np.asarray(X)
        out = np.empty((X.shape[0], self.n_labels))
        for k, model in enumerate(self.models):
            out[:, k] = model.predict_proba(X)[:, 1]
        return out

    def _one_rule_set_only(self, *args, **kwargs):
        raise NotImplementedError(
            "a binary-relevance TURS model is K rule sets (one per label); list, export or "
            "explain each label's TursModel, model.models[k], instead")

    to_records = to_frame = explain = feature_importances = _one_rule_set_only

    def __str__(self):
        parts = [f"TURS binary relevance: {self.n_labels} labels, {len(self)} rules"]
        for k, model in enumerate(self.models):
            parts.append(f"label {k}: " + str(model))
        return "\n".join(parts)

    __repr__ = __str__
