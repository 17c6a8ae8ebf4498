"""Shared helpers for the benchmark scripts (compare_boomer.py, compare_seco.py, ...).

Dataset loading, ``--param`` parsing, the quality metrics, rule counting for the mlrl
reference learners, timing, the machine/version description and Markdown formatting live here
so that every comparison script reports the same things in the same way.

Import this module *after* setting ``OMP_WAIT_POLICY`` (see compare_boomer.py): it imports
nothing from mlrl itself, but scripts usually import mlrl right after it.
"""

from __future__ import annotations

import datetime
import importlib
import importlib.metadata
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import scipy.sparse as sp

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "datasets"
DEFAULT_DATASETS = ("emotions", "yeast", "scene", "medical", "enron")
MLRL_HINT = (
    "use a Python 3.12 venv with `pip install mlrl-boomer==0.15.6` "
    "(mlrl only ships wheels for Python >= 3.12), e.g. /work/bench312/bin/python"
)


def use_repo_checkout() -> None:
    """Put the repository root first on ``sys.path`` so the benchmark measures this checkout.

    Scripts run as ``python benchmarks/x.py`` get ``benchmarks/`` on the path, not the root;
    without this an installed (possibly stale, non-editable) gpurules would be imported.
    Says so on stderr where ``PYTHONPATH`` names another checkout, or gpurules was already
    imported from one: a script that imports these helpers from one checkout while
    ``PYTHONPATH`` points at another measures this one (session 43 found A/B comparisons
    of session 42 that had compared a checkout with itself that way).
    """
    root = str(REPO_ROOT)
    if root not in sys.path:
        sys.path.insert(0, root)
    others = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
              if p and (Path(p) / "gpurules" / "__init__.py").exists()
              and Path(p).resolve() != REPO_ROOT.resolve()]
    loaded = sys.modules.get("gpurules")
    if loaded is not None:
        checkout = Path(loaded.__file__).resolve().parent.parent
        if checkout != REPO_ROOT.resolve():
            others.append(str(checkout))
    for other in others:
        print(f"benchmarks: measuring the gpurules of {root}, not the one in {other}",
              file=sys.stderr, flush=True)


def log(msg: str) -> None:
    """Progress output: stderr, flushed, with a wall-clock stamp."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- data


@dataclass
class Split:
    """A dataset's standard train/test split, loaded by ``gpurules.datasets.load_arff``."""

    name: str
    X_train: Any  # dense float32 ndarray or CSR
    Y_train: np.ndarray
    X_test: Any
    Y_test: np.ndarray
    nominal_features: list[int]

    @property
    def n_train(self) -> int:
        return self.Y_train.shape[0]

    @property
    def n_test(self) -> int:
        return self.Y_test.shape[0]

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]

    @property
    def n_labels(self) -> int:
        return self.Y_train.shape[1]


def load_split(data_dir: str | Path, name: str, dense: bool = True) -> Split:
    """Load ``<name>-train.arff`` and ``<name>-test.arff`` from ``data_dir``.

    Labels come from the MULAN ``<name>.xml`` beside the files (handled by ``load_arff``).
    With ``dense=True`` sparse feature matrices are converted with ``toarray()``.
    """
    from gpurules.datasets import load_arff

    data_dir = Path(data_dir)
    train = load_arff(data_dir / f"{name}-train.arff")
    test = load_arff(data_dir / f"{name}-test.arff")
    if list(train.nominal_features) != list(test.nominal_features):
        raise ValueError(f"{name}: train and test declare different nominal features")
    X_train, X_test = train.X, test.X
    if dense:
        X_train, X_test = to_dense(X_train), to_dense(X_test)
    return Split(name, X_train, np.asarray(train.Y), X_test, np.asarray(test.Y),
                 [int(i) for i in train.nominal_features])


def to_dense(X: Any) -> np.ndarray:
    """A dense C-contiguous array for a dense array or a scipy sparse matrix."""
    if sp.issparse(X):
        return np.ascontiguousarray(X.toarray())
    return np.ascontiguousarray(X)


# --------------------------------------------------------------------------- parameters


