"""Top-down beam search for one rule: mlrl-boomer's ``rule_induction="top-down-beam-search"``.

Where the greedy loop (``learners.rule_induction``) keeps one rule and adds its best
refinement, the beam keeps the ``width`` best rules of each depth:

1. The empty rule's ``width`` best refinements form the first beam (the first condition's
   features redrawn as the greedy loop does when the drawn ones offer none).
2. Depth after depth, every beam entry that may still be refined (it covers more than
   ``min_coverage`` examples and found refinements before) is searched on its own coverage;
   a refinement must beat the worst entry of the current beam, and once the new beam is
   full, its worst entry (the bound tightens as entries are taken in order: every search
   runs with the depth's bound, and of each entry's refinements those that beat the
   bound of its turn are kept, which are the best a search with that bound finds, each
   feature's best condition being the same whatever the bound). An entry that
   finds no refinement stays a candidate of the new beam, no longer refinable. The new
   beam is the ``width`` best candidates (ties: the existing, more general rule first,
   then the order of discovery).
3. The search stops when no entry found a refinement or the rules reached
   ``max_conditions``; the rule is the best entry of the last beam.

Features: with ``resample_features`` every entry's search draws its own features, else one
draw per depth serves every entry (mlrl-boomer's ``createBeamSearchFeatureSampling``). A
head's outputs are fixed after ``max_head_refinements`` conditions, per entry, as in the
greedy loop.

Differences from mlrl-boomer 0.15, both deliberate (user guide, "Differences from
mlrl-boomer"):

* An entry contributes at most one refinement per feature (each searched feature's best
  condition, ``Backend.find_best_refinement(count=...)``), where mlrl-boomer may fill the
  beam with neighbouring thresholds of one feature, near-copies of one rule.
* mlrl-boomer's full beam replaces its worst entry by each further refinement of an entry
  without comparing the two, so a later, worse refinement of the same entry can push out
  a better one; here the new beam is always the ``width`` best candidates.

Each entry's search first restores its coverage: from the coverage snapshot of its rule
without the last condition plus that condition, on a backend with ``coverage_snapshot`` and
``restore_coverage`` (the CPU's and CUDA's), else by applying all its conditions again
(``cover``). A backend with ``find_best_refinements`` (CUDA's) runs the searches of a depth
in one call: one device->host copy per depth instead of one per entry.
"""

import itertools
from dataclasses import dataclass

import numpy as np

from gpurules.backends.base import SearchSettings
from gpurules.learners.rule_induction import Growth
from gpurules.learners.rule_pruning import cover


@dataclass(frozen=True)
class BeamSettings:
    """A beam search's parameters.

    Attributes:
        width: int >= 2, the rules kept per depth.
        resample_features: bool, a feature draw per entry (else one per depth).
        max_conditions: int, the most conditions of a rule (0: no limit).
        max_head_refinements: int, the conditions after which a head's outputs are fixed
            (0: never).
    """

    width: int
    resample_features: bool = False
    max_conditions: int = 0
    max_head_refinements: int = 1

    def __post_init__(self):
        if self.width < 2:
            raise ValueError(f"beam_width must be at least 2, got {self.width}")


class _Entry:
    """A rule of the beam: ``growth`` (its conditions, last refinement (quality, sums) and
    labels), whether it may be searched at the next depth, and the coverage snapshots of
    the rule without its last condition (``base``) and of the whole rule (``own``, made
    at its first search); both None without snapshots."""

    __slots__ = ("growth", "refinable", "base", "own")

    def __init__(self, growth, refinable, base, own=None):
        self.growth, self.refinable, self.base, self.own = growth, refinable, base, own

    @property
    def quality(self):
        return self.growth.best.quality


def induce_rule_beam(hooks, beam):
    """Grow a rule by beam search (module docstring). ``hooks``: a learner's
    ``rule_induction.RuleHooks`` with two more members, ``backend`` (whose coverage the
    search sets) and ``draw_features(growth)`` (int64 (S,), the features of one search of
    ``growth.engine``); ``beam``: :class:`BeamSettings`. Returns ``hooks.finish`` of the
    best rule, the backend covering it, or None when no condition was found."""
    root = hooks.start()
    if root is None:
        return None
    entries = _first_beam(hooks, root, beam)
    depth = 1
    while entries and (beam.max_conditions == 0 or depth < beam.max_conditions):
        entries, refined = _next_beam(hooks, entries, beam)
        if not refined:
            break
        depth += 1
    if not entries:
        return None
    _cover(hooks.backend, entries[0])
    return hooks.finish(entries[0].growth)


def _snapshots(backend):
    """Whether ``backend`` can record and restore a coverage."""
    return hasattr(backend, "coverage_snapshot") and hasattr(backend, "restore_coverage")


def _cover(backend, entry):
    """Make ``backend`` cover ``entry``'s rule (from its snapshots where there are)."""
    if entry.base is None:
        cover(backend, entry.growth.conditions)
    elif entry.own is not None:
        backend.restore_coverage(entry.own)
    else:
        _own_snapshot(backend, entry)


