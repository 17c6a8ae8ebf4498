"""The suite's own order (``tests/conftest.py``, ``pytest_collection_modifyitems``): the
files it starts first exist, and ``make test`` tells pytest-xdist to keep the order."""

from pathlib import Path

from tests import conftest

TESTS = Path(__file__).resolve().parent


def test_the_longest_files_exist():
    missing = [name for name in conftest.LONGEST_FILES if not (TESTS / name).is_file()]
    assert not missing, f"tests/conftest.py LONGEST_FILES names missing files: {missing}"


def test_make_test_keeps_the_order():
    makefile = (TESTS.parent / "Makefile").read_text()
    (command,) = [line for line in makefile.splitlines() if "-m pytest" in line]
    assert "--dist loadfile" in command and "--no-loadscope-reorder" in command
