"""TursClassifier on a real GPU (marked ``gpu``: skipped unless a GPU is usable).

The CUDA class histograms count the same integers as the CPU's and score them in the same
fixed point (``tests/test_turs_cuda.py`` checks the kernels under the simulator), so
``device="cuda"`` must choose the very same rule set as ``device="cpu"``: the same rules,
code lengths and probabilities. Run with ``pytest -m gpu tests/test_turs_gpu.py``.
"""

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine

from gpurules import TursClassifier
from tests.reference.cuda_support import skip_without_gpu

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _needs_gpu():
    skip_without_gpu()


def _data(name):
    if name == "iris":
        return load_iris(return_X_y=True)
    if name == "wine":
        return load_wine(return_X_y=True)
    rng = np.random.default_rng(4)  # missing values and a nominal feature
    X = rng.normal(size=(400, 5)).astype(np.float32)
    X[:, 4] = rng.integers(0, 4, 400)
    y = ((X[:, 0] > 0) + (X[:, 4] == 2)).astype(int)
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, y


@pytest.mark.parametrize("name", ["iris", "wine", "missing-nominal"])
def test_cpu_and_gpu_learn_identical_rule_sets(name):
    X, y = _data(name)
    params = {"categorical_features": [4]} if name == "missing-nominal" else {}
    cpu = TursClassifier(device="cpu", random_state=0, **params).fit(X, y)
    gpu = TursClassifier(device="cuda", random_state=0, **params).fit(X, y)
    assert gpu.device_.startswith("cuda")
    assert str(cpu.model_) == str(gpu.model_)
    assert cpu.history_ == gpu.history_
    np.testing.assert_array_equal(cpu.predict_proba(X), gpu.predict_proba(X))
