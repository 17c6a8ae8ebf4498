"""The CUDA C sources of ``kernels/`` (installed as ``gpurules.kernels``) and their options.

An installed gpurules (wheel, ``pip install``, ``pip install -e``) has the sources as the
package ``gpurules.kernels``: setuptools maps the repository's ``kernels/`` to it. A
checkout used without an install (``PYTHONPATH=<checkout>``, as on the GPU machine) has no
such package; the sources are then read from ``<checkout>/kernels`` beside the package.

Importing this module touches neither CuPy nor a GPU.
"""

from importlib import resources
from pathlib import Path

# Options the backend passes to ``cupy.RawModule``; CuPy adds ``-arch=sm_XX`` (a cubin for
# the current device) and ``-ftz=true`` itself. The NVRTC test compiles with all of them.
RAW_MODULE_OPTIONS = ("--std=c++17",)
CUPY_ADDED_OPTIONS = ("-ftz=true",)

# The oldest compute capability the kernels are built for: the oldest that CUDA 13's NVRTC
# still targets (CUDA 12's goes down to 5.0); the NVRTC gate compiles for it and for sm_90.
MIN_COMPUTE_CAPABILITY = (7, 5)

HISTOGRAM_SOURCE = "histogram.cu"
HISTOGRAM_KERNELS = ("zero_histograms", "histogram_shared", "histogram_global",
                     "histogram_global_by_slot", "histogram_sorted", "pack_sorted")

# <checkout>/kernels: gpurules/backends/cuda/sources.py -> parents[3] is the checkout
CHECKOUT_KERNELS = Path(__file__).resolve().parents[3] / "kernels"


def kernel_dir():
    """Where the ``.cu`` sources are: the package ``gpurules.kernels`` if it is installed,
    else ``kernels/`` of the checkout this module lies in (a Traversable or Path).

    Raises:
        FileNotFoundError: neither exists (a broken install).
    """
    try:
        return resources.files("gpurules.kernels")
    except ModuleNotFoundError:
        pass
    if (CHECKOUT_KERNELS / HISTOGRAM_SOURCE).is_file():
        return CHECKOUT_KERNELS
    raise FileNotFoundError(
        f"the CUDA kernel sources are missing: gpurules.kernels is not installed and "
        f"{CHECKOUT_KERNELS} has no {HISTOGRAM_SOURCE}; reinstall gpurules")


def kernel_source(name):
    """The text of ``kernels/<name>`` (str)."""
    return (kernel_dir() / name).read_text(encoding="utf-8")
