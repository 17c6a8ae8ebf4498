"""The CPU backend (Numba)."""

from gpurules.backends.cpu.backend import CpuBackend

__all__ = ["CpuBackend"]
