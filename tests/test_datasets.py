"""Tests for gpurules.datasets: ARFF/MULAN loading and the bundled example data."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from gpurules.datasets import Dataset, load_arff, load_example

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
BUNDLED = Path(__file__).resolve().parents[1] / "gpurules" / "datasets" / "data"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"shared MULAN datasets not found at {SHARED}"
)

MULAN_NS = 'xmlns="http://mulan.sourceforge.net/labels"'


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def xml(*names: str) -> str:
    body = "".join(f'<label name="{n}"></label>' for n in names)
    return f'<?xml version="1.0" encoding="utf-8"?>\n<labels {MULAN_NS}>{body}</labels>\n'


def dense(X):
    return X.toarray() if sp.issparse(X) else X


# --- bundled example --------------------------------------------------------------------------


@pytest.mark.parametrize("split, n", [("train", 391), ("test", 202)])
def test_load_example_shapes_and_dtypes(split, n):
    ds = load_example("emotions", split=split)
    assert isinstance(ds, Dataset)
    assert isinstance(ds.X, np.ndarray) and ds.X.dtype == np.float32 and ds.X.shape == (n, 72)
    assert ds.Y.dtype == np.uint8 and ds.Y.shape == (n, 6)
    assert set(np.unique(ds.Y)) <= {0, 1}
    assert not np.isnan(ds.X).any()
    assert ds.label_names == ["amazed-suprised", "happy-pleased", "relaxing-calm",
                              "quiet-still", "sad-lonely", "angry-aggresive"]
    assert len(ds.feature_names) == 72 and ds.feature_names[0] == "Mean_Acc1298_Mean_Mem40_Centroid"
    assert ds.nominal_features == [] and ds.nominal_values == {}
    assert ds.name == "musicout"
    assert (ds.n_examples, ds.n_features, ds.n_labels) == (n, 72, 6)


def test_load_example_default_is_emotions_train():
    ds = load_example()
    assert ds.X.shape == (391, 72)
    assert abs(ds.Y.sum(axis=1).mean() - 1.813) < 1e-3


def test_load_example_unknown_name_or_split():
    with pytest.raises(ValueError, match="available: emotions"):
        load_example("nope")
    with pytest.raises(ValueError, match="train, test"):
        load_example("emotions", split="valid")


@needs_shared
@pytest.mark.parametrize("name", ["emotions-train.arff", "emotions-test.arff", "emotions.xml"])
def test_bundled_files_are_byte_copies(name):
    assert (BUNDLED / name).read_bytes() == (SHARED / name).read_bytes()


def test_dataset_is_frozen_and_repr_is_short():
    ds = load_example()
    with pytest.raises(AttributeError):
        ds.name = "x"
    assert "n_examples=391" in repr(ds) and len(repr(ds)) < 200


# --- the shared MULAN collection ----------------------------------------------------------------


@needs_shared
def test_medical_prefers_xml_over_stale_meka_header():
    ds = load_arff(SHARED / "medical-train.arff")
    assert "-C 45" in ds.name  # the stale MEKA option is there, and ignored
    assert sp.isspmatrix_csr(ds.X) and ds.X.dtype == np.float32
    assert ds.X.shape == (333, 1449) and ds.Y.shape == (333, 45)
    assert ds.label_names[0] == "Class-0-593_70"
    assert ds.feature_names[:3] == ["-", "/", "0"]
    assert ds.nominal_features == list(range(1449))
    assert ds.nominal_values[0] == ["0", "1"]
    header = [line.split()[1] for line in (SHARED / "medical-train.arff").read_text().splitlines()
              if line.lower().startswith("@attribute")]
    assert header[-45:] == ds.label_names and header[:1449] == ds.feature_names
    assert abs(ds.Y.sum(axis=1).mean() - 1.255) < 1e-3


@needs_shared
def test_medical_dense_on_request_matches_sparse():
    sparse = load_arff(SHARED / "medical-train.arff")
    forced = load_arff(SHARED / "medical-train.arff", sparse=False)
    assert isinstance(forced.X, np.ndarray) and forced.X.dtype == np.float32
    np.testing.assert_array_equal(forced.X, sparse.X.toarray())
    assert set(np.unique(forced.X)) == {0.0, 1.0}


@needs_shared
def test_enron_and_yeast():
    enron = load_arff(SHARED / "enron-train.arff")
    assert enron.Y.shape == (1123, 53) and sp.isspmatrix_csr(enron.X)
    assert enron.X.shape == (1123, 1001)
    yeast = load_arff(SHARED / "yeast-train.arff")
    assert isinstance(yeast.X, np.ndarray) and yeast.X.shape == (1500, 103)
    assert yeast.Y.shape == (1500, 14)
    assert yeast.label_names == [f"Class{i}" for i in range(1, 15)]  # file order, not xml order


@needs_shared
@pytest.mark.parametrize("name", ["emotions", "yeast", "medical", "enron"])
def test_train_and_test_headers_agree(name):
    train = load_arff(SHARED / f"{name}-train.arff")
    test = load_arff(SHARED / f"{name}-test.arff")
    assert train.feature_names == test.feature_names
    assert train.label_names == test.label_names
    assert train.nominal_values == test.nominal_values


# --- synthetic files: label conventions ---------------------------------------------------------

HEADER4 = "@attribute a numeric\n@attribute b numeric\n@attribute c {0,1}\n@attribute d {0,1}\n"


def test_meka_positive_c_takes_first_attributes(tmp_path):
    text = ("@relation 'toy: -C 2'\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n"
            "@attribute x numeric\n@attribute y {u,v}\n@data\n1,0,2.5,v\n0,1,?,u\n")
    ds = load_arff(write(tmp_path, "toy.arff", text))
    assert ds.label_names == ["l1", "l2"] and ds.feature_names == ["x", "y"]
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 1]])
    np.testing.assert_array_equal(ds.X, np.array([[2.5, 1], [np.nan, 0]], dtype=np.float32))
    assert ds.nominal_features == [1] and ds.nominal_values == {1: ["u", "v"]}


def test_meka_negative_c_takes_last_attributes(tmp_path):
    text = f"@relation 'toy: -C -2'\n{HEADER4}@data\n1,2,0,1\n3,4,1,1\n"
    ds = load_arff(write(tmp_path, "toy.arff", text))
    assert ds.label_names == ["c", "d"] and ds.feature_names == ["a", "b"]
    np.testing.assert_array_equal(ds.Y, [[0, 1], [1, 1]])
    assert ds.nominal_features == []


def test_label_count_and_label_names_override_xml_and_c(tmp_path):
    text = f"@relation 'toy: -C 2'\n{HEADER4}@data\n1,0,0,1\n0,1,1,1\n"
    path = write(tmp_path, "toy.arff", text)
    write(tmp_path, "toy.xml", xml("a", "b"))
    assert load_arff(path, label_count=-1).label_names == ["d"]
    assert load_arff(path, label_count=3).label_names == ["a", "b", "c"]
    assert load_arff(path, label_names=["c"]).label_names == ["c"]
    with pytest.raises(ValueError, match=r"toy.arff: the label count asks for 5 labels but "
                                         r"the file declares only 4 attributes"):
        load_arff(path, label_count=-5)
    with pytest.raises(ValueError, match=r"1 label\(s\) named as labels are not attributes.*'z'"):
        load_arff(path, label_names=["z"])


def test_xml_is_preferred_over_c_and_exact_stem_first(tmp_path):
    text = f"@relation 'toy: -C 2'\n{HEADER4}@data\n1,0,0,1\n0,1,1,1\n"
    path = write(tmp_path, "toy-train.arff", text)
    write(tmp_path, "toy.xml", xml("c", "d"))
    assert load_arff(path).label_names == ["c", "d"]
    write(tmp_path, "toy-train.xml", xml("b"))  # the exact stem wins over the stripped one
    ds = load_arff(path)
    assert ds.label_names == ["b"] and ds.feature_names == ["a", "c", "d"]
    assert ds.nominal_features == [1, 2]  # indices into X, not into the file's attributes
    override = load_arff(path, label_file=write(tmp_path, "other.xml", xml("a", "d")))
    assert override.label_names == ["a", "d"]
    np.testing.assert_array_equal(override.Y, [[1, 1], [0, 1]])


def test_escaped_quotes_in_names_match_the_xml(tmp_path):
    text = ("@relation r\n@attribute 'it\\'s' numeric\n@attribute \"say \\\"hi\\\"\" numeric\n"
            "@attribute 'lab\\'el one' {0,1}\n@data\n1,2,1\n")
    path = write(tmp_path, "q.arff", text)
    write(tmp_path, "q.xml", xml("lab&apos;el one"))
    ds = load_arff(path)
    assert ds.feature_names == ["it's", 'say "hi"']
    assert ds.label_names == ["lab'el one"]


def test_nested_label_hierarchy_in_xml(tmp_path):
    path = write(tmp_path, "h.arff", f"@relation h\n{HEADER4}@data\n1,2,0,1\n")
    nested = f'<labels {MULAN_NS}><label name="c"><label name="d"/></label></labels>'
    write(tmp_path, "h.xml", nested)
    assert load_arff(path).label_names == ["c", "d"]


def test_numeric_and_reversed_nominal_labels(tmp_path):
    text = ("@relation 'r -C -2'\n@attribute x real\n@attribute l1 integer\n"
            "@attribute l2 {1,0}\n@data\n0.5,1,0\n1.5,0,1\n")
    ds = load_arff(write(tmp_path, "r.arff", text))
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 1]])  # l2 code 0 means '1'


# --- synthetic files: values ---------------------------------------------------------------------


def test_missing_values_and_nominal_codes(tmp_path):
    text = ("% a comment\n@RELATION 'r: -C -1'\n\n@ATTRIBUTE num NUMERIC\n"
            "@attribute\tcolour\t{red, 'dark green', blue}\n@attribute lab {0,1}\n"
            "@DATA\n% another comment\n1.5, blue, 1\n?, 'dark green', 0\n\n-2, ?, 1\n")
    ds = load_arff(write(tmp_path, "m.arff", text))
    assert isinstance(ds.X, np.ndarray) and ds.X.dtype == np.float32
    np.testing.assert_array_equal(
        ds.X, np.array([[1.5, 2], [np.nan, 1], [-2, np.nan]], dtype=np.float32))
    assert ds.nominal_features == [1]
    assert ds.nominal_values == {1: ["red", "dark green", "blue"]}
    assert ds.feature_names == ["num", "colour"]
    np.testing.assert_array_equal(ds.Y[:, 0], [1, 0, 1])


def test_sparse_rows(tmp_path):
    text = ("@relation 's: -C -2'\n@attribute n numeric\n@attribute c {x,y,z}\n"
            "@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n"
            "{0 3.5, 1 z, 3 1}\n{1 ?}\n{0 0, 2 1}\n{}\n")
    path = write(tmp_path, "s.arff", text)
    ds = load_arff(path)
    assert sp.isspmatrix_csr(ds.X) and ds.X.dtype == np.float32 and ds.X.shape == (4, 2)
    expected = np.array([[3.5, 2], [0, np.nan], [0, 0], [0, 0]], dtype=np.float32)
    np.testing.assert_array_equal(ds.X.toarray(), expected)
    assert ds.X.nnz == 3  # explicit zeros are dropped, NaN is kept
    np.testing.assert_array_equal(ds.Y, [[0, 1], [0, 0], [1, 0], [0, 0]])
    assert ds.nominal_values == {1: ["x", "y", "z"]}
    np.testing.assert_array_equal(load_arff(path, sparse=False).X, expected)


def test_sparse_true_on_dense_file_and_mixed_rows(tmp_path):
    text = f"@relation 'd -C -2'\n{HEADER4}@data\n1,0,0,1\n{{1 2, 2 1}}\n"
    ds = load_arff(write(tmp_path, "d.arff", text))
    assert sp.isspmatrix_csr(ds.X)  # a sparse row makes the file sparse
    np.testing.assert_array_equal(ds.X.toarray(), [[1, 0], [0, 2]])
    np.testing.assert_array_equal(ds.Y, [[0, 1], [1, 0]])
    plain = write(tmp_path, "p.arff", f"@relation 'd -C -2'\n{HEADER4}@data\n1,0,0,1\n")
    forced = load_arff(plain, sparse=True)
    assert sp.isspmatrix_csr(forced.X) and forced.X.dtype == np.float32
    with pytest.raises(ValueError, match="sparse must be"):
        load_arff(plain, sparse="yes")


# --- malformed files ---------------------------------------------------------------------------

MALFORMED = {
    "no_data": ("@relation 'r -C 1'\n@attribute l {0,1}\n@attribute x numeric\n1,2\n",
                r"no @data"),
    "unknown_type": ("@relation 'r -C 1'\n@attribute l {0,1}\n@attribute weird foo\n@data\n",
                     r"line 3: attribute 'weird' has unknown or unsupported type 'foo'"),
    "date_type": ("@relation 'r -C 1'\n@attribute l {0,1}\n@attribute when date 'yyyy'\n@data\n",
                  r"attribute 'when' has unknown or unsupported type .date 'yyyy'"),
    "string_type": ("@relation 'r -C 1'\n@attribute l {0,1}\n@attribute s string\n@data\n1,ab\n",
                    r"attribute 's' has type string"),
    "row_too_short": ("@relation 'r -C 1'\n@attribute l {0,1}\n@attribute x numeric\n@data\n"
                      "1,2\n\n0\n", r"line 7: wrong number of values .*: 1 instead of 2"),
    "row_too_long": ("@relation 'r -C 1'\n@attribute l {0,1}\n@attribute x numeric\n@data\n"
                     "1,2,3\n", r"line 5: wrong number of values .*: 3 instead of 2"),
    "sparse_index": ("@relation 'r -C 1'\n@attribute l {0,1}\n@attribute x numeric\n@data\n"
                     "{1 2}\n{5 1}\n", r"line 6: sparse index 5 out of range"),
    "undeclared_nominal": ("@relation 'r -C 1'\n@attribute l {0,1}\n@attribute c {a,b}\n@data\n"
                           "1,a\n0,q\n", r"q not found in nominal declaration, at line 6"),
    "bad_number": ("@relation 'r -C 1'\n@attribute l {0,1}\n@attribute x numeric\n@data\n"
                   "1,abc\n", r"[Ii]nvalid numerical value, at line 5"),
    "nonbinary_nominal_label": ("@relation 'r -C 1'\n@attribute l {0,1,2}\n@attribute x numeric\n"
                                "@data\n1,2\n", r"label 'l' is not binary.*\{0,1,2\}"),
    "nonbinary_numeric_label": ("@relation 'r -C 1'\n@attribute l numeric\n@attribute x numeric\n"
                                "@data\n2,2\n", r"label 'l' is not binary.*value 2"),
    "missing_label": ("@relation 'r -C 1'\n@attribute l {0,1}\n@attribute x numeric\n@data\n"
                      "?,2\n", r"label 'l' has missing values"),
    "no_labels": ("@relation r\n@attribute l {0,1}\n@attribute x numeric\n@data\n1,2\n",
                  r"cannot tell which attributes are labels.*bad_no_labels\.xml"),
    "c_too_large": ("@relation 'r -C 5'\n@attribute l {0,1}\n@data\n1\n", r"asks for 5 labels"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_files_raise_value_error_naming_the_file(tmp_path, case):
    text, pattern = MALFORMED[case]
    path = write(tmp_path, f"bad_{case}.arff", text)
    with pytest.raises(ValueError) as info:
        load_arff(path)
    message = str(info.value)
    assert f"bad_{case}.arff" in message
    assert re.search(pattern, message), message


def test_label_file_problems(tmp_path):
    path = write(tmp_path, "t.arff", f"@relation t\n{HEADER4}@data\n1,2,0,1\n")
    write(tmp_path, "t.xml", xml("c", "nope"))
    with pytest.raises(ValueError, match=r"t\.arff: 1 label\(s\) .*'nope'"):
        load_arff(path)
    broken = write(tmp_path, "broken.xml", "<labels><label name='c'></labels>")
    with pytest.raises(ValueError, match=r"broken\.xml: not a valid MULAN label file"):
        load_arff(path, label_file=broken)
    empty = write(tmp_path, "empty.xml", f"<labels {MULAN_NS}></labels>")
    with pytest.raises(ValueError, match=r"empty\.xml: .*no <label>"):
        load_arff(path, label_file=empty)
