"""Small real datasets shipped inside the package (``gpurules/datasets/data/``)."""

from __future__ import annotations

from importlib import resources

from gpurules.datasets.arff import Dataset, parse_arff
from gpurules.datasets.labels import read_label_xml

# name -> description; each has data/<name>-train.arff, data/<name>-test.arff, data/<name>.xml
EXAMPLES = {
    "emotions": "music emotions (Trohidis et al. 2008): 72 numeric features, 6 labels, "
    "391 train / 202 test examples",
}
SPLITS = ("train", "test")


def load_example(name: str = "emotions", split: str = "train") -> Dataset:
    """Load a dataset shipped with the package, with its standard train/test split.

    Args:
        name: one of ``EXAMPLES`` (``"emotions"``: X float32 (391, 72) for train and
            (202, 72) for test, Y uint8 with 6 labels).
        split: ``"train"`` or ``"test"``.

    Returns:
        A dense ``Dataset`` (see ``gpurules.datasets.Dataset``), labels from the MULAN xml.

    Raises:
        ValueError: unknown name or split; the message lists the available ones.
    """
    if name not in EXAMPLES:
        raise ValueError(
            f"unknown example dataset {name!r}; available: {', '.join(sorted(EXAMPLES))}"
        )
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; available: {', '.join(SPLITS)}")
    data = resources.files("gpurules.datasets").joinpath("data")
    arff_name, xml_name = f"{name}-{split}.arff", f"{name}.xml"
    labels = read_label_xml(data.joinpath(xml_name).read_text(encoding="utf-8"), xml_name)
    text = data.joinpath(arff_name).read_text(encoding="utf-8")
    return parse_arff(text, arff_name, xml_labels=labels)
