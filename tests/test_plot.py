"""gpurules.plot draws what it says: the artists (images, bars, lines, tick labels) on small
fitted models and tables, not pixels; bad inputs raise; ``import gpurules`` leaves
matplotlib alone."""

import subprocess
import sys

import numpy as np
import pytest

import matplotlib  # noqa: E402  (the test extra installs it)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from gpurules import BoomerClassifier, SeCoClassifier, TursClassifier  # noqa: E402
from gpurules import plot  # noqa: E402

FEATURES = ["age", "height", "weight", "noise"]
LABELS = ["a", "b", "c"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4)).astype(np.float32)
    Y = np.stack([X[:, 0] > 0, X[:, 1] > 0.3, (X[:, 0] + X[:, 2]) > 0], 1).astype(np.uint8)
    return X, Y


@pytest.fixture(scope="module")
def models(data):
    X, Y = data
    names = dict(feature_names=FEATURES, label_names=LABELS)
    return {
        "boomer": BoomerClassifier(max_rules=6, random_state=1).fit(X, Y, **names),
        "seco": SeCoClassifier(max_rules=5).fit(X, Y, **names),
        "turs": TursClassifier().fit(X, Y[:, 0] + 2 * Y[:, 1], feature_names=FEATURES),
    }


def n_outputs(name):
    return 4 if name == "turs" else len(LABELS)


def tick_texts(labels):
    return [t.get_text() for t in labels]


@pytest.mark.parametrize("name", ["boomer", "seco", "turs"])
@pytest.mark.parametrize("as_model", [False, True])
def test_rule_heat_map_has_a_cell_per_rule_and_output_and_a_coverage_bar_per_rule(
        models, name, as_model):
    clf = models[name]
    ax = plot.plot_rules(clf.model_ if as_model else clf)
    records = clf.model_.to_records()
    cells = ax.images[0].get_array()
    assert cells.shape == (len(records), n_outputs(name))
    ticks = tick_texts(ax.get_yticklabels())
    assert ticks.count("default") + ticks.count("else") == 1
    outputs = tick_texts(ax.get_xticklabels())
    assert outputs == (LABELS if name != "turs" else [str(c) for c in clf.classes_])
    bars = [c for c in ax.child_axes if c.patches]
    assert len(bars) == 1
    assert [p.get_width() for p in bars[0].patches] == [r["coverage"] for r in records]


def test_boomer_heat_map_cells_are_the_head_scores_and_blank_outside_the_head(models):
    model = models["boomer"].model_
    cells = plot.plot_rules(model).images[0].get_array()
    for row, record in zip(cells, model.to_records()):
        assert np.ma.getmaskarray(row).sum() == len(LABELS) - len(record["labels"])
        np.testing.assert_allclose(row[record["labels"]].data, record["scores"])


def test_heat_map_shows_at_most_max_rules_plus_the_default_rule(models):
    ax = plot.plot_rules(models["boomer"], max_rules=2)
    assert ax.images[0].get_array().shape == (3, len(LABELS))


@pytest.mark.parametrize("name", ["boomer", "seco", "turs"])
def test_feature_importances_are_named_bars_largest_first(models, name):
    clf = models[name]
    ax = plot.plot_feature_importances(clf)
    importances = clf.feature_importances_
    heights = [p.get_width() for p in ax.patches]
    assert len(heights) == np.count_nonzero(importances)
    assert heights == sorted(heights, reverse=True)
    names = tick_texts(ax.get_yticklabels())
    assert [importances[FEATURES.index(n)] for n in names] == heights


def test_feature_importances_top_limits_the_bars(models):
    assert len(plot.plot_feature_importances(models["boomer"], top=1).patches) == 1


@pytest.mark.parametrize("name", ["boomer", "seco", "turs"])
def test_explanation_has_a_row_per_fired_rule_and_the_prediction(models, data, name):
    clf = models[name]
    x = data[0][3]
    ax = plot.plot_explanation(clf, x)
    fired = clf.explain(x.reshape(1, -1))[0]
    cells = ax.images[0].get_array()
    assert cells.shape == (len(fired) + 1, n_outputs(name))
    assert tick_texts(ax.get_yticklabels())[-1] == "prediction"
    expected = {"boomer": lambda: clf.decision_function(x.reshape(1, -1))[0],
                "seco": lambda: clf.predict(x.reshape(1, -1))[0],
                "turs": lambda: clf.predict_proba(x.reshape(1, -1))[0]}[name]()
    np.testing.assert_allclose(cells[-1].data, expected, rtol=1e-5, atol=1e-6)


