"""Which ARFF attributes are labels: MULAN label files and the MEKA ``-C`` option.

MULAN names the labels of ``<stem>.arff`` in an xml file ``<stem>.xml`` (``<label name="..."/>``
elements, in the namespace ``http://mulan.sourceforge.net/labels``, possibly nested in label
hierarchies). MEKA instead puts ``-C n`` into the ``@relation`` name: the first ``n``
attributes are labels if ``n > 0``, the last ``|n|`` if ``n < 0``. The xml file wins when both
exist, because some files (``medical*.arff``) carry a stale ``-C`` option.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

# Split suffixes stripped from the ARFF stem to find the shared label file.
SPLIT_SUFFIXES = ("-train", "-test", "_train", "_test")

_MEKA_C = re.compile(r"(?:^|[\s'\":])-C\s+(-?\d+)")


def label_file_candidates(arff_path: Path) -> list[Path]:
    """The xml files that may hold the labels of ``arff_path``, in the order they are tried.

    First the exact stem (``emotions-train.xml``), then the stem without a split suffix
    (``emotions.xml``).
    """
    arff_path = Path(arff_path)
    stem = arff_path.stem
    candidates = [arff_path.with_name(stem + ".xml")]
    for suffix in SPLIT_SUFFIXES:
        if stem.endswith(suffix) and len(stem) > len(suffix):
            candidates.append(arff_path.with_name(stem[: -len(suffix)] + ".xml"))
    return candidates


def find_label_file(arff_path: Path) -> Path | None:
    """The first existing MULAN label file of ``arff_path`` (see ``label_file_candidates``)."""
    for candidate in label_file_candidates(arff_path):
        if candidate.is_file():
            return candidate
    return None


def read_label_xml(text: str, source: str) -> list[str]:
    """Label names from the text of a MULAN xml label file, in document order.

    Every element whose local name is ``label`` counts, however deeply nested (hierarchies);
    a name listed twice is kept once. ``source`` names the file in error messages.

    Raises:
        ValueError: the text is not xml, a ``label`` element has no ``name``, or there is
            no label at all.
    """
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise ValueError(f"{source}: not a valid MULAN label file (xml error: {exc})") from exc
    names: list[str] = []
    for element in root.iter():
        if not isinstance(element.tag, str) or element.tag.rsplit("}", 1)[-1] != "label":
            continue
        name = element.get("name")
        if name is None:
            raise ValueError(f"{source}: a <label> element has no 'name' attribute")
        if name not in names:
            names.append(name)
    if not names:
        raise ValueError(f"{source}: the MULAN label file declares no <label> elements")
    return names


def meka_label_count(relation: str) -> int | None:
    """The ``n`` of a MEKA ``-C n`` option in the relation name, or None if there is none."""
    match = _MEKA_C.search(relation)
    return int(match.group(1)) if match else None


def label_indices(
    attribute_names: list[str],
    relation: str,
    xml_labels: list[str] | None,
    source: str,
    count: int | None = None,
) -> list[int]:
    """Sorted indices of the label attributes among ``attribute_names``.

    Args:
        attribute_names: all attribute names of the ARFF file, in declaration order.
        relation: the ``@relation`` name (searched for a MEKA ``-C n`` option).
        xml_labels: label names from a MULAN xml file; when given, they decide alone.
        source: the ARFF file, for error messages.
        count: the number of labels as MEKA's ``-C n`` counts them (the first n attributes
            if n > 0, the last |n| if n < 0); given, it decides instead of ``xml_labels``
            and the ``@relation`` name.

    Raises:
        ValueError: an xml label is not an attribute; no xml and no usable ``-C`` option;
            more labels than attributes.
    """
    if count is not None:
        if count == 0:
            raise ValueError(f"{source}: the label count must not be 0")
        return _indices_by_count(count, len(attribute_names), source, "")
    if xml_labels is not None:
        return _indices_by_name(attribute_names, xml_labels, source)
    count = meka_label_count(relation)
    n_attributes = len(attribute_names)
    if not count:
        raise ValueError(
            f"{source}: cannot tell which attributes are labels: there is no MULAN label "
            f"file (looked for {_candidate_names(source)}) and the @relation name has no "
            "MEKA option '-C <n>' with n != 0; pass label_file= to name the xml file"
        )
    return _indices_by_count(count, n_attributes, source, f"the MEKA option '-C {count}' ")


def _indices_by_count(count: int, n_attributes: int, source: str, origin: str) -> list[int]:
    """The first ``count`` attribute indices (count > 0) or the last ``|count|`` (< 0)."""
    if abs(count) > n_attributes:
        raise ValueError(
            f"{source}: {origin or 'the label count '}asks for {abs(count)} labels but the "
            f"file declares only {n_attributes} attributes"
        )
    if count > 0:
        return list(range(count))
    return list(range(n_attributes + count, n_attributes))


def _indices_by_name(attribute_names: list[str], labels: list[str], source: str) -> list[int]:
    position = {name: index for index, name in enumerate(attribute_names)}
    missing = [name for name in labels if name not in position]
    if missing:
        shown = ", ".join(repr(name) for name in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise ValueError(
            f"{source}: {len(missing)} label(s) named as labels are not attributes "
            f"of the ARFF file: {shown}{more}"
        )
    return sorted(position[name] for name in labels)


def _candidate_names(source: str) -> str:
    try:
        names = [path.name for path in label_file_candidates(Path(source))]
    except ValueError:  # source is not a usable path (e.g. an in-memory text)
        return "none"
    return ", ".join(dict.fromkeys(names))
