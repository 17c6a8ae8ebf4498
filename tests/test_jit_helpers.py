"""The package's compiled helpers (``jit/helpers.py``): compiled for the CPU by
``HelperCompiler``, whose libraries skip the module passes that the calling kernel runs."""

import re
from pathlib import Path

import numba as nb
import numpy as np

import gpurules
from gpurules.jit import helpers
from gpurules.jit.helpers import HelperCompiler, HelperLibrary, overload, register_jitable

PACKAGE = Path(gpurules.__file__).parent


def _halve(x):
    return x // 2


def _inner(x):
    return 3 * x + 1


@register_jitable
def _collatz_steps(x):
    steps = 0
    while x != 1:
        x = _halve(x) if x % 2 == 0 else _inner(x)
        steps += 1
    return steps


register_jitable(_inner)


@overload(_halve, jit_options={"forceinline": True})
def _halve_overload(x):
    return lambda x: x >> 1


@nb.njit
def _steps(values):
    out = np.empty(values.size, np.int64)
    for i in range(values.size):
        out[i] = _collatz_steps(values[i])
    return out


def test_helpers_compile_with_the_helper_pipeline_and_their_kernel_with_numba(monkeypatch):
    """A kernel calling helpers (``register_jitable`` with and without options, an
    ``@overload`` with ``jit_options``) computes what Python computes; every helper was
    compiled by ``HelperCompiler`` into a ``HelperLibrary``, the kernel by Numba's own
    pipeline into a library that ran its module passes."""
    compiled, optimised, libraries = [], [], []
    compile_extra = HelperCompiler.compile_extra

    def spy(self, func):
        compiled.append(func.__name__)
        result = compile_extra(self, func)
        libraries.append(self.state.library)
        return result

    module_passes = nb.core.codegen.CPUCodeLibrary._optimize_final_module

    def count(library):
        optimised.append(type(library))
        return module_passes(library)

    monkeypatch.setattr(HelperCompiler, "compile_extra", spy)
    monkeypatch.setattr(nb.core.codegen.CPUCodeLibrary, "_optimize_final_module", count)
    values = np.array([1, 6, 7, 27, 97], np.int64)
    assert _steps(values).tolist() == [_collatz_steps(int(v)) for v in values]
    assert sorted(compiled) == ["<lambda>", "_collatz_steps", "_inner"]
    assert HelperLibrary not in optimised and len(optimised) >= 1  # the kernel's
    for library in libraries:
        assert type(library) is HelperLibrary
        assert_runs_none_of_its_own_code(library)


def assert_runs_none_of_its_own_code(library):
    """The functions ``library`` hands to the JIT linker are internal (a caller's copy of
    one cannot bind to them), those callers link in are exported ``linkonce_odr`` copies."""
    defined = [f for f in library._final_module.functions if not f.is_declaration]
    assert defined and {f.linkage.name for f in defined} == {"internal"}
    linked = {f.name: f.linkage.name for f in library._get_module_for_linking().functions
              if not f.is_declaration}
    assert set(linked) == {f.name for f in defined}
    assert "linkonce_odr" in linked.values() and "external" not in linked.values()


def test_register_jitable_keeps_the_function_and_takes_numbas_forms():
    """``@register_jitable``, ``@register_jitable(**options)`` and
    ``register_jitable(function)`` return the Python function itself."""
    def f(x):
        return x + 1

    assert register_jitable(f) is f
    assert register_jitable(forceinline=True)(f) is f
    assert register_jitable(_nrt=False, inline="never")(f) is f


def test_every_helper_of_the_package_is_made_here():
    """No module of gpurules registers a compiled helper with Numba's own
    ``register_jitable`` or ``overload`` (whose CPU code would be optimised again at every
    level that calls it), except ``overload(..., inline="always")``, whose implementation
    Numba inlines as IR (no library)."""
    offending = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == Path(helpers.__file__):
            continue
        text = path.read_text()
        for match in re.finditer(r"^from numba(?:\.core)?\.extending import (.*)$", text,
                                 re.M):
            names = {name.strip() for name in match.group(1).split(",")}
            if "register_jitable" in names:
                offending.append(f"{path.name}: register_jitable")
            if "overload" in names:
                uses = re.findall(r"^@overload\((.*)\)$", text, re.M)
                offending += [f"{path.name}: @overload({use})" for use in uses
                              if 'inline="always"' not in use]
    assert not offending