def parse_value(text: str) -> int | float | str:
    """``"100"`` -> 100, ``"0.3"`` -> 0.3, anything else stays a string (``"true"`` too)."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_params(items: Iterable[str] | None) -> dict[str, int | float | str]:
    """Parse repeated ``--param key=value`` options into a constructor keyword dict."""
    params: dict[str, int | float | str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--param expects key=value, got {item!r}")
        params[key.strip()] = parse_value(value.strip())
    return params


def parallel_params(threads: str, names: Sequence[str] = (
        "parallel_rule_refinement", "parallel_statistic_update", "parallel_prediction",
)) -> dict[str, str]:
    """mlrl parallelism for a ``--threads`` setting: ``"1"`` -> "false", ``"all"`` -> "true"."""
    if threads == "1":
        value = "false"
    elif threads == "all":
        value = "true"
    else:
        raise ValueError(f"threads must be '1' or 'all', got {threads!r}")
    return {name: value for name in names}


def boomer_estimator(learner: str, seed: int, **params: Any) -> Any:
    """An unfitted one-thread BoomerClassifier of ``learner`` ("ours": gpurules on the CPU,
    "mlrl": mlrl-boomer) with ``random_state=seed`` and mlrl-boomer's ``params``."""
    params = dict(params, random_state=seed, **parallel_params("1"))
    if learner == "ours":
        from gpurules import BoomerClassifier
        return BoomerClassifier(device="cpu", **params)
    from mlrl.boosting import BoomerClassifier
    return BoomerClassifier(**params)


def timed_fit(clf: Any, split: "Split") -> tuple[float, dict[str, float]]:
    """Fit ``clf`` on the split's training part: (process CPU seconds, :func:`quality` of
    its test predictions)."""
    start = time.process_time()
    clf.fit(split.X_train, split.Y_train)
    seconds = time.process_time() - start
    return seconds, quality(split.Y_test, clf.predict(split.X_test))


def format_params(params: dict[str, Any]) -> str:
    """``key=value`` list for the report header ("defaults" when empty)."""
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"


# --------------------------------------------------------------------------- metrics


def predictions_dense(P: Any) -> np.ndarray:
    """Predictions as a dense uint8 0/1 array (mlrl may return sparse matrices)."""
    if sp.issparse(P):
        P = P.toarray()
    return (np.asarray(P) != 0).astype(np.uint8)


def quality(Y_true: np.ndarray, Y_pred: Any) -> dict[str, float]:
    """Hamming loss, subset 0/1 loss and example-wise F1 (all as fractions in [0, 1]).

    Example-wise F1 is sklearn's ``f1_score(average="samples", zero_division=1)``: an example
    with no relevant and no predicted labels scores 1 (a correct empty prediction), the
    convention of mlrl-testbed; with ``zero_division=0`` such examples would score 0.
    """
    from sklearn.metrics import f1_score

    Y_true = predictions_dense(Y_true)
    P = predictions_dense(Y_pred)
    if P.shape != Y_true.shape:
        raise ValueError(f"prediction shape {P.shape} != label shape {Y_true.shape}")
    wrong = Y_true != P
    return {
        "hamming": float(wrong.mean()),
        "subset01": float(wrong.any(axis=1).mean()),
        "ex_f1": float(f1_score(Y_true, P, average="samples", zero_division=1)),
    }


def _visit_mlrl_bodies(model: Any) -> tuple[int, int, int]:
    """(empty bodies, conjunctive bodies, conditions) of the rules a fitted mlrl model
    (``clf.model_``) uses for prediction, counted with a ``RuleModelVisitor``."""
    from mlrl.common.cython.rule_model import RuleModelVisitor

    kinds = ("nominal_eq", "nominal_neq", "numerical_gr", "numerical_leq", "ordinal_gr",
             "ordinal_leq")

    class _Count(RuleModelVisitor):
        def __init__(self) -> None:
            self.empty = self.rules = self.conditions = 0

        def visit_empty_body(self, body: Any) -> None:
            self.empty += 1

        def visit_conjunctive_body(self, body: Any) -> None:
            self.rules += 1
            for kind in kinds:
                indices = getattr(body, f"{kind}_indices", None)
                self.conditions += 0 if indices is None else len(indices)

        def visit_complete_head(self, head: Any) -> None:
            pass

        def visit_partial_head(self, head: Any) -> None:
            pass

    counter = _Count()
    model.visit_used(counter)
    return counter.empty, counter.rules, counter.conditions


def count_mlrl_rules(model: Any) -> int:
    """Number of rules of a fitted mlrl model (``clf.model_``), the default rule included.

    mlrl 0.15's ``RuleList.get_num_used_rules()`` counts every rule that prediction uses,
    including the default rule (``max_rules=1000`` gives 1000: 1 ``EmptyBody`` + 999
    ``ConjunctiveBody`` when visited with a ``RuleModelVisitor``). ``get_num_used_rules``
    differs from ``get_num_rules`` only when pruning by a holdout set cut the list. Falls back
    to counting the bodies with the visitor API.
    """
    if hasattr(model, "get_num_used_rules"):
        return int(model.get_num_used_rules())
    empty, rules, _ = _visit_mlrl_bodies(model)
    return empty + rules


