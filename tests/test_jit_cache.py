"""The Numba cache directory follows the package's sources (gpurules/_jit_cache.py)."""

import numba

from gpurules import _jit_cache


def test_cache_directory_changes_with_any_source_file(tmp_path):
    (tmp_path / "objectives").mkdir()
    (tmp_path / "search.py").write_text("def search(): pass\n")
    (tmp_path / "objectives" / "heads.py").write_text("def gain(): return 1\n")
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    before = _jit_cache.cache_directory(env, tmp_path)
    assert before == _jit_cache.cache_directory(env, tmp_path)
    (tmp_path / "objectives" / "heads.py").write_text("def gain(): return 2\n")
    after = _jit_cache.cache_directory(env, tmp_path)
    assert after != before and after.startswith(str(tmp_path / "cache"))


def test_default_location_and_the_active_configuration(tmp_path):
    directory = _jit_cache.cache_directory({"XDG_CACHE_HOME": str(tmp_path)})
    assert directory.startswith(str(tmp_path / "gpurules" / "numba"))
    # importing gpurules configured Numba with this package's directory
    assert numba.config.CACHE_DIR == _jit_cache.cache_directory()
