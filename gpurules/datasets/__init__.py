"""Multi-label ARFF loading (MULAN xml labels, MEKA ``-C``) and bundled example data.

>>> from gpurules.datasets import load_arff, load_example
>>> ds = load_example("emotions")          # X float32 (391, 72), Y uint8 (391, 6)
>>> ds = load_arff("medical-train.arff")   # labels from medical.xml; X sparse CSR float32
"""

from gpurules.datasets.arff import Dataset, load_arff
from gpurules.datasets.examples import load_example

__all__ = ["Dataset", "load_arff", "load_example"]
