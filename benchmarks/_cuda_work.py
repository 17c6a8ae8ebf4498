"""The CUDA device work of one fit, for ``compare_devices.py``: the counters per refinement
(``counted_fit``, ``work_row``: counts, modelled and measured ms) and the phase profile
(``profiled_fit``, ``phase_table``). Each takes a fresh ``device="cuda"`` estimator."""

from __future__ import annotations

import argparse

import _common as C


def profiled_fit(clf, split: C.Split) -> dict:
    """One fit of the CUDA estimator ``clf`` with the PhaseProfiler attached to its backend."""
    from gpurules.backends.cuda.profiling import PhaseProfiler

    holder = {}
    make_backend = clf._make_backend

    def profiled_backend(threads):
        holder["profiler"] = PhaseProfiler(make_backend(threads)).attach()
        return holder["profiler"].backend

    clf._make_backend = profiled_backend  # instance attribute: this fit only
    seconds, _ = C.timed(lambda: clf.fit(split.X_train, split.Y_train))
    profiler = holder["profiler"]
    profiler.detach()
    return {"fit_s": seconds, "rows": profiler.rows(), "gbps": profiler.histogram_gbps()}


def counted_fit(clf, split: C.Split) -> dict:
    """One fit of the CUDA estimator ``clf`` with DeviceCounters on its backend: the counts
    per refinement (a condition found by ``refine_rule``, whose device-resident blocks run
    several) and the number of refinements."""
    from gpurules.backends.cuda.counters import DeviceCounters, bin_pass_bytes

    holder = {"refinements": 0}
    make_backend = clf._make_backend

    def counted_backend(threads):
        backend = make_backend(threads)
        holder["counters"] = DeviceCounters(backend).attach()
        refine = backend.refine_rule

        def counting(*a, **kw):
            result = refine(*a, **kw)
            holder["refinements"] += len(result[0])
            return result
        backend.refine_rule = counting  # instance attribute: this fit only
        return backend

    clf._make_backend = counted_backend
    clf.fit(split.X_train, split.Y_train)
    counters = holder["counters"]
    counters.detach()
    counts = counters.counts.as_dict()
    counts["bin_bytes"] = bin_pass_bytes(counts["histogram_rows"], *counters.backend._widths())
    refinements = max(holder["refinements"], 1)
    return {"refinements": holder["refinements"],
            "per_refinement": {k: v / refinements for k, v in counts.items()}}


def work_row(name: str, work: dict, fit_s: float | None, args: argparse.Namespace) -> list:
    """One line of the per-refinement table: counts, modelled and measured ms."""
    per = work["per_refinement"]
    model_ms = ((per["histogram_bytes"] + per["bin_bytes"]) / (args.model_gbps * 1e9)
                + per["launches"] * args.model_launch_us * 1e-6) * 1e3
    measured = "-" if fit_s is None else f"{1e3 * fit_s / max(work['refinements'], 1):.3f}"
    return [name, work["refinements"], f"{per['launches']:.1f}", f"{per['d2h']:.1f}",
            f"{per['h2d']:.1f}", f"{per['allocations']:.2f}",
            f"{per['histogram_bytes'] / 1e6:.2f}", f"{per['bin_bytes'] / 1e6:.2f}",
            f"{model_ms:.3f}", measured]


WORK_HEADERS = ["data", "refinements", "launches", "copies d->h", "copies h->d", "allocations",
                "histogram MB", "bin pass MB", "modelled ms", "measured ms"]


def phase_table(profile: dict, copy_gbps: float | None) -> str:
    """Markdown table of one profiled CUDA fit."""
    rows = []
    total = sum(r[2] for r in profile["rows"])
    for name, calls, self_ms, incl_ms, nbytes in profile["rows"]:
        rows.append([name, calls, f"{self_ms:.1f}", f"{incl_ms:.1f}",
                     f"{100 * self_ms / max(total, 1e-12):.1f}",
                     f"{nbytes / 1e6:.1f}" if nbytes else "-"])
    other = 1e3 * profile["fit_s"] - total
    rows.append(["(host, outside the phases)", "-", f"{other:.1f}", "-", "-", "-"])
    text = C.markdown_table(["phase", "calls", "self ms", "incl. ms", "% of phases", "MB"], rows)
    gbps = profile["gbps"]
    line = f"histogram kernel: {gbps:.1f} GB/s achieved"
    if copy_gbps:
        line += f" = {100 * gbps / copy_gbps:.1f} % of the copy bandwidth ({copy_gbps:.0f} GB/s)"
    return (f"profiled fit {profile['fit_s']:.2f} s (synchronised per phase); {line}\n\n"
            + text)
