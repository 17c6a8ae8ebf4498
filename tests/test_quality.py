"""objectives.quality: the boosting heads' vectorised path equals the plain loops bit for bit;
a family_head_mode compiles one family of heads and scores as the int head_mode."""

import numba as nb
import numpy as np
import pytest

from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE, label_gain
from gpurules.objectives.heuristics import (F_MEASURE, HEAD_SECO_PARTIAL, HEAD_SECO_SINGLE,
                                            seco_params)
from gpurules.objectives.multi_output import HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE
from gpurules.objectives.quality import boosting_quality, family_head_mode, head_work, \
    side_quality
from tests.reference.search import single_choice


@nb.njit(cache=False)
def _both(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, params, gains,
          head_mode):
    """(plain (quality, label), buffered (quality, label)) of the boosting heads'
    ``boosting_quality`` (the buffered complete head is the form the searches inline; only
    the boosting family is compiled here, and for one signature: every caller passes
    ``head_mode``, which keeps this file quick)."""
    single = head_mode == HEAD_SINGLE
    plain = boosting_quality(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                             params[0], params[1], single, None)
    buffered = boosting_quality(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                                params[0], params[1], single, gains)
    return plain, buffered


def _gains(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2):
    g = (tot_g - run_g) if complement else run_g
    h = (tot_h - run_h) if complement else run_h
    return [label_gain(g[k] * inv_scale, h[k] * inv_scale, l1, l2) for k in labels]


def _reference(*args):
    total = 0.0
    for gain in _gains(*args):  # label order, as the CUDA scan sums
        total += gain
    return total


def _reference_single(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2):
    """mlrl-boomer's single-output head: the first label of largest |score|, its gain."""
    g = (tot_g - run_g) if complement else run_g
    h = (tot_h - run_h) if complement else run_h
    gain, j = single_choice(g[labels] * inv_scale, h[labels] * inv_scale, l1, l2)
    return gain, int(labels[j])


@pytest.mark.parametrize("K", [1, 3, 8, 14, 45, 159])
@pytest.mark.parametrize("l1, l2", [(0.0, 1.0), (0.5, 0.0), (2.0, 3.0)])
def test_complete_head_with_gains_buffer_is_bit_identical(K, l1, l2):
    rng = np.random.default_rng(K)
    gains = np.empty(K)
    params = np.array([l1, l2])
    for _ in range(20):
        run_g = rng.integers(-2 ** 40, 2 ** 40, K)
        run_h = rng.integers(-2 ** 20, 2 ** 40, K)  # also H + l2 <= 0 and tiny |G|
        tot_g = run_g + rng.integers(-2 ** 40, 2 ** 40, K)
        tot_h = run_h + rng.integers(-2 ** 20, 2 ** 40, K)
        run_g[rng.random(K) < 0.2] = 0
        for complement in (False, True):
            want = _reference(run_g, run_h, tot_g, tot_h, complement, np.arange(K), 2.0 ** -30,
                              l1, l2)
            plain, buffered = _both(run_g, run_h, tot_g, tot_h, complement,
                                    np.arange(K, dtype=np.int32), 2.0 ** -30, params, gains,
                                    HEAD_COMPLETE)
            assert plain == buffered == (want, -1)


