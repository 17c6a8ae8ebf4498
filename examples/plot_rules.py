"""Reading and plotting rules: the rules as a table, the rule heat map, the feature
importances and one example's explanation (``gpurules.plot``, the ``plot`` extra).

``python examples/plot_rules.py docs`` writes the picture in the README
(``docs/rules.png``); the default output folder is the current one.
"""
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from gpurules import BoomerClassifier  # noqa: E402
from gpurules.datasets import load_example  # noqa: E402
from gpurules.plot import plot_explanation, plot_feature_importances, plot_rules  # noqa: E402

MAX_RULES = int(os.environ.get("GPURULES_EXAMPLE_MAX_RULES", 16))
out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
train = load_example("emotions", "train")
clf = BoomerClassifier(max_rules=MAX_RULES, random_state=1)
clf.fit(train.X, train.Y, feature_names=train.feature_names, label_names=train.label_names)

for record in clf.model_.to_records()[:4]:          # rules as data (to_frame() with pandas)
    print(record["rule"], record["coverage"], record["conditions"], record["scores"])
for rule in clf.explain(train.X[:1])[0]:              # the rules that fire for one example
    print(rule["rule"], rule["label_names"], rule["scores"])

pictures = {"rules.png": lambda: plot_rules(clf, max_rules=12),
            "importances.png": lambda: plot_feature_importances(clf, top=10),
            "explanation.png": lambda: plot_explanation(clf, train.X[0])}
for name, draw in pictures.items():
    ax = draw()
    ax.figure.savefig(out / name, dpi=72, bbox_inches="tight")
    print("wrote", out / name)
