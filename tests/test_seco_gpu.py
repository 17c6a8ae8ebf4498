"""SeCoClassifier on a real GPU (marked ``gpu``: skipped unless a GPU is usable).

The CUDA histogram search aggregates the same integer counts as the CPU histogram search
and evaluates the heuristics with FMA-safe formulas, so ``device="cuda"`` must learn the
very same decision list as ``device="cpu"`` with the same binning and seed. Run with
``pytest -m gpu tests/test_seco_gpu.py`` on a GPU machine.
"""

import numpy as np
import pytest

from gpurules import SeCoClassifier
from gpurules.datasets import load_example
from tests.reference.cuda_support import skip_without_gpu

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _needs_gpu():
    skip_without_gpu()


def _models(X, Y, **params):
    params.setdefault("feature_binning", "equal-width")
    cpu = SeCoClassifier(device="cpu", random_state=3, **params).fit(X, Y)
    gpu = SeCoClassifier(device="cuda", random_state=3, **params).fit(X, Y)
    return cpu, gpu


@pytest.mark.parametrize("params", [
    {}, {"head_type": "partial"}, {"heuristic": "m-estimate{m=2}"},
    {"heuristic": "precision", "instance_sampling": "with-replacement"},
    {"feature_binning": "equal-frequency{bin_ratio=0.5}", "head_type": "partial",
     "lift_function": "kln"},
])
def test_cpu_and_gpu_learn_identical_models(params):
    train = load_example("emotions", "train")
    cpu, gpu = _models(train.X, train.Y, **params)
    assert gpu.device_.startswith("cuda")
    assert str(cpu.model_) == str(gpu.model_)
    for name in ("cond_feature", "cond_op", "cond_threshold", "head_label", "head_score"):
        np.testing.assert_array_equal(getattr(cpu.model_.rules, name),
                                      getattr(gpu.model_.rules, name))
    test = load_example("emotions", "test")
    np.testing.assert_array_equal(cpu.predict(test.X), gpu.predict(test.X))


def test_gpu_with_missing_values_and_nominal_features():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 5, (300, 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    Y = (rng.random((300, 4)) < 0.3).astype(np.uint8)
    cpu = SeCoClassifier(device="cpu", feature_binning="equal-width").fit(
        X, Y, nominal_feature_indices=[0, 1])
    gpu = SeCoClassifier(device="cuda", feature_binning="equal-width").fit(
        X, Y, nominal_feature_indices=[0, 1])
    assert str(cpu.model_) == str(gpu.model_)
