"""How the CPU backend searches each feature representation: one record per representation.

A :class:`SearchState` holds what a fit's searches need beside the statistics: the search
module (its ``search`` kernel and ``apply_step``, which ``refine.REFINE`` fuses into one
loop), the arrays its kernels take after the sampled features, and, for the histogram
search, its per-fit buffers. :func:`search_state` builds it from the representation's type
(:data:`BUILDERS`); the backend never switches on the type itself.
"""

from dataclasses import dataclass

import numpy as np

from gpurules.backends.cpu import exact_search, histogram_search, histograms, sparse_search
from gpurules.backends.cpu.coverage import new_list_state
from gpurules.data.binning import BinnedFeatures
from gpurules.data.presorted import PresortedFeatures
from gpurules.data.sparse import SparseSortedFeatures
from gpurules.jit.cache import njit
from gpurules.jit.prefetch import beyond_cache


@dataclass(frozen=True)
class SearchState:
    """The searches of one fit over one feature representation.

    Attributes:
        module: ``exact_search``, ``sparse_search`` (``sparse_search.compacting`` where it
            compacts its entries: large data, one thread) or ``histogram_search``.
        data: tuple, the representation's arrays as the module's kernels take them (after
            the sampled features, before the coverage mask).
        hist: int64 (B, K + W) and hist_count: int64 (B,): the histograms of the sampled
            features (``histogram_search``), else None.
        gh: (n, K + W), the dtype of ``g`` and ``h``: the statistics interleaved for the
            histogram build, kept equal to ``[g | h]`` by the backend, else None.
        covered_state: int64 (4,): the state of the list of covered examples and of the
            removal log (``coverage.covered_list``; ``[1] = -1`` makes both stale, and with
            them the histograms kept from earlier steps of the rule), else None.
        parts: int64 (1,): the number of parts (threads) of the histogram build, else None.
        kept_len: int64 (A,): per feature, how many entries of the exact search's kept
            rows hold the examples covered when it last searched the feature in this rule
            (-1: none yet, the search reads the whole sorted row), else None.
        epochs: int64 (A + 1,): per feature, the rule whose entries the sparse search's
            working copy holds, the current rule last (``sparse_search``), where it
            compacts its entries, else None.
        entries: float, the mean explicit entries of a feature for the sparse search that
            reads them all (``sparse_search``, not compacting), else None (see
            :meth:`visits`).
    """

    module: object
    data: tuple
    hist: np.ndarray = None
    hist_count: np.ndarray = None
    gh: np.ndarray = None
    covered_state: np.ndarray = None
    parts: np.ndarray = None
    kept_len: np.ndarray = None
    epochs: np.ndarray = None
    entries: float = None

    def visits(self, covered, n, S, row_visits):
        """float: what a search of ``S`` features over ``covered`` of the ``n`` examples
        reads, in rows of decomposable statistics (``jit.threads.threads_for``'s unit; one
        row costs ``row_visits``): a row per covered example and feature, or for the
        sparse search that reads every entry, each entry's coverage (counted as a row) and
        the rows of its covered entries. Counted as the covered rows, enron's searches
        (94 entries a feature) went to two threads and count data's (38,000 entries a
        feature at 10^5 examples) stayed on one below 14,300 covered examples, where each
        step still read every entry (docs/benchmarks.md, session 37)."""
        if self.entries is None:
            return covered * S * row_visits
        return S * self.entries * (1.0 + row_visits * covered / max(n, 1))

    def new_rule(self):
        """Forget what depended on the last rule's coverage (or on the statistics: the
        histograms kept for reuse by subtraction)."""
        if self.covered_state is not None:
            self.covered_state[1] = -1
        if self.kept_len is not None:
            self.kept_len[:] = -1
        if self.epochs is not None:
            self.epochs[-1] += 1

    def rule_marks(self):
        """(kept_len, epochs, covered_state): the arrays :meth:`new_rule` resets, a spare
        int64 (4,) in place of one the search has not (for :func:`forget_marks`)."""
        spare = np.zeros(4, np.int64)
        return tuple(spare if a is None else a
                     for a in (self.kept_len, self.epochs, self.covered_state))

    def for_threads(self, threads):
        """``(module, data)`` for a search on ``threads`` threads."""
        if self.parts is not None:
            self.parts[0] = threads
        return self.module, self.data


@njit(inline="always")
def forget_marks(marks):
    """:meth:`SearchState.new_rule` in compiled code, on ``SearchState.rule_marks()``: the
    fused loops call it where a rule starts or the coverage is replaced."""
    kept_len, epochs, covered_state = marks
    kept_len[:] = -1
    epochs[-1] += 1
    covered_state[1] = -1


