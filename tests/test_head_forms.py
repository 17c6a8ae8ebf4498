"""The multi-output heads' forms (``multi_output.FORMS``): a fit's multi-output head is
typed as the family of its form (``quality.family_head_mode`` with its params), which
compiles that form's statistics and solver only, and computes what the form that chooses
them as it runs (``any``, the CUDA kernels' and the int head mode's; here its Python body)
computes, bit for bit."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gpurules.objectives.multi_output import (HEAD_MULTI_OUTPUT, SELECT_ALL, SELECT_DYNAMIC,
                                              SELECT_FIXED, form_name, multi_output_head,
                                              multi_output_params)
from gpurules.objectives.non_decomposable import packed_index
from gpurules.objectives.quality import (BinnedHeadMode, MultiOutputHeadMode,
                                         OutputWiseHeadMode, SystemHeadMode,
                                         family_head_mode, head_work)

_PARTIAL = {SELECT_ALL: (0.0, 0.0, 0.0), SELECT_FIXED: (0.5, 1, 0),
            SELECT_DYNAMIC: (0.8, 2.0, 0.0)}
# (form, packed, selection, GBLB's (bin_ratio, min_bins, max_bins) or None)
CASES = [("output_wise", False, SELECT_ALL, None), ("output_wise", False, SELECT_FIXED, None),
         ("output_wise", False, SELECT_DYNAMIC, None), ("system", True, SELECT_ALL, None),
         ("system", True, SELECT_DYNAMIC, None), ("binned", False, SELECT_ALL, (0.5, 1, 0)),
         ("binned", True, SELECT_FIXED, (0.5, 1, 0))]
FAMILIES = {"output_wise": OutputWiseHeadMode, "system": SystemHeadMode,
            "binned": BinnedHeadMode}
# the probe's order of forms; per form, the solvers (compile events' names) it compiles and
# those it does not (the second: none compiled by an earlier form, so that the test sees them)
ORDER = ("output_wise", "system", "binned")
SOLVERS = {"output_wise": (("output_wise_head",), ("complete_head", "binned_head")),
           "system": (("complete_head",), ("binned_head",)),
           "binned": (("binned_head",), ())}


def _params(packed, selection, binning):
    return multi_output_params(0.25, 1.0, packed, selection, _PARTIAL[selection], binning)


def _sums(packed, K=6, seed=4):
    """Fixed-point sums g int64 (K,), h int64 (K or K(K+1)/2,) of a rule's coverage: a
    diagonally dominant packed Hessian where ``packed`` (positive definite)."""
    rng = np.random.default_rng(seed)
    g = rng.integers(-2 ** 24, 2 ** 24, K)
    if not packed:
        return g, rng.integers(1, 2 ** 24, K)
    h = np.zeros(K * (K + 1) // 2, np.int64)
    for i in range(K):
        for j in range(i + 1):
            h[packed_index(i, j)] = rng.integers(2 ** 25, 2 ** 26) if i == j else \
                rng.integers(-2 ** 20, 2 ** 20)
    return g, h


_PROBE = r"""
import json, sys
import numpy as np
from gpurules.objectives import compiled
from tests.reference.compile_events import record_compiles
from tests.test_head_forms import CASES, ORDER, _params, _sums
names = record_compiles()
out = {}
for form in ORDER:
    names.clear()
    heads = []
    for name, packed, selection, binning in CASES:
        if form == name:
            labels, scores = compiled.multi_output_heads[form](
                *_sums(packed), np.arange(6, dtype=np.int32), 2.0 ** -20,
                _params(packed, selection, binning))
            heads.append([labels.tolist(), scores.tolist()])
    out[form] = {"compiled": sorted(set(names)), "heads": heads}
print(json.dumps(out))
"""


def _heads(packed, selection, binning):
    """The rule head of one case: (labels, scores) as lists."""
    labels, scores = multi_output_head(*_sums(packed), np.arange(6, dtype=np.int32),
                                       2.0 ** -20, _params(packed, selection, binning))
    return [labels.tolist(), scores.tolist()]


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """Each form's rule heads of :data:`CASES`, compiled in a fresh process with an empty
    Numba cache in the order of :data:`ORDER` (so that its compile events are seen):
    {form: {"compiled": names, "heads": [[labels, scores]]}}."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path_factory.mktemp("numba-cache")))
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         check=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["output_wise", "system", "binned"])
def test_a_form_compiles_its_own_solver_only(probe, name):
    """A form's head compiles its solver, not the others' (a partial head over decomposable
    statistics compiled the complete and binned heads' solvers too)."""
    compiled = probe[name]["compiled"]
    own, others = SOLVERS[name]
    assert f"multi_output_head_{name}" in compiled
    assert all(solver in compiled for solver in own)
    assert not [solver for solver in others if solver in compiled]


@pytest.mark.parametrize("name", ["output_wise", "system", "binned"])
def test_a_form_computes_the_heads_of_any(probe, name):
    """A form's heads equal those of the form that chooses as it runs (its Python body),
    bit for bit."""
    want = [_heads(*case[1:]) for case in CASES if case[0] == name]
    assert probe[name]["heads"] == want and want


def test_family_head_mode_of_a_multi_output_head_is_its_form():
    """``family_head_mode`` given the params: the form's family (a subclass of the
    multi-output family, so its work rows are passed on); without them the general one."""
    for name, packed, selection, binning in CASES:
        params = _params(packed, selection, binning)
        family = family_head_mode(HEAD_MULTI_OUTPUT, params)
        assert form_name(params) == name and type(family) is FAMILIES[name]
        assert family.code == HEAD_MULTI_OUTPUT and family.FORM == name
        assert head_work(family, params) is params
    assert type(family_head_mode(HEAD_MULTI_OUTPUT)) is MultiOutputHeadMode
