"""The histogram build of the CPU's histogram search (Numba): per sampled feature and bin,
the sums of the covered examples' weighted fixed-point statistics (the scan over them:
``histogram_search.py``; the CUDA twin: ``backends/cuda/histograms.py``).

Histograms: ``hist`` int64 (B, K + W), one row per bin of the flat layout of
:class:`~gpurules.data.binning.BinnedFeatures` (``B = bin_offset[-1]``) holding the bin's
gradient sums in columns ``0 .. K - 1`` and its Hessian sums in ``K .. K + W - 1`` (``W = K``,
or the packed Hessian's ``K (K + 1) / 2`` for non-decomposable losses), and ``hist_count``
int64 (B,). The build reads the statistics interleaved the same way, ``gh`` (n, K + W) of the
statistics' dtype (int64, or int32: ``statistic_type``)
(``CpuBackend`` keeps that copy of ``g`` and ``h`` for binned features, up to date with
:func:`interleave_covered`), so adding an example to a bin is one loop over one contiguous
row of each: 0.73-0.93x the time of two rows in two arrays each (issue 17; the CUDA backend
keeps ``hist_g`` and ``hist_h`` apart, its kernels add column by column).

Within a fit's rule a feature's rows are rebuilt, rebuilt from its explicit entries (its
fullest bin filled from the covered totals) or brought up to date by subtraction,
whichever is cheapest (:func:`_plan`); :func:`build_histograms` builds from scratch.
"""

import numba as nb
import numpy as np

from gpurules.backends.cpu.coverage import covered_list, new_list_state
from gpurules.backends.cpu.exact_search import AHEAD
from gpurules.jit.cache import njit
from gpurules.jit.parts import balanced_parts
from gpurules.jit.prefetch import beyond_cache, prefetch_row
from gpurules.jit.threads import thread_limit
from gpurules.jit.variants import parallel_kernel

IN_PARALLEL_FORM = None  # bound per form (jit.variants.Kernel)


def _build_py(features, bin_index, bin_offset, explicit, covered, n_covered, mask, indicator,
              weights, gh, hist, hist_count, chunks, removed, state, hist_at, totals):
    # which features are rebuilt from the covered list, which from their explicit entries
    # and which brought up to date by subtraction (_plan), then the work in ``chunks``
    # parts (one per thread): the features split among them by their rows (_by_part), or
    # (_splits_examples) the covered examples of the ones rebuilt from the covered list,
    # each part but the first adding its share to rows of its own, summed in afterwards;
    # the count is an argument: a call of nb.get_num_threads() in a kernel would keep it
    # (and every kernel calling it) out of the disk cache
    order, start, n_dense, n_rebuilt = _plan(features, bin_offset, explicit, n_covered,
                                             mask.shape[0], hist_count, state, hist_at)
    if not IN_PARALLEL_FORM:  # one part (the split below is compiled only in parallel)
        _subtract_left(order[n_rebuilt:], start[n_rebuilt:], removed, state[2], bin_index,
                       bin_offset, weights, gh, hist, hist_count)
        _add_explicit(order[n_dense:n_rebuilt], explicit, bin_index, bin_offset, mask,
                      indicator, weights, gh, hist, hist_count, totals)
        _add_covered(order[:n_dense], _rows_of(order[:n_dense], bin_offset)[0], bin_index,
                     covered, np.int64(0), n_covered, weights, gh, hist, hist_count)
        return
    num_rows = _num_rows(order[:n_dense], bin_offset)
    by_examples = _splits_examples(n_dense, num_rows, n_covered, chunks)
    parts = chunks if by_examples else min(chunks, features.shape[0])
    groups = np.array([0, n_dense, n_rebuilt, features.shape[0]], np.int64)
    rows = _work_rows(order, start, groups, state[2], 0 if by_examples else n_covered,
                      explicit[1], n_covered, mask.shape[0])
    bounds = _by_part(order, start, groups, rows, parts)
    firsts, own_firsts = _rows_of(order[:n_dense], bin_offset)
    own, own_count = _own_buffers(parts - 1 if by_examples else 0, num_rows, gh.shape[1])
    for t in nb.prange(parts):
        a, b = bounds[2, t], bounds[2, t + 1]
        _subtract_left(order[a:b], start[a:b], removed, state[2], bin_index, bin_offset,
                       weights, gh, hist, hist_count)
        a, b = bounds[1, t], bounds[1, t + 1]
        _add_explicit(order[a:b], explicit, bin_index, bin_offset, mask, indicator, weights,
                      gh, hist, hist_count, totals)
        a, b, lo, hi = bounds[0, t], bounds[0, t + 1], 0, n_covered  # its features
        rows, rows_count, at = hist, hist_count, firsts
        if by_examples:  # every feature of the covered list, its share of the examples
            a, b, lo, hi = 0, n_dense, t * n_covered // parts, (t + 1) * n_covered // parts
            if t > 0:
                rows, rows_count, at = own[t - 1], own_count[t - 1], own_firsts
        _add_covered(order[a:b], at[a:b], bin_index, covered, lo, hi, weights, gh, rows,
                     rows_count)
    for j in range(n_dense if by_examples else 0):  # at most 1/32 of the rows added
        _sum_in(firsts[j], own_firsts[j], bin_offset[order[j] + 1] - firsts[j], own,
                own_count, hist, hist_count)  # (in parallel: a second region to compile)


