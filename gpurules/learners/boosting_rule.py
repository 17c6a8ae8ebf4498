"""One BOOMER rule: its hooks of the shared refinement loop (``learners.rule_induction``),
IREP and its head.

Heads: decomposable complete/single heads (``objectives.heads``), the single-output head of
non-decomposable statistics, and multi-output heads (``objectives.multi_output``: complete
heads of non-decomposable losses, partial heads, GBLB). A rule's head is computed from the
best refinement's sums with the same compiled function that scored it in the search.
"""

import numpy as np

from gpurules.backends.base import floyd_indices
from gpurules.learners.post_optimization import FeatureSubset
from gpurules.learners.rule_induction import Block, Growth, first_condition_redraws
from gpurules.learners.rule_pruning import (IREP_COVERAGE_MLRL, cover, fixed_head_quality,
                                            prune_conditions)
from gpurules.objectives import heads
from gpurules.objectives.compiled import head_scores as compiled_head_scores
from gpurules.objectives.compiled import label_score
from gpurules.objectives.compiled import multi_output_head as compiled_multi_output_head
from gpurules.objectives.multi_output import (HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE, SELECT_ALL,
                                              all_outputs)
from gpurules.objectives.non_decomposable import packed_index

BLOCK = 8  # refinement steps per backend call


def head_scores(g_sum, h_sum, labels, inv_scale, l1, l2):
    """Optimal scores (float64 (m,)) of ``labels`` for fixed-point sums g_sum, h_sum (K,)."""
    out = np.empty(labels.shape[0], dtype=np.float64)
    return compiled_head_scores(g_sum, h_sum, labels, inv_scale, l1, l2, out)


def multi_output_head(g_sum, h_sum, labels, inv_scale, params):
    """The multi-output head (``HEAD_MULTI_OUTPUT``) of fixed-point sums g_sum (K,), h_sum
    (K or K(K+1)/2,): (labels int32 (c,), scores float64 (c,)), as the search scored it."""
    return compiled_multi_output_head(np.ascontiguousarray(g_sum, np.int64),
                                      np.ascontiguousarray(h_sum, np.int64),
                                      np.ascontiguousarray(labels, np.int32), inv_scale,
                                      params)


class HeadFixingEngine:
    """The engine of a rule with a partial head whose backend fixes the head's outputs
    inside a block (``fixes_partial_heads``: the CPU's fused loop), saving the call that
    other engines make after the fix.

    The block that reaches the fix is given the draws of the next block too (:meth:`draw`),
    as the learner draws them one block after the other. Had the rule stopped before the
    next block began (no refinement, or the coverage at ``min_coverage``, by the fix), the
    learner would not have drawn that block: the generator is then set back to where the
    first block's draws end, so every engine takes the same draws and learns the same
    model.

    Args:
        engine: the backend; rng: the fit's numpy Generator.
    """

    def __init__(self, engine, rng):
        self.engine, self.rng, self.features = engine, rng, engine.features
        self._rewind = None  # (generator state, rows before the fix, columns) of a draw
        self.rewinds = 0  # how often the generator was set back

    def draw(self, first, second, columns):
        """float64 (first + second, columns): the draws of the block up to the fix (first
        rows) and of the block after it."""
        self._rewind = (self.rng.bit_generator.state, first, columns)
        return self.rng.random((first + second, columns))

    def refine_rule(self, uniforms, labels, weights, totals, search, fix_label_after):
        """``Backend.refine_rule``, the generator set back where the rule stopped by the
        fix (class docstring)."""
        result = self.engine.refine_rule(uniforms, labels, weights, totals, search,
                                         fix_label_after)
        if self._rewind is not None:
            state, first, columns = self._rewind
            self._rewind = None
            steps, last, finished = len(result[0]), result[1], result[3]
            if steps < first or (steps == first and finished and
                                 last.count <= search.min_coverage):
                self.rng.bit_generator.state = state
                self.rng.random((first, columns))
                self.rewinds += 1
        return result


