"""Instance samples drawn in compiled code (mlrl-boomer's algorithms, numpy's draws): the
stratified draw that ``learners.sampling.InstanceSampling`` makes, and
:data:`DRAWS`, the draws of a rule's sample inside the CPU's batched rule loop
(``backends/cpu/fused_rules.py``), the same draws as ``InstanceSampling.sample``'s. Numba
calls numpy's bit generator, so the streams are numpy's, draw for draw."""

import math

import numpy as np
from numba import types
from numba.np.random.random_methods import random_interval

from gpurules.jit.cache import njit
from gpurules.jit.helpers import register_jitable

#: the instance sampling of a rule as :data:`DRAWS` draws it (``RulePlan.sampling``)
SAMPLE_NONE, SAMPLE_WITH_REPLACEMENT, SAMPLE_STRATIFIED, SAMPLE_WITHOUT_REPLACEMENT = 0, 1, 2, 3

#: numpy's ``Generator.choice(n, m, replace=False)`` shuffles the tail of ``arange(n)``
#: above this many examples (when ``m > n // 50``), else uses Floyd's algorithm
_CHOICE_TAIL_SHUFFLE = 10_000


@register_jitable
def round_stratum(rng, sample_size, size, wanted_in, wanted_out):
    """How many of a stratum's ``size`` examples to draw: ``float32(sample_size) *
    float32(size)`` rounded up if ``wanted_in > wanted_out`` (examples still wanted in and
    out of the sample), down if less, by a coin flip (one ``rng.random()``) if equal."""
    decimal = np.float32(sample_size) * np.float32(size)
    round_up = wanted_in > wanted_out or (wanted_in == wanted_out and rng.random() < 0.5)
    return int(math.ceil(decimal) if round_up else math.floor(decimal))


@register_jitable
def _shuffle(rng, x):
    """``rng.shuffle(x)`` of a 1-d array, draw for draw (numpy's Fisher-Yates with a masked
    bounded draw per position, as Numba's own ``shuffle``), without compiling the n-d
    version's transposes and error messages, which took 7-8 of a first stratified fit's
    CPU seconds (docs/benchmarks.md, session 40)."""
    for i in range(x.shape[0] - 1, 0, -1):
        j = np.intp(random_interval(rng.bit_generator, i))
        x[i], x[j] = x[j], x[i]


@njit
def stratified_sample(rng, members, offsets, sample_size, num_samples, weights):
    """Set ``weights[i] = 1`` (int32 (n,)) for the examples drawn from each stratum
    ``members[offsets[s]:offsets[s + 1]]`` (int64): first every stratum's count
    (:func:`round_stratum`, mlrl-boomer's rounding of ``float32(sample_size) * size``;
    counts that would fall below zero count as zero, where mlrl-boomer's unsigned counters
    wrap around and then round up), then each stratum's draw, the first
    ``count`` of a permutation of it (``rng.permutation``'s draws: ``arange`` shuffled, in
    one buffer, and nothing for a stratum of one; Numba calls numpy's bit generator, so the
    draws are numpy's). One compiled call instead of a Python loop over the strata (one
    per output, or per distinct label vector: enron has hundreds)."""
    S = offsets.shape[0] - 1
    num_out = offsets[S] - num_samples
    counts = np.empty(S, np.int64)
    drawn = left_out = 0
    for s in range(S):
        size = offsets[s + 1] - offsets[s]
        counts[s] = round_stratum(rng, sample_size, size, max(num_samples - drawn, 0),
                                  max(num_out - left_out, 0))
        drawn += counts[s]
        left_out += size - counts[s]
    order = np.empty(offsets[S], np.int64)  # rng.permutation(size) = shuffled arange(size)
    for s in range(S):
        first, size = offsets[s], offsets[s + 1] - offsets[s]
        if size == 1:  # (a shuffle of one draws nothing)
            weights[members[first]] = counts[s]
            continue
        view = order[:size]
        for p in range(size):
            view[p] = p
        _shuffle(rng, view)
        for p in range(counts[s]):
            weights[members[first + view[p]]] = 1


#: the numba type of a numpy ``Generator`` passed to compiled code
_GENERATOR = types.NumPyRandomGeneratorType("NumPyRandomGeneratorType")

#: what every compiled draw of :data:`DRAWS` takes: ``(rng, num_samples int64, sample_size
#: float64, members int64 (M,), offsets int64 (S + 1,), weights int32 (n,))``, arrays
#: C-contiguous and writable (a first-class function's arguments must match exactly)
DRAW_SIGNATURE = types.none(_GENERATOR, types.int64, types.float64, types.int64[::1],
                            types.int64[::1], types.int32[::1])


