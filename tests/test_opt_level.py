"""The model does not depend on LLVM's optimisation level (``NUMBA_OPT``).

``make test`` runs the suite with ``NUMBA_OPT=1``: its time is mostly Numba compiling, and
level 1 compiles about a tenth faster (docs/benchmarks.md, session 48). Users run Numba's
default, level 3. Without fast-math flags LLVM keeps every floating-point operation and its
order at any level, so the two learn the same models bit for bit; these tests hold that:
no gpurules kernel allows fast math, and a fit at the other level than the suite's learns
this process's model.
"""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numba as nb
import numpy as np

from tests.test_jit_cache import package_dispatchers

ROOT = Path(__file__).resolve().parents[1]

# the child process prints this module's fit (``fit_digests``), at the other level
_FIT = "from tests.test_opt_level import fit_digests; print(*fit_digests())"


def fit_digests():
    """SHA-256 of the default fit's rules (text) and of its decision scores (bytes): 30
    rules on emotions' first 300 examples, one thread."""
    from gpurules import BoomerClassifier
    from gpurules.datasets import load_example

    ds = load_example("emotions")
    clf = BoomerClassifier(random_state=3, max_rules=30, parallel_rule_refinement="false",
                           parallel_statistic_update="false", parallel_prediction="false")
    clf.fit(ds.X[:300], ds.Y[:300])
    assert len(clf.model_) == 30
    scores = np.ascontiguousarray(clf.decision_function(ds.X[:300]))
    return [hashlib.sha256(str(clf.model_).encode()).hexdigest(),
            hashlib.sha256(scores.tobytes()).hexdigest()]


def test_no_kernel_allows_fast_math():
    """Fast math would let LLVM reorder and contract floating-point operations differently
    per optimisation level (and differ from the CUDA kernels, which are built without)."""
    dispatchers = package_dispatchers()
    assert len(dispatchers) > 50
    assert not [f"{module}.{name}" for module, name, disp in dispatchers
                if disp.targetoptions.get("fastmath")]


def test_a_fit_at_another_optimisation_level_learns_the_same_model():
    """The default fit (30 rules, emotions' first 300 examples, one thread) in a process at
    level 3 when this one is not (``make test``), else at level 1, against this process's."""
    other = "3" if int(nb.core.config.OPT) != 3 else "1"
    out = subprocess.run([sys.executable, "-c", _FIT], cwd=ROOT, capture_output=True,
                         text=True, env=dict(os.environ, NUMBA_OPT=other), timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == fit_digests()
