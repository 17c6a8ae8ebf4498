"""Loading multi-label ARFF files (MULAN / MEKA conventions) into a ``Dataset``.

Parser choice: the data and the attribute types are parsed by ``liac-arff`` (``import arff``,
a dependency of the project). It reads every file of the shared MULAN collection, dense and
sparse, including the quoted ``medical`` header, and fast enough: ``tmc2007-500-train.arff``
(21519 x 522, sparse) parses in about 0.5 s and ``bibtex-train.arff`` (4880 x 1995) in about
0.5 s with ``return_type=arff.COO``. What it lacks is added here by a light pass over the lines:

- it keeps backslash escapes in quoted attribute names (``'it\\'s'`` stays ``it\\'s``), so the
  names are taken from the header lines and unquoted here;
- its COO output drops trailing empty rows (``{}``), so the data rows are counted here;
- its COO mode rejects dense rows, so files mixing dense and sparse rows use its dense mode;
- its errors name neither the file nor the attribute, so they are translated into
  ``ValueError`` messages that do (missing ``@data``, unsupported attribute type, wrong number
  of values in a row, sparse index out of range, undeclared nominal value, ...).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import arff as liac_arff
import numpy as np
import scipy.sparse as sp

from gpurules.datasets.labels import find_label_file, label_indices, read_label_xml

_NAME = r"""('(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|[^\s{]+)"""
_ATTRIBUTE_LINE = re.compile(r"@attribute\s+" + _NAME + r"\s*(.*)$", re.IGNORECASE)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_SUPPORTED_TYPES = "numeric, real, integer or nominal {v1,v2,...}"


@dataclass(frozen=True, eq=False)
class Dataset:
    """A multi-label dataset: features, binary labels and their metadata.

    Attributes:
        X: features, float32, shape (n_examples, n_features). A dense ``np.ndarray`` with NaN
            for missing values, or a ``scipy.sparse.csr_matrix`` (float32; omitted entries are
            0, missing values are stored NaN) for sparse ARFF files. A nominal feature holds
            the code ``v`` (0, 1, ..., m-1) of its value ``nominal_values[column][v]``.
        Y: labels, uint8 0/1 ``np.ndarray`` of shape (n_examples, n_labels), columns in the
            order of the label attributes in the file.
        feature_names: n_features attribute names (escapes removed), in column order of X.
        label_names: n_labels attribute names, in column order of Y.
        nominal_features: sorted column indices into X of the nominal features.
        nominal_values: column index -> the declared value strings, in declaration order.
        name: the ``@relation`` name.
    """

    X: np.ndarray | sp.csr_matrix
    Y: np.ndarray
    feature_names: list[str]
    label_names: list[str]
    nominal_features: list[int]
    nominal_values: dict[int, list[str]]
    name: str

    @property
    def n_examples(self) -> int:
        """Number of examples (rows of X and Y)."""
        return self.Y.shape[0]

    @property
    def n_features(self) -> int:
        """Number of features (columns of X)."""
        return self.X.shape[1]

    @property
    def n_labels(self) -> int:
        """Number of labels (columns of Y)."""
        return self.Y.shape[1]

    def __repr__(self) -> str:
        kind = "sparse CSR" if sp.issparse(self.X) else "dense"
        return (
            f"Dataset(name={self.name!r}, n_examples={self.n_examples}, "
            f"n_features={self.n_features} ({kind}, {len(self.nominal_features)} nominal), "
            f"n_labels={self.n_labels})"
        )


def load_arff(path, label_file=None, sparse: bool | None = None, label_count: int | None = None,
              label_names: list[str] | None = None) -> Dataset:
    """Load a multi-label ARFF file.

    Labels are the attributes named by the MULAN label file: ``label_file`` if given, else
    ``<stem>.xml`` beside the ARFF file, else ``<stem>.xml`` with a ``-train``/``-test``
    suffix removed (``emotions-train.arff`` -> ``emotions.xml``). Without an xml file the
    MEKA option ``-C n`` in ``@relation`` decides (first ``n`` attributes, or last ``|n|``
    if negative). Labels must be nominal ``{0,1}`` or numeric 0/1.

    Args:
        path: the ARFF file.
        label_file: a MULAN xml label file that overrides the lookup.
        sparse: None -> X is CSR for sparse ARFF files (``{i v, ...}`` rows), dense otherwise;
            True -> always CSR; False -> always a dense ndarray.
        label_count: the labels by number, as MEKA's ``-C n`` counts them (the first n
            attributes if n > 0, the last |n| if n < 0); overrides the lookup.
        label_names: the label attributes by name (as a label file would list them);
            overrides the lookup.

    Returns:
        A ``Dataset`` (X float32 (n, A), Y uint8 (n, K); see ``Dataset``).

    Raises:
        ValueError: malformed ARFF or label file, unsupported attribute types (string, date),
            labels that cannot be found or are not binary. The message names the file.
    """
    path = Path(path)
    text = _read_text(path)
    xml_labels = label_names
    if label_count is None and label_names is None:
        xml_path = Path(label_file) if label_file is not None else find_label_file(path)
        if xml_path is not None:
            xml_labels = read_label_xml(_read_text(xml_path), str(xml_path))
    return parse_arff(text, str(path), xml_labels=xml_labels, sparse=sparse,
                      label_count=label_count)


def parse_arff(
    text: str, source: str, xml_labels: list[str] | None = None, sparse: bool | None = None,
    label_count: int | None = None,
) -> Dataset:
    """Parse the text of an ARFF file; ``source`` names it in error messages.

    ``xml_labels`` are the label names from a MULAN label file (None: use MEKA ``-C``);
    ``sparse`` and ``label_count`` as in ``load_arff``.
    """
    if sparse not in (None, True, False):
        raise ValueError(f"sparse must be None, True or False, got {sparse!r}")
    lines = text.splitlines()
    names, n_rows, n_sparse_rows = _scan(lines, source)
    file_is_sparse = n_sparse_rows > 0
    coo = file_is_sparse and n_sparse_rows == n_rows
    decoded = _decode(lines, source, len(names), coo)
    attributes = _attributes(decoded["attributes"], names, source)
    labels = label_indices([a[0] for a in attributes], decoded["relation"], xml_labels, source,
                           label_count)
    label_set = set(labels)
    features = [i for i in range(len(attributes)) if i not in label_set]
    if coo:
        X, L = _split_coo(decoded["data"], n_rows, len(attributes), features, labels)
    else:
        X, L = _split_dense(decoded["data"], n_rows, len(attributes), features, labels)
    want_sparse = file_is_sparse if sparse is None else sparse
    return _make_dataset(X, L, attributes, features, labels, decoded["relation"], source,
                         want_sparse)


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _scan(lines: list[str], source: str) -> tuple[list[str | None], int, int]:
    """Check the layout; return raw-unquoted attribute names, data rows, sparse data rows.

    Header keywords followed by a tab are normalised in place (liac-arff wants a space).
    """
    names: list[str | None] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped[:1] != "@":
            continue
        lines[index] = stripped = re.sub(r"^(@\w+)\s+", r"\1 ", stripped)
        keyword = stripped.split(" ", 1)[0].lower()
        if keyword == "@data":
            break
        if keyword == "@attribute":
            match = _ATTRIBUTE_LINE.match(stripped)
            names.append(_unquote(match.group(1)) if match else None)
    else:
        raise ValueError(f"{source}: no @data section (the header must end with '@data')")
    rows = [row.lstrip() for row in lines[index + 1:]]
    _check_empty_values(lines, index + 1, source)
    rows = [row for row in rows if row and not row.startswith("%")]
    return names, len(rows), sum(1 for row in rows if row.startswith("{"))


def _check_empty_values(lines: list[str], first: int, source: str) -> None:
    """ValueError naming the line of a dense data row with an empty value (a row cut after
    a comma, or ``,,``): ARFF marks a missing value with ``?``, and liac-arff would read an
    empty one as missing without a word. Rows are split with the csv module only when a
    quick look finds an empty field outside quotes possible."""
    for number in range(first, len(lines)):
        row = lines[number].strip()
        if not row or row[0] in "%{":
            continue
        if not (row[0] == "," or row[-1] == "," or ",," in row.replace(" ", "")):
            continue
        values = next(csv.reader([row], quotechar="'", skipinitialspace=True))
        if any(value.strip() == "" for value in values):
            raise ValueError(f"{source}, line {number + 1}: empty value in a data row (a row "
                             f"cut short, or two commas in a row; write '?' for a missing "
                             f"value): {row[:100]!r}")


def _unquote(token: str) -> str:
    """An attribute name token without its quotes and with backslash escapes resolved."""
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        token = token[1:-1]
        return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), token)
    return token


