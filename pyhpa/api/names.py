"""Kubernetes name rules (apimachinery's ``util/validation``), with upstream's exact messages.

Why one module: object names, namespaces, label keys and values, finalizers, container names and
the names inside an HPA's references are checked by the API validation, the label selector
parser and the embedded cluster's generic strategy; users see the messages verbatim
(``a lowercase RFC 1123 label must consist of ...``), so there is one copy of each rule.

Each ``is_*`` function returns the list of problems (empty when the value is fine), as Go does.
Lengths are counted in bytes, as Go's ``len(string)``.
"""

from __future__ import annotations

import re
import secrets

__all__ = [
    "DNS1123_LABEL",
    "DNS1123_SUBDOMAIN",
    "is_config_map_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_key",
    "is_qualified_name",
    "is_valid_label_value",
    "is_valid_path_segment_name",
    "generate_name",
    "regex_error",
    "safe_encode",
]

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"

# Whole-string patterns (Go's ``^...$``; ``\Z``, unlike Python's ``$``, refuses a final newline).
DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT + r"\Z")
DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT + r"\Z")
_DNS1035_LABEL = re.compile(_DNS1035_LABEL_FMT + r"\Z")
_QUALIFIED_NAME = re.compile(_QUALIFIED_NAME_FMT + r"\Z")
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT + r"\Z")

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character"
)
_QUALIFIED_NAME_EXAMPLES = ("MyName", "my.name", "123-abc")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Upstream's ``RegexError``, including its odd ``',  or '`` spacing."""
    if not examples:
        return msg + " (regex used for validation is '" + fmt + "')"
    msg += " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += "'" + ex + "', "
    return msg + "regex used for validation is '" + fmt + "')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def _too_long(value: str, n: int) -> bool:
    return len(value) > n or (not value.isascii() and len(value.encode()) > n)  # bytes, as in Go


_DNS1123_LABEL_ERROR = regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc")
_DNS1035_LABEL_ERROR = regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123")
_DNS1123_SUBDOMAIN_ERROR = regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com")


def _dns_name(value: str, most: int, pattern: re.Pattern[str], message: str) -> list[str]:
    """A DNS name rule's problems: too long (in bytes), and not matching its pattern."""
    errs = []
    if _too_long(value, most):
        errs.append(_max_len(most))
    if not pattern.match(value):
        errs.append(message)
    return errs


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: namespaces, container names."""
    return _dns_name(value, 63, DNS1123_LABEL, _DNS1123_LABEL_ERROR)


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: Service names."""
    return _dns_name(value, 63, _DNS1035_LABEL, _DNS1035_LABEL_ERROR)


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: most object names, the prefix of a qualified name."""
    return _dns_name(value, 253, DNS1123_SUBDOMAIN, _DNS1123_SUBDOMAIN_ERROR)


def _qualified(value: str, what: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            what + " "
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, *_QUALIFIED_NAME_EXAMPLES)
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _too_long(name, 63):
        errs.append("name part " + _max_len(63))
    if not _QUALIFIED_NAME.match(name):
        errs.append("name part " + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, *_QUALIFIED_NAME_EXAMPLES))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName``: label keys of objects, annotation keys, finalizers, resource names."""
    return _qualified(value, "a qualified name")


def is_label_key(value: str) -> list[str]:
    """``content.IsLabelKey``: a label key in a selector (the qualified-name rules, with the
    selector parser's wording when the key has more than one ``/``)."""
    return _qualified(value, "a valid label key")


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or a qualified name's name part."""
    errs = []
    if _too_long(value, 63):
        errs.append(_max_len(63))
    if not _LABEL_VALUE.match(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_valid_path_segment_name(name: str) -> list[str]:
    """``IsValidPathSegmentName``: a name that can be one segment of a URL path."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    if "/" not in name and "%" not in name:
        return []
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+\Z")
_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"


def is_config_map_key(key: str) -> list[str]:
    """``IsConfigMapKey``: a key that can be a file name in a volume and an env var source."""
    errs = []
    if _too_long(key, 253):
        errs.append(_max_len(253))
    if not _CONFIG_KEY.match(key):
        errs.append(regex_error(_CONFIG_KEY_MSG, "[-._a-zA-Z0-9]+", "key.name", "KEY_NAME", "key-name"))
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs


# --------------------------------------------------------------------------- generated names

# upstream's rand alphabet: consonants and digits, so generated names never spell words
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATED_BASE = 58  # names.SimpleNameGenerator: the base cut to 58 characters, plus 5 random


def generate_name(prefix: str) -> str:
    """A name from ``generateName`` (upstream's SimpleNameGenerator), before validation."""
    return prefix[:_MAX_GENERATED_BASE] + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(5))


def safe_encode(data: bytes) -> str:
    """upstream's ``rand.SafeEncodeString``: each byte as a letter of the generated-name alphabet."""
    return "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in data)