EXAMPLE_SPLIT_RATIO = 32  # (see _splits_examples)


@njit
def _work_rows(order, start, groups, stop, rebuild_rows, explicit_offset, n_covered, n):
    """The work of each feature of the plan (:func:`_plan`'s ``order`` int64 (S,), whose
    groups are ``order[groups[g]:groups[g + 1]]``, ``groups`` int64 (4,)) in rows added:
    ``rebuild_rows`` for a feature rebuilt from the covered list (0 where the parts split
    the examples instead), :func:`_explicit_rows` for one rebuilt from its explicit
    entries, ``stop - start[j]`` for a subtracted one. int64 (S,)."""
    rows = np.empty(order.shape[0], np.int64)
    for j in range(order.shape[0]):
        f = order[j]
        if j < groups[1]:
            rows[j] = rebuild_rows
        elif j < groups[2]:
            rows[j] = _explicit_rows(explicit_offset[f + 1] - explicit_offset[f], n_covered, n)
        else:
            rows[j] = stop - start[j]
    return rows


@njit
def _by_part(order, start, groups, rows, parts):
    """Regroup the plan (:func:`_plan`'s ``order`` int64 (S,) and ``start`` int64 (S,),
    in the groups ``order[groups[g]:groups[g + 1]]``, ``groups`` int64 (G + 1,)) in place,
    so that part ``t`` does ``order[bounds[g, t]:bounds[g, t + 1]]`` of group ``g``, the
    parts' ``rows`` (int64 (S,), :func:`_work_rows`) even (``jit.parts.balanced_parts``).
    Counted in features, one part could get the subtractions of a feature drawn at the
    rule's first step, the others those of features drawn one step ago. Returns ``bounds``
    int64 (G, parts + 1)."""
    part = balanced_parts(rows, parts)
    G = groups.shape[0] - 1
    bounds = np.empty((G, parts + 1), np.int64)
    was_order, was_start = order.copy(), start.copy()
    pos = 0
    for kind in range(G):
        for t in range(parts):
            bounds[kind, t] = pos
            for j in range(groups[kind], groups[kind + 1]):
                if part[j] == t:
                    order[pos], start[pos] = was_order[j], was_start[j]
                    pos += 1
        bounds[kind, parts] = pos
    return bounds


@njit
def _splits_examples(n_rebuilt, num_rows, n_covered, chunks):
    """Whether the ``chunks`` parts of a build split the covered examples (``n_covered``)
    of the ``n_rebuilt`` rebuilt features among them rather than the features, each part
    but the first into ``num_rows`` rows of its own that are summed in afterwards: where
    that sum, ``(chunks - 1) num_rows`` rows, is at most ``1 / EXAMPLE_SPLIT_RATIO`` of
    the rows the rebuild adds, ``n_covered n_rebuilt``. Split by feature, a step that
    rebuilds one feature of several (the others are subtracted) left one thread to do it
    alone, and 7 sampled features on 2 threads make parts of 4 and 3 (issue 17); split by
    example, the parts are equal, bit for bit the same integer sums. The own rows are
    fresh memory each call and cost about what a row of the build costs: with a ratio of
    4, mlrl-boomer's default bin count (16,000 bins per feature at n = 1e5, 35 MB of own
    rows) made the builds 1.08 -> 1.58 s; at 32 they split where the bins are few (255
    bins, n = 1e5, 2 threads: with :func:`_by_part`, the builds 0.83-0.98 -> 0.71-0.81
    s). The own rows are summed in on one thread: with many threads, the split needs the
    more covered examples (16 threads, 7 features of 255 bins: from about 120,000)."""
    return chunks > 1 and n_rebuilt > 0 and \
        (chunks - 1) * num_rows * EXAMPLE_SPLIT_RATIO <= n_covered * n_rebuilt


