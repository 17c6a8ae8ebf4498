"""The unordered SeCo variant of Rapp et al. (2019): rules from random forests, selected by
separate-and-conquer with a heuristic, filtered at prediction time by a threshold φ.

Per label ``k`` (predicted value ``p_k``: the minority value, as in the decision list):

1. *Candidates*: ``num_trees`` scikit-learn decision trees are grown on bootstrap samples
   (``sample_size`` of the examples, drawn with replacement) with a random feature subset
   per split (``max_features``: a fraction of the features, 0 = sqrt) and a depth drawn
   uniformly from ``[min_depth, max_depth]``. Every leaf whose majority class is ``p_k``
   gives a rule: its path, with conditions on the same feature and direction merged into
   the tightest one. Duplicates are dropped. Rule coverage is then recomputed with the
   model's semantics (``x <= t`` / ``x > t``; a missing value satisfies no condition).
2. *Selection* (separate-and-conquer): while examples with ``y_k = p_k`` remain uncovered,
   take the candidate with the best heuristic value on the uncovered examples (ties: more
   true positives, then fewer conditions, then the earlier candidate); stop when the best
   covers no uncovered positive or has a value <= 0; the examples it covers are removed.
3. *Filter*: each selected rule stores its heuristic value on the whole training set; the
   model predicts with the rules whose value is at least ``threshold`` (φ), a label being
   ``p_k`` if any of them covers the example (``DecisionList.with_threshold`` changes φ
   after the fit).
"""

import math

import numpy as np

from gpurules.conditions import OP_GR, OP_LEQ
from gpurules.decision_list import DecisionListBuilder
from gpurules.jit.cache import njit
from gpurules.objectives.heuristics import heuristic_value


def fit_unordered(X, Y, nominal_mask, config, options, rng, n_threads=1, progress=None):
    """Learn the unordered rule set.

    Args:
        X: float32 (n, A) dense features (NaN = missing); nominal_mask: bool (A,) (nominal
            columns are split by their codes like numerical ones).
        Y: uint8 (n, K) labels.
        config: CoveringConfig (its ``heuristic`` scores the candidates).
        options: the ``rule_set="unordered{...}"`` options (see the module docstring).
        rng: numpy Generator; n_threads: threads for the forests.
        progress: optional :class:`~gpurules.progress.FitProgress`, told of every rule.

    Returns:
        DecisionListBuilder whose rules carry their heuristic values (and the counts of
        the training examples each rule decides at ``threshold``, for ``predict_proba``).
    """
    X = np.ascontiguousarray(X, dtype=np.float32)
    n, K = Y.shape
    majority = (Y.sum(axis=0) > n / 2.0).astype(np.uint8)
    predicted = (1 - majority).astype(np.uint8)
    builder = DecisionListBuilder(majority, predicted, Y)
    hid, parameter = config.heuristic
    for k in range(K):
        positive = Y[:, k] == predicted[k]
        if not positive.any():
            continue
        rules = candidate_rules(X, positive, options, rng, n_threads)
        if not rules:
            continue
        covered = rule_coverage(X, rules)
        chosen = select_rules(covered, positive, np.array([len(r) for r in rules]), hid,
                              parameter)
        values = whole_set_values(covered[chosen], positive, hid, parameter)
        for r, value in zip(chosen, values):
            active = value >= options["threshold"]
            builder.add_rule(rules[r], [k], value, covered[r] if active else None)
            if progress is not None:
                progress.rule(len(builder), len(rules[r]), covered[r], 1)
    if progress is not None:
        progress.stop(len(builder), "the rules of every label are selected")
    return builder


def _forest(X, positive, options, rng, n_threads):
    """The fitted trees (a list of sklearn DecisionTreeClassifier)."""
    from joblib import Parallel, delayed
    from sklearn.tree import DecisionTreeClassifier

    n, A = X.shape
    fraction = options["max_features"]
    max_features = max(1, int(round(fraction * A))) if fraction > 0 else \
        max(1, int(math.sqrt(A)))
    size = max(1, int(round(options["sample_size"] * n)))
    jobs = []
    for _ in range(options["num_trees"]):
        depth = int(rng.integers(options["min_depth"], options["max_depth"] + 1))
        rows = rng.integers(0, n, size=size)
        tree = DecisionTreeClassifier(max_depth=depth, max_features=max_features,
                                      random_state=int(rng.integers(2 ** 31 - 1)))
        jobs.append((tree, rows))

    def fit(tree, rows):
        return tree.fit(X[rows], positive[rows])

    return Parallel(n_jobs=n_threads, prefer="threads")(delayed(fit)(t, r) for t, r in jobs)


def candidate_rules(X, positive, options, rng, n_threads=1):
    """Distinct rules (lists of (feature, op, float32 threshold)) of the leaves predicting
    the positive class, from a forest grown as the module docstring says."""
    seen, rules = set(), []
    for tree in _forest(X, positive, options, rng, n_threads):
        if True not in tree.classes_:
            continue
        classes = list(tree.classes_)
        column = classes.index(True)
        other = classes.index(False) if False in classes else -1
        for path in _positive_paths(tree.tree_, column, other):
            key = tuple(sorted(path))
            if key not in seen:
                seen.add(key)
                rules.append(list(key))
    return rules


def _positive_paths(tree, column, other):
    """Merged condition lists of the leaves where class ``column`` outweighs class ``other``
    (-1: a tree that saw one class only)."""
    out = []
    stack = [(0, {})]
    while stack:
        node, bounds = stack.pop()
        left, right = tree.children_left[node], tree.children_right[node]
        if left < 0:
            counts = tree.value[node][0]
            if bounds and counts[column] > (counts[other] if other >= 0 else 0.0):
                out.append([(f, op, t) for (f, op), t in bounds.items()])
            continue
        f = int(tree.feature[node])
        t = _float32_at_most(tree.threshold[node])
        stack.append((left, _tighten(bounds, f, OP_LEQ, t)))
        stack.append((right, _tighten(bounds, f, OP_GR, t)))
    return out


def _float32_at_most(threshold):
    """The largest float32 <= ``threshold``: ``x <= t`` then holds for a float32 ``x`` iff
    ``x <= threshold`` (scikit-learn compares float32 features with float64 thresholds)."""
    t = np.float32(threshold)
    if float(t) > threshold:
        t = np.nextafter(t, np.float32(-np.inf))
    return t


def _tighten(bounds, f, op, t):
    out = dict(bounds)
    old = out.get((f, op))
    if old is None or (op == OP_LEQ and t < old) or (op == OP_GR and t > old):
        out[(f, op)] = t
    return out


def rule_coverage(X, rules):
    """bool (R, n): which examples each rule covers (NaN satisfies no condition)."""
    start = np.zeros(len(rules) + 1, np.int64)
    start[1:] = np.cumsum([len(r) for r in rules])
    flat = [c for r in rules for c in r]
    feature = np.array([c[0] for c in flat], np.int64)
    op = np.array([c[1] for c in flat], np.int8)
    threshold = np.array([c[2] for c in flat], np.float32)
    return _coverage(X, feature, op, threshold, start)


@njit
def _coverage(X, feature, op, threshold, start):
    R = start.shape[0] - 1
    out = np.ones((R, X.shape[0]), np.bool_)
    for r in range(R):
        for c in range(start[r], start[r + 1]):
            f, t = feature[c], threshold[c]
            for i in range(X.shape[0]):
                v = X[i, f]
                ok = v <= t if op[c] == OP_LEQ else v > t  # NaN: False either way
                if not ok:
                    out[r, i] = False
    return out


def select_rules(covered, positive, num_conditions, heuristic, parameter):
    """Separate-and-conquer selection (see the module docstring). Returns the indices of
    the chosen rules in the order chosen.

    Args:
        covered: bool (R, n); positive: bool (n,) (``y == p``); num_conditions: int (R,).
        heuristic, parameter: as ``objectives.heuristics.heuristic_value`` takes them.
    """
    return _select(covered, positive, num_conditions.astype(np.int64), heuristic,
                   float(parameter))


@njit
def _select(covered, positive, num_conditions, heuristic, parameter):
    R, n = covered.shape
    tp = np.zeros(R, np.int64)
    fp = np.zeros(R, np.int64)
    for r in range(R):
        for i in range(n):
            if covered[r, i]:
                if positive[i]:
                    tp[r] += 1
                else:
                    fp[r] += 1
    uncovered = np.ones(n, np.bool_)
    pos_left = 0
    for i in range(n):
        pos_left += positive[i]
    neg_left = n - pos_left
    used = np.zeros(R, np.bool_)
    chosen = []
    while pos_left > 0:
        best, best_q = -1, 0.0
        for r in range(R):
            if used[r] or tp[r] == 0:
                continue
            q = heuristic_value(heuristic, parameter, float(tp[r]), float(fp[r]),
                                float(pos_left - tp[r]), float(neg_left - fp[r]))
            if q <= 0.0:
                continue
            if best < 0 or q > best_q or (q == best_q and (
                    tp[r] > tp[best] or (tp[r] == tp[best] and
                                         num_conditions[r] < num_conditions[best]))):
                best, best_q = r, q
        if best < 0:
            break
        used[best] = True
        chosen.append(best)
        for i in range(n):  # separate: remove the examples the rule covers
            if uncovered[i] and covered[best, i]:
                uncovered[i] = False
                if positive[i]:
                    pos_left -= 1
                else:
                    neg_left -= 1
                for r in range(R):
                    if covered[r, i]:
                        if positive[i]:
                            tp[r] -= 1
                        else:
                            fp[r] -= 1
    return np.array(chosen, np.int64)


def whole_set_values(covered, positive, heuristic, parameter):
    """float64 (m,): each rule's heuristic value with every training example counted."""
    pos = positive.sum()
    neg = positive.shape[0] - pos
    out = np.empty(covered.shape[0])
    for r in range(covered.shape[0]):
        tp = float((covered[r] & positive).sum())
        fp = float((covered[r] & ~positive).sum())
        out[r] = heuristic_value(heuristic, parameter, tp, fp, pos - tp, neg - fp)
    return out
