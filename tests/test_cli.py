"""The ``gpurules`` command line (``gpurules/cli``): fit -> predict round trips on ARFF,
CSV and LibSVM files, evaluation tables, exit codes and one-line errors.

The data are tiny (40 examples, 4 features, 3 labels; a handful of rules) and written
once per module; most runs call ``main(argv)`` in this process, and only a few go through
a subprocess (``python -m gpurules``), since each new process loads the compiled kernels
again."""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import gpurules
from gpurules.cli import main
from gpurules.cli.inputs import parse_label_spec
from gpurules.cli.params import parse_params
from gpurules.cli.results import CLASS_METRICS, EXTRA, MULTI_LABEL_METRICS

FAST = ["--param", "max_rules=5", "--param", "random_state=3"]
N, LABELS = 40, ("l0", "l1", "l2")


def _data():
    """X (40, 4) with a nominal column 3 (codes 0..2) and Y (40, 3) that depends on X."""
    rng = np.random.default_rng(0)
    X = np.round(rng.uniform(0, 10, size=(N, 4)), 2)
    X[:, 3] = rng.integers(0, 3, size=N)
    Y = np.column_stack([X[:, 0] > 5, X[:, 1] + X[:, 0] > 9, X[:, 3] == 1]).astype(int)
    return X, Y


def _write_arff(path, X, Y):
    lines = ["@relation tiny",
             *(f"@attribute f{j} numeric" for j in range(3)),
             "@attribute colour {red,green,blue}",
             *(f"@attribute {name} {{0,1}}" for name in LABELS), "@data"]
    colours = ("red", "green", "blue")
    lines += [",".join([*(f"{v:g}" for v in x[:3]), colours[int(x[3])], *map(str, y)])
              for x, y in zip(X, Y)]
    path.write_text("\n".join(lines) + "\n")
    labels = "".join(f'<label name="{name}"/>' for name in LABELS)
    path.with_suffix(".xml").write_text(
        f'<labels xmlns="http://mulan.sourceforge.net/labels">{labels}</labels>')


def _write_csv(path, X, Y):
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["a", "b", "c", "d", *LABELS])
        writer.writerows([[*(f"{v:g}" for v in x), *y] for x, y in zip(X, Y)])


