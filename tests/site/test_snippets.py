"""Every snippet file runs on its own (``python snippets/<chapter>/<file>.py``), and every
figure script draws the same bytes twice."""

from __future__ import annotations

import inspect
import os
import runpy
import sys
from pathlib import Path

import pytest

from tools import figures, layout
from tools.layout import ROOT

SNIPPETS = layout.snippet_files()


@pytest.mark.parametrize("script", SNIPPETS, ids=[p.relative_to(ROOT).as_posix() for p in SNIPPETS])
def test_snippet_runs_on_its_own(script: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """The file runs as a reader who copies all of it would run it, and so does every
    ``show_*`` function it defines, in each language, after the whole file has run: a later
    block that reuses a name an earlier ``show_*`` reads would make it print something else
    or fail (seen twice: a table labelled 512 instead of 128, and a crash)."""
    monkeypatch.chdir(tmp_path)  # figure scripts write next to the reader: here, a scratch dir
    monkeypatch.setattr(sys, "argv", [str(script)])
    namespace = runpy.run_path(str(script), run_name="__main__")
    for name, function in namespace.items():
        if not (name.startswith("show_") and inspect.isfunction(function)):
            continue
        if Path(function.__code__.co_filename).resolve() != script.resolve():
            continue  # imported from another file, tested with it
        parameters = inspect.signature(function).parameters.values()
        if any(p.default is inspect.Parameter.empty for p in parameters):
            continue  # needs arguments only its page gives
        if "lang" in inspect.signature(function).parameters:
            for lang in ("en", "zh"):
                function(lang=lang)
        else:
            function()
    import matplotlib.pyplot as plt

    plt.close("all")


def test_every_snippet_folder_and_chapter_test_belongs_to_a_chapter() -> None:
    """snippets/<folder>/ and tests/chapters/test_<folder>.py belong to the chapter page
    docs/chapters/NN-<folder with dashes>.md (tools/layout.py); every chapter has its test.
    A reference page with code (docs/reference/<name>.md) has snippets/<name>/ and
    tests/site/test_<name>.py instead."""
    chapters = {chapter.folder: chapter for chapter in layout.chapters()}
    references = {
        page.stem.replace("-", "_"): page
        for page in (layout.docs() / "reference").glob("*.md")
        if layout.language_of(page) == layout.DEFAULT_LANGUAGE
    }
    folders = {p.name for p in layout.SNIPPETS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    orphans = folders - set(chapters) - set(references)
    assert not orphans, f"snippet folders without a chapter or reference page: {orphans}"
    for name in folders & set(references):
        test = ROOT / "tests" / "site" / f"test_{name}.py"
        assert test.is_file(), f"snippets/{name}/ belongs to {references[name].name}: add {test}"
    tests = {p.stem.removeprefix("test_") for p in (ROOT / "tests" / "chapters").glob("test_*.py")}
    assert tests <= set(chapters), f"chapter tests without a chapter: {tests - set(chapters)}"
    untested = sorted(c.name for c in chapters.values() if not c.test_file.is_file())
    assert not untested, f"chapters without tests/chapters/test_<folder>.py: {untested}"


def test_figures_are_byte_identical(tmp_path: Path) -> None:
    """Redraw every figure and compare with what the build drew (in another process, from the
    cache): same bytes, or the script has an unseeded RNG or a timestamp."""
    from concurrent.futures import ThreadPoolExecutor

    built = figures.build()  # draws what the cache lacks, so there is always a first run
    with figures.painting() as draw, ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        redrawn = dict(
            zip(
                built,
                pool.map(lambda rel: draw(ROOT / rel, tmp_path / rel.replace("/", "_")), built),
                strict=True,
            )
        )
    for script_rel, names in built.items():
        again = redrawn[script_rel]
        assert again == names, f"{script_rel} saved {again}, the build saved {names}"
        for name in names:
            first = (figures.OUT_DIR / name).read_bytes()
            assert first == (tmp_path / script_rel.replace("/", "_") / name).read_bytes(), (
                f"{name} differs between two runs of {script_rel}: seed its RNGs"
            )
