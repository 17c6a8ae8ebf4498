"""CpuBackend: the backend protocol implemented with Numba on the host."""

import numpy as np

from gpurules.backends.base import BATCH_NO_RULE, Refinement, select_refinement
from gpurules.backends.cpu import fused_beam, fused_rules, histograms, refine, statistics
from gpurules.backends.cpu.representations import (every_feature_state, search_state,
                                                   team_state)
from gpurules.backends.instance_draws import DRAWS, SAMPLE_NONE
from gpurules.data.binning import rows_of
from gpurules.jit import team as teams
from gpurules.jit.threads import team_threads, threads_for
from gpurules.objectives.losses import target_matrix
from gpurules.objectives.multi_output import HEAD_MULTI_OUTPUT, work_sizes
from gpurules.objectives.non_decomposable import NonDecomposableLossSpec, packed_size
from gpurules.objectives.quality import family_head_mode


class CpuBackend:
    """Exact pre-sorted search and statistics on the CPU.

    Statistics: ``g`` int64 (n, K) and ``h`` int64 (n, W): ``W = K`` for decomposable losses
    and count statistics, ``W = K (K + 1) / 2`` (packed Hessians) for a
    ``NonDecomposableLossSpec``; sums and refinements carry ``h`` of width W.

    Args:
        n_threads_search: the most threads for the search over features; small searches
            run on one (``jit.threads.threads_for``: what a call reads when the workers
            sleep between parallel regions, examples x sampled features per fit when they
            spin; see :meth:`_search_threads`).
        n_threads_update: threads for the statistics update.
    """

    name = "cpu"
    requires_binned_features = False  # exact (dense, sparse) and histogram search
    host_coverage = True  # the mask is a host array
    narrow_head_search = True  # its searches cost O(K) per feature
    fixes_partial_heads = True  # the fused loop fixes a partial head's outputs (refine.py)

    def __init__(self, n_threads_search=1, n_threads_update=1):
        self.n_threads_search = n_threads_search
        self.n_threads_update = n_threads_update

    # -- per-fit state ---------------------------------------------------------------
    def start_fit(self, features, Y, loss, base_weight, scale, statistic_dtype=np.int64):
        """``Backend.start_fit``: ``g`` and ``h`` stored as ``statistic_dtype`` (int32 halves
        the bytes an exact search fetches per visited example: 1.2x faster fits at 10^5
        examples, 1.6x at 10^6, docs/benchmarks.md session 44)."""
        n, K = Y.shape
        self.features = features
        self.Y = target_matrix(loss, Y)  # uint8 labels; float64 regression targets
        self.loss = -1 if loss is None else loss.code
        self.non_decomposable = isinstance(loss, NonDecomposableLossSpec)
        W = packed_size(K) if self.non_decomposable else K
        self.max_statistic = 0.0  # largest |non-decomposable statistic| seen (per unit weight)
        self.base_weight = np.ascontiguousarray(base_weight, dtype=np.float64)
        self.P = np.zeros((n, K), dtype=np.float64)
        self.g = np.zeros((n, K), dtype=statistic_dtype)
        self.h = np.zeros((n, W), dtype=statistic_dtype)
        self.mask = np.zeros(n, dtype=np.int32)
        self._ones = np.ones(n, dtype=np.int32)
        self._buffers = self._records = self._deltas = self._rules = self._beam = None
        self._sample = None  # int32 (n,): a batched rule's instance sample
        self._every_feature = False  # whether learn_rules saw searches of every feature
        self._team = False  # whether learn_rules ran a team (jit.team)
        # the search of the representation (cpu/representations.py); for binned features
        # the histograms (``hist``, ``hist_count``) and the interleaved statistics
        self._searches = search_state(features, n, K + W, self.n_threads_search,
                                      statistic_dtype)
        self._search_weights = None  # the weights of the last search (_weights_of_search)
        self.indicator = 0
        self.set_scale(scale)

    @property
    def hist(self):
        """int64 (B, K + W): the histograms of the histogram search (binned features), else
        None (``representations.SearchState``)."""
        return self._searches.hist

    @property
    def hist_count(self):
        """int64 (B,): the histograms' example counts, or None."""
        return self._searches.hist_count

    def set_scale(self, scale):
        self.scale = float(scale)
        self.inv_scale = 1.0 / self.scale
        if self.non_decomposable:
            self.max_statistic = statistics.compute_all_nd(
                self.loss, self.Y, self.P, self.base_weight, self.scale, self.g, self.h)
        elif self.loss >= 0:
            statistics.compute_all(self.loss, self.Y, self.P, self.base_weight, self.scale,
                                   self.g, self.h)
        self._statistics_changed()

    def set_statistics(self, g, h):
        """Replace the statistics by ``g``, ``h`` (int64 (n, K)) for a fit started without a
        loss (learners whose statistics are counts); resets the coverage."""
        np.copyto(self.g, g)
        np.copyto(self.h, h)
        self._statistics_changed()

    def _statistics_changed(self):
        self._interleave()
        self.reset_coverage()
        # sums over all examples with unit weights, kept up to date by update_statistics
        self._all_totals = statistics.covered_totals(self.mask, 0, self._ones, self.g, self.h)

    def covered_mask(self):
        """bool (n,): the examples the current rule covers."""
        return self.mask == self.indicator

    def reset_coverage(self):
        self.mask[:] = 0
        self.indicator = 0
        self._full_coverage = True
        self._searches.new_rule()

    def coverage_snapshot(self):
        """The current coverage, for :meth:`restore_coverage` (the beam search keeps one per
        rule of its beam instead of re-applying the rule's conditions): an opaque record
        (a copy of the int32 (n,) mask and its indicator)."""
        return self.mask.copy(), self.indicator, self._full_coverage

    def restore_coverage(self, snapshot):
        """Cover what :meth:`coverage_snapshot` recorded (what the searches kept of the last
        coverage is forgotten, as by :meth:`reset_coverage`)."""
        mask, self.indicator, self._full_coverage = snapshot
        self.mask[:] = mask
        self._searches.new_rule()

    def covered_totals(self, weights):
        """Sums over the covered examples; ``weights=None`` means unit weights."""
        if weights is None and self._full_coverage:
            g_tot, h_tot, count = self._all_totals
            return g_tot.copy(), h_tot.copy(), count
        return statistics.covered_totals(self.mask, self.indicator, self._weights(weights),
                                         self.g, self.h)

    def _weights(self, weights):
        return self._ones if weights is None else weights

    def _weights_of_search(self, weights):
        """``_weights(weights)`` for a search. The histogram search reuses a feature's rows
        from an earlier step of the rule (``histograms._plan``), which holds
        only for the same weights: other weights than the last search's (another array,
        compared by identity; a caller must not change an array in place within a rule)
        make those rows stale."""
        weights = self._weights(weights)
        if weights is not self._search_weights:
            if self._search_weights is not None and self.hist is not None:
                self._searches.new_rule()  # (the exact search's kept rows hold no sums)
            self._search_weights = weights
        return weights

    # -- search ----------------------------------------------------------------------
    def find_best_refinement(self, features, labels, weights, totals, search, count=None):
        S = features.shape[0]
        scratch, outs = self._result_buffers(S, search.head_mode)
        settings = (labels, family_head_mode(search.head_mode, search.params), search.params,
                    self.inv_scale, search.min_coverage, search.min_quality)
        threads = self._search_threads(int(totals[2]), S)
        self._search(features, self._weights_of_search(weights), totals, settings, scratch,
                     outs, threads)
        return select_refinement(features, outs, count)

    def partial_histograms(self, features, weights):
        """The histogram rows of the sampled ``features`` over this backend's covered
        examples, for a caller that sums them with other backends' rows (a distributed fit,
        ``backends/dask``). Binned features only.

        Args:
            features: int64 (S,) distinct sampled features.
            weights: int32 (n,) instance weights, or None (unit weights).

        Returns:
            int64 (R, K + W + 1): the rows ``bin_offset[f] .. bin_offset[f + 1] - 1`` of each
            sampled feature in the order of ``features`` (``R`` = their bins), the gradient
            sums in columns ``:K``, the Hessian sums in ``K:K + W``, the count last; rows
            with count 0 are all zero (the build leaves stale sums there). The rows stay
            the search's: a feature asked for again in the rule is brought up to date by
            subtraction where that is cheaper (``histograms._plan``).
        """
        binned = self.features
        if self.hist is None:
            raise TypeError(f"partial_histograms needs binned features, got "
                            f"{type(binned).__name__}")
        threads = self._search_threads(self.g.shape[0], features.shape[0])
        _, data = self._representation(threads)
        histograms.update_histograms(features, data, self.mask, self.indicator,
                                           self._weights_of_search(weights), threads)
        rows = rows_of(binned.bin_offset, features)
        out = np.zeros((rows.shape[0], self.hist.shape[1] + 1), np.int64)
        filled = self.hist_count[rows] > 0
        out[filled, :-1] = self.hist[rows[filled]]
        out[:, -1] = self.hist_count[rows]
        return out

    def _search(self, features, weights, totals, settings, scratch, outs, threads=1):
        """Run the search kernel of the feature representation on ``threads`` threads;
        results land in ``outs``."""
        module, data = self._representation(threads)
        module.search.run(threads, features, *data, self.mask, self.indicator, weights, self.g,
                          self.h, *totals, *settings, scratch, *outs)

    def _representation(self, threads=1):
        """(search module, its data tuple) of the fitted feature representation, for a
        search on ``threads`` threads."""
        return self._searches.for_threads(threads)

    def refine_rule(self, uniforms, labels, weights, totals, search, fix_label_after):
        """Several refinement steps in one compiled call (``refine.py``).

        Args:
            uniforms: float64 (R, m), step ``r``'s feature draws (``m = 0``: all features).
            labels: int32, the head's candidate labels; weights: int32 (n,) or None.
            totals: (g, h, count) of the covered examples; search: SearchSettings.
            fix_label_after: steps after which a single-label head keeps its label (0 =
                never).

        Returns:
            (conditions [(feature, op, threshold)], last Refinement or None, labels,
            finished: True when the rule cannot be refined further).
        """
        R, m = uniforms.shape
        S = m if m > 0 else self.features.num_features
        scratch, outs = self._result_buffers(S, search.head_mode)
        result = self._step_records(R)
        threads = self._search_threads(int(totals[2]), S)
        module, data = self._representation(threads)
        steps, self.indicator, labels, finished = refine.REFINE[module].run(
            threads, data, uniforms, self.features.num_features,
            self.mask, self.indicator, self._weights_of_search(weights), self.g, self.h,
            (np.asarray(totals[0], np.int64), np.asarray(totals[1], np.int64),
             int(totals[2])), labels, family_head_mode(search.head_mode, search.params),
            search.params, self.inv_scale, search.min_coverage, search.min_quality,
            fix_label_after, scratch, outs, result, None)
        if steps == 0:
            return [], None, labels, finished
        self._full_coverage = False
        f, op, thr, q, cnt, label, g, h = result
        conditions = list(zip(f[:steps].tolist(), op[:steps].tolist(), thr[:steps]))
        r = steps - 1  # the last refinement's sums outlive the records: copies
        last = Refinement(conditions[-1][0], conditions[-1][1], thr[r], float(q[r]),
                          int(cnt[r]), int(label[r]), g[r].copy(), h[r].copy())
        return conditions, last, labels, finished

    def learns_rules(self, plan):
        """Whether :meth:`learn_rules` serves a fit of ``plan`` (``base.RulePlan``, which
        the learner makes for plain fits only): searches and updates that run on one
        thread even over every example (the fused loop calls their serial forms; fits that
        large spend next to nothing in Python per rule), or a fit that a team serves
        (:meth:`_team_threads`)."""
        module, _ = self._representation()
        if self._rules_key(module, plan) not in fused_rules.RULES:
            return False
        n, K = self.g.shape
        S = plan.num_drawn or plan.num_features
        serial = self._search_threads(n, S) == 1 and self._update_threads(range(K)) == 1
        return serial or self._team_threads(plan) > 1

    def _team_threads(self, plan):
        """The threads of a team that learns ``plan``'s rules (``jit.team``), 1 for none:
        greedy growth over a search with one-feature tasks, more than one search thread,
        and a fit whose searches at full coverage are large enough
        (``jit.threads.team_threads``)."""
        module, _ = self._representation()
        if plan.beam_width > 0 or module not in fused_rules.HELPERS:
            return 1
        S = plan.num_drawn or plan.num_features
        return team_threads(int(self.g.shape[0] * S * self._row_visits()),
                            self.n_threads_search)

    def learn_rules(self, plan, rng, count, score_room=np.inf, first_rule=0):
        """Learn up to ``count`` rules of a plain fit in one compiled call
        (``fused_rules``; only where :meth:`learns_rules`), each applied to the statistics
        as the learner's loop would (its head shrunk by ``plan.shrinkage``), and none after
        the rule whose largest |score| uses up ``score_room`` (float): the learner
        re-encodes the statistics there (``BoostingLearner._score_room``). ``first_rule``:
        the number of the batch's first rule (the default rule not counted), for
        round-robin outputs.

        Returns:
            (rules, status): rules a list of (conditions [(feature, op, threshold)],
            labels int32 (m,), scores float64 (m,), covered count, largest |score|);
            status ``base.BATCH_LEARNED`` (fewer than ``count`` rules where the buffers
            ran short: call again), ``BATCH_NO_RULE`` (no rule could be grown) or
            ``BATCH_ZERO_HEAD`` (the next rule's head is zero: it is not returned).
        """
        if plan.num_drawn == 0 and not self._every_feature:  # (once: each rule starts anew)
            self._every_feature = True
            self._searches = every_feature_state(self._searches, self.features,
                                                 self.n_threads_search)
        threads = self._team_threads(plan)
        if threads > 1 and not self._team:  # (once, as for every feature above)
            self._team = True
            self._searches = team_state(self._searches, self.features,
                                        self.g.nbytes + self.h.nbytes)
        module, data = self._representation()
        S = plan.num_drawn or plan.num_features
        scratch, outs = self._result_buffers(S, plan.head_mode)
        delta_g, delta_h, largest = self._update_buffers()
        stats = (self.loss, self.Y, self.P, self.base_weight, self.scale, delta_g, delta_h,
                 largest)
        rules = self._rule_buffers(count)
        plan = plan._replace(head_mode=family_head_mode(plan.head_mode, plan.params))
        beam, sampled = plan.beam_width > 0, plan.sampling != SAMPLE_NONE
        sample, draw = self._ones, None
        if sampled:
            draw = DRAWS[plan.sampling]
            if self._sample is None:  # (made anew per fit: start_fit)
                self._sample = np.empty(self.mask.shape[0], np.int32)
            sample = self._sample
        args = (rng, count, plan, data, self._searches.rule_marks(), self._searches.gh,
                self.mask, self._ones, self.g, self.h, self._all_totals[:2],
                np.arange(self.g.shape[1], dtype=np.int32), self.inv_scale, stats, scratch,
                outs, self._step_records(plan.block), rules, float(score_room),
                int(first_rule))
        loop = fused_rules.RULES[self._rules_key(module, plan)]
        if threads > 1:  # (jit.team)
            team = refine.team_buffers(S, self.g.shape[1], self.h.shape[1],
                                       plan.params.shape[0])
            taken, status, self.indicator, big = teams.run(
                team[0], threads, loop, (*args, None, sample, draw, team),
                fused_rules.HELPERS[module],
                (team, data, self.mask, sample, self.g, self.h, plan.head_mode,
                 self.inv_scale, plan.min_coverage, scratch, outs))
        else:  # (a loop over a search that a team could share takes buffers either way)
            no_team = refine.NO_TEAM if module in fused_rules.HELPERS and not beam else None
            taken, status, self.indicator, big = loop(
                *args, self._beam_buffers(plan) if beam else None, sample, draw, no_team)
        self._full_coverage = status == BATCH_NO_RULE
        self._search_weights = sample  # (what the histograms were last built with)
        if self.non_decomposable:
            self.max_statistic = max(self.max_statistic, big)
        return fused_rules.unpack(rules, taken), status

    def _rule_buffers(self, count):
        """:func:`fused_rules._rules_py`'s ``rules`` for ``count`` rules (reused)."""
        n, K = self.g.shape
        C = n + 8 * count
        if self._rules is None or self._rules[3].shape[0] < count or \
                self._rules[0].shape[0] < C:
            self._rules = (np.empty(C, np.int64), np.empty(C, np.int8),
                           np.empty(C, np.float32), np.empty(count, np.int64),
                           np.empty(count * K, np.int32), np.empty(count * K),
                           np.empty(count, np.int64), np.empty(count), np.empty(count, np.int64))
        return self._rules

    def _rules_key(self, module, plan):
        """The key of ``plan``'s rule loop in ``fused_rules.RULES``."""
        return (module, self.non_decomposable, plan.beam_width > 0,
                plan.sampling != SAMPLE_NONE)

    def _beam_buffers(self, plan):
        """``fused_beam.buffers`` of ``plan``'s beam search (reused)."""
        n, K = self.g.shape
        key = (plan.beam_width, plan.params.shape[0])
        if self._beam is None or self._beam[0] != key:
            self._beam = (key, fused_beam.buffers(plan.beam_width, n, K, self.h.shape[1],
                                                  plan.params.shape[0]))
        return self._beam[1]

    def _step_records(self, R):
        """The fused loop's per-step records for up to ``R`` steps (``refine.py``'s
        ``result``), reused from call to call (a block has at most ``R`` steps)."""
        if self._records is None or self._records[0].shape[0] < R:
            K, W = self.g.shape[1], self.h.shape[1]
            self._records = (np.empty(R, np.int64), np.empty(R, np.int8),
                             np.empty(R, np.float32), np.empty(R), np.empty(R, np.int64),
                             np.empty(R, np.int32), np.empty((R, K), np.int64),
                             np.empty((R, W), np.int64))
        return self._records

    def _search_threads(self, covered, S):
        """Threads for a search of ``S`` features over ``covered`` examples: per call by
        what it reads (``SearchState.visits``, in rows of decomposable statistics), per fit
        by a row of each example and feature (:meth:`_row_visits`; spinning workers, for
        which enron's fits gain from two threads)."""
        visits, n = self._row_visits(), self.g.shape[0]
        return threads_for(int(self._searches.visits(covered, n, S, visits)),
                           self.n_threads_search, int(n * S * visits))

    def _row_visits(self):
        """What reading one example's statistics costs, in rows of decomposable ones (2K
        values): 1, or ``(K + W) / 2K`` for non-decomposable ones (enron's 53 labels: 14;
        counted as one, its searches stayed on one thread where two halved them)."""
        K, W = self.g.shape[1], self.h.shape[1]
        return (K + W) / (2 * K)

    def _result_buffers(self, S, head_mode):
        """Per-feature scratch (sums and head work rows, see exact_search) and result slots,
        reused across refinements. Work rows exist for ``HEAD_MULTI_OUTPUT`` and whenever ``h``
        is wider than ``g``; the decomposable searches compile without them."""
        key = (S, head_mode)
        if self._buffers is None or self._buffers[0] != key:  # fixed per fit in practice
            K, W = self.g.shape[1], self.h.shape[1]
            needs_work = head_mode == HEAD_MULTI_OUTPUT or W != K  # exact_search.accumulate
            work = work_sizes(K) if needs_work else None
            sums, gains = np.empty((S, 8, max(K, W)), np.int64), np.empty((S, 2 * K))
            scratch = (sums, None, None, gains)
            if work is not None:  # None: the searches compile without multi-output heads
                scratch = (sums, np.zeros((S, work[0])), np.zeros((S, work[1]), np.int64),
                           gains)
            self._buffers = (key, scratch, (np.empty(S), np.empty(S, np.int8),
                                            np.empty(S, np.float32), np.empty(S, np.int64),
                                            np.empty(S, np.int32), np.empty((S, K), np.int64),
                                            np.empty((S, W), np.int64)))
        return self._buffers[1:]

    def apply_refinement(self, refinement):
        self._full_coverage = False
        module, data = self._representation()
        r = refinement
        self.indicator = module.apply_step(r.feature, r.op, r.threshold, data, self.mask,
                                           self.indicator)

    # -- statistics ------------------------------------------------------------------
    def update_statistics(self, labels, scores):
        delta_g, delta_h, largest = self._update_buffers()
        args = (self.loss, self.Y, self.P, self.base_weight, self.scale, self.g, self.h,
                self.mask, self.indicator, np.asarray(labels, np.int32),
                np.asarray(scores, np.float64), delta_g, delta_h)
        threads = self._update_threads(labels)
        if self.non_decomposable:
            statistics.update_covered_nd.run(threads, *args, largest)
            self.max_statistic = max(self.max_statistic, float(largest.max()))
        else:
            statistics.update_covered.run(threads, *args)
        g_tot, h_tot, _ = self._all_totals  # (covered_totals hands out copies)
        g_tot += delta_g[0] if delta_g.shape[0] == 1 else delta_g.sum(0)
        h_tot += delta_h[0] if delta_h.shape[0] == 1 else delta_h.sum(0)
        self._interleave(covered=True)

    def _update_buffers(self):
        """The statistics update's outputs, reused from call to call (the kernels overwrite
        them): the changes of the sums, int64 (C, K) and (C, W), and the largest
        non-decomposable statistic, float64 (C,), of ``C = n_threads_update`` chunks of
        the examples (any ``C`` gives the same sums: they are exact)."""
        chunks = self.n_threads_update
        if self._deltas is None or self._deltas[0].shape[0] != chunks:
            self._deltas = (np.empty((chunks, self.g.shape[1]), np.int64),
                            np.empty((chunks, self.h.shape[1]), np.int64), np.empty(chunks))
        return self._deltas

    def _interleave(self, covered=False):
        """Bring the histogram build's interleaved statistics (``SearchState.gh``, binned only)
        up to date with ``g`` and ``h``: for the covered examples (those an update changed),
        else for all."""
        gh = self._searches.gh
        if gh is not None:
            self._searches.new_rule()  # histograms of the old statistics are not reused
            if covered:
                histograms.interleave_covered(self.g, self.h, self.mask, self.indicator,
                                                    gh)
            else:
                np.concatenate((self.g, self.h), axis=1, out=gh)

    def _update_threads(self, labels):
        """Threads for an update of ``labels`` over all examples: one below
        ``MIN_PARALLEL_WORK`` (example x label) visits, or ``MIN_PARALLEL_FIT`` with
        spinning workers, as for the search. (Counting a non-decomposable example's whole
        row, as the search does, put medical's updates of 333 examples on two threads and
        made its fits 0.31 -> 0.41 s.)"""
        work = self.g.shape[0] * len(labels)
        return threads_for(work, self.n_threads_update, work)

    def training_scores(self):
        """float64 (n, K): the current scores of the training examples."""
        return self.P
