"""Device strings: parsing (``gpurules.device``), resolving and the backend dispatch
(``gpurules.backends.factory``). No GPU needed: CUDA choices only go as far as the class."""

import logging

import numpy as np
import pytest

from gpurules.backends import factory
from gpurules.backends.cpu import CpuBackend
from gpurules.backends.cpu.class_histograms import CpuClassHistograms
from gpurules.backends.factory import resolve_device
from gpurules.device import Device, parse_device


@pytest.mark.parametrize("text, kind, index", [
    ("cpu", "cpu", None), ("auto", "auto", None), ("cuda", "cuda", 0), ("cuda:0", "cuda", 0),
    ("cuda:1", "cuda", 1), ("cuda:12", "cuda", 12), (" CUDA:1 ", "cuda", 1), ("CPU", "cpu", None),
])
def test_valid_device_strings(text, kind, index):
    parsed = parse_device(text)
    assert parsed == Device(kind, index) and (parsed.kind, parsed.index) == (kind, index)
    assert parse_device(parsed) is parsed
    assert parse_device(str(parsed)) == parsed


def test_device_strings_round_trip():
    assert [str(Device(*d)) for d in (("cpu",), ("auto",), ("cuda", 3))] == \
        ["cpu", "auto", "cuda:3"]
    assert Device("cuda", 0).is_cuda and not Device("cpu").is_cuda


@pytest.mark.parametrize("text", ["gpu", "cuda:x", "cuda:-1", "", " ", "cuda:", "cpu:0",
                                  "auto:0", "cuda:1:2", "cuda0", ":0", "cuda: 1"])
def test_invalid_device_strings_raise_naming_the_value(text):
    with pytest.raises(ValueError, match=f"device={text!r} is not supported"):
        parse_device(text)


@pytest.mark.parametrize("value", [None, 0, 1.5, True, b"cpu", ["cpu"], ("cuda", 0)])
def test_non_strings_raise_type_error(value):
    with pytest.raises(TypeError, match="device must be a str"):
        parse_device(value)


@pytest.mark.parametrize("bad", [Device("cuda", -1), Device("cuda", None), Device("cpu", 0),
                                 Device("gpu", None), Device("cuda", True),
                                 Device("cuda", np.int64(1))])
def test_invalid_device_records_raise(bad):
    with pytest.raises(ValueError, match="is not supported"):
        parse_device(bad)


def test_cpu_resolves_without_asking_for_a_gpu(monkeypatch):
    monkeypatch.setattr(factory, "cuda_status", _no_gpu_probe)
    assert resolve_device("cpu") == Device("cpu") and resolve_device(Device("cpu")).kind == "cpu"


def test_auto_without_a_gpu_resolves_to_the_cpu_and_logs(monkeypatch, caplog):
    monkeypatch.setattr(factory, "cuda_status", lambda index=0: (False, "no GPU here"))
    with caplog.at_level(logging.INFO, logger="gpurules"):
        assert resolve_device("auto") == Device("cpu")
    assert "device='auto' uses the CPU (no GPU here)" in caplog.text


def test_cuda_without_a_gpu_raises_runtime_error(monkeypatch):
    monkeypatch.setattr(factory, "cuda_status", lambda index=0: (False, "no GPU here"))
    with pytest.raises(RuntimeError, match=r"device='cuda:1' cannot be used: no GPU here"):
        resolve_device("cuda:1")


def test_factory_chooses_the_cpu_backend_for_cpu():
    assert factory.backend_class("cpu") is CpuBackend
    assert factory.backend_class(Device("cpu")) is CpuBackend
    backend = factory.get_backend("cpu", {"search": 2, "update": 3, "predict": 1})
    assert isinstance(backend, CpuBackend)
    assert (backend.n_threads_search, backend.n_threads_update) == (2, 3)
    assert isinstance(factory.get_backend(Device("cpu")), CpuBackend)


