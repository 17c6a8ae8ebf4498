"""Pictures of benchmark results: the Markdown tables the scripts in ``benchmarks/`` print
(``_common.markdown_table``) and CSV files such as ``gpurules evaluate``'s
``metrics.csv``. A table is read as a list of dicts of strings (column -> cell); cells are
read as numbers where they look like one (``1,234``, ``0.24``, ``1.23x``, ``45.6 %``)."""

import csv
import io
import re
from pathlib import Path

import numpy as np

from gpurules.plot._axes import axes

_NUMBER = re.compile(r"^[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?\s*[x%]?$")


def read_table(source, columns=()):
    """The rows of a Markdown or CSV table.

    Args:
        source: a path (``.csv`` read as CSV, anything else as Markdown) or the text of a
            Markdown document.
        columns: names the table must have: the first Markdown table holding all of
            them is read (ValueError if there is none).

    Returns:
        list of dicts, column name -> cell text (str), one per row.
    """
    path = Path(source) if isinstance(source, Path) or "\n" not in str(source) else None
    text = path.read_text(encoding="utf-8") if path is not None else str(source)
    if path is not None and path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        return _check_columns([rows], columns, source)
    return _check_columns(_markdown_tables(text), columns, source)


def _markdown_tables(text):
    """Every Markdown table of ``text`` as a list of row dicts."""
    tables, block = [], []
    for line in text.splitlines() + [""]:
        if line.strip().startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        if len(block) >= 2:
            header, body = block[0], block[2:] if set("".join(block[1])) <= set("-: ") \
                else block[1:]
            tables.append([dict(zip(header, row)) for row in body])
        block = []
    return tables


def _check_columns(tables, columns, source):
    for rows in tables:
        if rows and all(c in rows[0] for c in columns):
            return rows
    raise ValueError(f"no table with the columns {list(columns)} in {str(source)[:80]!r}")


def number(cell):
    """The float a table cell shows, or None (``-``, ``not available (...)``, text)."""
    if isinstance(cell, (int, float)):
        return float(cell)
    text = str(cell).strip()
    if not _NUMBER.match(text):
        return None
    return float(text.rstrip("x% ").replace(",", ""))


def _rows(table, columns):
    """A table given as rows (list of dicts) or as a source for :func:`read_table`."""
    return table if isinstance(table, list) else read_table(table, columns)


def _groups(rows, group):
    """The values of column ``group`` in order of first appearance ([None] without one)."""
    return list(dict.fromkeys(r[group] for r in rows)) if group else [None]


def plot_fit_time(table, ax=None, x="n_train", y="fit s", group="system", xlabel=None,
                  ylabel="fit time, s (median)"):
    """Log-log fit time against the number of training examples, one line per system.

    Args:
        table: rows (list of dicts) or a Markdown/CSV source (:func:`read_table`), e.g.
            ``benchmarks/compare_devices.py --output``'s report.
        ax: the ``Axes`` to draw into (default: a new figure).
        x, y, group: the columns of n, of the time in seconds and of the system; a
            system without any numeric point is listed as "not available".
        xlabel, ylabel: axis labels (``xlabel`` default: ``"training examples (<x>)"``).

    Returns:
        The ``Axes``: one line per system.
    """
    rows = _rows(table, (x, y, group))
    ax = axes(ax, (6.4, 4.4))
    for name in _groups(rows, group):
        points = sorted((number(r[x]), number(r[y])) for r in rows if r[group] == name
                        and number(r[x]) is not None and number(r[y]) is not None)
        if points:
            ax.plot(*zip(*points), marker="o", label=name)
        else:
            ax.plot([], [], label=f"{name}: not available")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel or f"training examples ({x})")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def plot_quality(table, metric="Hamming %", ax=None, by="data", group="system"):
    """A quality column as grouped bars: one cluster per value of ``by`` (data set, fold),
    one bar per value of ``group`` (system; None: one bar per cluster).

    Args:
        table: rows (list of dicts) or a Markdown/CSV source (:func:`read_table`), e.g. a
            benchmark report or ``gpurules evaluate``'s ``metrics.csv``
            (``by="fold", group=None``).
        metric: the column to draw; cells that are not numbers get no bar.
        ax: the ``Axes`` to draw into (default: a new figure).

    Returns:
        The ``Axes``: one bar per numeric cell.
    """
    rows = _rows(table, (metric, by) + ((group,) if group else ()))
    clusters, names = _groups(rows, by), _groups(rows, group)
    width = 0.8 / len(names)
    ax = axes(ax, (1.5 + 0.5 * len(clusters) * len(names), 4.0))
    for i, name in enumerate(names):
        values = {r[by]: number(r[metric]) for r in rows if not group or r[group] == name}
        xs = [c for c, cluster in enumerate(clusters) if values.get(cluster) is not None]
        ax.bar(np.array(xs) + (i - (len(names) - 1) / 2) * width,
               [values[clusters[c]] for c in xs], width, label=name)
    ax.set_xticks(range(len(clusters)), clusters, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(metric)
    if group:
        ax.legend(fontsize=8)
    return ax
