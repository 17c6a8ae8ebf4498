"""pandas input: categorical columns become nominal features, matched by value.

A DataFrame's column names name the conditions; a ``category`` column is tested with
``==`` / ``!=`` on its values, and ``predict`` encodes a new frame with the fit's
categories, whatever their order there.
"""
import os

import numpy as np
import pandas as pd

from gpurules import BoomerClassifier

MAX_RULES = int(os.environ.get("GPURULES_EXAMPLE_MAX_RULES", 30))
rng = np.random.default_rng(0)
n = 400
X = pd.DataFrame({
    "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
    "size": rng.normal(10, 3, n),
    "weight": rng.normal(50, 10, n),
})
Y = pd.DataFrame({
    "ripe": (X["colour"] == "red") | (X["size"] > 12),
    "heavy": X["weight"] > 55,
}).astype(int)

clf = BoomerClassifier(max_rules=MAX_RULES, random_state=1).fit(X, Y)
print(clf.model_)                       # conditions such as "colour == red"
print(clf.model_.to_frame()[["rule", "conditions", "scores", "coverage"]].head())

new = X.head(3).copy()
new["colour"] = new["colour"].cat.reorder_categories(["red", "blue", "green"])
print(clf.predict(new))                 # the same categories, in another order: same answer
