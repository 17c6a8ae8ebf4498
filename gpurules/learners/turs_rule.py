"""TURS: a rule under construction, its literals and their code length (device-agnostic).

The beam search (``turs_beam``) grows these rules; the learner (``turs``) adds the best one
to its rule set.
"""

import numpy as np

from gpurules.objectives import mdl


class RuleState:
    """A rule under construction: per-feature bounds and its cover.

    Attributes:
        fstate: int8 (A,) ``mdl.F_*``.  lo, hi: int32 (A,) the numeric bins it keeps
        (``lo <= bin < hi``); for a nominal feature ``lo`` is the level, ``hi`` the operator.
        ncuts: int64 (A,) the non-empty cut points (levels) of each feature of the rule when
        it entered the rule.  cover: bool (n,).  order: features in the order they were added.
    """

    def __init__(self, data, fstate=None, lo=None, hi=None, ncuts=None, cover=None,
                 order=()):
        A = data.n_features
        self.data = data
        self.fstate = np.zeros(A, np.int8) if fstate is None else fstate
        self.ncuts = np.zeros(A, np.int64) if ncuts is None else ncuts
        self.lo = np.zeros(A, np.int32) if lo is None else lo
        n_bins = np.diff(data.bin_offset).astype(np.int32)
        self.hi = n_bins.copy() if hi is None else hi
        self.cover = np.ones(data.n_examples, bool) if cover is None else cover
        self.order = tuple(order)

    @property
    def n_literals(self):
        return int(np.count_nonzero(self.fstate))

    def refined(self, lit):
        """A new RuleState: this rule and literal ``lit``."""
        d = self.data
        f, op, arg = int(d.lit_feat[lit]), int(d.lit_op[lit]), int(d.lit_arg[lit])
        fstate, lo, hi = self.fstate.copy(), self.lo.copy(), self.hi.copy()
        ncuts = self.ncuts.copy()
        if fstate[f] == mdl.F_FREE:
            ncuts[f] = d.nonempty_cuts(f, self.cover)
        if op == mdl.OP_LT:
            hi[f] = min(hi[f], arg)
        elif op == mdl.OP_GE:
            lo[f] = max(lo[f], arg)
        else:
            lo[f], hi[f] = arg, op
        if op in (mdl.OP_EQ, mdl.OP_NE):
            fstate[f] = mdl.F_NOMINAL
        else:
            lower, upper = lo[f] > 0, hi[f] < d.bin_offset[f + 1] - d.bin_offset[f]
            fstate[f] = (mdl.F_INTERVAL if lower and upper else
                         mdl.F_LOWER if lower else mdl.F_UPPER)
        order = self.order if f in self.order else self.order + (f,)
        return RuleState(d, fstate, lo, hi, ncuts, self.cover & d.literal_mask(lit), order)

    def literal_bits(self):
        """float bits of each of the rule's literals."""
        bits = []
        for f in self.order:
            if self.fstate[f] == mdl.F_NOMINAL:
                bits.append(mdl.nominal_literal_bits(self.ncuts[f]))
            else:
                interval = self.fstate[f] == mdl.F_INTERVAL
                bits.append(mdl.numeric_literal_bits(self.ncuts[f], interval,
                                                     self.data.literal_code))
        return bits

    def bits(self):
        """L(rule) in bits."""
        return mdl.rule_bits(self.data.n_features, self.literal_bits(), self.data.count_code)
