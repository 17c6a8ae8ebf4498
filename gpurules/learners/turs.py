"""TURS: the rule set, its MDL score, and the loop that adds rules (device-agnostic).

The model (Yang & van Leeuwen): an example covered by one rule gets that rule's ML class
distribution, one covered by several rules the distribution of the union of their covers,
one covered by none the else-rule's. The score of a rule set M is

    L(M, data) = -log2 P(y | x, M) + sum_{S in rules + else} log2 R(|S|, C) + L(M)

(``objectives.mdl``). Rules are added while the score decreases; each one is found by the
beam search of ``turs_beam``, which asks a backend (``CpuClassHistograms`` or
``CudaClassHistograms``, the protocol ``backends.base.ClassHistograms``) to score all
literals of all beam rules of a growth step in one pass: ``backend.evaluate(batch)`` with a
``backends.base.CandidateBatch``.
"""

import math

import numpy as np

from gpurules.conditions import KIND_EQ, KIND_NE, KIND_NUMERIC
from gpurules.learners.turs_beam import find_rule
from gpurules.model_turs import TursModel, TursRule
from gpurules.objectives import mdl
from gpurules.progress import MAX_RULES, FitProgress


class RuleSet:
    """A rule set on the training data: its modelling groups and exact MDL score.

    Attributes:
        rules: list of ``turs_rule.RuleState``.  grp: int32 (n,) each example's group (0 = no rule covers
        it).  groups: tuple of rule indices per group (groups[0] = ()).
        union_counts: int64 (G, C) class counts of the union of each group's covers (row 0:
        the uncovered examples).  union_size: int64 (G,).  else_counts: int64 (C,).
        data_bits, model_bits, total_bits: floats.
    """

    def __init__(self, data, rules=()):
        self.data = data
        self.rules = list(rules)
        y, C, n = data.y, data.n_classes, data.n_examples
        covers = np.array([r.cover for r in self.rules], dtype=bool).reshape(-1, n)
        self.grp, self.groups = modelling_groups(covers)
        G = len(self.groups)
        self.union_counts = np.zeros((G, C), np.int64)
        self.union_counts[0] = np.bincount(y[self.grp == 0], minlength=C)
        for g in range(1, G):
            union = covers[list(self.groups[g])].any(axis=0)
            self.union_counts[g] = np.bincount(y[union], minlength=C)
        self.union_size = self.union_counts.sum(axis=1)
        self.else_counts = self.union_counts[0].copy()
        self.rule_lengths = [r.bits() for r in self.rules]
        self.data_bits = data_bits(y, C, covers, self.grp, self.union_counts)
        self.model_bits = mdl.model_bits(self.rule_lengths)
        self.total_bits = self.data_bits + self.model_bits

    def model_change(self, rule):
        """float bits L(M + rule) - L(M)."""
        K = len(self.rules)
        return (mdl.universal_code(K + 1) - mdl.universal_code(K) - math.log2(K + 1)
                + rule.bits())

    def with_rule(self, rule):
        return RuleSet(self.data, self.rules + [rule])


def modelling_groups(covers):
    """Group the examples by the set of rules covering them.

    Args:
        covers: bool (K, n).
    Returns:
        (grp int32 (n,) with 0 = covered by no rule, tuple of rule-index tuples per group).
    """
    K, n = covers.shape
    if K == 0:
        return np.zeros(n, np.int32), ((),)
    packed = np.packbits(covers, axis=0).T  # (n, ceil(K/8))
    keys, inverse = np.unique(packed, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int32)
    if keys[0].any():  # every example is covered: keep group 0 for "no rule"
        keys = np.vstack([np.zeros_like(keys[:1]), keys])
        inverse += 1
    bits = np.unpackbits(keys, axis=1)[:, :K].astype(bool)
    return inverse, tuple(tuple(np.flatnonzero(b).tolist()) for b in bits)


def data_bits(y, C, covers, grp, union_counts):
    """-log2 P(y | x, M) + the regrets of every rule's cover and of the else-rule."""
    reg = mdl.regret_table(len(y), C)
    bits = mdl.nll_bits(union_counts[0]) + reg[int(union_counts[0].sum())]
    for g in range(1, len(union_counts)):
        counts = np.bincount(y[grp == g], minlength=C)
        p = union_counts[g] / union_counts[g].sum()
        bits -= float((counts[counts > 0] * np.log2(p[counts > 0])).sum())
    return bits + float(sum(reg[int(c)] for c in covers.sum(axis=1)))


class TursLearner:
    """Adds rules found by the beam search while the total code length decreases.

    Args:
        data: ``TursData``.  backend: an evaluator with ``evaluate(batch)``.
        beam_width: W.  patience: growth iterations without improvement before a search
        stops.  max_rules, max_grow_iter: safety limits.  progress: a
        :class:`~gpurules.progress.FitProgress` told of every rule (None: a silent one).
    """

    def __init__(self, data, backend, beam_width=10, patience=5, max_rules=500,
                 max_grow_iter=100, progress=None):
        self.data = data
        self.backend = backend
        self.beam_width = beam_width
        self.patience = patience
        self.max_rules = max_rules
        self.max_grow_iter = max_grow_iter
        self.progress = progress or FitProgress(type(self).__name__)
        self.history = []

    def fit(self):
        """Returns the final RuleSet; ``history`` lists the total bits after each rule."""
        ruleset = RuleSet(self.data)
        self.history = [ruleset.total_bits]
        reason = MAX_RULES
        while len(ruleset.rules) < self.max_rules:
            rule, score = find_rule(ruleset, self.backend, self.beam_width, self.patience,
                                    self.max_grow_iter)
            if rule is None or not score > 0:
                reason = "no rule search found a rule that shortens the code"
                break
            candidate = ruleset.with_rule(rule)
            if not candidate.total_bits < ruleset.total_bits:
                reason = "the best rule found does not decrease the MDL score"
                break
            ruleset = candidate
            self.history.append(ruleset.total_bits)
            self.progress.rule(len(ruleset.rules), rule.n_literals, rule.cover,
                               self.data.n_classes)
        self.progress.stop(len(ruleset.rules), reason)
        return ruleset


def to_model(ruleset, classes, feature_names=None, levels=None):
    """The fitted ``TursModel`` of a RuleSet (NumPy arrays only)."""
    data = ruleset.data
    rules = []
    for r in ruleset.rules:
        feature, kind, low, high = [], [], [], []
        for f in r.order:
            values = data.values[f]
            feature.append(f)
            if r.fstate[f] == mdl.F_NOMINAL:
                kind.append(KIND_EQ if r.hi[f] == mdl.OP_EQ else KIND_NE)
                low.append(values[r.lo[f]])
                high.append(np.nan)
            else:
                kind.append(KIND_NUMERIC)
                low.append(values[r.lo[f] - 1] if r.lo[f] > 0 else -np.inf)
                high.append(values[r.hi[f] - 1] if r.hi[f] <= len(values) else np.inf)
        counts = np.bincount(data.y[r.cover], minlength=data.n_classes)
        rules.append(TursRule(feature, kind, low, high, counts))
    covers = np.array([r.cover for r in ruleset.rules], bool).reshape(-1, data.n_examples)
    return TursModel(rules, ruleset.else_counts, classes, np.packbits(covers, axis=1),
                     data.y, ruleset.data_bits, ruleset.model_bits, feature_names, levels)
