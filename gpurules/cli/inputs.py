"""The data files of the command line: ARFF (MULAN / MEKA), CSV and LibSVM/SVMlight.

Every reader returns a :class:`Table`; the learners take their targets from it with
:func:`multi_label_targets` (BOOMER, SeCo) or :func:`class_targets` (TURS). Problems with a
file raise ``ValueError`` with a one-line message naming it, which the CLI prints as is.

``--labels`` (:func:`parse_label_spec`) says which columns are labels:

* ``file.xml`` — a MULAN label file (ARFF only);
* ``N`` (a positive int) — the last N columns / attributes;
* ``a,b,c`` — the columns / attributes of those names;
* omitted — ARFF: the MULAN file beside the data file (``emotions.xml`` for
  ``emotions-train.arff``), else the MEKA ``-C n`` option of ``@relation``; CSV: the last
  column (in ``predict``: none when the file has exactly the model's number of feature
  columns); LibSVM: the labels in the file (``--labels`` is refused).

CSV files have a header row of column names, are comma-separated, hold numbers in the
feature columns (an empty cell, ``?`` or ``nan`` is a missing value) and 0/1 in the label
columns (for TURS: any class values in one column, or one-hot 0/1 columns).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from gpurules.datasets import load_arff

FORMATS = {".arff": "arff", ".csv": "csv", ".svm": "libsvm", ".libsvm": "libsvm",
           ".svmlight": "libsvm"}
FORMAT_NAMES = ("arff", "csv", "libsvm")
_MISSING = ("", "?", "nan", "NaN", "NA")


@dataclass(frozen=True, eq=False)
class Table:
    """Features and labels read from one file.

    Attributes:
        X: float32 ndarray (n, A) with NaN for missing values, or a scipy CSR matrix.
        Y: (n, K) labels: uint8 0/1, or an object array of the raw values of CSV label
            columns that are not all 0/1 (class values, for TURS).
        feature_names, label_names: lists of str (feature_names None: not in the file).
        nominal_features: column indices of X that are nominal (ARFF).
        nominal_values: {column: value names} (ARFF).
        source: the file, for messages.
    """

    X: np.ndarray | sp.csr_matrix
    Y: np.ndarray
    feature_names: list[str] | None
    label_names: list[str]
    nominal_features: list[int]
    nominal_values: dict[int, list[str]]
    source: str

    def rows(self, index) -> Table:
        """The table of the rows ``index`` (int array)."""
        return replace(self, X=self.X[index], Y=self.Y[index])


def detect_format(path: str, name: str | None = None) -> str:
    """``name`` if given, else the format of ``path``'s extension (ValueError if unknown)."""
    if name is not None:
        return name
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise ValueError(f"{path}: cannot tell the format from the extension {suffix!r} "
                         f"(known: {known}); pass --format {{{','.join(FORMAT_NAMES)}}}")
    return FORMATS[suffix]


def parse_label_spec(spec: str | None):
    """``--labels`` as None, an int N >= 1 (the last N columns), a ``Path`` (a MULAN xml
    file) or a list of column names."""
    if spec is None:
        return None
    spec = spec.strip()
    if spec.lower().endswith(".xml"):
        return Path(spec)
    if re.fullmatch(r"[+-]?\d+", spec):
        count = int(spec)
        if count < 1:
            raise ValueError(f"--labels {spec}: a label count must be >= 1 (the last N "
                             f"columns are the labels)")
        return count
    names = [name.strip() for name in spec.split(",")]
    if not all(names):
        raise ValueError(f"--labels {spec!r}: an empty column name")
    return names


def read_tables(paths: list[str], fmt: str | None = None, labels=None,
                n_features: int | None = None) -> list[Table]:
    """Read the data files ``paths`` (one format for all: ``fmt`` or the extension of the
    first). LibSVM files are read together, so they share the feature count, the index
    base and the label set; ``n_features``: the model's, in ``predict``."""
    for path in paths:
        if not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
    fmt = detect_format(paths[0], fmt)
    if fmt == "libsvm":
        return read_libsvm(paths, labels, n_features)
    reader = read_arff if fmt == "arff" else read_csv
    return [reader(path, labels, n_features) for path in paths]


