"""YAML output in the style of ``kubectl -o yaml`` (sigs.k8s.io/yaml over go-yaml v2).

go-yaml picks a scalar style per string: a string that would read back as something else
(``"True"``, ``"800"``, ``""``, ``"null"``) is double-quoted, one with a newline is a literal
block, everything else is plain when YAML allows it and single-quoted otherwise. PyYAML's
emitter (the C one when libyaml is there) does the layout; a representer chooses the styles.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_Base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _KubeDumper(_Base):  # type: ignore[misc,valid-type]
    pass


# Plain scalars go-yaml v2 reads as non-strings although PyYAML's resolver says str.
_GO_BOOLS = frozenset({"y", "Y", "n", "N"})
_GO_FLOAT = re.compile(
    r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z"  # 1e3
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z"  # base 60: 1:20
)


def _str(dumper: Any, value: str) -> Any:
    tag = "tag:yaml.org,2002:str"
    if "\n" in value:
        return dumper.represent_scalar(tag, value, style="|")
    implicit = dumper.resolve(yaml.ScalarNode, value, (True, False))
    if implicit != tag or value == "" or value in _GO_BOOLS or _GO_FLOAT.match(value):
        return dumper.represent_scalar(tag, value, style='"')
    return dumper.represent_scalar(tag, value)


_KubeDumper.add_representer(str, _str)


def dump(data: Any, *, sort_keys: bool = False) -> str:
    return yaml.dump(
        data,
        Dumper=_KubeDumper,
        default_flow_style=False,
        sort_keys=sort_keys,
        allow_unicode=True,
        width=80,
    )
