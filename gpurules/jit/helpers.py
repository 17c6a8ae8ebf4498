"""The package's compiled helpers: :func:`register_jitable` and :func:`overload`, Numba's
own with one difference on the CPU, that a helper's code is optimised by LLVM's module
passes once, in the kernel that calls it, instead of once more at every level above it.

Why. Numba compiles each function, a helper made by ``register_jitable`` or ``@overload``
included, into a code library: function passes over its own IR, then everything it calls
linked in, then LLVM's module passes (inlining, loop and vector passes) over the whole, then
machine code. The library above it links in that optimised whole and runs the module passes
over all of it again. A helper deep in the search (``_consider``, a multi-output head's
side, a quality function) is therefore optimised at every level of the chain: rule loop →
refinement → per-feature search → quality → head. Most of a heavy first fit's compiling is
those repeated passes (a complete head with label bins: LLVM spent 38.6 s in module passes,
18.0 s emitting, 5.5 s in function passes; docs/benchmarks.md, session 65).

What differs. On the CPU target, a helper's implementation is compiled by
:class:`HelperCompiler`, whose library (:class:`HelperLibrary`) skips the module passes: the
kernel that links the helper in (an ``njit`` kernel, which keeps Numba's full pipeline) runs
them over the helper's code with its own (one round instead of one per level: the models
are the same, non-decomposable and sparse warm fits ran 7-12 % faster, the default fit's
likely a few percent slower; docs/benchmarks.md, session 65). A helper is never called from
Python as compiled code (``register_jitable`` leaves the Python function as it was; an
``@overload`` replaces a Python function only inside compiled code), so no machine code that
runs lacks the module passes. Other targets (numba-cuda's device functions) get Numba's own
``overload``, registered for the generic target as before; Numba prefers the CPU
registration on the CPU. Nothing process-wide changes: a user's own Numba code compiles as
it always did.
"""

from numba.core import codegen
from numba.core.compiler import Compiler
from numba.extending import overload as _numba_overload

__all__ = ["HelperCompiler", "HelperLibrary", "overload", "register_jitable"]


class HelperLibrary(codegen.JITCodeLibrary):
    """A CPU code library whose finalisation runs no module passes (module docstring): its
    function-optimised IR is what callers link in and optimise.

    Its own machine code must then never run. Numba gives each library's functions to the
    process's JIT linker, and a caller's copy of a function it did not inline (linked in as
    ``linkonce_odr``) binds to a definition the linker already holds: the caller would call
    this library's unoptimised code. (Measured: a non-decomposable complete-head fit on
    scene ran 123 s instead of 80 in the process that compiled it, 45 s loaded from the
    disk cache.) So the module handed to the linker keeps its functions internal, and the
    module callers link in (:meth:`_get_module_for_linking`) is a copy made before."""

    def _optimize_final_module(self):
        pass

    def _finalize_final_module(self):
        self._shared_module = _module_for_linking(self._final_module)
        for function in self._final_module.functions:
            if not function.is_declaration:
                function.linkage = "internal"
        super()._finalize_final_module()


def _module_for_linking(module):
    """A copy of the llvmlite ``module`` whose exported functions are ``linkonce_odr``, as
    Numba's ``CPUCodeLibrary._get_module_for_linking`` makes it."""
    linkable = module.clone()
    for function in linkable.functions:
        if not function.is_declaration and function.linkage == codegen.ll.Linkage.external:
            function.linkage = "linkonce_odr"
    return linkable


class HelperCompiler(Compiler):
    """Numba's default pipeline, its code library a :class:`HelperLibrary` (passed to
    ``jit`` as ``pipeline_class``)."""

    def compile_extra(self, func):
        if self.state.library is None:
            library = HelperLibrary(self.state.targetctx.codegen(), func.__qualname__)
            library.enable_object_caching()  # as Numba's lowering does for its own
            self.state.library = library
        return super().compile_extra(func)


def overload(func, jit_options=None, **kwargs):
    """``numba.extending.overload(func, jit_options, **kwargs)``, its CPU implementations
    compiled by :class:`HelperCompiler` (module docstring). Returns the decorator."""
    options = dict(jit_options or {})

    def decorate(overload_func):
        _numba_overload(func, jit_options=dict(options, pipeline_class=HelperCompiler),
                        target="cpu", **kwargs)(overload_func)
        return _numba_overload(func, jit_options=options, **kwargs)(overload_func)

    return decorate


def register_jitable(*args, **options):
    """``numba.extending.register_jitable``: ``@register_jitable`` or
    ``@register_jitable(**jit_options)`` on a Python function makes it callable from
    compiled code, its CPU form compiled by :class:`HelperCompiler`; returns the function
    unchanged."""
    def wrap(fn):
        inline = options.pop("inline", "never")

        @overload(fn, jit_options=options, inline=inline, strict=False)
        def implementation(*args, **kwargs):
            return fn

        return fn

    return wrap if options or not args else wrap(*args)
