"""The layers of ``docs/architecture.md`` hold: no module of ``gpurules`` imports across a
forbidden boundary. Imports are read with ``ast`` (nothing is imported), those inside
functions included."""

import ast
from pathlib import Path

import gpurules

PACKAGE = Path(gpurules.__file__).resolve().parent

MODELS = ("gpurules.conditions", "gpurules.model", "gpurules.model_turs",
          "gpurules.decision_list", "gpurules.model_methods", "gpurules.model_io",
          "gpurules.model_document", "gpurules.model_codec",
          "gpurules.json_fields", "gpurules.rule_tables", "gpurules.rule_importance",
          "gpurules.prediction")
# every module but the backends: the CPU backend's modules are its own, nothing shared
# lives there (the shared Numba helpers are in gpurules.jit, the compiled objectives in
# gpurules.objectives.compiled, prediction in gpurules.prediction)
OUTSIDE_BACKENDS = MODELS + ("gpurules.objectives", "gpurules.learners", "gpurules.estimators",
                             "gpurules.data", "gpurules.datasets", "gpurules.jit",
                             "gpurules.device", "gpurules.progress", "gpurules.compile_log",
                             "gpurules.demo", "gpurules.exceptions", "gpurules.cli",
                             "gpurules.plot", "gpurules.dask")

# (layer of the importing module, layer it must not import): module names or prefixes
FORBIDDEN = [
    (MODELS, ("gpurules.backends",)),
    (("gpurules.objectives",), ("gpurules.backends",)),
    (("gpurules.learners",), ("gpurules.estimators",)),
    (("gpurules.backends.cuda",), ("gpurules.backends.cpu",)),
    # the learners drive the backends through backends.base, never the other way round
    (("gpurules.backends",), ("gpurules.learners", "gpurules.estimators")),
    (OUTSIDE_BACKENDS, ("gpurules.backends.cpu",)),
    # the Numba helpers are the lowest layer
    (("gpurules.jit",), ("gpurules.backends", "gpurules.objectives", "gpurules.learners",
                         "gpurules.estimators", "gpurules.data", "gpurules.cli") + MODELS),
    (("gpurules.cli",), ("gpurules.learners", "gpurules.backends", "gpurules.objectives",
                         "gpurules.data")),
    # device strings are a leaf: resolving "auto" (the GPU smoke test) is backends.factory's
    (("gpurules.device",), ("gpurules",)),
]

# (importing module, imported module): why the import stays. An entry that no longer
# occurs fails the test too, so the list only shrinks.
ALLOWED = {}


def module_name(path, root=PACKAGE):
    """Dotted name of the module at ``path`` (a ``.py`` file under ``root``)."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source, name, is_package=False, known=()):
    """The modules that ``source`` (of module ``name``) imports, as dotted names.

    ``from a import b`` counts as ``a.b`` when ``a.b`` is in ``known`` (a submodule),
    else as ``a``; relative imports are resolved against ``name``.
    """
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, name, is_package)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    return found


def _absolute(node, name, is_package):
    """The absolute module of an ``ImportFrom`` node in module ``name``."""
    if not node.level:
        return node.module
    parts = name.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    return ".".join(parts[:keep] + ([node.module] if node.module else []))


def _in(name, layer):
    return any(name == p or name.startswith(p + ".") for p in layer)


def violations(modules):
    """Forbidden imports of ``modules`` ({name: (source, is_package)}): a sorted list of
    (importer, imported)."""
    known = set(modules)
    out = set()
    for name, (source, is_package) in modules.items():
        for imported in imported_modules(source, name, is_package, known):
            if any(_in(name, src) and _in(imported, dst) for src, dst in FORBIDDEN):
                out.add((name, imported))
    return sorted(out)


def package_modules():
    """{module name: (source, is_package)} of every module under ``gpurules/``."""
    return {module_name(p): (p.read_text(encoding="utf-8"), p.name == "__init__.py")
            for p in sorted(PACKAGE.rglob("*.py"))}


def test_no_module_imports_across_a_forbidden_boundary():
    found = violations(package_modules())
    new = [v for v in found if v not in ALLOWED]
    assert not new, f"imports across a layer boundary (docs/architecture.md): {new}"
    stale = [v for v in ALLOWED if v not in found]
    assert not stale, f"ALLOWED entries that no longer occur (remove them): {stale}"


def test_the_checker_finds_forbidden_imports():
    modules = {
        "gpurules.objectives.x": ("def f():\n    from gpurules.backends.cpu import kernels\n",
                                  False),
        "gpurules.backends.cuda.y": ("from ..cpu import exact_search\n", False),
        "gpurules.backends.cpu.exact_search": ("", False),
        "gpurules.jit.w": ("from gpurules.model import satisfies\n", False),
        "gpurules.learners.z": ("import gpurules.estimators.boomer as b\n", False),
        "gpurules.model": ("from gpurules.objectives import heads\n", False),
    }
    assert violations(modules) == [
        ("gpurules.backends.cuda.y", "gpurules.backends.cpu.exact_search"),
        ("gpurules.jit.w", "gpurules.model"),
        ("gpurules.learners.z", "gpurules.estimators.boomer"),
        ("gpurules.objectives.x", "gpurules.backends.cpu"),
    ]


# phases computed by both backends: the CUDA twin of cpu/<name>.py is cuda/<name>.py
TWINS = ("statistics", "coverage", "histograms", "histogram_search", "refine", "class_histograms",
         "backend")


def test_cpu_and_cuda_twins_share_their_file_names():
    for name in TWINS:
        for backend in ("cpu", "cuda"):
            assert (PACKAGE / "backends" / backend / f"{name}.py").is_file(), \
                f"backends/{backend}/{name}.py is missing: the twin of a phase has its name"


def test_cpu_backend_knows_each_feature_representation_by_one_record():
    """``cpu/representations.py`` is the one place that maps a representation type to its
    search: the backend itself never switches on the type."""
    source = (PACKAGE / "backends" / "cpu" / "backend.py").read_text()
    for name in ("BinnedFeatures", "SparseSortedFeatures", "PresortedFeatures"):
        assert name not in source, f"backend.py switches on {name}"
