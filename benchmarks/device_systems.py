"""The systems that ``compare_devices.py`` (and ``gpu_diagnose.py``'s fits) time: their
table (``SYSTEMS``: package, device, feature binning) and a fresh estimator of each
(:func:`make_estimator`, ``random_state=1``).

- ``cpu-exact``: gpurules ``device="cpu"``, ``feature_binning="none"`` (pre-sorted search);
- ``cpu-hist``: gpurules ``device="cpu"``, ``feature_binning="equal-width"``;
- ``cuda-hist``: gpurules ``device="cuda"``, ``feature_binning="equal-width"`` (the
  backend's defaults: prepared launches where they can run, each refinement block
  replayed from a CUDA graph, ``graphs="auto"``);
- ``cuda-single``: the same with every launch issued one by one
  (``CudaBackend.set_graphs(False)``), to measure what the graphs save;
- ``cuda-stepwise``: the same, refining one step per call (a device->host copy each) instead
  of in device-resident blocks, to measure what the blocks are worth;
- ``cuda-numba``: ``cuda-hist`` with the Numba kernels launched by numba-cuda itself
  (``CudaBackend.set_launcher("numba")``; then no graphs), to measure what the prepared
  launches save;
- ``cuda-direct``: ``cuda-hist`` with the direct launches (``set_launcher("direct")``:
  parameters packed once per argument pattern, ``cuLaunchKernel``);
- ``cuda-graph``: ``cuda-hist`` with graphs asked for (``CudaBackend.set_graphs(True)``:
  an error, not a fallback, where they cannot run);
- ``boomer-exact`` / ``boomer-ew``: mlrl-boomer 0.15.6 with ``feature_binning="none"`` /
  ``"equal-width"``;
- ``cuda-hist-slot`` / ``cuda-hist-sorted`` (and ``cuda-sorted-nd``): ``cuda-hist``
  (``cuda-nd``) with the histograms of the features too wide for shared memory built one
  feature after the other / from each feature's examples in bin order
  (``CudaBackend(wide_histograms="by-slot" / "sorted")``; measured against ``cuda-hist``
  before either becomes the default where it is faster);
- ``cuda-hist-inplace`` (and ``cuda-inplace-nd``): ``cuda-hist`` (``cuda-nd``) with the
  search's prefix sums made in place before the candidates kernel, as until 2026-12-01
  (``CudaBackend(fused_search=False)``), to measure what the fused candidates kernels
  save;
- ``cuda-devbin`` / ``cuda-sorted-devbin``: ``cuda-hist`` / ``cuda-hist-sorted`` with the
  equal-width bins made on the device (``CudaBackend(device_binning=True)``: X uploaded
  instead of the bins; the host's binning took 1.6 s of the 4.3 s fit at n = 1e6 on the
  H200 of session 50);
- ``cpu-hist-255`` / ``cuda-hist-255`` / ``boomer-ew-255``: the same equal-width systems with
  at most 255 bins per feature (``"equal-width{max_bins=255}"``, as XGBoost and LightGBM
  default to): mlrl-boomer's default ``bin_ratio`` gives 0.33 n bins per continuous
  feature, whose passes then dominate a step's device work; ``cuda-devbin-255``:
  ``cuda-hist-255`` with the bins made on the device (at n = 1e6 the host's binning, about
  1.6 s, was most of ``cuda-hist-255``'s 2.2 s fit in session 50);
- ``cpu-nd`` / ``cuda-nd`` / ``boomer-nd``: the equal-width systems with
  ``loss="logistic-non-decomposable"`` and ``head_type="complete"`` (label binning as each
  learner's default; the ratio column "same bins" compares them with ``boomer-nd``).
"""

from __future__ import annotations

import functools

import _common as C