def _own_snapshot(backend, entry):
    """Record ``entry.own`` (once; the backend then covers the entry's rule): its base
    coverage restored and its last condition applied."""
    if entry.own is None:
        backend.restore_coverage(entry.base)
        backend.apply_refinement(entry.growth.best)
        entry.own = backend.coverage_snapshot()


def _first_beam(hooks, root, beam):
    """The empty rule's best refinements, best first (features redrawn while the drawn
    ones offer none, up to ``root.redraws`` times)."""
    base = hooks.backend.coverage_snapshot() if _snapshots(hooks.backend) else None
    while True:
        found = root.engine.find_best_refinement(hooks.draw_features(root), root.labels,
                                                 root.weights, root.totals, root.search,
                                                 count=beam.width)
        if found or root.redraws <= 0:
            return [_child(hooks, root, ref, beam, base) for ref in found]
        root.redraws -= 1


def _next_beam(hooks, entries, beam):
    """(the next beam, whether any entry found a refinement)."""
    width = beam.width
    bound = entries[-1].quality  # a refinement must beat the worst entry of the beam
    searched = _search_entries(hooks, entries, beam, bound)
    # (sort key (-quality, kind, order of discovery), a kept _Entry or a refinement's
    # (parent entry, Refinement): its entry is made only if it makes the new beam)
    candidates = []
    order = itertools.count()
    refined = False
    for entry, found in zip(entries, searched):
        # each search had the depth's bound; the bound tightened since (module docstring):
        # the best of what beats it are the best a search with it would have found
        found = [ref for ref in found if ref.quality > bound]
        if found:
            refined = True
            candidates += [((-ref.quality, 1, next(order)), (entry, ref)) for ref in found]
        elif len(candidates) < width or not entry.quality < bound:
            entry.refinable = False
            candidates.append(((-entry.quality, 0, next(order)), entry))
        if len(candidates) >= width:
            candidates.sort(key=lambda c: c[0])
            del candidates[width:]
            bound = max(bound, -candidates[-1][0][0])
    candidates.sort(key=lambda c: c[0])
    return [item if isinstance(item, _Entry) else
            _child(hooks, item[0].growth, item[1], beam, item[0].own)
            for _, item in candidates[:width]], refined


def _search_entries(hooks, entries, beam, bound):
    """The refinements of each entry of a depth (a list per entry, empty for an entry that
    is not refinable), every search with the depth's ``bound``: on a backend with
    ``find_best_refinements`` (CUDA's) in one call, each entry's coverage from its
    snapshot; else one search after another. Features are drawn in the entries' order."""
    requests, shared = [], None
    for entry in entries:
        if not entry.refinable:
            requests.append(None)
            continue
        growth = entry.growth
        if shared is None or beam.resample_features:
            shared = hooks.draw_features(growth)
        search = growth.search
        search = SearchSettings(search.head_mode, search.params, search.min_coverage, bound)
        requests.append((growth, shared, search))
    backend, width = hooks.backend, beam.width
    pairs = [(entry, request) for entry, request in zip(entries, requests) if request]
    if pairs and hasattr(backend, "find_best_refinements") and _snapshots(backend) and \
            all(growth.engine is backend for _, (growth, _, _) in pairs):
        found = _in_one_call(backend, pairs, width)
    else:
        found = [_search_entry(backend, entry, request, width) for entry, request in pairs]
    found = iter(found)
    return [next(found) if request else [] for request in requests]


def _search_entry(backend, entry, request, width):
    """The ``width`` best refinements of one entry (``request``: its (growth, features,
    search)), the backend covering it first."""
    growth, features, search = request
    _cover(backend, entry)
    return growth.engine.find_best_refinement(features, growth.labels, growth.weights,
                                              growth.totals, search, count=width)


def _in_one_call(backend, pairs, width):
    """``backend.find_best_refinements`` of the (entry, (growth, features, search)) pairs,
    each on the entry's own coverage snapshot (made here where it is missing)."""
    for entry, _ in pairs:
        _own_snapshot(backend, entry)
    weights = pairs[0][1][0].weights  # (one rule: every entry has its weights)
    return backend.find_best_refinements(
        [(entry.own, features, growth.labels, growth.totals, search)
         for entry, (growth, features, search) in pairs], weights, width)


def _child(hooks, parent, ref, beam, base):
    """The entry of ``parent`` (a Growth) refined by ``ref``: its labels fixed to the head's
    once it has ``max_head_refinements`` conditions (a single-output head here, a partial
    head's outputs by ``hooks.after_block``), refinable while it covers more than
    ``min_coverage`` examples; ``base``: the parent's coverage snapshot (or None)."""
    growth = Growth(parent.engine, parent.labels, parent.weights, parent.totals,
                    parent.search, list(parent.conditions), parent.best)
    labels = parent.labels
    if 0 < beam.max_head_refinements <= len(parent.conditions) + 1 and ref.label >= 0:
        labels = np.full(1, ref.label, np.int32)
    growth.extend([(ref.feature, ref.op, ref.threshold)], ref, labels)
    hooks.after_block(growth)
    return _Entry(growth, ref.count > growth.search.min_coverage, base)
