"""The documentation site builds (``mkdocs build --strict``: broken links, missing pages
and API references fail) and every gallery example runs, with small models
(``GPURULES_EXAMPLE_MAX_RULES``), in a fresh process."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
DATASETS = Path(os.environ.get("GPURULES_DATASETS", ROOT.parent / "shared" / "datasets"))
# examples that read the project's MULAN data (``../shared/datasets``)
NEEDS_SHARED_DATA = {"multilabel_arff.py", "sparse_text.py"}


def environment(**extra):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", MPLBACKEND="Agg", **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in
                                                       [env.get("PYTHONPATH")] if p])
    return env


def test_the_gallery_shows_every_example_and_nothing_else():
    shown = re.findall(r'--8<-- "examples/([^"]+)"', (ROOT / "docs" / "gallery.md").read_text())
    assert sorted(shown) == [p.name for p in EXAMPLES]
    assert NEEDS_SHARED_DATA <= set(shown)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_gallery_example_runs(example, tmp_path):
    if example.name in NEEDS_SHARED_DATA and not DATASETS.is_dir():
        pytest.skip(f"{example.name} reads the MULAN data in {DATASETS}, which is absent")
    done = subprocess.run([sys.executable, str(example)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600,
                          env=environment(GPURULES_EXAMPLE_MAX_RULES="6",
                                          GPURULES_DATASETS=str(DATASETS)))
    assert done.returncode == 0, f"{example.name} failed:\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip(), f"{example.name} printed nothing"


def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env=environment())
    assert done.returncode == 0, done.stderr[-4000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    for name in ("BoomerClassifier", "SeCoClassifier", "TursClassifier", "load_model",
                 "load_estimator", "plot_rules", "load_arff"):
        assert name in api, f"the API reference lacks {name}"
    gallery = (tmp_path / "site" / "gallery" / "index.html").read_text()
    assert "GPURULES_EXAMPLE_MAX_RULES" in gallery  # the examples' code is on the page
