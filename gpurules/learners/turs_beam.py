"""The diverse-patience dual-beam search for the next TURS rule.

Starting from the empty rule, every growth step scores all literals of all its beam rules
in one backend call (``candidate_batch``, ``backend.evaluate``), then keeps two beams of
width W:
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

from gpurules.backends.base import CandidateBatch
from gpurules.learners.turs_rule import RuleState
from gpurules.objectives import mdl

FIELDS = ("parent", "lit", "cov", "score", "incl", "excl")


def _model_bits(ruleset, rule):
    """Fixed-point (L(M + rule) - L(M), the change of the rule's feature code for one more
    feature) of ``rule``, as ``literal_scores`` takes them."""
    k, A = rule.n_literals, ruleset.data.n_features
    code = ruleset.data.count_code
    new_feature = mdl.fixed(
        mdl.log2_comb(A, k + 1) - mdl.log2_comb(A, k) + mdl.literal_count_bits(A, k + 1, code)
        - mdl.literal_count_bits(A, k, code)) if k < A else 0
    return int(mdl.fixed(ruleset.model_change(rule))), int(new_feature)


def candidate_batch(ruleset, rules):
    """The ``CandidateBatch`` of the RuleStates ``rules`` (R of them, possibly none): each
    rule's covered examples with their histogram columns, the columns being the modelling
    groups of ``ruleset`` present in the rule's cover (plus group 0), in group order."""
    data = ruleset.data
    R, n, G = len(rules), data.n_examples, ruleset.union_counts.shape[0]
    covers = np.array([r.cover for r in rules], dtype=bool).reshape(R, n)
    rule_of, idx = np.nonzero(covers)
    key = rule_of * G + ruleset.grp[idx]
    occupied = np.bincount(key, minlength=R * G) > 0
    occupied[::G] = True  # every rule has a local group 0
    rank = np.cumsum(occupied) - 1
    present = np.flatnonzero(occupied) % G
    bits = np.array([_model_bits(ruleset, r) for r in rules], np.int64).reshape(R, 2)
    A = data.n_features
    return CandidateBatch(
        idx=idx.astype(np.int64), col=rank[key].astype(np.int32),
        example_offset=np.concatenate([[0], np.cumsum(covers.sum(axis=1))]).astype(np.int64),
        group_offset=np.append(rank[::G], len(present)).astype(np.int64),
        fstate=np.array([r.fstate for r in rules], np.int8).reshape(R, A),
        ncuts=np.array([r.ncuts for r in rules], np.int64).reshape(R, A),
        union_counts=np.ascontiguousarray(ruleset.union_counts[present], np.int64),
        union_size=np.ascontiguousarray(ruleset.union_size[present], np.int64),
        else_counts=np.ascontiguousarray(ruleset.else_counts, np.int64),
        base_model=np.ascontiguousarray(bits[:, 0]),
        new_feature_model=np.ascontiguousarray(bits[:, 1]))


def evaluate_rules(ruleset, backend, rules):
    """Score every literal as a refinement of each of ``rules`` in one backend call.
    Returns (incl score, excl score, incl coverage, excl coverage, incl valid, excl valid):
    arrays (R, L), float64 learning-speed scores (-inf where a gain does not exist)."""
    gain_incl, gain_excl, cov_incl, cov_excl, flags = backend.evaluate(
        candidate_batch(ruleset, rules))
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = np.maximum(cov_excl, 1) * mdl.SCALE
        incl = np.where(gain_incl == mdl.NO_GAIN, -np.inf, gain_incl / denom)
        excl = np.where(gain_excl == mdl.NO_GAIN, -np.inf, gain_excl / denom)
    return (incl, excl, cov_incl, cov_excl, (flags & mdl.VALID_INCL) != 0,
            (flags & mdl.VALID_EXCL) != 0)


def _bucket_best(valid, fraction, score, width):
    """Per rule (row), the best-scoring valid literal in each of ``width`` coverage buckets
    ``(0, 1/W], (1/W, 2/W], ...`` (the first one on ties). Args: bool, float64, float64
    arrays (R, L). Returns (rule, literal) int64 index arrays, rule after rule, buckets in
    order."""
    edges = np.linspace(0, 1, width + 1)[1:]
    bucket = np.searchsorted(edges, fraction, side="left")
    rule, lit = np.nonzero(valid & (bucket < width))
    key = rule * width + bucket[rule, lit]
    order = np.lexsort((lit, -score[rule, lit], key))
    first = np.ones(len(order), dtype=bool)
    first[1:] = key[order[1:]] != key[order[:-1]]
    chosen = order[first]
    return rule[chosen], lit[chosen]


def _combine(cands, width):
    """Sort by coverage (stable), split into ``width`` groups, keep each group's best."""
    order = np.argsort(cands["cov"], kind="stable")
    best = [g[np.argmax(cands["score"][g])] for g in np.array_split(order, width) if len(g)]
    return np.asarray(best, dtype=np.int64)


def _cover_key(cover):
    """bytes identifying a bool (n,) cover (equal covers, equal keys)."""
    return np.packbits(cover).tobytes()


def _grow_step(ruleset, backend, frontier, width):
    """One growth step. Returns the next main and auxiliary beams as lists of
    (RuleState, incl score, excl score)."""
    incl, excl, cov_i, cov_e, ok_i, ok_e = evaluate_rules(ruleset, backend, frontier)
    covers = np.array([r.cover for r in frontier], dtype=bool)
    n_i = np.maximum(covers.sum(axis=1), 1)[:, None]
    n_e = np.maximum(covers[:, ruleset.grp == 0].sum(axis=1), 1)[:, None]
    beams = []
    for valid, fraction, cov, score in ((ok_i, cov_i / n_i, cov_i, incl),
                                        (ok_e, cov_e / n_e, cov_e, excl)):
        rule, lit = _bucket_best(valid, fraction, score, width)
        cands = dict(zip(FIELDS, (rule, lit, cov[rule, lit], score[rule, lit],
                                  incl[rule, lit], excl[rule, lit])))
        beam, seen = [], set()
        if len(lit):
            for i in _combine(cands, width):
                child = frontier[cands["parent"][i]].refined(int(cands["lit"][i]))
                key = _cover_key(child.cover)
                if key in seen:
                    continue
                seen.add(key)
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
        frontier, seen = [], set()
        for rule, incl, _ in aux + main:
            key = _cover_key(rule.cover)
            if key in seen:
                continue
            seen.add(key)
            frontier.append(rule)
            if incl > best_score:
                best_rule, best_score = rule, incl
    return best_rule, best_score
