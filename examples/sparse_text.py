"""Sparse text data: SeCo on MULAN's medical (1,449 binary word features, 45 labels).

Needs ``../shared/datasets`` (or ``GPURULES_DATASETS``). ``load_arff`` returns a scipy
sparse CSR matrix for a sparse ARFF; the learners search it without densifying (the
zeros are never visited), and predict on CSR input too.
"""
import os
from pathlib import Path

from sklearn.metrics import f1_score

from gpurules import SeCoClassifier
from gpurules.datasets import load_arff

DATA = Path(os.environ.get("GPURULES_DATASETS", Path(__file__).resolve().parents[2] / "shared" / "datasets"))
MAX_RULES = int(os.environ.get("GPURULES_EXAMPLE_MAX_RULES", 100))

train = load_arff(DATA / "medical-train.arff")
test = load_arff(DATA / "medical-test.arff")
print(type(train.X).__name__, train.X.shape, f"{train.X.nnz} non-zeros")

clf = SeCoClassifier(max_rules=MAX_RULES)
clf.fit(train.X, train.Y, feature_names=train.feature_names, label_names=train.label_names,
        nominal_values=train.nominal_values)
pred = clf.predict(test.X)
print(f"{len(clf.model_.rules)} rules, micro F1 {f1_score(test.Y, pred, average='micro'):.3f}")
for record in clf.model_.to_records()[:5]:
    print(record["label_names"], record["values"], "<-", record["conditions"])