def _decode(lines: list[str], source: str, n_attributes: int, coo: bool) -> dict:
    """Run liac-arff on the lines (nominal values encoded as codes); errors -> ValueError."""
    return_type = liac_arff.COO if coo else liac_arff.DENSE
    try:
        return liac_arff.ArffDecoder().decode(lines, encode_nominal=True, return_type=return_type)
    except liac_arff.BadAttributeType as exc:
        raise ValueError(_bad_type_message(lines, exc.line, source)) from exc
    except liac_arff.BadDataFormat as exc:
        raise ValueError(_bad_row_message(lines, exc.line, n_attributes, source)) from exc
    except liac_arff.ArffException as exc:
        raise ValueError(f"{source}: {exc}") from exc
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ValueError(f"{source}: cannot parse the ARFF file ({exc!r})") from exc


def _line(lines: list[str], number: int) -> str:
    return lines[number - 1].strip() if 0 < number <= len(lines) else ""


def _bad_type_message(lines: list[str], number: int, source: str) -> str:
    text = _line(lines, number)
    match = _ATTRIBUTE_LINE.match(text)
    if match is None:
        return f"{source}, line {number}: bad @attribute declaration: {text[:100]!r}"
    name, type_ = _unquote(match.group(1)), match.group(2).strip()
    return (
        f"{source}, line {number}: attribute {name!r} has unknown or unsupported type "
        f"{type_[:60]!r} (supported: {_SUPPORTED_TYPES})"
    )