def test_capabilities_are_backend_class_attributes():
    assert CpuBackend.requires_binned_features is False
    assert CpuBackend.narrow_head_search is True
    cuda_class = factory.backend_class("cuda:1")  # imports neither CuPy nor numba.cuda
    assert cuda_class.__name__ == "CudaBackend" and cuda_class.name == "cuda"
    assert cuda_class.requires_binned_features is True
    assert cuda_class.narrow_head_search is False


def test_factory_chooses_the_cpu_class_histograms_for_cpu():
    data = type("Data", (), {"lit_feat": np.zeros(3, np.int64), "n_classes": 2})()
    assert isinstance(factory.get_class_histograms("cpu", data), CpuClassHistograms)


@pytest.mark.parametrize("call", [factory.backend_class, factory.get_backend])
def test_factory_refuses_auto_and_bad_devices(call):
    with pytest.raises(ValueError, match="resolved first"):
        call("auto")
    with pytest.raises(ValueError, match="device='gpu' is not supported"):
        call("gpu")
    with pytest.raises(TypeError):
        call(None)


def _no_gpu_probe(index=0):
    raise AssertionError("device='cpu' must not probe for a GPU")


class _HistogramOnly:
    """A backend class that runs the histogram search only (as the CUDA backend)."""

    requires_binned_features = True


def _gpu_machine(monkeypatch):
    """Estimators see a usable GPU: 'auto' and 'cuda' resolve to cuda:0, whose backend class
    needs binned features; backends are made on the CPU (nothing here runs on a GPU)."""
    from gpurules.estimators import _base

    monkeypatch.setattr(_base, "resolve_device", lambda device: Device("cuda", 0))
    monkeypatch.setattr(_base, "backend_class", lambda device: _HistogramOnly
                        if device.is_cuda else CpuBackend)


@pytest.mark.parametrize("learner", ["seco", "boomer"])
def test_auto_with_exact_search_runs_on_the_cpu_and_says_so(monkeypatch, caplog, learner):
    """mlrl-seco's default feature_binning='none' (or BOOMER's explicit one) with
    device='auto' on a GPU machine: the exact search on the CPU, not a ValueError."""
    from gpurules import BoomerClassifier, SeCoClassifier

    _gpu_machine(monkeypatch)
    rng = np.random.default_rng(0)
    X, Y = rng.random((40, 3)), (rng.random((40, 2)) < 0.5).astype(np.uint8)
    cls = SeCoClassifier if learner == "seco" else BoomerClassifier
    with caplog.at_level(logging.INFO, logger="gpurules"):
        clf = cls(device="auto", feature_binning="none", max_rules=3).fit(X, Y)
    assert clf.device_ == "cpu" and clf.feature_binning_ == "none"
    assert "device='auto' uses the CPU: feature_binning='none'" in caplog.text
    with pytest.raises(ValueError, match="device='cuda' runs the histogram search"):
        cls(device="cuda", feature_binning="none", max_rules=3).fit(X, Y)


def test_seco_unordered_runs_on_the_cpu_with_auto_and_refuses_cuda(monkeypatch, caplog):
    """The unordered SeCo rule set has no CUDA path: 'auto' runs it on the CPU (log line),
    an explicit CUDA device raises instead of running on the CPU in silence."""
    from gpurules import SeCoClassifier

    _gpu_machine(monkeypatch)
    rng = np.random.default_rng(1)
    X, Y = rng.random((40, 3)), (rng.random((40, 2)) < 0.5).astype(np.uint8)
    params = dict(rule_set="unordered{num_trees=2,max_depth=2}", feature_binning="equal-width")
    with caplog.at_level(logging.INFO, logger="gpurules"):
        clf = SeCoClassifier(device="auto", **params).fit(X, Y)
    assert clf.device_ == "cpu"
    assert "device='auto' uses the CPU: rule_set='unordered' runs on the CPU only" in caplog.text
    with pytest.raises(ValueError, match="rule_set='unordered' runs on the CPU only"):
        SeCoClassifier(device="cuda", **params).fit(X, Y)