def test_explanation_refuses_several_examples(models, data):
    with pytest.raises(ValueError, match="one example"):
        plot.plot_explanation(models["boomer"], data[0][:2])


@pytest.mark.parametrize("fn", [plot.plot_rules, plot.plot_feature_importances,
                                lambda obj: plot.plot_explanation(obj, np.zeros(4))])
def test_model_functions_refuse_other_objects_and_unfitted_estimators(fn):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(TypeError, match="BoomerClassifier"):
        fn(np.zeros((3, 3)))
    with pytest.raises(NotFittedError):
        fn(BoomerClassifier())


def test_functions_draw_into_a_given_axes(models):
    _, axs = plt.subplots(1, 2)
    assert plot.plot_rules(models["seco"], ax=axs[0]) is axs[0]
    assert plot.plot_feature_importances(models["seco"], ax=axs[1]) is axs[1]


REPORT = """## a report

- machine: something

| data | n_train | n_test | system | fit s | rules | Hamming % |
|---|---:|---:|---|---:|---:|---:|
| synthetic-1000 | 1,000 | 1000 | cpu-hist | 0.250 | 100 | 12.50 |
| synthetic-1000 | 1,000 | 1000 | cuda-hist | not available (no GPU) | - | - |
| synthetic-1000 | 1,000 | 1000 | boomer-ew | 0.500 | 100 | 12.00 |
| synthetic-10000 | 10,000 | 2500 | cpu-hist | 1.50 | 100 | 10.25 |
| synthetic-10000 | 10,000 | 2500 | cuda-hist | not available (no GPU) | - | - |
| synthetic-10000 | 10,000 | 2500 | boomer-ew | 4.00 | 100 | 10.00 |

| system | cold fit s |
|---|---:|
| cpu-hist | 9.5 |
"""


def test_read_table_reads_markdown_text_files_and_csv(tmp_path):
    rows = plot.read_table(REPORT)
    assert len(rows) == 6 and rows[0]["fit s"] == "0.250" and rows[3]["n_train"] == "10,000"
    assert plot.read_table(REPORT, columns=["cold fit s"]) == [
        {"system": "cpu-hist", "cold fit s": "9.5"}]
    (tmp_path / "r.md").write_text(REPORT)
    assert plot.read_table(tmp_path / "r.md") == rows
    (tmp_path / "m.csv").write_text("fold,hamming_loss\n1,0.2\n2,0.25\n")
    assert plot.read_table(str(tmp_path / "m.csv")) == [
        {"fold": "1", "hamming_loss": "0.2"}, {"fold": "2", "hamming_loss": "0.25"}]
    with pytest.raises(ValueError, match="no table"):
        plot.read_table(REPORT, columns=["nope"])


def test_fit_time_plot_draws_a_line_per_system_and_names_the_missing_one():
    ax = plot.plot_fit_time(REPORT)
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"cpu-hist", "boomer-ew", "cuda-hist: not available"}
    np.testing.assert_allclose(lines["cpu-hist"].get_xdata(), [1000, 10000])
    np.testing.assert_allclose(lines["boomer-ew"].get_ydata(), [0.5, 4.0])
    assert ax.get_xscale() == ax.get_yscale() == "log"


def test_quality_plot_draws_a_bar_per_numeric_cell(tmp_path):
    ax = plot.plot_quality(REPORT, "Hamming %")
    assert sorted(p.get_height() for p in ax.patches) == [10.0, 10.25, 12.0, 12.5]
    assert tick_texts(ax.get_xticklabels()) == ["synthetic-1000", "synthetic-10000"]
    (tmp_path / "metrics.csv").write_text("fold,hamming_loss\n1,0.2\n2,0.25\n"
                                          "mean ± std,0.22 ± 0.02\n")
    ax = plot.plot_quality(tmp_path / "metrics.csv", "hamming_loss", by="fold", group=None)
    assert [p.get_height() for p in ax.patches] == [0.2, 0.25]


def test_importing_gpurules_does_not_import_matplotlib():
    code = ("import sys, gpurules, gpurules.datasets; "
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_matplotlib_is_named_with_the_extra():
    code = ("import sys; sys.modules['matplotlib'] = None; sys.modules['matplotlib.pyplot'] = None\n"
            "from gpurules import plot\n"
            "try:\n    plot.plot_fit_time([{'n_train': 1, 'system': 's', 'fit s': 1}])\n"
            "except ImportError as e:\n    assert 'gpurules[plot]' in str(e), e\n"
            "else:\n    raise SystemExit('no ImportError')\n")
    subprocess.run([sys.executable, "-c", code], check=True)