def read_arff(path: str, labels=None, n_features: int | None = None) -> Table:
    """An ARFF file through :func:`gpurules.datasets.load_arff` (``--labels`` as the
    label file, the count of the last attributes, or their names)."""
    options = {}
    if isinstance(labels, Path):
        if not labels.is_file():
            raise ValueError(f"{labels}: no such file (the MULAN label file of --labels)")
        options["label_file"] = labels
    elif isinstance(labels, int):
        options["label_count"] = -labels
    elif labels is not None:
        options["label_names"] = labels
    ds = load_arff(path, **options)
    return Table(ds.X, ds.Y, ds.feature_names, ds.label_names, ds.nominal_features,
                 ds.nominal_values, str(path))


def read_csv(path: str, labels=None, n_features: int | None = None) -> Table:
    """A CSV file with a header row (see the module docstring for the conventions)."""
    if isinstance(labels, Path):
        raise ValueError(f"--labels {labels}: a MULAN label file names ARFF attributes; "
                         f"for CSV give a count (the last N columns) or column names")
    header, body = _csv_rows(path)
    label_columns = _csv_label_columns(header, labels, n_features, path)
    feature_columns = [j for j in range(len(header)) if j not in set(label_columns)]
    X = np.empty((len(body), len(feature_columns)), dtype=np.float32)
    for out, j in enumerate(feature_columns):
        X[:, out] = _numbers(body, j, header[j], path)
    return Table(X, _csv_labels(body, label_columns), [header[j] for j in feature_columns],
                 [header[j] for j in label_columns], [], {}, str(path))


