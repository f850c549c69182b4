"""The notebooks in docs/notebooks/: each runs top to bottom within the time a reader is promised,
is committed executed, tells the reader how to install what it imports, is linked from the
chapter it accompanies (both languages), and its Chinese twin's text cells follow the rules
`tools.zh_text` applies to the Chinese pages. The built pages (rendered, formulas, alt text) are
checked by tests/site/test_site.py; here that every notebook has one in each language, with a
download link to the notebook (tools/hooks/notebooks.py).

The mkdocs build executes every notebook too (mkdocs-jupyter, ``execute: true``), but it caches
by content and does not time them.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tools import layout, zh_text

DOCS = layout.DOCS
NOTEBOOKS = sorted(p for p in (DOCS / "notebooks").glob("*.ipynb") if ".zh." not in p.name)
ALL_NOTEBOOKS = sorted((DOCS / "notebooks").glob("*.ipynb"))
BUDGET_S = 60  # "runs top to bottom on a laptop CPU in under a minute" (kernel start included)

# the chapter each notebook accompanies
CHAPTER = {
    "rope-playground": "chapters/05-rope",
    "alibi": "chapters/06-alibi",
    "length-extrapolation": "chapters/07-length-extrapolation",
}


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def test_every_notebook_accompanies_a_chapter() -> None:
    assert {p.stem for p in NOTEBOOKS} == set(CHAPTER)


@pytest.mark.slow
@pytest.mark.parametrize("notebook", ALL_NOTEBOOKS, ids=[p.name for p in ALL_NOTEBOOKS])
def test_notebook_runs_top_to_bottom(notebook: Path, tmp_path: Path) -> None:
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=2 * BUDGET_S, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell (an assert included)
    elapsed = time.perf_counter() - start
    assert elapsed < BUDGET_S, f"{notebook.name} took {elapsed:.0f} s (budget {BUDGET_S} s)"


@pytest.mark.parametrize("notebook", ALL_NOTEBOOKS, ids=[p.name for p in ALL_NOTEBOOKS])
def test_notebook_is_committed_executed(notebook: Path) -> None:
    """Outputs stored, cells run in order from the top, no error output: a downloaded notebook
    shows what running it prints."""
    code = [cell for cell in _cells(notebook) if cell["cell_type"] == "code"]
    assert [cell["execution_count"] for cell in code] == list(range(1, len(code) + 1))
    outputs = [output for cell in code for output in cell["outputs"]]
    assert outputs, "no stored output"
    assert not [o for o in outputs if o["output_type"] == "error"]


@pytest.mark.parametrize("notebook", ALL_NOTEBOOKS, ids=[p.name for p in ALL_NOTEBOOKS])
def test_notebook_says_how_to_run_it(notebook: Path) -> None:
    first = _source(_cells(notebook)[0])
    assert "pip install -e ." in first and "https://github.com/posenc/posenc" in first
    code = "".join(_source(cell) for cell in _cells(notebook) if cell["cell_type"] == "code")
    assert "import posenc" in code


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapter_links_its_notebook(notebook: Path, lang: str) -> None:
    chapter = DOCS / (CHAPTER[notebook.stem] + (".md" if lang == "en" else ".zh.md"))
    assert f"../notebooks/{notebook.name})" in chapter.read_text(encoding="utf-8"), chapter.name


@pytest.mark.parametrize(
    "notebook",
    [p for p in ALL_NOTEBOOKS if layout.language_of(p) == "zh"],
    ids=lambda p: p.name,
)
def test_chinese_text_cells_follow_the_zh_rules(notebook: Path) -> None:
    """The checks tools.zh_text runs on .zh.md pages, on each Markdown cell (make lint runs
    them too)."""
    found = zh_text.notebook_problems(notebook)
    assert not found, "\n".join(found)


SITE = layout.site_dir()


@pytest.mark.site
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
@pytest.mark.parametrize("prefix", ["", "zh/"])
def test_notebook_is_built_in_both_languages(notebook: Path, prefix: str) -> None:
    if not (SITE / "index.html").exists():
        pytest.skip("the site is not built")
    page = SITE / f"{prefix}notebooks/{notebook.stem}/index.html"
    assert page.is_file(), page
    html = page.read_text(encoding="utf-8")
    assert "jp-OutputArea" in html and not re.search(r'"nbformat":\s*4', html)
    # mkdocs-jupyter's Mermaid loader (it imports Mermaid from cdnjs) is not on the page
    assert "cdnjs" not in html and "mermaid" not in html.lower()
    # a download link to the notebook itself (the edit link also ends in .ipynb: not that one)
    name = notebook.name if not prefix else notebook.name.replace(".ipynb", ".zh.ipynb")
    assert re.search(rf'<a href="{re.escape(name)}" download="{re.escape(name)}"', html)
    assert (page.parent / name).is_file()


@pytest.mark.parametrize(("lang", "text"), [("en", "Download this notebook"), ("zh", "下载这个")])
def test_download_link_goes_under_the_title(lang: str, text: str) -> None:
    """The hook's link, without a build: right after the notebook's title, in its language."""
    from types import SimpleNamespace

    from tools.hooks import notebooks

    name = "x.ipynb" if lang == "en" else "x.zh.ipynb"
    file = SimpleNamespace(abs_src_path=f"/docs/notebooks/{name}", locale=lang)
    page = SimpleNamespace(file=file)
    config = SimpleNamespace(theme={"language": "en"})
    html = notebooks._with_download_link('<h1 id="t">T</h1><p>body</p>', page, config)
    link = f'<p class="posenc-notebook-download"><a href="{name}" download="{name}">{text}'
    assert html.startswith(f'<h1 id="t">T</h1>{link}') and html.endswith("<p>body</p>")


def test_the_mermaid_loader_goes_and_a_diagram_stops_the_build() -> None:
    """mkdocs-jupyter's loader, as it writes it, goes with its styles; the rest stays."""
    from tools.hooks.notebooks import without_mermaid_loader

    loader = (
        '<script type="module">\n  document.addEventListener("DOMContentLoaded", async () => {'
        '\n    const diagrams = document.querySelectorAll(".jp-Mermaid > pre.mermaid");'
        '\n    await import("https://cdnjs.cloudflare.com/ajax/libs/mermaid.mjs");\n  });'
        "\n</script>\n<style>.jp-RenderedMermaid{overflow: auto;}</style>"
        "\n<!-- End of mermaid configuration -->"
    )
    other = '<script type="module">import("./x.js")</script>'  # another module script stays
    page = f'<head>{other}</head><body>{loader}<div class="jupyter-wrapper">x</div></body>'
    assert without_mermaid_loader(page, "n.ipynb") == (
        f'<head>{other}</head><body><div class="jupyter-wrapper">x</div></body>'
    )
    diagram = page.replace(
        ">x<", '><div class="jp-Mermaid"><pre class="mermaid">a-->b</pre></div><'
    )
    with pytest.raises(ValueError, match=r"n\.ipynb: a Mermaid diagram"):
        without_mermaid_loader(diagram, "n.ipynb")
