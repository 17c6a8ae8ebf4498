"""The subcommands ``fit``, ``evaluate`` and ``predict``: each takes the parsed arguments,
prints its results on stdout, writes its files into ``--output`` and returns the exit
status. Progress goes through the ``"gpurules"`` logger (stderr, ``-v``)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold

from gpurules.cli.inputs import (check_same_labels, class_targets, multi_label_targets,
                                 parse_label_spec, read_tables)
from gpurules.cli.params import LEARNERS, make_estimator, parse_params
from gpurules.cli.results import (EXTRA, class_scores, format_table, metric_names,
                                  multi_label_scores, prediction_header, prediction_rows,
                                  summary_rows, write_metrics, write_predictions)
from gpurules.estimators.persistence import load_estimator

logger = logging.getLogger("gpurules.cli")


def fit_command(args) -> int:
    """Train on ``--data``; write ``model.json`` and ``rules.txt`` into ``--output``."""
    params = parse_params(args.learner, args.param)
    (table,) = read_tables([args.data], args.format, parse_label_spec(args.labels))
    estimator, seconds = fit_estimator(args.learner, params, args.verbose, table)
    out = output_dir(args.output)
    save_model(estimator, out / "model.json", out / "rules.txt")
    print(f"{type(estimator).__name__}: {len(estimator.model_)} rules learned from "
          f"{table.X.shape[0]} examples, {table.X.shape[1]} features, "
          f"{len(table.label_names)} labels in {seconds:.1f} s")
    print(f"wrote {out / 'model.json'}, {out / 'rules.txt'}")
    return 0


def evaluate_command(args) -> int:
    """Train and test (``--test``) or cross-validate (``--folds``); print the metrics table
    and write ``metrics.csv``, ``predictions.csv``, the rules and models into ``--output``."""
    params = parse_params(args.learner, args.param)
    labels = parse_label_spec(args.labels)
    if args.test is not None:
        train, test = read_tables([args.data, args.test], args.format, labels)
        check_same_labels(train, test)
        splits, classes = [("test", train, test, np.arange(test.X.shape[0]))], None
    else:
        (table,) = read_tables([args.data], args.format, labels)
        splits = cross_validation(table, args.folds, args.seed)
        classes = np.unique(class_targets(table)) if args.learner == "turs" else None
    out = output_dir(args.output) if args.output else None
    rows, predictions = [], []
    for fold, train, test, index in splits:
        row, estimator, predicted = evaluate_split(args, params, fold, train, test, classes)
        rows.append(row)
        predictions.append((fold, index, predicted))
        if out is not None:
            save_fold(estimator, out, fold, len(splits))
    columns = (*metric_names(args.learner), *EXTRA)
    summary = summary_rows(rows, columns) if len(rows) > 1 else []
    print(format_table(rows, columns, summary))
    if out is not None:
        write_metrics(out / "metrics.csv", rows + summary, columns)
        write_fold_predictions(out / "predictions.csv", predictions, len(splits) > 1,
                               args.learner, estimator, classes)
        print(f"wrote {out / 'metrics.csv'}, {out / 'predictions.csv'}, rules and models "
              f"into {out}")
    return 0


def predict_command(args) -> int:
    """Predict ``--data`` with the model file ``--model``; ``predictions.csv`` into
    ``--output``, or the CSV on stdout."""
    estimator = read_model(args.model)
    learner = learner_of(estimator)
    (table,) = read_tables([args.data], args.format, parse_label_spec(args.labels),
                           n_features=estimator.n_features_in_)
    predicted, proba = predict_table(learner, estimator, table.X)
    header = ["example", *prediction_header(learner, label_names(estimator),
                                            getattr(estimator, "classes_", None))]
    rows = [[i, *row] for i, row in enumerate(prediction_rows(predicted, proba))]
    path = output_dir(args.output) / "predictions.csv" if args.output else None
    write_predictions(path, header, rows)
    if path is not None:
        print(f"wrote {path} ({len(rows)} examples)")
    return 0


def fit_estimator(learner: str, params: dict, verbose: int, table):
    """(the estimator fitted on ``table``, seconds)."""
    estimator = make_estimator(learner, params, verbose, table.nominal_features)
    names = {"feature_names": table.feature_names,
             "nominal_values": table.nominal_values or None}
    start = time.perf_counter()
    if learner == "turs":
        estimator.fit(table.X, class_targets(table), **names)
    else:
        estimator.fit(table.X, multi_label_targets(table),
                      nominal_feature_indices=table.nominal_features or None,
                      label_names=table.label_names, **names)
    return estimator, time.perf_counter() - start


def cross_validation(table, folds: int, seed: int) -> list[tuple]:
    """[(fold number, train table, test table, test row indices)] of a shuffled k-fold."""
    n = table.X.shape[0]
    if folds > n:
        raise ValueError(f"--folds {folds} is more than the {n} examples of {table.source}")
    splitter = KFold(n_splits=folds, shuffle=True, random_state=seed)
    return [(k, table.rows(train), table.rows(test), test)
            for k, (train, test) in enumerate(splitter.split(np.zeros(n)), 1)]


def evaluate_split(args, params, fold, train, test, classes):
    """(the metrics row, the fitted estimator, the prediction rows) of one split."""
    logger.info("fold %s: fitting on %d examples, testing on %d", fold, train.X.shape[0],
                test.X.shape[0])
    estimator, seconds = fit_estimator(args.learner, params, args.verbose, train)
    predicted, proba = predict_table(args.learner, estimator, test.X, classes)
    if args.learner == "turs":
        scores = class_scores(class_targets(test), predicted, proba,
                              estimator.classes_ if classes is None else classes)
    else:
        scores = multi_label_scores(multi_label_targets(test), predicted)
    row = {"fold": fold, **scores, "num_rules": len(estimator.model_), "fit_time_s": seconds}
    return row, estimator, prediction_rows(predicted, proba)


def predict_table(learner: str, estimator, X, classes=None):
    """(predictions, probabilities or None): BOOMER/SeCo the 0/1 labels; TURS the classes
    and the probabilities, their columns in the order of ``classes`` (default: the
    estimator's; a class the fold did not see has probability 0)."""
    if learner != "turs":
        return estimator.predict(X), None
    proba = estimator.predict_proba(X)
    predicted = estimator.classes_[np.argmax(proba, axis=1)]
    if classes is not None:
        full = np.zeros((proba.shape[0], len(classes)))
        full[:, np.searchsorted(classes, estimator.classes_)] = proba
        proba = full
    return predicted, proba


def write_fold_predictions(path, predictions, with_fold, learner, estimator, classes):
    """``predictions.csv`` of ``evaluate``: one row per test example (cross-validation:
    every example, predicted by the fold that held it out, with a ``fold`` column), in
    the order of the data file."""
    header = prediction_header(learner, label_names(estimator),
                               estimator.classes_ if classes is None else classes)
    rows = []
    for fold, index, fold_rows in predictions:
        rows += [[int(i), *([fold] if with_fold else []), *row]
                 for i, row in zip(index, fold_rows)]
    rows.sort(key=lambda row: row[0])
    write_predictions(path, ["example", *(["fold"] if with_fold else []), *header], rows)


def save_model(estimator, model_path: Path, rules_path: Path) -> None:
    """The model file (``estimator.save``) and the rules as text."""
    estimator.save(model_path)
    rules_path.write_text(f"{estimator.model_}\n", encoding="utf-8")


def save_fold(estimator, out: Path, fold, n_splits: int) -> None:
    """``model.json``/``rules.txt`` (train/test) or ``model-fold<k>.json`` and the
    fold's section of ``rules.txt`` (cross-validation)."""
    if n_splits == 1:
        save_model(estimator, out / "model.json", out / "rules.txt")
        return
    estimator.save(out / f"model-fold{fold}.json")
    mode = "w" if fold == 1 else "a"
    with open(out / "rules.txt", mode, encoding="utf-8") as file:
        file.write(f"# fold {fold} of {n_splits}\n{estimator.model_}\n\n")


def output_dir(path: str) -> Path:
    """``--output`` as a directory, created if needed."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--output {path}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    return out


def read_model(path: str):
    """The fitted estimator of a model file (``gpurules.load_estimator``)."""
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such file (--model)")
    return load_estimator(path)


def learner_of(estimator) -> str:
    """The ``--learner`` name of a fitted estimator."""
    return next(name for name, cls in LEARNERS.items() if isinstance(estimator, cls))


def label_names(estimator) -> list[str]:
    """The label names the model was fitted with (a SeCo model: its rules'), else
    ``label0``, ``label1``, ..."""
    model = estimator.model_
    names = getattr(model, "label_names", None) or \
        getattr(getattr(model, "rules", None), "label_names", None)
    if names:
        return list(names)
    n_outputs = getattr(estimator, "n_outputs_", 1)
    return [f"label{k}" for k in range(n_outputs)]
