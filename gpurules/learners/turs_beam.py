"""The diverse-patience dual-beam search for the next TURS rule.

Starting from the empty rule, every growth step scores all literals of every beam rule in
one backend pass, then keeps two beams of width W:
* the main beam, scored by the learning-speed score ``(L(M) - L(M + r)) / |r's not yet
  covered examples|`` with r's overlaps with the rules of M modelled ("incl");
* the auxiliary beam, scored by the complementary learning-speed score that ignores those
  overlaps (r is scored as if it covered only the examples no rule covers yet, "excl").
A literal enters a beam only if it passes that beam's MDL local test. Diversity: each beam
rule's refinements are put into W buckets by the fraction of its coverage they keep (the
best of each bucket survives); the survivors of all beam rules are sorted by coverage, split
into W groups and the best of each group forms the next beam. Patience: the search goes on
until the best scores of both beams have failed to improve ``patience + 1`` steps in a row
(or no literal is left). The rule returned is the one with the best learning-speed score
among all beam rules seen.
"""

import numpy as np

from gpurules.learners.turs_rule import RuleState
from gpurules.objectives import mdl


class _Candidates:
    """The scored refinements of one growth step, as flat arrays (one row per refinement)."""

    def __init__(self):
        self.parent, self.lit, self.cov, self.score = [], [], [], []
        self.incl, self.excl = [], []

    def add(self, parent, lits, cov, score, incl, excl):
        self.parent.append(np.full(len(lits), parent))
        self.lit.append(lits)
        self.cov.append(cov)
        self.score.append(score)
        self.incl.append(incl)
        self.excl.append(excl)

    def arrays(self):
        if not self.lit:
            return None
        return {k: np.concatenate(getattr(self, k))
                for k in ("parent", "lit", "cov", "score", "incl", "excl")}


def _bucket_best(valid, fraction, score, width):
    """Indices of the best-scoring valid literal in each of ``width`` coverage buckets
    ``(0, 1/W], (1/W, 2/W], ...`` (the first one on ties)."""
    edges = np.linspace(0, 1, width + 1)[1:]
    bucket = np.searchsorted(edges, fraction, side="left")
    chosen = []
    for b in range(width):
        members = np.flatnonzero(valid & (bucket == b))
        if len(members):
            chosen.append(members[np.argmax(score[members])])
    return np.asarray(chosen, dtype=np.int64)


def _combine(cands, width):
    """Sort by coverage (stable), split into ``width`` groups, keep each group's best."""
    order = np.argsort(cands["cov"], kind="stable")
    best = [g[np.argmax(cands["score"][g])] for g in np.array_split(order, width) if len(g)]
    return np.asarray(best, dtype=np.int64)


def _evaluate(ruleset, backend, rule):
    """Score every literal as a refinement of ``rule``. Returns (incl score, excl score,
    incl coverage, excl coverage, incl valid, excl valid) arrays over literals."""
    idx = np.flatnonzero(rule.cover)
    g = ruleset.grp[idx]
    present = np.unique(g)
    if present[0] != 0:
        present = np.concatenate([[0], present])
    local = np.searchsorted(present, g).astype(np.int32)
    k = rule.n_literals
    A = ruleset.data.n_features
    base = mdl.fixed(ruleset.model_change(rule))
    code = ruleset.data.count_code
    new_feature = mdl.fixed(
        mdl.log2_comb(A, k + 1) - mdl.log2_comb(A, k) + mdl.literal_count_bits(A, k + 1, code)
        - mdl.literal_count_bits(A, k, code)) if k < A else 0
    gain_incl, gain_excl, cov_incl, cov_excl, flags = backend.evaluate(
        idx, local, rule.fstate, rule.ncuts, ruleset.else_counts,
        np.ascontiguousarray(ruleset.union_counts[present]),
        np.ascontiguousarray(ruleset.union_size[present]), int(base), int(new_feature))
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = np.maximum(cov_excl, 1) * mdl.SCALE
        incl = np.where(gain_incl == mdl.NO_GAIN, -np.inf, gain_incl / denom)
        excl = np.where(gain_excl == mdl.NO_GAIN, -np.inf, gain_excl / denom)
    return (incl, excl, cov_incl, cov_excl, (flags & mdl.VALID_INCL) != 0,
            (flags & mdl.VALID_EXCL) != 0)


def _grow_step(ruleset, backend, frontier, width):
    """One growth step. Returns the next main and auxiliary beams as lists of
    (RuleState, incl score, excl score)."""
    main, aux = _Candidates(), _Candidates()
    for p, rule in enumerate(frontier):
        incl, excl, cov_i, cov_e, ok_i, ok_e = _evaluate(ruleset, backend, rule)
        n_i = max(int(rule.cover.sum()), 1)
        n_e = max(int((rule.cover & (ruleset.grp == 0)).sum()), 1)
        lits = np.arange(len(incl))
        chosen = _bucket_best(ok_i, cov_i / n_i, incl, width)
        main.add(p, lits[chosen], cov_i[chosen], incl[chosen], incl[chosen], excl[chosen])
        chosen = _bucket_best(ok_e, cov_e / n_e, excl, width)
        aux.add(p, lits[chosen], cov_e[chosen], excl[chosen], incl[chosen], excl[chosen])
    beams = []
    for cands in (main.arrays(), aux.arrays()):
        beam, seen = [], []
        if cands is not None:
            for i in _combine(cands, width):
                child = frontier[cands["parent"][i]].refined(int(cands["lit"][i]))
                if any(np.array_equal(child.cover, c) for c in seen):
                    continue
                seen.append(child.cover)
                beam.append((child, float(cands["incl"][i]), float(cands["excl"][i])))
        beams.append(beam)
    return beams


def find_rule(ruleset, backend, width=10, patience=5, max_grow_iter=100):
    """The next rule for ``ruleset``. Returns (RuleState, learning-speed score) or
    (None, -inf) when no literal can be added to the empty rule."""
    frontier = [RuleState(ruleset.data)]
    best_rule, best_score = None, -np.inf
    prev_main, prev_aux, worse = -np.inf, -np.inf, 0
    for _ in range(max_grow_iter):
        main, aux = _grow_step(ruleset, backend, frontier, width)
        if not main and not aux:
            break
        top_main = max((s for _, s, _ in main), default=None)
        top_aux = max((s for _, _, s in aux), default=None)
        worse_main = top_main is not None and top_main < prev_main
        worse_aux = top_aux is not None and top_aux < prev_aux
        both_negative = (top_main is not None and top_aux is not None and top_main < 0
                         and top_aux < 0)
        worse = worse + 1 if (worse_main and worse_aux) or both_negative else 0
        prev_main = top_main if top_main is not None else prev_main
        prev_aux = top_aux if top_aux is not None else prev_aux
        if worse > patience:
            break
        frontier, seen = [], []
        for rule, incl, _ in aux + main:
            if any(np.array_equal(rule.cover, c) for c in seen):
                continue
            seen.append(rule.cover)
            frontier.append(rule)
            if incl > best_score:
                best_rule, best_score = rule, incl
    return best_rule, best_score