class BoostingRule:
    """The hooks (``rule_induction.RuleHooks``) of one BOOMER rule.

    Blocks of up to :data:`BLOCK` steps, each step on the features ``feature_sampling``
    draws (or every feature of ``subset``), the block's draws taken from ``rng`` up front so
    that every backend sees the same random stream; a single-label head keeps its label
    after ``max_head_refinements`` conditions (in the engine), a partial head its outputs
    (here, between blocks, or in the engine: :class:`HeadFixingEngine`); the finished rule
    is pruned by IREP and gets its head (:meth:`finish`).

    Args:
        config: the fit's ``BoostingConfig``; backend: its backend; rng: numpy Generator.
        train: bool (n,) the training examples (a holdout set), or None (all).
        weights: int32 (n,) the rule's instance weights (held-out examples 0), or None.
        labels: int32 (m,) the outputs the head may predict.
        num_features: int, the features of the fit.
        subset: int64 (f,) sorted features every step searches, unsampled, or None.
    """

    def __init__(self, config, backend, rng, train, weights, labels, num_features,
                 subset=None):
        self.config, self.backend, self.rng, self.train = config, backend, rng, train
        self.weights, self.labels = weights, labels
        self.num_features, self.subset = num_features, subset
        self.num_drawn = 0  # features drawn per step (0: every feature)

    def start(self):
        """An empty rule covering every example; its engine is the backend (sampled
        features) or a :class:`FeatureSubset`, a :class:`HeadFixingEngine` around it where
        it fixes a partial head itself."""
        cfg, backend = self.config, self.backend
        backend.reset_coverage()
        totals = backend.covered_totals(self.weights)
        m = cfg.feature_sampling.num_samples(self.num_features)
        engine, self.num_drawn = backend, (m if m < self.num_features else 0)
        if self.subset is not None:  # every step searches all of the subset's features
            engine, self.num_drawn = FeatureSubset(backend, self.subset), 0
        elif cfg.partial_head and cfg.max_head_refinements > 0 and cfg.beam is None and \
                backend.fixes_partial_heads:  # (the beam search refines step by step)
            engine = HeadFixingEngine(backend, self.rng)
        return Growth(engine, self.labels, self.weights, totals, cfg.initial_search,
                      redraws=first_condition_redraws(self.num_features, self.num_drawn))

    def draw_features(self, growth):
        """The features of one search of ``growth.engine`` (int64 (S,)), drawn from ``rng``
        as a block's steps draw them; every feature when none are drawn (the beam
        search's, ``learners.beam_search``)."""
        num_features = growth.engine.features.num_features
        if self.num_drawn == 0:
            return np.arange(num_features, dtype=np.int64)
        return floyd_indices(self.rng.random(self.num_drawn), num_features)

    def next_block(self, growth):
        """Up to ``BLOCK`` steps, no more than ``max_conditions`` allows; a partial head's
        block ends where its outputs are to be fixed, unless its engine fixes them (a
        :class:`HeadFixingEngine`): then the block goes on with the draws of the next."""
        cfg, done = self.config, len(growth.conditions)
        block = BLOCK
        if cfg.max_conditions > 0:
            block = min(block, cfg.max_conditions - done)
        if block <= 0:
            return None
        fix_label_after = 0
        if cfg.max_head_refinements > done:
            fix_label_after = cfg.max_head_refinements - done
            if cfg.partial_head:  # the outputs are fixed by after_block, or by the engine
                after = BLOCK  # the next block's steps, as this method would plan it
                if cfg.max_conditions > 0:
                    after = min(after, cfg.max_conditions - done - fix_label_after)
                if isinstance(growth.engine, HeadFixingEngine) and after > 0:
                    uniforms = growth.engine.draw(fix_label_after, after, self.num_drawn)
                    return Block(uniforms, fix_label_after)
                block = min(block, fix_label_after)
        return Block(self.rng.random((block, self.num_drawn)), fix_label_after)

    def after_block(self, growth):
        """mlrl-boomer: a partial head's outputs are fixed after ``max_head_refinements``
        conditions; the head over them is then the complete head of those outputs."""
        search = growth.search
        if 0 < self.config.max_head_refinements <= len(growth.conditions) and \
                search.head_mode == HEAD_MULTI_OUTPUT and search.params[3] != SELECT_ALL:
            if not isinstance(growth.engine, HeadFixingEngine):  # else it fixed them
                best = growth.best
                growth.labels = self._head(best.g_sum, best.h_sum, growth.labels,
                                           search.params)[0]
            growth.search = search.with_params(all_outputs(search.params))

    def finish(self, growth):
        """:meth:`finish_rule` of the grown rule."""
        return self.finish_rule(growth.conditions, growth.best, growth.labels,
                                growth.search.params)

    def finish_rule(self, conditions, best, labels, params):
        """IREP (``cfg.irep``) and the head of a grown rule, as mlrl-boomer's
        ``AbstractRuleInduction::induceRule``: when the instance weights have zeros, the
        rule is pruned on the training examples they leave out and
        (``recalculate_predictions``) its head recomputed from all training examples the
        pruned rule covers; else the head is the grown rule's (``best``: its last
        refinement). Returns (conditions, head labels int32, scores float64, covered count)
        and leaves the backend covering the examples the head is to be applied to."""
        cfg, backend, weights = self.config, self.backend, self.weights
        g_sum, h_sum, count = best.g_sum, best.h_sum, best.count
        grown = conditions
        pruned = cfg.irep and len(conditions) > 1 and weights is not None and \
            bool((weights == 0).any())
        if pruned:
            head_labels = self._head(g_sum, h_sum, labels, params, best.label)[0]
            conditions = conditions[:self.irep(conditions, head_labels, params)]
            cover(backend, conditions)
            count = backend.covered_totals(weights)[2]
        if cfg.recalculate_predictions and (pruned or self._sampled_out()):
            # held-out examples have no statistics: the sums are the training examples'
            g_sum, h_sum, _ = backend.covered_totals(None)
        head_labels, scores = self._head(g_sum, h_sum, labels, params, best.label)
        if pruned and cfg.irep_coverage == IREP_COVERAGE_MLRL:
            cover(backend, grown[:-1])
        return conditions, head_labels, scores, count

    def irep(self, conditions, head_labels, params):
        """Number of ``conditions`` IREP keeps (``rule_pruning.irep_keep``), scored by the
        head's gain over ``head_labels`` (int32) on the prune set: the training examples of
        zero instance weight. The backend covers the whole rule on entry and its first
        n - 1 conditions on return."""
        prune = self.weights == 0
        if self.train is not None:
            prune &= self.train
        cfg, inv_scale = self.config, self.backend.inv_scale

        def quality(g, h):
            return fixed_head_quality(g, h, head_labels, cfg.head_mode, params, inv_scale)

        return prune_conditions(self.backend, conditions, prune.astype(np.int32), quality)

    def _sampled_out(self):
        """Whether the instance sample left out training examples."""
        weights = self.weights
        if weights is None:
            return False
        return bool((weights == 0).any() if self.train is None else
                    (weights[self.train] == 0).any())

    def _head(self, g_sum, h_sum, labels, params, label=-1):
        """(labels int32, scores float64) of the rule's head for the sums of its coverage;
        ``label``: the output a single-output head chose."""
        cfg, inv_scale = self.config, self.backend.inv_scale
        if cfg.head_mode == heads.HEAD_SINGLE:
            labels = np.array([label], dtype=np.int32)
        elif cfg.head_mode == HEAD_ND_SINGLE:
            d = packed_index(label, label)
            score = label_score(g_sum[label] * inv_scale, h_sum[d] * inv_scale, cfg.l1,
                                cfg.l2)
            return np.array([label], np.int32), np.array([score])
        elif cfg.head_mode == HEAD_MULTI_OUTPUT:
            return multi_output_head(g_sum, h_sum, labels, inv_scale, params)
        return labels, head_scores(g_sum, h_sum, labels, inv_scale, cfg.l1, cfg.l2)
