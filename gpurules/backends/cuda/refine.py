"""Device-resident rule refinement on CUDA: a block of steps without a host round trip (the
twin of ``cpu/refine.py``'s fused loop).

``CudaBackend.refine_rule`` runs up to ``MAX_STEPS`` refinement steps per block
(:func:`block_sizes`). The host
draws every step's features up front (they depend only on the uniforms, not on the
results) and sends them with the head's parameters in **one host->device copy**; per step
the device then runs

    zero histograms -> histograms -> prefix sums -> candidates -> ``select_best`` ->
    ``coverage.apply_selected``

and the host reads **one device->host copy** at the end of the block: every step's
condition, the last step's sums, the state (steps taken, finished, the head's labels).

What the host decides per step in ``refine_stepwise`` (``backends/base.py``), the device
decides here, in the same order:

- ``select_best`` picks the first best slot in the caller's order (larger quality, then
  the smaller index in the sampled features, as ``base._first_best``), records it, raises
  the search's ``min_quality`` to its quality and the rule's covered count
  (``state[COVERED]``) to its count, fixes a single-label head's label after
  ``fix_label_after`` steps (``state[NUM_LABELS] = 1``), and sets ``state[FINISHED]`` when
  there is no refinement or the coverage reached ``min_coverage``;
- ``apply_selected`` restricts the coverage to the recorded condition (when one was
  recorded at that step);
- once the rule is finished, the later steps' kernels do nothing: the search kernels read
  ``state[FINISHED]``, and the histogram kernels see an empty covered list (the ring of
  list lengths, ``coverage``).

Launches per step: 6 (7 where the fit has features of both histogram kernels, +1 for a
tiled prefix sum, +1 per extra candidate launch), no synchronisation; per block: one
upload, one download. A block that outlives its rule costs the remaining steps' launches
(each a no-op), so the blocks are sized to the length of the rule before
(:func:`block_sizes`).

Every launch of step ``r`` is the same in every block of a fit with the same
:func:`_graph_key`: what changes from block to block (the drawn features and their groups,
the covered list's refinement step, the indicator, the labels, the minimum quality) is read
on the device from the record, at addresses fixed per fit, and the launch configurations are
laid out for the fit's widest features. So with ``CudaBackend(graphs=True)`` a block's
launches are captured once as a CUDA graph and replayed (``graphs``).

Record layout (one uint8 device buffer, 8-byte fields first; room for ``R = MAX_STEPS``
steps whatever a block's length, so that the layout, and with it the Numba views of its
parts, is the same for every block of a fit): inputs per step ``r`` — the
sampled features in slot order ``features`` int64 (R, S), their caller indices ``order``
int64 (R, S), ``slot_offset`` int64 (R, S + 1), the histogram groups ``groups`` int64 (R,
S + 5) (``CudaBackend._group_offsets``), the ``cursor`` int64 (R, 2) (the refinement step
and the coverage indicator of step ``r``), the head's ``params`` float64 (P,); then the
part that comes back (``_RESULT_FIELDS``): ``min_quality`` float64 (1,), per step ``q``
float64, ``feature`` int64, ``count`` int64, the last step's ``g`` int64 (K,) and ``h``
int64 (W,), per step ``threshold`` float32 and ``label`` int32, the ``state`` int32
(STATE_SIZE,), the head's ``labels`` int32 (m,), per step ``op`` int8.
"""

import math
from dataclasses import replace

import numpy as np
from numba import cuda, types

from gpurules.backends.base import Refinement, floyd_indices
from gpurules.backends.cuda.records import pack, views
from gpurules.backends.cuda.coverage import RING
from gpurules.backends.cuda.device_math import kernel, signature_types
from gpurules.backends.cuda.graphs import run_steps
from gpurules.backends.cuda.histogram_search import BLOCK, _before, _block_best
from gpurules.backends.cuda.search_state import (COVERED, FINISHED, LABEL_FIXED, NUM_LABELS,
                                                 STATE_SIZE, STEPS, initial_state)