CAPPED = "equal-width{max_bins=255}"
SYSTEMS = {
    "cpu-exact": ("gpurules", "cpu", "none"),
    "cpu-hist": ("gpurules", "cpu", "equal-width"),
    "cuda-hist": ("gpurules", "cuda", "equal-width"),
    # the same, refining step by step (one device->host copy per step) instead of in
    # device-resident blocks: the measured worth of the blocks (issue 14)
    "cuda-stepwise": ("gpurules", "cuda", "equal-width"),
    # the same, Numba kernels launched by numba-cuda itself (not launches.py's prepared ones)
    "cuda-numba": ("gpurules", "cuda", "equal-width"),
    # the same, launched through cuLaunchKernel with parameters packed once (launches.py)
    "cuda-direct": ("gpurules", "cuda", "equal-width"),
    # the same with graphs asked for (graphs.py), and with every launch one by one
    "cuda-graph": ("gpurules", "cuda", "equal-width"),
    "cuda-single": ("gpurules", "cuda", "equal-width"),
    # the same with the wide features' histograms built one feature after the other, and
    # from their examples in bin order (CudaBackend's wide_histograms)
    "cuda-hist-slot": ("gpurules", "cuda", "equal-width"),
    "cuda-hist-sorted": ("gpurules", "cuda", "equal-width"),
    "cuda-hist-inplace": ("gpurules", "cuda", "equal-width"),
    # the same two with the bins made on the device (CudaBackend's device_binning)
    "cuda-devbin": ("gpurules", "cuda", "equal-width"),
    "cuda-sorted-devbin": ("gpurules", "cuda", "equal-width"),
    "boomer-exact": ("mlrl-boomer", None, "none"),
    "boomer-ew": ("mlrl-boomer", None, "equal-width"),
    "cpu-hist-255": ("gpurules", "cpu", CAPPED),
    "cuda-hist-255": ("gpurules", "cuda", CAPPED),
    "cuda-devbin-255": ("gpurules", "cuda", CAPPED),
    "boomer-ew-255": ("mlrl-boomer", None, CAPPED),
    # the non-decomposable complete-head fit (issue 14's scene/yeast target)
    "cpu-nd": ("gpurules", "cpu", "equal-width"),
    "cuda-nd": ("gpurules", "cuda", "equal-width"),
    "cuda-sorted-nd": ("gpurules", "cuda", "equal-width"),
    "cuda-inplace-nd": ("gpurules", "cuda", "equal-width"),
    "boomer-nd": ("mlrl-boomer", None, "equal-width"),
}
NON_DECOMPOSABLE = {"loss": "logistic-non-decomposable", "head_type": "complete"}
# the mlrl-boomer system of each binning: the ratio column "vs boomer, same bins" (for the
# non-decomposable systems: boomer-nd)
REFERENCE = {"none": "boomer-exact", "equal-width": "boomer-ew", CAPPED: "boomer-ew-255"}


def same_bins_reference(system: str) -> str:
    """The mlrl-boomer system with ``system``'s binning (and loss)."""
    return "boomer-nd" if system.endswith("-nd") else REFERENCE[SYSTEMS[system][2]]


def cuda_reason() -> str | None:
    """None if gpurules can fit on cuda:0, else why not (``cuda_status``'s smoke test:
    CuPy, the device, numba.cuda, a tiny Numba kernel, the RawModule)."""
    from gpurules.backends.factory import cuda_status

    usable, reason = cuda_status(0)
    return None if usable else reason


def make_estimator(system: str, max_rules: int | None, threads: str):
    """A fresh estimator of ``system`` with ``random_state=1``."""
    package, device, binning = SYSTEMS[system]
    params: dict = {"random_state": 1, "feature_binning": binning}
    if system.endswith("-nd"):
        params.update(NON_DECOMPOSABLE)
    if max_rules is not None:
        params["max_rules"] = max_rules
    if package == "mlrl-boomer":
        from mlrl.boosting import BoomerClassifier as Reference

        return Reference(**params, **C.parallel_params(threads))
    from gpurules import BoomerClassifier
    from gpurules.backends.base import refine_stepwise

    clf = BoomerClassifier(device=device, **params, **C.parallel_params(threads))
    if system == "cuda-stepwise":  # one step per call (``base.refine_stepwise``)
        _configure(clf, lambda backend: setattr(
            backend, "refine_rule", functools.partial(refine_stepwise, backend)))
    if system in ("cuda-numba", "cuda-direct"):
        _configure(clf, lambda backend: backend.set_launcher(system.split("-")[1]))
    if system in ("cuda-graph", "cuda-single"):
        _configure(clf, lambda backend: backend.set_graphs(system == "cuda-graph"))
    wide = {"cuda-hist-slot": "by-slot", "cuda-hist-sorted": "sorted",
            "cuda-sorted-nd": "sorted", "cuda-sorted-devbin": "sorted"}.get(system)
    if wide is not None:
        _configure(clf, lambda backend: setattr(backend, "wide_histograms", wide))
    if "-devbin" in system:
        _configure(clf, lambda backend: setattr(backend, "device_binning", True))
    if "-inplace" in system:
        _configure(clf, lambda backend: setattr(backend, "fused_search", False))
    return clf


def _configure(clf, setting) -> None:
    """Apply ``setting(backend)`` to ``clf``'s CUDA backend when the fit makes it
    (``CudaBackend.set_launcher``, ``set_graphs``, its settings, ``refine_rule``)."""
    make_backend = clf._make_backend

    def configured(threads):
        backend = make_backend(threads)
        setting(backend)
        return backend

    clf._make_backend = configured  # instance attribute: this estimator only


def count_rules(system: str, clf) -> int:
    if SYSTEMS[system][0] == "mlrl-boomer":
        return C.count_mlrl_rules(clf.model_)
    return len(clf.model_)