@njit
def _num_rows(features, bin_offset):
    """The histogram rows of ``features`` (int64 (S,)), all together."""
    rows = 0
    for f in features:
        rows += bin_offset[f + 1] - bin_offset[f]
    return rows


@njit
def _rows_of(features, bin_offset):
    """(first rows of ``features`` (int64 (S,)) in the histograms, int64 (S,); their first
    rows in rows of their own, one feature after the other, int64 (S,))."""
    firsts = np.empty(features.shape[0], np.int64)
    own_firsts = np.empty(features.shape[0], np.int64)
    rows = 0
    for j in range(features.shape[0]):
        firsts[j] = bin_offset[features[j]]
        own_firsts[j] = rows
        rows += bin_offset[features[j] + 1] - firsts[j]
    return firsts, own_firsts


@njit
def _own_buffers(parts, num_rows, width):
    """Own rows of ``parts`` parts: (sums int64 (parts, num_rows, width), unset; counts int64
    (parts, num_rows), zero). Allocated here, not in the parallel build: there ``np.zeros``
    becomes a parallel region of its own, which wakes sleeping workers for nothing."""
    return (np.empty((parts, num_rows, width), np.int64),
            np.zeros((parts, num_rows), np.int64))


@njit
def _sum_in(first, own_first, num_bins, own, own_count, hist, hist_count):
    """Add the rows ``own_first .. + num_bins - 1`` of each part's own rows (``own`` int64
    (P, R, K + W), ``own_count`` int64 (P, R)) to the rows ``first ..`` of ``hist`` and
    ``hist_count`` (a row's sums are set by its first addition, :func:`_add_row`, as
    :func:`_add_covered` does: rows of count 0 hold stale sums)."""
    for p in range(own.shape[0]):
        for b in range(num_bins):
            c = own_count[p, own_first + b]
            if c == 0:
                continue
            r = first + b
            _add_row(hist, r, own[p], own_first + b, 1, hist_count[r] == 0)
            hist_count[r] += c


BUILD_CHUNK = 1024  # covered examples whose rows one feature after another adds


@njit
def _plan(features, bin_offset, explicit, n_covered, n, hist_count, state, hist_at):
    """How the histogram rows of ``features`` (int64 (S,), distinct) reach the covered
    examples (``n_covered`` of the ``n``), each feature the cheapest way:

    - **by subtraction** when its rows were built at an earlier step of this rule (``hist_at[f]
      = (epoch, log position p)`` with the epoch ``state[3]``) and fewer examples left the
      coverage since then than a rebuild would add: the rows of the examples
      ``removed[p:state[2]]`` (``coverage.py``'s removal log) are to be taken out
      (:func:`_subtract_left`);
    - else **rebuilt**, from its explicit entries (:func:`_add_explicit`) where it has an
      implicit bin and they cost at most half the rows (:func:`_explicit_rows`) of the
      covered examples, else from the covered examples (:func:`_add_covered`); their
      counts are zeroed here. (Where the entries cost more than half, e.g. count data with
      40 % non-zeros, their scattered reads made the builds slower: docs/benchmarks.md,
      sessions 27 and 28.)

    The sums are integers, so all three give the same histograms, bit for bit. The first
    conditions of a rule each leave out a few examples of a large coverage (docs/benchmarks.md,
    session 17); a feature drawn again some steps later then costs those few examples
    instead of the whole coverage. Every ``hist_at[f]`` becomes (epoch, ``state[2]``).

    Args:
        explicit: (implicit int64 (A,), offset int64 (A + 1,), index int32 (E,)), the
            features' implicit bins and explicit entries (:func:`explicit_entries`).

    Returns:
        (order int64 (S,): the features rebuilt from the covered list, then those rebuilt
        from their explicit entries, then the subtracted ones, each group in the order of
        ``features``; start int64 (S,): where the log's examples to take out begin, for
        the subtracted ones; the number of the first group; of the first two).
    """
    S = features.shape[0]
    log, epoch = state[2], state[3]
    implicit, explicit_offset = explicit[0], explicit[1]
    kind = np.empty(S, np.int64)
    n_dense = n_rebuilt = 0
    for j in range(S):
        f = features[j]
        rebuild, kind[j] = n_covered, 0
        if implicit[f] >= 0:
            rows = _explicit_rows(explicit_offset[f + 1] - explicit_offset[f], n_covered, n)
            if 2 * rows <= n_covered:
                rebuild, kind[j] = rows, 1
        if hist_at[f, 0] == epoch and log - hist_at[f, 1] < rebuild:
            kind[j] = 2
        else:
            hist_count[bin_offset[f]:bin_offset[f + 1]] = 0
            n_dense += kind[j] == 0
            n_rebuilt += 1
    order = np.empty(S, np.int64)
    start = np.empty(S, np.int64)
    pos = 0
    for k in range(3):
        for j in range(S):
            if kind[j] == k:
                order[pos], start[pos] = features[j], hist_at[features[j], 1]
                pos += 1
    for f in features:
        hist_at[f, 0] = epoch
        hist_at[f, 1] = log
    return order, start, n_dense, n_rebuilt


