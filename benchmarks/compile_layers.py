"""What a first fit compiles, function by function: Numba's own time and LLVM's per library.

Each compiled function is a library that LLVM optimises and emits as machine code with
everything it calls linked in, so code deep in a chain (the quality functions, the
per-feature search) is optimised again at every level that calls it (docs/benchmarks.md,
session 38). This script makes that visible in one command: one fit in a fresh process with
an empty Numba cache and ``NUMBA_LLVM_PASS_TIMINGS=1``, then per function:

- ``excl CPU s``: process CPU time of its compile without the compiles it triggered
  (Numba's ``numba:compile`` events), summed over its signatures;
- ``LLVM opt s`` and ``LLVM emit s``: LLVM's passes over its library (function and module
  passes) and the emission of its machine code, summed over its signatures.

    .venv/bin/python benchmarks/compile_layers.py
    .venv/bin/python benchmarks/compile_layers.py --param loss=logistic-non-decomposable \\
        --param feature_format=sparse --top 20

The data: ``make_multilabel_classification(--n, 10 features, 4 labels)``, ``--rules`` rules,
``random_state=0``. CPU times: run it alone.
"""

import argparse
import collections
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

CHILD = "GPURULES_COMPILE_LAYERS_CHILD"


def _child(args):
    """Fit once (compiling everything) and print the figures as JSON."""
    import numpy as np
    from numba.core import event
    from numba.core.registry import CPUDispatcher
    from sklearn.datasets import make_multilabel_classification

    from gpurules import BoomerClassifier

    stack, excl = [], collections.Counter()

    class Compiles(event.Listener):
        def on_start(self, ev):
            stack.append([time.process_time(), 0.0])

        def on_end(self, ev):
            start, children = stack.pop()
            spent = time.process_time() - start
            if stack:
                stack[-1][1] += spent
            func = getattr(ev.data["dispatcher"], "py_func", None)
            name = f"{func.__module__}.{func.__qualname__}" if func else "?"
            excl[name] += spent - children

    X, Y = make_multilabel_classification(args.n, 10, n_classes=4, random_state=0)
    clf = BoomerClassifier(**{"max_rules": args.rules, "random_state": 0,
                              **C.parse_params(args.param)})
    with event.install_listener("numba:compile", Compiles()):
        start = time.process_time()
        clf.fit(X.astype(np.float32), Y)
        fit_cpu = time.process_time() - start
    llvm = collections.defaultdict(lambda: [0.0, 0.0])
    for obj in gc.get_objects():
        if isinstance(obj, CPUDispatcher):
            name = f"{obj.py_func.__module__}.{obj.py_func.__qualname__}"
            for sig in obj.signatures:
                for record in obj.get_metadata(sig).get("llvm_pass_timings") or ():
                    emit = record.name == "Finalize object"
                    llvm[name][emit] += record.timings.get_total_time()
    print(json.dumps({"fit_cpu": fit_cpu, "excl": excl, "llvm": llvm}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a BoomerClassifier parameter (repeatable; numbers parsed)")
    p.add_argument("--n", type=int, default=200, help="examples (default 200)")
    p.add_argument("--rules", type=int, default=20, help="max_rules (default 20)")
    p.add_argument("--top", type=int, default=15, help="rows of the table (default 15)")
    args = p.parse_args()
    if os.environ.get(CHILD):
        return _child(args)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, NUMBA_LLVM_PASS_TIMINGS="1",
                   **{CHILD: "1"})
        child = subprocess.run([sys.executable, *sys.argv], env=env, capture_output=True,
                               text=True)
    if child.returncode:
        sys.exit(f"the fit failed:\n{child.stderr[-3000:]}")
    out = child.stdout
    result = json.loads(out.strip().splitlines()[-1])
    excl, llvm = result["excl"], result["llvm"]
    opt_total = sum(o for o, _ in llvm.values())
    emit_total = sum(e for _, e in llvm.values())
    print(f"first fit {result['fit_cpu']:.1f} CPU-s; compiles {sum(excl.values()):.1f} CPU-s "
          f"(exclusive, summed); LLVM {opt_total:.1f} s optimising and {emit_total:.1f} s "
          f"emitting ({', '.join(args.param) or 'defaults'})")
    print("| function | excl CPU s | LLVM opt s | LLVM emit s |\n|---|---:|---:|---:|")
    for name in sorted(excl, key=excl.get, reverse=True)[:args.top]:
        opt, emit = llvm.get(name, (0.0, 0.0))
        print(f"| `{name}` | {excl[name]:.2f} | {opt:.2f} | {emit:.2f} |")


if __name__ == "__main__":
    main()