MAX_STEPS = RING - 2  # the most steps of one block (the ring keeps their lists apart)


def _select_best(r, state, order, features, out_q, out_op, out_thr, out_cnt, out_label, out_g,
                 out_h, labels, min_quality, fix_label_after, min_coverage, res_f, res_op,
                 res_thr, res_q, res_cnt, res_label, last_g, last_h):
    """Step ``r`` of a block: the first best of the search's slots (``out_*``, S slots in slot
    order; ``order`` int64 (S,) their indices in the sampled features, ``features`` int64
    (S,) the features) becomes the step's record (``res_*[r]``, the sums in ``last_g`` (K,),
    ``last_h`` (W,)); then ``min_quality[0]`` is its quality, ``state[COVERED]`` its count
    (which the next step's candidates must not reach), a single-label head's label is
    fixed after ``fix_label_after`` steps (0 = never), and ``state`` says whether the rule is
    finished (module docstring). One block of at most ``BLOCK`` threads, a power of two;
    nothing once finished."""
    if state[FINISHED] != 0:
        return
    t = cuda.threadIdx.x
    sq = cuda.shared.array(BLOCK, types.float64)
    sc = cuda.shared.array(BLOCK, types.int64)
    sl = cuda.shared.array(BLOCK, types.int32)
    q, c, slot = -math.inf, -1, -1
    for j in range(t, out_q.shape[0], cuda.blockDim.x):
        if out_op[j] >= 0 and _before(out_q[j], order[j], q, c):
            q, c, slot = out_q[j], order[j], j
    q, c, slot = _block_best(q, c, slot, sq, sc, sl)
    if c < 0:
        if t == 0:
            state[FINISHED] = 1
        return
    if t == 0:
        res_f[r], res_op[r], res_thr[r] = features[slot], out_op[slot], out_thr[slot]
        res_q[r], res_cnt[r], res_label[r] = q, out_cnt[slot], out_label[slot]
        state[STEPS] = r + 1
        min_quality[0] = q
        state[COVERED] = out_cnt[slot]
        if fix_label_after > 0 and r + 1 >= fix_label_after and out_label[slot] >= 0:
            labels[0] = out_label[slot]
            state[NUM_LABELS] = 1
            state[LABEL_FIXED] = 1
        if out_cnt[slot] <= min_coverage:
            state[FINISHED] = 1
    for k in range(t, last_g.shape[0], cuda.blockDim.x):
        last_g[k] = out_g[slot, k]
    for k in range(t, last_h.shape[0], cuda.blockDim.x):
        last_h[k] = out_h[slot, k]


select_best = kernel(_select_best)


def _signatures():
    i8, i32, i64, f32, f64 = types.int8, types.int32, types.int64, types.float32, types.float64
    vec, mat = signature_types()
    return {"select_best": (
        i64, vec[i32], vec[i64], vec[i64], vec[f64], vec[i8], vec[f32], vec[i64], vec[i32],
        mat[i64], mat[i64], vec[i32], vec[f64], i64, i64, vec[i64], vec[i8], vec[f32],
        vec[f64], vec[i64], vec[i32], vec[i64], vec[i64])}


SIGNATURES = _signatures()
KERNELS = {"select_best": select_best}

# the part of the record that comes back: name, dtype, shape code (R: per step, K, W, m,
# STATE, 1), in this order (8-byte fields first)
_RESULT_FIELDS = (("min_quality", np.float64, "1"), ("q", np.float64, "R"),
                  ("feature", np.int64, "R"), ("count", np.int64, "R"),
                  ("g", np.int64, "K"), ("h", np.int64, "W"),
                  ("threshold", np.float32, "R"), ("label", np.int32, "R"),
                  ("state", np.int32, "STATE"), ("labels", np.int32, "m"),
                  ("op", np.int8, "R"))