def _bad_row_message(lines: list[str], number: int, n_attributes: int, source: str) -> str:
    row = _line(lines, number)
    prefix = f"{source}, line {number}"
    if row.startswith("{"):
        indices = [int(i) for i in re.findall(r"[{,]\s*(-?\d+)\s", row)]
        bad = [i for i in indices if not 0 <= i < n_attributes]
        if bad:
            return (f"{prefix}: sparse index {bad[0]} out of range, the file declares "
                    f"{n_attributes} attributes (indices 0..{n_attributes - 1})")
    else:
        n_values = len(next(csv.reader([row], quotechar="'", skipinitialspace=True)))
        if n_values != n_attributes:
            return (f"{prefix}: wrong number of values in a data row: {n_values} instead of "
                    f"{n_attributes} (one per attribute)")
    return f"{prefix}: malformed data row: {row[:100]!r}"


def _attributes(decoded: list, names: list[str | None], source: str) -> list[tuple]:
    """(name, type) per attribute: names from the header scan, types from liac-arff.

    A type is a list of value strings (nominal) or 'NUMERIC'/'REAL'/'INTEGER'.
    """
    if len(decoded) != len(names):
        raise ValueError(f"{source}: could not read the @attribute declarations consistently")
    attributes = []
    for (liac_name, type_), name in zip(decoded, names):
        name = name if name is not None else _unquote(liac_name)
        if type_ == "STRING":
            raise ValueError(
                f"{source}: attribute {name!r} has type string, which is not supported "
                f"(supported: {_SUPPORTED_TYPES})"
            )
        attributes.append((name, list(type_) if isinstance(type_, (list, tuple)) else type_))
    return attributes


