"""Probability calibration against mlrl-boomer 0.15.6 (issue 22): emotions and yeast test
splits, marginal_probability_calibration none / isotonic, seeds 1-2, one thread; Hamming,
subset 0/1, Brier score of predict_proba and fit CPU seconds, one Markdown row per fit.

Usage: python benchmarks/compare_calibration.py ours|mlrl   (mlrl: in the mlrl-boomer venv
with PYTHONPATH at the repository root)."""
import sys, time, resource, numpy as np
sys.path.insert(0, __import__('os').path.dirname(__file__))
from _common import load_split
which = sys.argv[1]
def cpu(): r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
def dense(a): return a.toarray() if hasattr(a, 'toarray') else np.asarray(a)
for name in ('emotions', 'yeast'):
    sp = load_split('/work/shared/datasets', name)
    Y = np.asarray(sp.Y_test)
    for calib in ('none', 'isotonic'):
        for seed in (1, 2):
            p = dict(marginal_probability_calibration=calib, random_state=seed)
            if which == 'ours':
                from gpurules import BoomerClassifier
                c = BoomerClassifier(device='cpu', parallel_rule_refinement='false', parallel_statistic_update='false', parallel_prediction='false', **p)
            else:
                from mlrl.boosting import BoomerClassifier
                c = BoomerClassifier(parallel_rule_refinement='false', parallel_statistic_update='false', parallel_prediction='false', **p)
            t = cpu(); c.fit(sp.X_train, sp.Y_train); t = cpu() - t
            pred = dense(c.predict(sp.X_test)); pr = dense(c.predict_proba(sp.X_test))
            ham = (pred != Y).mean(); sub = (pred != Y).any(axis=1).mean(); brier = ((pr - Y) ** 2).mean()
            print(f"| {which} | {name} | {calib} | {seed} | {ham:.4f} | {sub:.4f} | {brier:.4f} | {t:.1f} |", flush=True)
