"""The CUDA C sources of ``kernels/`` (installed as ``gpurules.kernels``) and their options.

Importing this module touches neither CuPy nor a GPU.
"""

from importlib import resources

# Options the backend passes to ``cupy.RawModule``; CuPy adds ``-arch=sm_XX`` (a cubin for
# the current device) and ``-ftz=true`` itself. The NVRTC test compiles with all of them.
RAW_MODULE_OPTIONS = ("--std=c++17",)
CUPY_ADDED_OPTIONS = ("-ftz=true",)

HISTOGRAM_SOURCE = "histogram.cu"
HISTOGRAM_KERNELS = ("zero_histograms", "histogram_shared", "histogram_global")


def kernel_source(name):
    """The text of ``kernels/<name>`` (str)."""
    return (resources.files("gpurules.kernels") / name).read_text(encoding="utf-8")