def _presorted(fs, n, width, threads, dtype):
    # the covered entries of each feature's sorted row, as of its last search in this rule
    # (exact_search); pages are only touched for the features a rule searches
    A = fs.num_features
    kept_index = np.empty((A, n), fs.sorted_index.dtype)
    kept_value = np.empty((A, n), fs.sorted_value.dtype)
    kept_len = np.full(A, -1, np.int64)
    data = (fs.sorted_index, fs.sorted_value, fs.n_present, fs.nominal, kept_index,
            kept_value, kept_len)
    return SearchState(exact_search, data, kept_len=kept_len)


def _sparse(fs, n, width, threads, dtype):
    # where the statistics outgrow the caches (as the searches' prefetches: exact_search.
    # prefetches) and the search has one thread, the search that compacts a working copy of
    # the entries to each feature's covered ones within a rule (per feature the bounds of
    # those kept, and the rule whose entries the copy holds, -1: none yet; the last entry is
    # the current rule); else the search that reads the representation as it is
    # (sparse_search's docstring). On two threads the compaction made fits slower
    # (docs/benchmarks.md, session 27: count data, 10^6 examples, 15.8 -> 17.6 s)
    data = (fs.indptr, fs.index, fs.value, fs.n_neg, fs.n_present, fs.nominal,
            fs.sparse_value, None)
    if threads > 1 or not beyond_cache.py_func(n * width * np.dtype(dtype).itemsize):
        return SearchState(sparse_search, data,
                           entries=float(fs.indptr[-1]) / max(fs.num_features, 1))
    return _compacting(fs)


def _compacting(fs):
    """The sparse search that compacts its working copy of ``fs``' entries within a rule."""
    epochs = np.full(fs.num_features + 1, -1, np.int64)
    epochs[-1] = 0
    kept = np.empty((fs.num_features, 2), np.int64)
    data = (fs.indptr, np.empty_like(fs.index), np.empty_like(fs.value), kept, fs.n_present,
            fs.nominal, fs.sparse_value, (fs.index, fs.value, fs.n_neg, epochs))
    return SearchState(sparse_search.compacting, data, epochs=epochs)


def _binned(fs, n, width, threads, dtype):
    B = fs.total_bins
    hist = np.zeros((B, width), np.int64)  # gradient sums, then Hessian sums
    hist_count = np.zeros(B, np.int64)
    gh = np.zeros((n, width), dtype)  # the statistics' dtype: half the bytes with int32
    covered = np.empty(n, np.int32)  # the covered examples of the current rule
    state = new_list_state()
    parts = np.ones(1, np.int64)
    removed = np.empty(n, np.int32)  # the examples the rule's conditions left out, in order
    hist_at = np.full((fs.num_features, 2), -1, np.int64)  # where each feature's rows stand
    explicit = histograms.explicit_entries(fs.bin_index, fs.bin_offset)
    data = (fs.bin_index, fs.bin_offset, explicit, fs.bin_min, fs.bin_max, fs.nominal, hist,
            hist_count, covered, state, parts, gh, removed, hist_at)
    return SearchState(histogram_search, data, hist, hist_count, gh, state, parts)


# feature representation type -> builder (features, n examples, K + W statistic columns,
# search threads)
BUILDERS = {PresortedFeatures: _presorted, SparseSortedFeatures: _sparse,
            BinnedFeatures: _binned}


def every_feature_state(state, features, threads):
    """``state``, or the one to search with instead where every search reads every feature
    (``feature_sampling="none"``): on one thread the sparse search that compacts its
    entries within a rule, which then pays even where the statistics fit the caches (every
    step reads every feature's entries again; enron, 200 rules: 4.75-5.2 -> 4.3-4.6 CPU-s,
    while with 11 sampled features it made the fit 0.123 -> 0.172 s)."""
    if state.module is not sparse_search or threads > 1:
        return state
    return _compacting(features)


def team_state(state, features, statistic_bytes):
    """``state``, or the one a team's searches use instead (``jit.team``: each feature
    searched by one thread at a time, as on one thread): the sparse search that compacts
    its entries where the statistics (``statistic_bytes``, g's and h's) outgrow the caches.
    Count data, 10^5 x 100, 200 rules, a team of two: 17.4-21.0 s against 25.8-31.0 s
    reading the entries (docs/benchmarks.md, session 41)."""
    if state.module is not sparse_search or not beyond_cache.py_func(statistic_bytes):
        return state
    return _compacting(features)


def search_state(features, n, width, threads=1, dtype=np.int64):
    """The :class:`SearchState` of a fit over ``features`` with ``n`` examples,
    statistics of ``width = K + W`` columns stored as ``dtype`` (int64 or int32) and
    searches on up to ``threads`` threads."""
    builder = BUILDERS.get(type(features))
    if builder is None:
        raise TypeError(f"the CPU backend cannot search {type(features).__name__}; "
                        f"expected one of {', '.join(t.__name__ for t in BUILDERS)}")
    return builder(features, n, width, threads, dtype)