def _write_libsvm(path, X, Y):
    rows = []
    for x, y in zip(X, Y):
        labels = ",".join(str(k) for k in np.flatnonzero(y))
        features = " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(x) if v != 0)
        rows.append(f"{labels} {features}")
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The same tiny data as ARFF (+ MULAN xml), CSV and LibSVM files, and a test CSV."""
    directory = tmp_path_factory.mktemp("cli")
    X, Y = _data()
    paths = {"arff": directory / "tiny.arff", "csv": directory / "tiny.csv",
             "libsvm": directory / "tiny.svm", "dir": directory}
    _write_arff(paths["arff"], X, Y)
    _write_csv(paths["csv"], X, Y)
    _write_libsvm(paths["libsvm"], X, Y)
    return paths


def run(*argv):
    """``python -m gpurules argv`` in a subprocess: (exit status, stdout, stderr)."""
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(gpurules.__file__))}
    done = subprocess.run([sys.executable, "-m", "gpurules", *map(str, argv)],
                          capture_output=True, text=True, env=env, timeout=600)
    return done.returncode, done.stdout, done.stderr


def read_csv(path):
    with open(path, newline="") as file:
        return list(csv.reader(file))


def label_columns(rows, skip):
    """The 0/1 prediction columns of predictions.csv rows (after ``skip`` columns)."""
    return np.array([[int(v) for v in row[skip:]] for row in rows[1:]])


# --- subprocess: the installed entry point, the round trip, the exit codes -------------------

def test_python_m_gpurules_help():
    status, out, _ = run("--help")
    assert status == 0
    assert "fit" in out and "evaluate" in out and "predict" in out


def test_fit_then_predict_round_trip_arff(files, tmp_path):
    status, out, err = run("fit", "--data", files["arff"], "--output", tmp_path, *FAST)
    assert status == 0, err
    assert "rules learned from 40 examples, 4 features, 3 labels" in out
    assert (tmp_path / "rules.txt").read_text().count("<-") >= 2
    status, out, err = run("predict", "--model", tmp_path / "model.json",
                           "--data", files["arff"], "--output", tmp_path)
    assert status == 0, err
    rows = read_csv(tmp_path / "predictions.csv")
    assert rows[0] == ["example", *LABELS]
    estimator = gpurules.load_estimator(tmp_path / "model.json")
    X = gpurules.datasets.load_arff(files["arff"]).X
    np.testing.assert_array_equal(label_columns(rows, 1), estimator.predict(X))
    rules = (tmp_path / "rules.txt").read_text()  # names from the ARFF header
    assert "l0:" in rules and any(f"{name} " in rules for name in ("f0", "f1", "colour"))


def test_user_errors_exit_1_with_one_line_and_no_traceback(files, tmp_path):
    status, out, err = run("fit", "--data", files["csv"], "--labels", "9",
                           "--output", tmp_path)
    assert status == 1 and out == ""
    assert err.strip().splitlines() == [
        f"gpurules: error: {files['csv']}: --labels 9 asks for 9 label columns but the "
        f"file has only 7 columns (at least one feature is needed)"]


# --- in process: evaluate, the formats, the parameters ------------------------------------

def test_evaluate_cross_validation_prints_and_writes_the_metrics(files, tmp_path, capsys):
    assert main(["evaluate", "--data", str(files["arff"]), "--folds", "2", "--seed", "5",
                 "--output", str(tmp_path), *FAST]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert header == ["fold", *MULTI_LABEL_METRICS, *EXTRA]
    assert [line.split()[0] for line in out.splitlines()[1:4]] == ["1", "2", "mean"]
    assert "±" in out.splitlines()[3]
    metrics = read_csv(tmp_path / "metrics.csv")
    assert metrics[0] == ["fold", *MULTI_LABEL_METRICS, *EXTRA]
    assert [row[0] for row in metrics[1:]] == ["1", "2", "mean", "std"]
    assert all(0.0 <= float(v) <= 1.0 for row in metrics[1:] for v in row[1:6])
    predictions = read_csv(tmp_path / "predictions.csv")
    assert predictions[0][:2] == ["example", "fold"] and len(predictions) == N + 1
    assert [int(row[0]) for row in predictions[1:]] == list(range(N))
    assert sorted({row[1] for row in predictions[1:]}) == ["1", "2"]
    for fold in (1, 2):
        assert gpurules.load_estimator(tmp_path / f"model-fold{fold}.json").model_
    assert (tmp_path / "rules.txt").read_text().count("# fold") == 2


def test_evaluate_is_reproducible_with_the_seed(files, capsys):
    argv = ["evaluate", "--data", str(files["arff"]), "--folds", "2", "--seed", "5", *FAST]
    tables = []
    for _ in range(2):
        assert main(argv) == 0
        tables.append([line.split()[:6] for line in capsys.readouterr().out.splitlines()])
    assert tables[0] == tables[1]


def test_csv_train_test_with_named_labels_and_predict(files, tmp_path, capsys):
    data = str(files["csv"])
    assert main(["evaluate", "--data", data, "--test", data, "--labels", "l0,l1,l2",
                 "--output", str(tmp_path), *FAST]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].split()[0] == "test"
    estimator = gpurules.load_estimator(tmp_path / "model.json")
    assert estimator.model_.label_names == list(LABELS)
    # predict: the CSV with its label columns (--labels 3), then the features alone
    features = tmp_path / "features.csv"
    rows = read_csv(files["csv"])
    with open(features, "w", newline="") as file:
        csv.writer(file).writerows([row[:4] for row in rows])
    X = np.array([[float(v) for v in row[:4]] for row in rows[1:]], dtype=np.float32)
    expected = estimator.predict(X)
    for path, labels in ((data, ["--labels", "3"]), (str(features), [])):
        assert main(["predict", "--model", str(tmp_path / "model.json"), "--data", path,
                     *labels]) == 0
        printed = list(csv.reader(capsys.readouterr().out.splitlines()))
        np.testing.assert_array_equal(label_columns(printed, 1), expected)


def test_libsvm_fit_and_predict(files, tmp_path, capsys):
    data = str(files["libsvm"])
    assert main(["fit", "--data", data, "--output", str(tmp_path), *FAST]) == 0
    assert main(["predict", "--model", str(tmp_path / "model.json"), "--data", data,
                 "--output", str(tmp_path)]) == 0
    capsys.readouterr()
    rows = read_csv(tmp_path / "predictions.csv")
    assert rows[0] == ["example", "0", "1", "2"]  # the label values of the file
    from sklearn.datasets import load_svmlight_file
    X, _ = load_svmlight_file(data, multilabel=True, n_features=4)
    estimator = gpurules.load_estimator(tmp_path / "model.json")
    np.testing.assert_array_equal(label_columns(rows, 1), estimator.predict(X))


def test_turs_on_a_class_column_and_seco_with_params(files, tmp_path, capsys):
    rows = read_csv(files["csv"])
    classes = tmp_path / "classes.csv"
    with open(classes, "w", newline="") as file:  # one class column: "yes"/"no" from l0
        csv.writer(file).writerows([[*rows[0][:4], "class"]] + [
            [*row[:4], "yes" if row[4] == "1" else "no"] for row in rows[1:]])
    assert main(["evaluate", "--data", str(classes), "--folds", "2", "--learner", "turs",
                 "--param", "beam_width=2", "--param", "n_cut_points=4",
                 "--param", "max_rules=3", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["fold", *CLASS_METRICS, *EXTRA]
    assert read_csv(tmp_path / "predictions.csv")[0] == ["example", "fold", "class",
                                                         "p(no)", "p(yes)"]
    assert main(["evaluate", "--data", str(files["arff"]), "--folds", "2", "--learner",
                 "seco", "--param", "max_rules=4", "--param", "heuristic=m-estimate{m=2}"]) == 0
    assert capsys.readouterr().out.splitlines()[0].split()[1] == "hamming_loss"


@pytest.mark.parametrize("argv, message", [
    (["fit", "--data", "missing.arff"], "missing.arff: no such file"),
    (["fit", "--data", "{csv}", "--param", "max_rule=3"],
     "unknown parameter 'max_rule' of BoomerClassifier (--learner boomer); valid: "),
    (["fit", "--data", "{csv}", "--param", "loss=nope"],
     "loss='nope' is not supported; supported values: 'logistic-decomposable'"),
    (["fit", "--data", "{csv}", "--param", "shrinkage=fast"], "shrinkage"),
    (["fit", "--data", "{csv}", "--param", "max_rules"], "--param 'max_rules': expected"),
    (["fit", "--data", "{arff}", "--labels", "8"],
     "tiny.arff: the label count asks for 8 labels but the file declares only 7 attributes"),
    (["fit", "--data", "{arff}", "--labels", "nope"], "named as labels are not attributes"),
    (["fit", "--data", "{bad}", "--format", "arff"], "bad.txt: no @data section"),
    (["fit", "--data", "{bad}"], "cannot tell the format from the extension '.txt'"),
    (["fit", "--data", "{libsvm}", "--labels", "2"], "--labels does not apply to LibSVM"),
    (["fit", "--data", "{csv}", "--labels", "3", "--learner", "turs"],
     "TURS learns one class per example, but example"),
    (["predict", "--model", "{csv}", "--data", "{csv}"], "tiny.csv"),
    (["fit", "--data", "{huge}"], "huge.csv: column 'a' holds '-inf' (data row 1), beyond "
                                  "the float32 range"),
    (["fit", "--data", "{huge}", "--labels", "a"], "column 'b' holds '1e300' (data row 2)"),
])
def test_bad_inputs_give_exit_status_1_and_one_line(files, tmp_path, capsys, argv, message):
    (files["dir"] / "bad.txt").write_text("@relation r\n@attribute a numeric\n")
    (files["dir"] / "huge.csv").write_text("a,b,l\n-inf,1,0\n2,1e300,1\n3,4,0\n")
    names = {key: str(files[key]) for key in ("arff", "csv", "libsvm")}
    names["bad"] = str(files["dir"] / "bad.txt")
    names["huge"] = str(files["dir"] / "huge.csv")
    argv = [arg.format(**names) for arg in argv]
    if argv[0] == "fit":
        argv += ["--output", str(tmp_path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("gpurules: error: ")
    assert message in err


def test_debug_shows_the_exception(files, tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        main(["fit", "--data", "missing.csv", "--output", str(tmp_path), "--debug"])


@pytest.mark.parametrize("argv", [
    ["evaluate", "--data", "x.arff"],                              # neither --test nor --folds
    ["evaluate", "--data", "x.arff", "--folds", "1"],
    ["evaluate", "--data", "x.arff", "--folds", "2", "--seed", "-1"],
    ["evaluate", "--data", "x.arff", "--folds", "2", "--seed", str(2 ** 32)],
    ["evaluate", "--data", "x.arff", "--folds", "2", "--test", "y.arff"],
    ["fit", "--data", "x.arff", "--output", "o", "--learner", "xgboost"],
    ["fit", "--data", "x.arff"],                                   # no --output
    ["frobnicate"],
])
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage: gpurules" in capsys.readouterr().err


def test_param_values_are_parsed_where_the_parameter_is_numeric():
    params = parse_params("boomer", [
        "max_rules=50", "shrinkage=0.5", "random_state=none",
        "head_type=partial-dynamic{threshold=0.02,exponent=2}", "default_rule=true"])
    assert params == {"max_rules": 50, "shrinkage": 0.5, "random_state": None,
                      "head_type": "partial-dynamic{threshold=0.02,exponent=2}",
                      "default_rule": "true"}
    assert type(params["max_rules"]) is int
    turs = parse_params("turs", ["categorical_features=0,3", "literal_count_code=universal"])
    assert turs == {"categorical_features": [0, 3], "literal_count_code": "universal"}
    assert parse_params("seco", ["heuristic=m-estimate{m=2}"]) == {
        "heuristic": "m-estimate{m=2}"}


def test_label_spec():
    assert parse_label_spec(None) is None
    assert parse_label_spec("3") == 3
    assert parse_label_spec("a, b") == ["a", "b"]
    assert str(parse_label_spec("x/emotions.xml")) == "x/emotions.xml"
    with pytest.raises(ValueError, match=">= 1"):
        parse_label_spec("0")


def test_model_json_is_the_estimators_file(files, tmp_path, capsys):
    assert main(["fit", "--data", str(files["arff"]), "--output", str(tmp_path),
                 "--learner", "seco", "--param", "max_rules=3"]) == 0
    capsys.readouterr()
    document = json.loads((tmp_path / "model.json").read_text())
    assert document["format"] == "gpurules-model" and document["kind"] == "seco"
    assert document["estimator"]["params"]["max_rules"] == 3
    assert main(["predict", "--model", str(tmp_path / "model.json"), "--data",
                 str(files["arff"]), "--output", str(tmp_path)]) == 0
    assert read_csv(tmp_path / "predictions.csv")[0] == ["example", *LABELS]
