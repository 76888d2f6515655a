"""Kubernetes name rules with upstream's messages (apimachinery util/validation)."""

from __future__ import annotations

import pytest

from pyhpa.api.names import (
    DNS1123_LABEL,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_key,
    is_qualified_name,
    is_valid_label_value,
    is_valid_path_segment_name,
)

LABEL_REGEX = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
QN_RULE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
           "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
           "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def test_dns1035_labels_start_with_a_letter():
    rule = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
            "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
            "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
    assert is_dns1035_label("web-1") == [] and is_dns1035_label("a" * 63) == []
    assert is_dns1035_label("1web") == [rule]
    assert is_dns1035_label("a" * 64) == ["must be no more than 63 characters"]


@pytest.mark.parametrize("good", ["a", "web-1", "0", "a" * 63])
def test_dns1123_labels(good):
    assert is_dns1123_label(good) == []


def test_dns1123_label_messages():
    regex = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             f"and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '{LABEL_REGEX}')")
    assert is_dns1123_label("Web") == [regex]
    assert is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]
    assert is_dns1123_label("web\n") == [regex]  # Go's $ does not allow a final newline
    assert DNS1123_LABEL.match("web") and not DNS1123_LABEL.match("web.x")


def test_dns1123_subdomain_messages():
    assert is_dns1123_subdomain("x.example.com") == []
    (msg,) = is_dns1123_subdomain("a_b")
    assert msg.startswith("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'")
    assert msg.endswith("(e.g. 'example.com', regex used for validation is "
                        f"'{LABEL_REGEX}(\\.{LABEL_REGEX})*')")
    assert is_dns1123_subdomain("a" * 254)[0] == "must be no more than 253 characters"


def test_qualified_names_and_label_keys():
    assert is_qualified_name("example.com/My_Name.1") == []
    assert is_qualified_name("/x") == ["prefix part must be non-empty"]
    assert is_qualified_name("x/") == ["name part must be non-empty", "name part " + QN_RULE]
    assert is_qualified_name("-x") == ["name part " + QN_RULE]
    assert is_qualified_name("a" * 64) == ["name part must be no more than 63 characters"]
    assert is_qualified_name("Bad_Prefix/x")[0].startswith("prefix part a lowercase RFC 1123 subdomain")
    tail = " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    assert is_qualified_name("a/b/c") == ["a qualified name " + QN_RULE + tail]
    assert is_label_key("a/b/c") == ["a valid label key " + QN_RULE + tail]  # the selector parser's wording
    assert is_label_key("x/") == is_qualified_name("x/")


def test_label_values():
    assert is_valid_label_value("") == [] and is_valid_label_value("my_value.1") == []
    (msg,) = is_valid_label_value("a b")
    assert msg.startswith("a valid label must be an empty string or consist of alphanumeric characters")
    # Lengths are bytes, as Go counts them: 32 two-byte characters are too long.
    assert is_valid_label_value("é" * 32)[0] == "must be no more than 63 characters"


def test_path_segment_names():
    assert is_valid_path_segment_name("web") == []
    assert is_valid_path_segment_name("..") == ["may not be '..'"]
    assert is_valid_path_segment_name("a/b%c") == ["may not contain '/'", "may not contain '%'"]


def test_generated_names_cut_the_prefix_and_add_five_safe_characters():
    from pyhpa.api.names import generate_name, safe_encode

    name = generate_name("x" * 70)
    assert len(name) == 63 and name.startswith("x" * 58)
    assert set(name[58:]) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert safe_encode(bytes([0, 1, 26, 27])) == "bc9b"  # 27 letters: byte 27 wraps to the first
