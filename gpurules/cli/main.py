"""``gpurules``: the argument parser, the logging and warnings set-up, and the exit codes.

Exit codes: 0 success; 2 a usage error (argparse: unknown option, missing argument, a
bad ``--folds``); 1 a problem with the inputs (a missing or unreadable file, labels that
do not fit the file, an unknown ``--param`` name, a value an estimator refuses), printed as
one line ``gpurules: error: ...`` (``--debug`` raises it with its traceback instead).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import warnings

from gpurules import __version__
from gpurules.cli.commands import evaluate_command, fit_command, predict_command
from gpurules.cli.inputs import FORMAT_NAMES
from gpurules.cli.params import LEARNERS

USER_ERRORS = (ValueError, TypeError, OSError, RuntimeError, MemoryError)

_LABELS_HELP = ("which columns are labels: FILE.xml (a MULAN label file, ARFF), N (the last "
                "N columns/attributes) or NAME,NAME,... (those columns). Default: ARFF the "
                "MULAN .xml beside the file, else its MEKA '-C n'; CSV the last column; "
                "LibSVM the file's labels")

_EPILOG = """examples:
  gpurules evaluate --data emotions.arff --folds 5 --seed 1
  gpurules evaluate --data emotions-train.arff --test emotions-test.arff \\
      --learner boomer --param loss=logistic-non-decomposable --param max_rules=200
  gpurules fit --data train.csv --labels 3 --output run1
  gpurules predict --model run1/model.json --data test.csv --output run1
"""


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``gpurules`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="gpurules", epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Learn, evaluate and apply multi-label rule models (BOOMER, SeCo, TURS).")
    parser.add_argument("--version", action="version", version=f"gpurules {__version__}")
    commands = parser.add_subparsers(dest="command_name", required=True, metavar="COMMAND")
    _add_fit(commands)
    _add_evaluate(commands)
    _add_predict(commands)
    return parser


def _common(data_help: str) -> argparse.ArgumentParser:
    """The options every subcommand has: the data, its format and labels, -v, --debug."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data", required=True, metavar="FILE", help=data_help)
    common.add_argument("--format", choices=FORMAT_NAMES,
                        help="the data format (default: from the extension: .arff; .csv; "
                             ".svm, .libsvm or .svmlight)")
    common.add_argument("--labels", metavar="SPEC", help=_LABELS_HELP)
    common.add_argument("-v", "--verbose", action="count", default=0,
                        help="progress on stderr (the estimators' verbose; -vv: per rule)")
    common.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an error")
    return common


def _learner_options() -> argparse.ArgumentParser:
    """``--learner`` and ``--param``."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--learner", choices=tuple(LEARNERS), default="boomer",
                         help="the rule learner (default: boomer)")
    options.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                         help="an estimator parameter, repeatable; values as the estimators "
                              "take them (the mlrl-boomer/mlrl-seco strings, e.g. "
                              "'head_type=partial-dynamic{threshold=0.02}'; numbers are "
                              "parsed for numeric parameters)")
    return options


def _add_fit(commands) -> None:
    parser = commands.add_parser(
        "fit", parents=[_common("the training data"), _learner_options()],
        help="train a model and write model.json and rules.txt",
        description="Train a rule model on --data; write DIR/model.json (load it with "
                    "gpurules.load_estimator) and DIR/rules.txt.")
    parser.add_argument("--output", required=True, metavar="DIR",
                        help="the directory for model.json and rules.txt (created)")
    parser.set_defaults(command=fit_command)


def _add_evaluate(commands) -> None:
    parser = commands.add_parser(
        "evaluate", parents=[_common("the (training) data"), _learner_options()],
        help="train/test or cross-validate; print and write the metrics",
        description="Train on --data and test on --test, or run k-fold cross-validation "
                    "on --data; print the metrics table (per fold, then mean ± std).")
    split = parser.add_mutually_exclusive_group(required=True)
    split.add_argument("--test", metavar="FILE", help="the test data (same format)")
    split.add_argument("--folds", type=_folds, metavar="K",
                       help="K-fold cross-validation on --data (K >= 2, shuffled)")
    parser.add_argument("--seed", type=_seed, default=1,
                        help="the seed of the folds (default: 1; the learner's own seed is "
                             "--param random_state=...)")
    parser.add_argument("--output", metavar="DIR",
                        help="write metrics.csv, predictions.csv, rules.txt and the model "
                             "file(s) (model.json; model-fold<k>.json) here")
    parser.set_defaults(command=evaluate_command)


def _add_predict(commands) -> None:
    parser = commands.add_parser(
        "predict", parents=[_common("the data to predict")],
        help="apply a saved model file to data",
        description="Predict --data with a model file written by 'gpurules fit' (or "
                    "estimator.save). A CSV file with exactly the model's number of "
                    "columns has no label columns.")
    parser.add_argument("--model", required=True, metavar="FILE", help="the model.json")
    parser.add_argument("--output", metavar="DIR",
                        help="write DIR/predictions.csv (default: the CSV on stdout)")
    parser.set_defaults(command=predict_command)


def _int_in(low: int, high: int):
    """An argparse type: an int in [low, high] (argparse names the option in its error)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            bound = f">= {low}" if high == sys.maxsize else f"in [{low}, {high}]"
            raise argparse.ArgumentTypeError(f"must be an int {bound}, got {text!r}")
        return value
    return parse


_folds = _int_in(2, sys.maxsize)
_seed = _int_in(0, 2 ** 32 - 1)  # numpy's seeds


def main(argv: list[str] | None = None) -> int:
    """Run ``gpurules`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status
    (argparse exits with 2 on a usage error)."""
    args = build_parser().parse_args(argv)
    with _logging(args.verbose), _warnings_on_one_line():
        try:
            return args.command(args)
        except KeyboardInterrupt:
            print("gpurules: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # stdout closed early (| head): stop quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        except USER_ERRORS as exc:
            if args.debug:
                raise
            print(f"gpurules: error: {one_line(exc)}", file=sys.stderr)
            return 1


def one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (an OSError as 'file: reason')."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return " ".join(str(exc).split()) or type(exc).__name__


@contextlib.contextmanager
def _logging(verbose: int):
    """Show the ``"gpurules"`` logger's INFO lines on stderr when ``verbose`` (the
    estimators then attach no handler of their own); warnings and errors always."""
    logger = logging.getLogger("gpurules")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbose else logging.WARNING)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@contextlib.contextmanager
def _warnings_on_one_line():
    """Python warnings (e.g. ``FitStoppedEarlyWarning``) as ``gpurules: warning: ...``."""
    def show(message, category, filename, lineno, file=None, line=None):
        print(f"gpurules: warning: {message}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield
