"""The version of gpurules (``gpurules.__version__``), in a module of its own so that the
model files can record it without importing the package's face."""

__version__ = "0.1.0"