def conditions_per_rule(model: Any) -> float:
    """Mean number of conditions of the rules of a fitted gpurules model (``clf.model_``),
    the default rule excluded."""
    starts = np.asarray(model.rule_cond_start)
    return float(np.diff(starts).mean()) if starts.size > 1 else 0.0


def mlrl_conditions_per_rule(model: Any) -> float:
    """Mean number of conditions of the rules of a fitted mlrl model (``clf.model_``), the
    default rule (an empty body) excluded."""
    _, rules, conditions = _visit_mlrl_bodies(model)
    return conditions / rules if rules else 0.0


# --------------------------------------------------------------------------- timing


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``fn()`` once; return (seconds by ``time.perf_counter``, result)."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def median(values: Sequence[float]) -> float:
    """Median, NaN for an empty sequence."""
    return float(statistics.median(values)) if values else float("nan")


# --------------------------------------------------------------------------- machine


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    """Cores this process may run on (affinity mask), else ``os.cpu_count()``."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def package_version(dist: str, module: str | None = None) -> str:
    """Installed version of a distribution, else the module's ``__version__``, else "-"."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        return str(getattr(importlib.import_module(module or dist), "__version__", "?"))
    except Exception:  # noqa: BLE001 - a missing package is reported, not raised
        return "-"


def machine_lines(extra_packages: Sequence[tuple[str, str | None]] = ()) -> list[str]:
    """Markdown bullet lines: machine, date, Python and package versions.

    ``gpurules`` is reported from the imported module (this checkout), so an editable or
    path-based use shows the checkout's ``__version__`` and git commit.
    """
    total = os.cpu_count() or 1
    lines = [
        f"- machine: {cpu_model()}, {usable_cores()} usable cores ({total} logical), "
        f"{platform.system()} {platform.release()}",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"- Python {platform.python_version()}, numpy {package_version('numpy')}, "
        f"numba {package_version('numba')}, scipy {package_version('scipy')}, "
        f"scikit-learn {package_version('scikit-learn', 'sklearn')}",
    ]
    versions = [f"{dist} {package_version(dist, mod)}" for dist, mod in extra_packages]
    try:
        import gpurules

        versions.append(f"gpurules {gpurules.__version__} ({git_describe()})")
    except Exception as exc:  # noqa: BLE001
        versions.append(f"gpurules not importable ({type(exc).__name__})")
    lines.append("- " + ", ".join(versions))
    omp = os.environ.get("OMP_WAIT_POLICY", "unset")
    lines.append(f"- OMP_WAIT_POLICY={omp}, NUMBA_NUM_THREADS="
                 f"{os.environ.get('NUMBA_NUM_THREADS', 'default')}")
    return lines


def git_describe() -> str:
    """Short commit of the checkout, with ``+dirty`` for uncommitted changes; "no git" else."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=True)
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except Exception:  # noqa: BLE001
        return "no git"


# --------------------------------------------------------------------------- formatting


def fmt_seconds(x: float | None) -> str:
    """Seconds with ~3 significant digits; "-" for missing/NaN."""
    if x is None or not np.isfinite(x):
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    if x >= 0.01:
        return f"{x:.3f}"
    return f"{x:.4f}"


def fmt_ratio(num: float | None, den: float | None) -> str:
    """``num / den`` as ``1.23x``; "-" when either is missing."""
    if num is None or den is None or not np.isfinite(num) or not np.isfinite(den) or den <= 0:
        return "-"
    return f"{num / den:.2f}x"


def fmt_pair(a: Any, b: Any, percent: bool = False) -> str:
    """``a / b`` for reference / ours; fractions shown in % with 2 decimals when ``percent``."""
    def one(v: Any) -> str:
        if v is None or (isinstance(v, float) and not np.isfinite(v)):
            return "-"
        if percent:
            return f"{100.0 * v:.2f}"
        return str(v)

    return f"{one(a)} / {one(b)}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub Markdown table; numeric-looking columns are right-aligned."""
    def numeric(col: int) -> bool:
        cells = [str(r[col]) for r in rows]
        return bool(cells) and all(c[:1].isdigit() or c[:1] == "-" for c in cells)

    align = ["---:" if numeric(i) else "---" for i in range(len(headers))]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)