@njit
def _with_replacement(rng, num_samples, sample_size, members, offsets, weights):
    """``num_samples`` draws of ``rng.integers(0, n)``, counted per example."""
    weights[:] = 0
    drawn = rng.integers(0, weights.shape[0], size=num_samples)
    for i in range(drawn.shape[0]):
        weights[drawn[i]] += 1


@njit
def _without_replacement(rng, num_samples, sample_size, members, offsets, weights):
    """:func:`choice_without_replacement` of ``num_samples`` examples."""
    weights[:] = 0
    choice_without_replacement(rng, weights.shape[0], num_samples, weights)


@njit
def _stratified(rng, num_samples, sample_size, members, offsets, weights):
    """:func:`stratified_sample` of the strata ``members`` / ``offsets``, ``sample_size``
    as float32."""
    weights[:] = 0
    stratified_sample(rng, members, offsets, np.float32(sample_size), num_samples, weights)


class CompiledDraw(types.WrapperAddressProtocol):
    """One kind of draw as a first-class function of :data:`DRAW_SIGNATURE` (Numba's
    wrapper address protocol), so that the rule loop that calls it is compiled once for
    every kind, and only the kind a fit draws is compiled (compiled in, the three kinds
    and numpy's shuffle, with its error messages, made a first sampled fit compile about
    as long as two plain ones; docs/benchmarks.md, session 40). Its function is compiled
    the first time a loop is called with it. An exception could not cross such a call (its
    C wrapper returns no error): the draws raise none."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self._address = None

    def signature(self):
        """The signature every draw has (:data:`DRAW_SIGNATURE`)."""
        return DRAW_SIGNATURE

    def __wrapper_address__(self):
        """The address of the compiled function's C wrapper (compiled on first use)."""
        if self._address is None:
            result = self.dispatcher.get_compile_result(DRAW_SIGNATURE)
            self._address = result.library.get_pointer_to_function(
                result.fndesc.llvm_cfunc_wrapper_name)
        return self._address


#: ``SAMPLE_*`` -> the compiled draw of a rule's instance sample as
#: ``InstanceSampling.sample`` (BOOMER's draws) draws it, which fills ``weights`` (int32
#: (n,)): ``SAMPLE_WITH_REPLACEMENT``, ``num_samples`` draws of ``rng.integers(0, n)``
#: counted per example; ``SAMPLE_WITHOUT_REPLACEMENT``: :func:`choice_without_replacement`;
#: ``SAMPLE_STRATIFIED``: :func:`stratified_sample` of the strata ``members`` with
#: ``offsets`` (``sampling.Strata``), ``sample_size`` as float32
DRAWS = {SAMPLE_WITH_REPLACEMENT: CompiledDraw(_with_replacement),
         SAMPLE_WITHOUT_REPLACEMENT: CompiledDraw(_without_replacement),
         SAMPLE_STRATIFIED: CompiledDraw(_stratified)}


@register_jitable
def choice_without_replacement(rng, n, m, weights):
    """Set ``weights[i] = 1`` (int32 (n,)) for the ``m`` of ``n`` examples that numpy's
    ``rng.choice(n, m, replace=False)`` draws, with its draws (numpy 2: a bounded integer
    ``rng.integers(0, i + 1)`` per step): the last ``m`` of ``arange(n)`` shuffled from
    the end for ``n > 10,000`` and ``m > n // 50``, else Floyd's algorithm over numpy's
    open-addressing set of ``2^k >= 1.2 m`` slots, followed by numpy's shuffle of the
    result (its draws taken, the order not needed)."""
    if n > _CHOICE_TAIL_SHUFFLE and m > n // 50:
        idx = np.arange(n)
        for i in range(n - 1, max(n - m, 1) - 1, -1):
            j = rng.integers(0, i + 1)
            idx[i], idx[j] = idx[j], idx[i]
        for i in range(n - m, n):
            weights[idx[i]] = 1
        return
    mask = int(1.2 * m)
    for shift in (1, 2, 4, 8, 16, 32):
        mask |= mask >> shift
    table = np.full(mask + 1, -1, np.int64)
    for j in range(n - m, n):
        value = rng.integers(0, j + 1)
        loc = value & mask
        while table[loc] != -1 and table[loc] != value:
            loc = (loc + 1) & mask
        if table[loc] == -1:
            table[loc] = value
        else:  # drawn before: j goes in instead
            value = j
            loc = j & mask
            while table[loc] != -1:
                loc = (loc + 1) & mask
            table[loc] = value
        weights[value] = 1
    for i in range(m - 1, 0, -1):  # numpy's shuffle of the drawn examples
        rng.integers(0, i + 1)
