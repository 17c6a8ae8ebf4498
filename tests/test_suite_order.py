"""The suite's own order (``tests/conftest.py``, ``pytest_collection_modifyitems``): the
files it names exist, and ``make test`` tells pytest-xdist to keep the order (and to
distribute whole files, grouped by ``tests/conftest.py``)."""

from pathlib import Path

from tests import conftest

TESTS = Path(__file__).resolve().parent


def test_the_files_named_exist():
    named = set(conftest.LONGEST_FILES) | set(conftest.FUSED_RULES_GROUP)
    missing = sorted(name for name in named if not (TESTS / name).is_file())
    assert not missing, f"tests/conftest.py names missing files: {missing}"


def test_the_group_is_one_unit_of_work():
    units = {conftest.work_unit(f"tests/{name}") for name in conftest.FUSED_RULES_GROUP}
    assert len(units) == 1
    assert conftest.work_unit("tests/test_boomer.py") == "tests/test_boomer.py"


def test_make_test_keeps_the_order():
    makefile = (TESTS.parent / "Makefile").read_text()
    (command,) = [line for line in makefile.splitlines() if "-m pytest" in line]
    assert "--dist loadfile" in command and "--no-loadscope-reorder" in command