EXPLICIT_VISITS_PER_ROW = 4  # explicit entries visited in the time of a row added


@nb.njit(inline="always")
def _explicit_rows(entries, n_covered, n):
    """What a rebuild from a feature's ``entries`` explicit entries costs, in rows added:
    each entry visited (its coverage looked up) at ``1 / EXPLICIT_VISITS_PER_ROW`` of a
    row, and the covered ones (``n_covered / n`` of them, if the coverage does not depend
    on the feature) added."""
    return entries // EXPLICIT_VISITS_PER_ROW + entries * n_covered // n


@njit
def _subtract_left(features, starts, removed, stop, bin_index, bin_offset, weights, gh, hist,
                   hist_count):
    """Take the examples ``removed[starts[j]:stop]`` out of the rows of ``features[j]``
    (int64, distinct), as :func:`_add_covered` put them in, in chunks of ``BUILD_CHUNK``
    positions of the log, one feature after the other. The log's examples are scattered
    in memory: without the prefetch a subtracted row cost about 47 ns against 9 ns for a
    row of a rebuild over a dense coverage, with it about 24 ns (n = 1e5, 255 bins, K =
    20)."""
    if features.shape[0] == 0:
        return
    # this loop and _add_covered's are written out apart: an inline helper for the
    # prefetches made the builds 3x slower, one loop for both with a sign to branch on made
    # fits with 32 bins ~8 % slower (session 23)
    far = beyond_cache(gh.nbytes)
    for c0 in range(starts.min(), stop, BUILD_CHUNK):
        c1 = min(c0 + BUILD_CHUNK, stop)
        for j in range(features.shape[0]):
            f = features[j]
            first = bin_offset[f]
            row = bin_index[f]
            for c in range(max(c0, starts[j]), c1):
                if far and c + AHEAD < c1:
                    prefetch_row(gh, removed[c + AHEAD])
                    prefetch_row(row, removed[c + AHEAD])
                i = removed[c]
                r = _row_of(bin_index, f, first, weights, i)
                if r < 0:
                    continue
                for k in range(gh.shape[1]):
                    hist[r, k] -= gh[i, k] * weights[i]
                hist_count[r] -= 1