def refine_rule(backend, uniforms, labels, weights, covered, search, fix_label_after):
    """``Backend.refine_rule`` on the device, in blocks of :func:`block_sizes`, for a rule
    covering ``covered`` examples of non-zero weight (``totals[2]``); the result equals
    ``refine_stepwise``'s (see the module docstring)."""
    conditions, last, finished, lo = [], None, False, 0
    for size in block_sizes(uniforms.shape[0], backend._step, backend.last_rule_steps):
        fix = max(fix_label_after - lo, 1) if fix_label_after > 0 else 0
        new, ref, labels, finished = _block(backend, uniforms[lo:lo + size], labels,
                                            weights, covered, search, fix)
        conditions += new
        last = ref if ref is not None else last
        if finished:
            break
        search = replace(search, min_quality=ref.quality)
        covered = ref.count
        lo += size
    return conditions, last, labels, finished


def block_sizes(R, step, last_rule_steps):
    """The steps of each device block that ``R`` steps of a rule are split into, starting at
    the rule's refinement step ``step``, after a rule of ``last_rule_steps`` steps.

    A block costs one round trip to the host; every step of it costs its launches, also
    after the rule has finished (they then do nothing). So the first block is sized to what
    the rule is expected to need, the steps the last rule took (its conditions and the step
    that found none) less those already taken, at least 2; each later block doubles, up to
    ``MAX_STEPS``. A rule as long as the one before ends in one block.

    Returns: list of int, summing to ``R``."""
    sizes, size = [], max(2, min(MAX_STEPS, last_rule_steps + 1 - step))
    while R > 0:
        sizes.append(min(size, R))
        R -= sizes[-1]
        size = min(2 * size, MAX_STEPS)
    return sizes


def _draws(backend, uniforms, capacity):
    """The sampled features of every step of a block, in slot order: (features int64 (C, S),
    order int64 (C, S), slot_offset int64 (C, S + 1), groups int64 (C, S + 5)); rows ``R =
    uniforms.shape[0]`` to ``capacity`` (C) are zeros."""
    R = uniforms.shape[0]
    assert R <= capacity, (R, capacity)
    A = backend.features.num_features
    if uniforms.shape[1]:
        drawn = np.array([floyd_indices(u, A) for u in uniforms], np.int64).reshape(R, -1)
    else:
        drawn = np.tile(np.arange(A, dtype=np.int64), (R, 1))
    order = backend._slot_order(drawn)
    slotted = np.take_along_axis(drawn, order, axis=1)
    parts = (slotted, order, backend._slot_offset(slotted), backend._group_offsets(slotted))
    out = tuple(np.zeros((capacity,) + p.shape[1:], np.int64) for p in parts)
    for full, part in zip(out, parts):
        full[:R] = part
    return out


def _cursors(backend, capacity):
    """int64 (C, 2): the refinement step and coverage indicator of each step of a block
    (``capacity`` C rows), from the backend's current ones."""
    r = np.arange(capacity, dtype=np.int64)
    return np.stack([backend._step + r, backend.indicator + r], axis=1)


def _result_arrays(R, K, W, labels, covered, search):
    """The host arrays of the record's returning part, initialised (``_RESULT_FIELDS``) for a
    rule covering ``covered`` examples."""
    sizes = {"1": 1, "R": R, "K": K, "W": W, "STATE": STATE_SIZE, "m": labels.shape[0]}
    out = {name: np.zeros(sizes[code], dtype) for name, dtype, code in _RESULT_FIELDS}
    out["min_quality"][0] = search.min_quality
    out["state"][:] = initial_state(labels.shape[0], covered)
    out["labels"][:] = labels
    return out