def _csv_rows(path: str) -> tuple[list[str], list[list[str]]]:
    """(header, data rows) of a CSV file; blank lines are skipped."""
    with open(path, newline="", encoding="utf-8-sig") as file:
        try:
            rows = [(number, row) for number, row in enumerate(csv.reader(file), 1) if row]
        except (csv.Error, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not a readable CSV file ({exc})") from None
    if len(rows) < 2:
        raise ValueError(f"{path}: a CSV file needs a header row and at least one data row")
    header = [name.strip() for name in rows[0][1]]
    for number, row in rows[1:]:
        if len(row) != len(header):
            raise ValueError(f"{path}, line {number}: {len(row)} values instead of "
                             f"{len(header)} (one per header column)")
    return header, [row for _, row in rows[1:]]


def _csv_label_columns(header: list[str], labels, n_features: int | None,
                       path: str) -> list[int]:
    """The indices of the label columns of a CSV header (``--labels`` as parsed)."""
    if isinstance(labels, list):
        missing = [name for name in labels if name not in header]
        if missing:
            shown = ", ".join(header[:10]) + (", ..." if len(header) > 10 else "")
            raise ValueError(f"{path}: no column named {missing[0]!r} (--labels); the "
                             f"columns are: {shown}")
        return [header.index(name) for name in labels]
    if labels is None:
        labels = 0 if n_features is not None and len(header) == n_features else 1
    if labels >= len(header):
        raise ValueError(f"{path}: --labels {labels} asks for {labels} label columns but the "
                         f"file has only {len(header)} columns (at least one feature is "
                         f"needed)")
    return list(range(len(header) - labels, len(header)))


def _numbers(body: list[list[str]], column: int, name: str, path: str) -> np.ndarray:
    """float64 values of one CSV column; a missing value is NaN (ValueError for text, and
    for infinity or a value beyond float32's range, in which features are stored)."""
    values = [row[column].strip() for row in body]
    values = ["nan" if value in _MISSING else value for value in values]
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except ValueError:
        for line, value in enumerate(values, 2):
            try:
                float(value)
            except ValueError:
                raise ValueError(f"{path}: column {name!r} holds {value!r} (data row "
                                 f"{line - 1}); feature columns must be numbers (nominal "
                                 f"features: use ARFF)") from None
        raise
    big = np.flatnonzero(np.abs(numbers) > np.finfo(np.float32).max)  # (inf too, NaN not)
    if big.size:
        raise ValueError(f"{path}: column {name!r} holds {values[big[0]]!r} (data row "
                         f"{big[0] + 1}), beyond the float32 range (|x| <= "
                         f"{np.finfo(np.float32).max:.4g}) in which features are stored")
    return numbers


def _csv_labels(body: list[list[str]], columns: list[int]) -> np.ndarray:
    """(n, K) labels: uint8 when every value is 0 or 1, else the strings (object)."""
    raw = np.array([[row[j].strip() for j in columns] for row in body], dtype=object)
    raw = raw.reshape(len(body), len(columns))
    binary = np.isin(raw, ("0", "1", "0.0", "1.0"))
    if binary.all():
        return np.isin(raw, ("1", "1.0")).astype(np.uint8)
    return raw


def read_libsvm(paths: list[str], labels=None, n_features: int | None = None) -> list[Table]:
    """LibSVM/SVMlight multi-label files (``1,5 3:0.5 7:1``), read together; labels are
    the values that occur in any of them, sorted."""
    from sklearn.datasets import load_svmlight_files

    if labels is not None:
        raise ValueError("--labels does not apply to LibSVM files: their labels are the "
                         "comma-separated values that start each line")
    try:
        loaded = load_svmlight_files(paths, multilabel=True, n_features=n_features,
                                     dtype=np.float32)
    except (ValueError, TypeError, OSError) as exc:
        raise ValueError(f"{', '.join(paths)}: not a readable LibSVM/SVMlight file "
                         f"({exc})") from None
    pairs = list(zip(loaded[0::2], loaded[1::2]))
    classes = sorted({value for _, ys in pairs for row in ys for value in row})
    names = [f"{value:g}" for value in classes]
    position = {value: k for k, value in enumerate(classes)}
    tables = []
    for path, (X, ys) in zip(paths, pairs):
        Y = np.zeros((X.shape[0], len(classes)), dtype=np.uint8)
        for i, row in enumerate(ys):
            Y[i, [position[value] for value in row]] = 1
        tables.append(Table(X.tocsr(), Y, None, names, [], {}, str(path)))
    return tables


def multi_label_targets(table: Table) -> np.ndarray:
    """The uint8 (n, K) 0/1 label matrix of BOOMER and SeCo."""
    if table.Y.dtype == object:
        bad = table.Y[~np.isin(table.Y, ("0", "1", "0.0", "1.0"))][0]
        raise ValueError(f"{table.source}: a label column holds {bad!r}; BOOMER and SeCo "
                         f"need 0/1 labels (TURS takes class values in one column)")
    if table.Y.shape[1] == 0:
        raise ValueError(f"{table.source}: no label columns")
    return table.Y


def class_targets(table: Table) -> np.ndarray:
    """TURS's class per example: the one label column's values, or the name of the one
    relevant label of each row of one-hot 0/1 labels."""
    Y = table.Y
    if Y.shape[1] == 1:
        return Y[:, 0]
    if Y.dtype == object or Y.shape[1] == 0:
        raise ValueError(f"{table.source}: TURS learns one class per example: give one "
                         f"class column, or one-hot 0/1 label columns")
    counts = Y.sum(axis=1)
    bad = np.flatnonzero(counts != 1)
    if bad.size:
        raise ValueError(f"{table.source}: TURS learns one class per example, but example "
                         f"{bad[0]} has {counts[bad[0]]} relevant labels of {Y.shape[1]} "
                         f"(one-hot labels needed)")
    return np.asarray(table.label_names, dtype=object)[np.argmax(Y, axis=1)]


def check_same_labels(train: Table, test: Table) -> None:
    """ValueError unless the test file has the training file's labels."""
    if train.label_names != test.label_names:
        raise ValueError(f"{test.source}: its labels {test.label_names[:5]} differ from those "
                         f"of {train.source} {train.label_names[:5]}")
