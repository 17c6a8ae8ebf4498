"""The ``gpurules`` command line (``gpurules fit | evaluate | predict``; ``python -m
gpurules``): see ``gpurules.cli.main`` for the parser and exit codes, ``inputs`` for the
file formats and ``--labels``, ``params`` for ``--learner``/``--param``, ``results`` for
the metrics and output files."""

from gpurules.cli.main import main

__all__ = ["main"]