@njit
def _add_covered(features, firsts, bin_index, covered, lo, hi, weights, gh, hist,
                 hist_count):
    """Fill the rows ``firsts[j] + b`` of ``features[j]`` (int64, distinct; ``firsts`` int64,
    their first rows in ``hist``), whose counts are zero, from the covered examples
    ``covered[lo:hi]`` (lo, hi int64: a literal 0 compiled it apart), in chunks of
    ``BUILD_CHUNK`` of them: the chunk's statistics rows are added to one feature's
    histogram after the other, so the rows being updated are one feature's (in cache) while
    the chunk's statistics stay in cache for the next feature (issue 17: 0.6-0.9x the time
    of one pass adding each example to every feature, with 255 bins and 40 columns; the
    integer sums do not depend on the order, so the histograms are the same, bit for bit).

    The sums of a row are set only when its first example arrives, so rows with count 0 keep
    stale sums (the scan never reads them) and the cost follows the covered examples rather
    than the bins."""
    far = beyond_cache(gh.nbytes)
    for c0 in range(lo, hi, BUILD_CHUNK):
        c1 = min(c0 + BUILD_CHUNK, hi)
        for j in range(features.shape[0]):
            f = features[j]
            first = firsts[j]
            row = bin_index[f]
            for c in range(c0, c1):
                if far and c + AHEAD < c1:  # the chunk's statistics rows once, bins per feature
                    if j == 0:
                        prefetch_row(gh, covered[c + AHEAD])
                    prefetch_row(row, covered[c + AHEAD])
                i = covered[c]
                r = _row_of(bin_index, f, first, weights, i)
                if r < 0:
                    continue
                _add_row(hist, r, gh, i, weights[i], hist_count[r] == 0)
                hist_count[r] += 1


@njit
def _add_explicit(features, explicit, bin_index, bin_offset, mask, indicator, weights, gh, hist,
                  hist_count, totals):
    """Fill the rows of ``features`` (int64, distinct, each with an implicit bin; their
    counts zero) from their covered explicit entries (``mask[i] == indicator``), then the
    implicit bin's row from the covered examples' ``totals`` (:func:`_fill_implicit`).
    ``explicit``: as :func:`_plan` takes it. As :func:`_add_covered` does, the examples
    go in chunks (of ``EXPLICIT_CHUNK`` example indices), one feature after the other, so
    that the statistics rows of a chunk are read from memory once for all features."""
    if features.shape[0] == 0:
        return
    implicit, offset, index = explicit
    far = beyond_cache(gh.nbytes)
    cursor = np.empty(features.shape[0], np.int64)
    for j in range(features.shape[0]):
        cursor[j] = offset[features[j]]
    for c0 in range(0, mask.shape[0], EXPLICIT_CHUNK):
        c1 = min(c0 + EXPLICIT_CHUNK, mask.shape[0])
        if far:  # the chunk's covered statistics rows, in order, before any feature reads them
            for i in range(c0, c1):
                if mask[i] == indicator:
                    prefetch_row(gh, i)
        for j in range(features.shape[0]):
            f = features[j]
            first = bin_offset[f]
            e, hi = cursor[j], offset[f + 1]
            while e < hi and index[e] < c1:
                i = index[e]
                e += 1
                if mask[i] != indicator:
                    continue
                r = _row_of(bin_index, f, first, weights, i)
                if r < 0:
                    continue
                _add_row(hist, r, gh, i, weights[i], hist_count[r] == 0)
                hist_count[r] += 1
            cursor[j] = e
    for f in features:
        first = bin_offset[f]
        _fill_implicit(first, bin_offset[f + 1], first + implicit[f], hist, hist_count, totals)


EXPLICIT_CHUNK = 1024  # example indices whose explicit entries one feature after another adds


@nb.njit(inline="always")
def _fill_implicit(first, stop, z, hist, hist_count, totals):
    """Set row ``z`` (count 0) of the rows ``first .. stop - 1`` of a feature to the covered
    examples' ``totals`` = (int64 (K',), int64 (K + W - K',): a row's columns in two parts;
    the examples of non-zero weight) less the feature's other rows."""
    tot_a, tot_b, count = totals
    K = tot_a.shape[0]
    for k in range(K):
        hist[z, k] = tot_a[k]
    for k in range(tot_b.shape[0]):
        hist[z, K + k] = tot_b[k]
    for r in range(first, stop):
        if hist_count[r] > 0:
            for k in range(hist.shape[1]):
                hist[z, k] -= hist[r, k]
            count -= hist_count[r]
    hist_count[z] = count


IMPLICIT_SHARE = 4  # a bin is implicit where it holds at least 1/4 of the examples


def no_explicit_entries(num_features):
    """:func:`explicit_entries` without an implicit bin for any of ``num_features``
    features: every rebuild adds the covered examples."""
    return (np.full(num_features, -1, np.int64), np.zeros(num_features + 1, np.int64),
            np.empty(0, np.int32))