@pytest.mark.parametrize("K", [1, 3, 6, 14, 45])
@pytest.mark.parametrize("l1, l2", [(0.0, 1.0), (0.5, 0.0)])
def test_single_head_with_gains_buffer_is_bit_identical(K, l1, l2):
    rng = np.random.default_rng(100 + K)
    gains = np.empty(K)
    params = np.array([l1, l2])
    labels = np.arange(K, dtype=np.int32)
    for trial in range(30):
        run_g = rng.integers(-2 ** 40, 2 ** 40, K)
        run_h = rng.integers(0, 2 ** 40, K)
        if trial % 3 == 0:  # ties: the first largest label wins
            run_g[K // 2:] = run_g[0]
            run_h[K // 2:] = run_h[0]
        tot_g = run_g + rng.integers(-2 ** 40, 2 ** 40, K)
        tot_h = run_h + rng.integers(0, 2 ** 40, K)
        if trial % 5 == 0:  # every gain 0: label 0
            run_g[:] = 0
        for complement in (False, True):
            want = _reference_single(run_g, run_h, tot_g, tot_h, complement, labels,
                                     2.0 ** -30, l1, l2)
            plain, buffered = _both(run_g, run_h, tot_g, tot_h, complement, labels,
                                    2.0 ** -30, params, gains, HEAD_SINGLE)
            assert plain == buffered == want


def test_a_label_subset_ignores_the_buffer():
    rng = np.random.default_rng(0)
    K = 10
    run_g, run_h = rng.integers(-2 ** 30, 2 ** 30, K), rng.integers(0, 2 ** 30, K)
    tot_g, tot_h = run_g * 3, run_h * 3
    labels = np.array([1, 4, 7], np.int32)
    for mode, reference in ((HEAD_COMPLETE, lambda *a: (_reference(*a), -1)),
                            (HEAD_SINGLE, _reference_single)):
        plain, buffered = _both(run_g, run_h, tot_g, tot_h, True, labels, 2.0 ** -20,
                                np.array([0.0, 1.0]), np.full(K, np.nan), mode)
        assert plain == buffered == reference(run_g, run_h, tot_g, tot_h, True, labels,
                                              2.0 ** -20, 0.0, 1.0)


def test_side_quality_called_from_python_takes_the_plain_loops():
    """covering.py calls side_quality from Python: the overloaded helpers need bodies."""
    rng = np.random.default_rng(5)
    K = 6
    run_g, run_h = rng.integers(-2 ** 30, 2 ** 30, K), rng.integers(0, 2 ** 30, K)
    tot_g, tot_h = run_g * 2, run_h * 2
    labels = np.arange(K, dtype=np.int32)
    params = np.array([0.0, 1.0])
    assert side_quality(run_g, run_h, tot_g, tot_h, False, labels, HEAD_COMPLETE, 2.0 ** -20,
                        params) == (_reference(run_g, run_h, tot_g, tot_h, False, labels,
                                               2.0 ** -20, 0.0, 1.0), -1)
    assert side_quality(run_g, run_h, tot_g, tot_h, True, labels, HEAD_SINGLE, 2.0 ** -20,
                        params) == _reference_single(run_g, run_h, tot_g, tot_h, True, labels,
                                                     2.0 ** -20, 0.0, 1.0)


_FAMILY_PROBE = r"""
import json, sys
import numba as nb, numpy as np
from gpurules.backends.cpu.exact_search import _quality
from gpurules.objectives.quality import family_head_mode
from tests.reference.compile_events import record_compiles
compiled = record_compiles()
@nb.njit(cache=False)
def probe(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, params):
    return _quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, 2.0 ** -20,
                    params, None, np.zeros(run_g.shape[0]))
out = []
for case in json.loads(sys.stdin.read()):
    compiled.clear()
    arrays = [np.array(case[key], np.int64) for key in ("run_g", "run_h", "tot_g", "tot_h")]
    labels = np.arange(len(case["run_g"]), dtype=np.int32)
    params = np.array(case["params"])
    qualities = [probe(*arrays, complement, labels, family_head_mode(case["head_mode"]),
                       params) for complement in (False, True)]
    out.append({"compiled": sorted(set(compiled)), "qualities": qualities})
print(json.dumps(out))
"""


def _family_case(head_mode):
    """The sums and params of one head mode's case (SeCo: covered >= correct)."""
    rng = np.random.default_rng(9)
    K = 5
    run_g, run_h = rng.integers(0, 2 ** 20, K), rng.integers(0, 2 ** 20, K)
    params = np.array([0.5, 1.0])
    if head_mode == HEAD_ND_SINGLE:  # a packed Hessian: diagonal H_kk at k(k+3)/2
        run_h = rng.integers(0, 2 ** 20, K * (K + 1) // 2)
    if head_mode in (HEAD_SECO_SINGLE, HEAD_SECO_PARTIAL):
        run_h = run_g + rng.integers(0, 2 ** 20, K)
        lift = np.linspace(1.0, 1.5, K)
        params = seco_params(F_MEASURE, 0.5, lift, lift, run_g * 3, run_h * 3)
    return dict(head_mode=int(head_mode), run_g=run_g.tolist(), run_h=run_h.tolist(),
                tot_g=(run_g * 3).tolist(), tot_h=(run_h * 3).tolist(),
                params=params.tolist())


@pytest.fixture(scope="module")
def family_probe():
    """The searches' ``_quality`` with ``family_head_mode`` of each mode (complete, single,
    SeCo single, SeCo partial, non-decomposable single), compiled in a fresh process so
    that no earlier compilation hides the compile events: (cases, per case {"compiled":
    names, "qualities": [(q, label) without, with complement]})."""
    import json
    import subprocess
    import sys
    cases = [_family_case(mode) for mode in (HEAD_COMPLETE, HEAD_SINGLE, HEAD_SECO_SINGLE,
                                             HEAD_SECO_PARTIAL, HEAD_ND_SINGLE)]
    out = subprocess.run([sys.executable, "-c", _FAMILY_PROBE], input=json.dumps(cases),
                         capture_output=True, text=True, check=True).stdout
    return cases, json.loads(out)


def test_a_family_head_mode_compiles_only_its_family(family_probe):
    """A search given ``family_head_mode(HEAD_COMPLETE)`` compiles the complete head only,
    neither the SeCo heuristics nor the single-output head; the SeCo family's search does
    compile the heuristics (the events are seen)."""
    _, results = family_probe
    family, seco = results[0]["compiled"], results[2]["compiled"]
    for other in ("single_quality", "partial_quality", "_best_gain"):
        assert other not in family
    assert "single_quality" in seco and "_summed_gain" in family


def test_the_non_decomposable_single_head_compiles_no_multi_output_head(family_probe):
    """``HEAD_ND_SINGLE`` is a family of its own: its search compiles the single-output
    head of the packed sums, not the multi-output heads' selection and solvers."""
    compiled = family_probe[1][4]["compiled"]
    assert "single_head_sums" in compiled
    for other in ("multi_output_side", "_other_quality", "regularized_solve"):
        assert other not in compiled


def test_head_work_is_none_for_every_family_but_the_multi_output_one():
    """``head_work`` (Python and compiled) passes the work rows on for an int head mode and
    the multi-output family only: the rule loops' heads compile no multi-output head for
    the others."""
    work = np.zeros(3)
    compiled = nb.njit(lambda head_mode, work: head_work(head_mode, work) is None)
    for mode in (HEAD_COMPLETE, HEAD_SINGLE, HEAD_SECO_SINGLE, HEAD_ND_SINGLE,
                 HEAD_MULTI_OUTPUT):
        family = family_head_mode(mode)
        want_none = mode != HEAD_MULTI_OUTPUT
        assert (head_work(family, work) is None) == want_none
        assert compiled(family, work) == want_none
        assert head_work(mode, work) is work and not compiled(mode, work)


@pytest.mark.parametrize("index", range(5))
def test_family_head_mode_scores_as_the_int(family_probe, index):
    """The searches' quality with ``family_head_mode`` (one family compiled) equals
    ``side_quality`` with the int (its Python body), bit for bit."""
    cases, results = family_probe
    case = cases[index]
    head_mode = case["head_mode"]
    arrays = [np.array(case[key], np.int64) for key in ("run_g", "run_h", "tot_g", "tot_h")]
    labels = np.arange(arrays[0].shape[0], dtype=np.int32)
    for complement, by_family in zip((False, True), results[index]["qualities"]):
        by_int = side_quality(*arrays, complement, labels, head_mode, 2.0 ** -20,
                              np.array(case["params"]), None, np.zeros(labels.shape[0]))
        assert (float(by_int[0]), int(by_int[1])) == (by_family[0], by_family[1])
    assert family_head_mode(family_head_mode(head_mode)) == family_head_mode(head_mode)