def _column_maps(n_attributes: int, features: list[int], labels: list[int]) -> np.ndarray:
    """new_column (int64, shape (n_attributes,)): position of each attribute in X or in Y."""
    new_column = np.empty(n_attributes, dtype=np.int64)
    new_column[features] = np.arange(len(features))
    new_column[labels] = np.arange(len(labels))
    return new_column


def _split_coo(data: tuple, n_rows: int, n_attributes: int, features: list[int],
               labels: list[int]) -> tuple[sp.csr_matrix, np.ndarray]:
    """liac-arff COO triplets -> (X CSR float32 (n, F), label values float32 (n, K))."""
    values, rows, columns = data
    values = np.array(values, dtype=np.float32)  # None (missing) -> NaN
    rows = np.asarray(rows, dtype=np.int64)
    columns = np.asarray(columns, dtype=np.int64)
    is_label = np.zeros(n_attributes, dtype=bool)
    is_label[labels] = True
    new_column = _column_maps(n_attributes, features, labels)
    in_x = ~is_label[columns]
    X = sp.csr_matrix(
        (values[in_x], (rows[in_x], new_column[columns[in_x]])),
        shape=(n_rows, len(features)), dtype=np.float32,
    )
    X.eliminate_zeros()
    X.sort_indices()
    L = np.zeros((n_rows, len(labels)), dtype=np.float32)
    L[rows[~in_x], new_column[columns[~in_x]]] = values[~in_x]
    return X, L


def _split_dense(data: list, n_rows: int, n_attributes: int, features: list[int],
                 labels: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """liac-arff rows -> (X float32 (n, F) with NaN = missing, label values float32 (n, K))."""
    matrix = np.array(data, dtype=np.float32).reshape(n_rows, n_attributes)
    return np.ascontiguousarray(matrix[:, features]), np.ascontiguousarray(matrix[:, labels])


def _make_dataset(X, L: np.ndarray, attributes: list[tuple], features: list[int],
                  labels: list[int], relation: str, source: str, want_sparse: bool) -> Dataset:
    Y = _binary_labels(L, [attributes[i] for i in labels], source)
    nominal = [j for j, i in enumerate(features) if isinstance(attributes[i][1], list)]
    if want_sparse and not sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float32)
    elif not want_sparse and sp.issparse(X):
        X = X.toarray()
    return Dataset(
        X=X,
        Y=Y,
        feature_names=[attributes[i][0] for i in features],
        label_names=[attributes[i][0] for i in labels],
        nominal_features=nominal,
        nominal_values={j: list(attributes[features[j]][1]) for j in nominal},
        name=relation,
    )


def _binary_labels(L: np.ndarray, label_attributes: list[tuple], source: str) -> np.ndarray:
    """Label values (codes for nominal labels) float32 (n, K) -> uint8 0/1 (n, K)."""
    Y = np.empty(L.shape, dtype=np.uint8)
    for k, (name, type_) in enumerate(label_attributes):
        column = L[:, k]
        if np.isnan(column).any():
            raise ValueError(f"{source}: label {name!r} has missing values ('?'); "
                             "labels must be 0 or 1")
        if isinstance(type_, list):
            column = _nominal_label_table(name, type_, source)[column.astype(np.int64)]
        elif not np.isin(column, (0.0, 1.0)).all():
            bad = column[~np.isin(column, (0.0, 1.0))][0]
            raise ValueError(f"{source}: label {name!r} is not binary: it holds the value "
                             f"{bad:g}, labels must be 0 or 1")
        Y[:, k] = column
    return Y


def _nominal_label_table(name: str, values: list[str], source: str) -> np.ndarray:
    """uint8 array: code -> 0/1 for a nominal label declared with values '0' and/or '1'."""
    table = []
    for value in values:
        try:
            number = float(value)
        except ValueError:
            number = None
        if number not in (0.0, 1.0):
            raise ValueError(
                f"{source}: label {name!r} is not binary: it declares the values "
                f"{{{','.join(values)}}}, labels must be nominal {{0,1}} or numeric 0/1"
            )
        table.append(int(number))
    return np.asarray(table, dtype=np.uint8)
