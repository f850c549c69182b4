"""A notebook page's stylesheet cut down to the rules its own HTML can use.

mkdocs-jupyter inlines JupyterLab's whole stylesheet (575 kB: widgets, menus, dialogs, a
thousand colour variables) into every notebook page, and a phone parses and matches all of
it before the page shows (about half of a notebook page's bytes). A static notebook uses a
few dozen of its classes. This module keeps

* every rule with a selector whose classes all occur in the page (classes inside ``:not()``
  do not count: the selector matches without them), and every rule without a class;
* the classes JupyterLab's own scripts on the page add at run time (``RUNTIME_CLASSES``);
* at-rules: ``@media`` and ``@supports`` with the rules kept inside them, the others whole;
* the custom properties (``--jp-...``) that a kept rule uses, directly or through another
  property.

Everything else is dropped. What a rule *declares* is never changed, so an element styled by
a kept rule looks exactly as before (tests/browser/test_notebook_styles.py checks computed styles
in Chromium on a real notebook page).
"""

from __future__ import annotations

import re

import tinycss2

# classes that mkdocs-jupyter's and JupyterLab's page scripts add after load (mermaid
# diagrams, state modifiers)
RUNTIME_CLASSES = ("jp-mod-", "jp-RenderedMermaid", "sr-only")

_CLASS = re.compile(r"\.(-?[_a-zA-Z][-_a-zA-Z0-9]*)")
_NOT = re.compile(r":not\((?:[^()]|\([^()]*\))*\)")
_VAR_USE = re.compile(r"var\(\s*(--[-_a-zA-Z0-9]+)")
_CLASS_ATTR = re.compile(r'\bclass="([^"]*)"')
_GROUPING = {"media", "supports", "layer", "container"}


def classes_in(page_html: str) -> set[str]:
    """Every class named in a ``class`` attribute of ``page_html``."""
    return {name for value in _CLASS_ATTR.findall(page_html) for name in value.split()}


def _selector_matches_page(selector: str, classes: set[str]) -> bool:
    needed = _CLASS.findall(_NOT.sub("", selector))
    return all(name in classes or name.startswith(RUNTIME_CLASSES) for name in needed)


def _split_selectors(prelude: str) -> list[str]:
    """A selector list split at its top-level commas (not those inside ``:is(a, b)``)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(prelude):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(prelude[start:i].strip())
            start = i + 1
    parts.append(prelude[start:].strip())
    return [part for part in parts if part]


def _kept_rules(rules, classes: set[str]) -> list[str]:
    out = []
    for rule in rules:
        if rule.type == "qualified-rule":
            prelude = tinycss2.serialize(rule.prelude)
            selectors = [s for s in _split_selectors(prelude) if _selector_matches_page(s, classes)]
            if selectors:
                out.append(f"{','.join(selectors)}{{{tinycss2.serialize(rule.content)}}}")
        elif rule.type == "at-rule":
            if rule.lower_at_keyword in _GROUPING and rule.content is not None:
                inner = _kept_rules(
                    tinycss2.parse_rule_list(
                        rule.content, skip_comments=True, skip_whitespace=True
                    ),
                    classes,
                )
                if inner:
                    prelude = tinycss2.serialize(rule.prelude).strip()
                    out.append(f"@{rule.at_keyword} {prelude}{{{''.join(inner)}}}")
            elif rule.lower_at_keyword != "charset":
                out.append(rule.serialize())
    return out


_DECLARATION = re.compile(
    r"(?<=[{;])\s*(--[-_a-zA-Z0-9]+)\s*:(?:[^;{}()]|\([^()]*(?:\([^()]*\)[^()]*)*\))*;?"
)


def drop_unused_properties(css: str, read_elsewhere: set[str] = frozenset()) -> str:
    """Remove ``--name: value`` declarations that nothing in ``css`` (nor ``read_elsewhere``)
    reads, repeatedly (a property read only by a removed one goes too)."""
    while True:
        used = set(_VAR_USE.findall(css)) | set(read_elsewhere)
        slimmer = _DECLARATION.sub(
            lambda m, used=used: m.group(0) if m.group(1) in used else "", css
        )
        if slimmer == css:
            return slimmer
        css = slimmer


def properties_read(text: str) -> set[str]:
    """The custom properties ``text`` (CSS, or a page with styles) reads with ``var()``."""
    return set(_VAR_USE.findall(text))


def purge_rules(css: str, classes: set[str]) -> str:
    """``css`` without the rules no element with ``classes`` can use (custom properties
    untouched)."""
    rules = tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)
    return "".join(_kept_rules(rules, classes))


def purge(css: str, classes: set[str], read_elsewhere: set[str] = frozenset()) -> str:
    """``css`` without the rules no element with ``classes`` can use, and without the custom
    properties that neither the rules kept nor ``read_elsewhere`` read (see the module's
    docstring)."""
    return drop_unused_properties(purge_rules(css, classes), read_elsewhere)
