"""tools/code_listing.py: code listings keep their text and every character's colour, with
fewer elements; line anchors go only where no line number links to them.

The colours come from material's own stylesheets (``.highlight .s2{color:var(...)}`` and the
values of those variables in each colour scheme), not from the module's table."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import markdown
import material
import pytest

from tools import layout
from tools.code_listing import slim_listings

STYLESHEETS = Path(material.__file__).parent / "templates" / "assets" / "stylesheets"


def _material_colours() -> list[dict[str, str]]:
    """For each colour scheme (main.css: default, palette.css: slate), each Pygments class
    material colours, and the value it gets."""
    main = next(STYLESHEETS.glob("main.*.min.css")).read_text(encoding="utf-8")
    palette = next(STYLESHEETS.glob("palette.*.min.css")).read_text(encoding="utf-8")
    variable_of = {}
    for selectors, variable in re.findall(
        r"((?:\.highlight \.\w+,?)+)\{color:var\(([\w-]+)\)\}", main
    ):
        for cls in re.findall(r"\.highlight \.(\w+)", selectors):
            variable_of[cls] = variable
    schemes = []
    for css in (main, palette):
        values = dict(re.findall(r"(--md-code-hl-\w+-color):([^;}]+)", css))
        schemes.append({cls: values[variable] for cls, variable in variable_of.items()})
    return schemes


SCHEMES = _material_colours()
PLAIN = "var(--md-code-fg-color)"  # the listing's own colour: text in no span has it

# the site's settings for code (mkdocs.yml: pymdownx.highlight)
HIGHLIGHT = {"pygments_lang_class": True, "anchor_linenums": True}


def render(source: str) -> str:
    """Markdown to HTML the way the site renders code blocks."""
    md = markdown.Markdown(
        extensions=["pymdownx.highlight", "pymdownx.superfences"],
        extension_configs={"pymdownx.highlight": HIGHLIGHT},
    )
    return md.convert(source)


class _Colours(HTMLParser):
    """Each character inside ``<code>``, with the colour ``scheme`` gives it (a space has
    none: it looks the same in any colour)."""

    def __init__(self, scheme: dict[str, str]) -> None:
        super().__init__(convert_charrefs=True)
        self.scheme = scheme
        self.chars: list[tuple[str, str | None]] = []
        self._classes: list[str | None] = []
        self._in_code = 0

    def handle_starttag(self, tag, attrs):
        if tag == "code":
            self._in_code += 1
        if tag == "span":
            self._classes.append(dict(attrs).get("class"))

    def handle_endtag(self, tag):
        if tag == "code":
            self._in_code -= 1
        if tag == "span" and self._classes:
            self._classes.pop()

    def handle_data(self, data):
        if not self._in_code:
            return
        cls = self._classes[-1] if self._classes else None
        colour = self.scheme.get(cls, PLAIN) if cls else PLAIN
        self.chars += [(c, None if c.isspace() else colour) for c in data]


def colours(html: str, scheme: dict[str, str]) -> list[tuple[str, str | None]]:
    parser = _Colours(scheme)
    parser.feed(html)
    return parser.chars


def test_the_colours_are_read_from_material() -> None:
    for scheme in SCHEMES:  # strings, keywords and names as material colours them
        assert scheme["s2"] == scheme["s1"] != scheme["k"] != PLAIN
        assert scheme["n"] == PLAIN


def elements(html: str) -> int:
    return html.count("<span") + html.count("<a ")


@pytest.mark.parametrize(
    "snippet", ["rope/layouts.py", "site_speed/lighthouse.py"], ids=lambda s: s
)
def test_same_text_in_the_same_colours_with_far_fewer_elements(snippet: str) -> None:
    code = (layout.ROOT / "snippets" / snippet).read_text(encoding="utf-8")
    before = render(f"```python\n{code}\n```")
    after = slim_listings(before)
    for scheme in SCHEMES:
        assert colours(after, scheme) == colours(before, scheme)
    assert len(colours(after, SCHEMES[0])) >= len(code)  # the whole listing was compared
    assert elements(after) < 0.6 * elements(before)


def test_empty_line_anchors_go_and_numbered_lines_keep_theirs() -> None:
    plain = slim_listings(render("```python\nx = 1\ny = 2\n```"))
    assert "__codelineno" not in plain  # nothing links to them
    numbered = slim_listings(render('```python linenums="1"\nx = 1\ny = 2\n```'))
    # the line numbers link to the anchors: both stay
    assert numbered.count('href="#__codelineno-') == 2
    assert numbered.count('<a id="__codelineno-') == 2


def test_neighbours_of_one_colour_merge_across_spaces_and_others_stay_apart() -> None:
    head = '<div class="language-python highlight"><pre><span></span><code>'
    tail = "</code></pre></div>"
    body = (
        '<span class="p">)</span> <span class="o">*</span>'  # punctuation, operator: one colour
        '<span class="k">def</span> <span class="nf">f</span>'  # keyword, function: two
        '<span class="s2">"a"</span>\n<span class="s1">\'b\'</span>'  # strings across a newline
    )
    assert (
        slim_listings(head + body + tail)
        == head
        + (
            '<span class="p">) *</span>'
            '<span class="k">def</span> <span class="nf">f</span>'
            '<span class="s2">"a"\n\'b\'</span>'
        )
        + tail
    )


def test_pages_without_material_listings_are_left_alone() -> None:
    # nbconvert's notebook cells (their own stylesheet colours them) and inline code
    notebook = '<div class="highlight hl-ipython3"><pre><span></span><span class="n">x</span></pre>'
    inline = '<p><code class="highlight"><span class="n">x</span></code></p>'
    assert slim_listings(notebook) == notebook
    assert slim_listings(inline) == inline