@njit
def explicit_entries(bin_index, bin_offset):
    """Per feature, the bin that a rebuild fills from the covered totals instead of adding
    its examples (its *implicit* bin), and the other examples (its *explicit* entries).

    A feature's implicit bin is its fullest (the lowest of equal ones) where that holds at
    least ``1 / IMPLICIT_SHARE`` of the examples and no example misses the feature (a
    missing example is in no bin, so the totals less the other bins would count it); a
    constant feature's one bin is implicit (no entries: 555 of medical's 1,449). On
    sparse data most examples of a feature share one bin (zero: 62 % of the values of
    ``make_multilabel_classification``'s counts), and a rebuild from the explicit entries
    (:func:`_add_explicit`) adds only the others, as mlrl-boomer's binned search leaves
    the zero bin out of its sparse features' bin vectors. The sums are integers, so the
    rows are those of a rebuild from the covered examples, bit for bit.

    Args:
        bin_index: int32 (A, n); bin_offset: int64 (A + 1,) (``BinnedFeatures``).

    Returns:
        (implicit int64 (A,): the implicit bins (0-based within the feature), -1 for none;
        offset int64 (A + 1,) and index int32 (E,): feature ``f``'s explicit entries are
        ``index[offset[f]:offset[f + 1]]``, examples in ascending order; none where it
        has no implicit bin).
    """
    A, n = bin_index.shape
    implicit = np.full(A, -1, np.int64)
    offset = np.zeros(A + 1, np.int64)
    for f in range(A):
        counts = np.zeros(bin_offset[f + 1] - bin_offset[f], np.int64)
        missing = False
        for i in range(n):
            b = bin_index[f, i]
            if b < 0:
                missing = True
                break
            counts[b] += 1
        entries = 0
        if not missing and n > 0:  # (an empty partition of a distributed fit: none)
            z = np.argmax(counts)
            if counts[z] * IMPLICIT_SHARE >= n:
                implicit[f] = z
                entries = n - counts[z]
        offset[f + 1] = offset[f] + entries
    index = np.empty(offset[A], np.int32)
    for f in range(A):
        e = offset[f]
        if implicit[f] >= 0:
            for i in range(n):
                if bin_index[f, i] != implicit[f]:
                    index[e] = i
                    e += 1
    return implicit, offset, index


@nb.njit(inline="always")
def _row_of(bin_index, f, first, weights, i):
    """The histogram row of example ``i`` in feature ``f``'s rows (from row ``first``), or -1
    when it is not counted (weight 0, or missing the feature)."""
    b = bin_index[f, i]
    if weights[i] == 0 or b < 0:
        return -1
    return first + b


@nb.njit(inline="always")
def _add_row(hist, r, stats, i, w, first):
    """``hist[r] = w * stats[i]`` if ``first``, else ``hist[r] += w * stats[i]``, element by
    element: row views (``hist[r]``) would each cost an atomic reference count increment and
    decrement per example and feature, a quarter of the build. Unit weights skip the int64
    multiply (no AVX2 vector form)."""
    if first:
        for k in range(stats.shape[1]):
            hist[r, k] = stats[i, k] * w
    elif w == 1:
        for k in range(stats.shape[1]):
            hist[r, k] += stats[i, k]
    else:
        for k in range(stats.shape[1]):
            hist[r, k] += stats[i, k] * w


@njit
def interleave_covered(g, h, mask, indicator, gh):
    """``gh[i] = [g[i] | h[i]]`` for the covered examples (``mask[i] == indicator``), those a
    statistics update changed; ``g`` (n, K), ``h`` (n, W), ``gh`` (n, K + W), all of one
    dtype."""
    K = g.shape[1]
    for i in range(mask.shape[0]):
        if mask[i] == indicator:
            for k in range(K):
                gh[i, k] = g[i, k]
            for k in range(h.shape[1]):
                gh[i, K + k] = h[i, k]


build = parallel_kernel(_build_py)


