"""Multi-label ARFF with names: BOOMER on MULAN's emotions train/test split.

Needs the project's MULAN data in ``../shared/datasets`` (or ``GPURULES_DATASETS``).
The labels come from ``emotions.xml`` beside the ARFF; the names make the rules readable.
"""
import os
from pathlib import Path

from sklearn.metrics import hamming_loss

from gpurules import BoomerClassifier
from gpurules.datasets import load_arff

DATA = Path(os.environ.get("GPURULES_DATASETS", Path(__file__).resolve().parents[2] / "shared" / "datasets"))
MAX_RULES = int(os.environ.get("GPURULES_EXAMPLE_MAX_RULES", 200))  # the tests use fewer

train = load_arff(DATA / "emotions-train.arff")
test = load_arff(DATA / "emotions-test.arff")
clf = BoomerClassifier(max_rules=MAX_RULES, random_state=1)
clf.fit(train.X, train.Y, nominal_feature_indices=train.nominal_features,
        feature_names=train.feature_names, label_names=train.label_names,
        nominal_values=train.nominal_values)

print(f"{len(clf.model_)} rules, Hamming loss {hamming_loss(test.Y, clf.predict(test.X)):.4f}")
print("\n".join(str(clf.model_).splitlines()[:6]))   # the default rule and the first rules