def _block(backend, uniforms, labels, weights, covered, search, fix_label_after):
    """One block of ``uniforms.shape[0]`` steps: one upload, the steps' launches, one
    download. Returns (conditions, last Refinement or None, labels, finished)."""
    K, W = backend.g.shape[1], backend.h.shape[1]
    R = uniforms.shape[0]
    labels = np.ascontiguousarray(labels, np.int32)
    # every block's record has room for MAX_STEPS steps: its layout, and so the Numba views
    # of its parts (CudaBackend._nb), stay the same from block to block and rule to rule
    features, order, slot_offset, groups = _draws(backend, uniforms, MAX_STEPS)
    results = _result_arrays(MAX_STEPS, K, W, labels, covered, search)
    inputs = [features, order, slot_offset, groups, _cursors(backend, MAX_STEPS),
              np.ascontiguousarray(search.params, np.float64)]
    arrays = inputs + [results[name] for name, _, _ in _RESULT_FIELDS]
    host, offsets = pack(arrays)
    first = int(offsets[len(inputs)])
    with backend._on_device():
        device = backend._buffer("block", host.shape, np.uint8)
        backend._upload(host, device)
        backend._weights(weights)  # uploaded now: a graph's replay copies nothing
        dev = backend._record_views("block", device, arrays, offsets)
        res = dict(zip((name for name, _, _ in _RESULT_FIELDS), dev[len(inputs):]))

        def launch_step(r):
            backend.build_histograms(features[r], weights, (dev[0][r], dev[2][r], dev[3][r],
                                                            dev[4][r]),
                                     layout=(slot_offset[r], groups[r]))
            backend._launch_search(features[r], dev[0][r], dev[2][r], res["labels"],
                                   res["state"], dev[5], res["min_quality"], search)
            out = backend._out_record(features.shape[1], K, W)[1]
            _launch_select(backend, r, dev[1][r], dev[0][r], out, res, search,
                           fix_label_after)
            backend._apply_selected(res, r, dev[4][r])

        run_steps(backend._graphs, _graph_key(backend, features.shape[1], labels, search,
                                              weights, fix_label_after), R, launch_step)
        back = backend.cp.asnumpy(device[first:])
    got = dict(zip(results, views(back, [results[n] for n in results],
                                   offsets[len(inputs):] - first)))
    return _outcome(backend, got, labels)


def _graph_key(backend, S, labels, search, weights, fix_label_after):
    """What a block's launches depend on besides the fit (``graphs``): the record's layout
    (S sampled features, the head's labels, its parameters), the head and the search's
    scalars, the scale, and which weights array the histograms read."""
    return (S, labels.shape[0], np.shape(search.params), search.head_mode,
            int(search.min_coverage), backend.inv_scale, int(fix_label_after),
            weights is None)


def _launch_select(backend, r, order, features, out, res, search, fix_label_after):
    """``select_best`` of step ``r`` (one block of the largest power of two of threads up
    to ``BLOCK`` and the backend's block size) on the backend's stream."""
    nb = backend._nb
    q, op, thr, cnt, label, g, h = out
    threads = 1 << (min(BLOCK, backend.threads).bit_length() - 1)
    backend._kernels.select_best[1, threads, backend._nb_stream](
        r, nb(res["state"]), nb(order), nb(features), nb(q), nb(op), nb(thr), nb(cnt),
        nb(label), nb(g), nb(h), nb(res["labels"]), nb(res["min_quality"]),
        int(fix_label_after), int(search.min_coverage), nb(res["feature"]), nb(res["op"]),
        nb(res["threshold"]), nb(res["q"]), nb(res["count"]), nb(res["label"]),
        nb(res["g"]), nb(res["h"]))


def _outcome(backend, got, labels):
    """The block's result from its downloaded record ``got`` (host arrays by field name);
    advances the backend's coverage step and indicator by the steps taken."""
    state = got["state"]
    steps = int(state[STEPS])
    backend.indicator += steps
    backend._step += steps
    if state[LABEL_FIXED]:
        labels = got["labels"][:1].copy()
    conditions = [(int(got["feature"][r]), int(got["op"][r]), got["threshold"][r])
                  for r in range(steps)]
    last = None
    if steps:
        r = steps - 1
        last = Refinement(conditions[r][0], conditions[r][1], got["threshold"][r],
                          float(got["q"][r]), int(got["count"][r]), int(got["label"][r]),
                          got["g"].copy(), got["h"].copy())
    return conditions, last, labels, bool(state[FINISHED])