def build_histograms(features, bin_index, bin_offset, mask, indicator, weights, g, h, hist,
                     hist_count, n_threads=1, gh=None, explicit=None):
    """Histograms of the covered examples' statistics for the sampled features.

    Zeroes and fills the rows of the sampled features only (from scratch: the reuse of a
    fit's histograms by subtraction is the fit's search kernel's, :func:`_plan`):
    for every example ``i`` with
    ``mask[i] == indicator``, ``weights[i] != 0`` and a bin ``b >= 0``, adds
    ``weights[i] * g[i]`` and ``weights[i] * h[i]`` to row ``bin_offset[f] + b`` (its columns
    ``:K`` and ``K:``) and 1 to its count.

    Args:
        features: int64 (S,), distinct sampled feature indices.
        bin_index: int32 (A, n); bin_offset: int64 (A + 1,) (see ``BinnedFeatures``).
        mask: int32 (n,) coverage mask; indicator: int, the value marking covered examples.
        weights: int32 (n,).
        g: int64 (n, K), h: int64 (n, W) fixed-point statistics.
        hist: int64 (B, K + W), hist_count: int64 (B,), written in place.
        n_threads: Numba threads; the sampled features are built in as many parts.
        gh: int64 (n, K + W), ``[g | h]`` when the caller keeps it (``CpuBackend``); None
            makes it from ``g`` and ``h`` (an O(n (K + W)) copy per call).
        explicit: the features' implicit bins and explicit entries
            (:func:`explicit_entries`), for rebuilds from those where they are cheaper;
            None: every feature rebuilt from the covered examples.
    """
    for f in features:
        hist[bin_offset[f]:bin_offset[f + 1]] = 0
    covered = np.flatnonzero(mask == indicator).astype(np.int32)
    if gh is None:
        gh = np.concatenate((g, h), axis=1)
    if explicit is None:
        explicit = no_explicit_entries(bin_index.shape[0])
    never_built = np.full((bin_offset.shape[0] - 1, 2), -1, np.int64)
    with thread_limit(n_threads):
        build(features, bin_index, bin_offset, explicit, covered, covered.shape[0], mask,
              indicator, weights, gh, hist, hist_count, max(n_threads, 1),
              np.empty(0, np.int32), new_list_state(), never_built,
              _covered_sums(covered, covered.shape[0], weights, gh))


def update_histograms(features, data, mask, indicator, weights, n_threads=1, totals=None):
    """Bring a fit's histogram rows of ``features`` (int64 (S,), distinct) to the covered
    examples (``mask == indicator``), as a step of its search does: rebuilt, or by
    subtraction from the rows of an earlier step of the rule (:func:`_plan`).

    Args:
        data: the fit's histogram search arrays (``representations.SearchState.data``:
            ``(bin_index, bin_offset, explicit, bin_min, bin_max, nominal, hist,
            hist_count, covered, state, chunks, gh, removed, hist_at)``); ``hist`` and
            ``hist_count`` are written.
        mask: int32 (n,); indicator: int; weights: int32 (n,).
        n_threads: Numba threads; the sampled features are built in as many parts.
        totals: (g int64 (K,), h int64 (W,), count) of the covered examples with these
            weights, as a search gets them; None sums them here.
    """
    (bin_index, bin_offset, explicit, _, _, _, hist, hist_count, covered, state, _, gh,
     removed, hist_at) = data
    n_covered = covered_list(mask, indicator, covered, state)
    if totals is None:
        totals = _covered_sums(covered, n_covered, weights, gh)
    totals = (np.asarray(totals[0], np.int64), np.asarray(totals[1], np.int64),
              int(totals[2]))
    with thread_limit(n_threads):
        build(features, bin_index, bin_offset, explicit, covered, n_covered, mask, indicator,
              weights, gh, hist, hist_count, max(n_threads, 1), removed, state, hist_at,
              totals)


@njit
def _covered_sums(covered, n_covered, weights, gh):
    """The covered examples' totals as :func:`_fill_implicit` takes them: (the weighted sums
    of ``gh`` int64 (n, K + W) over ``covered[:n_covered]``, int64 (K + W,); an empty
    int64 (0,); the number of those examples with non-zero weight)."""
    tot = np.zeros(gh.shape[1], np.int64)
    count = 0
    for c in range(n_covered):
        i = covered[c]
        w = weights[i]
        if w != 0:
            count += 1
            for k in range(gh.shape[1]):
                tot[k] += gh[i, k] * w
    return tot, tot[:0], count
