"""The chapter scaffold (tools/new_chapter.py).

* nothing in the repository still carries the scaffold's ``TODO(new-chapter)`` placeholders;
* the scaffold writes both pages, the snippet, the figure script, the test stub, the nav and
  the home-page entries where tools/layout.py says they belong, and refuses names and numbers
  it cannot use;
* (slow) in a temporary copy of the repository, a scaffolded chapter passes the twin and
  snippet checks, builds with ``mkdocs build --strict`` in both languages, its code blocks and
  snippets run, and its stub test fails with a message saying what to write.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import check_snippets, layout, new_chapter, parity
from tools.layout import ROOT

PLACEHOLDER = new_chapter.PLACEHOLDER


def _placeholders(root: Path) -> list[str]:
    paths = [
        *(root / "docs").rglob("*.md"),
        *(root / "snippets").rglob("*.py"),
        *(root / "tests" / "chapters").glob("*.py"),
        root / "mkdocs.yml",
    ]
    found = []
    for path in sorted(paths):
        if not path.is_file():
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if PLACEHOLDER in line:
                found.append(f"{path.relative_to(root).as_posix()}:{lineno}: {line.strip()[:90]}")
    return found


def test_no_scaffold_placeholders_left() -> None:
    """Every TODO(new-chapter) the scaffold wrote has been replaced by real content."""
    left = _placeholders(ROOT)
    assert not left, (
        f"{len(left)} place(s) still to write (replace each {PLACEHOLDER}):\n" + "\n".join(left)
    )


def _mini_repo(tmp_path: Path) -> Path:
    """The parts of the repository the scaffold reads and edits."""
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "docs" / "chapters").mkdir(parents=True)
    for home in ("index.md", "index.zh.md"):
        shutil.copy(ROOT / "docs" / home, tmp_path / "docs" / home)
    for page in (ROOT / "docs" / "chapters").glob("*.md"):
        (tmp_path / "docs" / "chapters" / page.name).write_text("# stub\n", encoding="utf-8")
    return tmp_path


def _nav_chapters(config: str) -> list[str]:
    return re.findall(r"^\s+- .+: (chapters/\d\d-[^\s]+\.md)\s*$", config, re.MULTILINE)


def test_scaffold_writes_a_complete_chapter(tmp_path: Path) -> None:
    root = _mini_repo(tmp_path)
    number = layout.next_chapter_number(root)
    changed = new_chapter.scaffold("demo-topic", "Demo: a topic", "演示主题", root=root)
    nn = f"{number:02d}"
    en, zh = (
        root / f"docs/chapters/{nn}-demo-topic.md",
        root / f"docs/chapters/{nn}-demo-topic.zh.md",
    )
    expected = {
        en,
        zh,
        root / "snippets/demo_topic/demo_topic.py",
        root / "snippets/demo_topic/figure_example.py",
        root / "tests/chapters/test_demo_topic.py",
        root / "mkdocs.yml",
        root / "docs/index.md",
        root / "docs/index.zh.md",
    }
    assert set(changed) == expected
    assert all(p.is_file() for p in expected)
    assert "# Demo: a topic { #demo-topic }" in en.read_text(encoding="utf-8")
    assert "# 演示主题 { #demo-topic }" in zh.read_text(encoding="utf-8")

    # the twins have the same structure, and every include and figure resolves
    assert parity.differences(en, root / "docs") == []
    assert check_snippets.all_problems(root)[0] == []

    # nav: in numeric order, the title quoted where YAML needs it, the zh title translated
    config = (root / "mkdocs.yml").read_text(encoding="utf-8")
    chapters = _nav_chapters(config)
    assert f"chapters/{nn}-demo-topic.md" in chapters
    assert chapters == sorted(chapters)
    assert f'- "Demo: a topic": chapters/{nn}-demo-topic.md' in config
    assert '"Demo: a topic": 演示主题' in config
    assert f"[Demo: a topic](chapters/{nn}-demo-topic.md)" in (root / "docs/index.md").read_text(
        encoding="utf-8"
    )
    # both home pages count one chapter more
    before = len(list((ROOT / "docs" / "chapters").glob("[0-9][0-9]-*.zh.md")))
    for home, pattern in new_chapter.CHAPTER_COUNT.items():
        said = pattern.search((root / "docs" / home).read_text(encoding="utf-8"))
        assert said and int(said.group(1)) == before + 1, home


def test_scaffold_inserts_in_numeric_order(tmp_path: Path) -> None:
    root = _mini_repo(tmp_path)
    for page in (root / "docs" / "chapters").glob("*.md"):
        page.unlink()
    new_chapter.scaffold("third", number=3, root=root)
    new_chapter.scaffold("first-one", number=1, root=root)
    assert layout.next_chapter_number(root) == 4
    chapters = [
        c
        for c in _nav_chapters((root / "mkdocs.yml").read_text(encoding="utf-8"))
        if re.search(r"/0[13]-(third|first-one)\.md", c)
    ]
    assert chapters == ["chapters/01-first-one.md", "chapters/03-third.md"]


@pytest.mark.parametrize("name", ["Demo", "demo_topic", "demo--topic", "-demo", "1demo", ""])
def test_scaffold_rejects_bad_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(new_chapter.ScaffoldError, match="lowercase words joined by dashes"):
        new_chapter.scaffold(name, root=_mini_repo(tmp_path))


def test_scaffold_refuses_to_overwrite(tmp_path: Path) -> None:
    root = _mini_repo(tmp_path)
    new_chapter.scaffold("demo-topic", root=root)
    before = (root / "mkdocs.yml").read_text(encoding="utf-8")
    with pytest.raises(new_chapter.ScaffoldError, match="exists already"):
        new_chapter.scaffold("demo-topic", root=root)
    taken = layout.next_chapter_number(root) - 1
    with pytest.raises(new_chapter.ScaffoldError, match=f"number {taken:02d} is taken"):
        new_chapter.scaffold("other-topic", number=taken, root=root)
    assert (root / "mkdocs.yml").read_text(encoding="utf-8") == before


def _copy_of_repo(dest: Path) -> Path:
    """The working tree without its ignored files (tracked and new files), plus the caches
    that make a build fast (figures and notebooks are cached by content). The virtual
    environment and node_modules are used in place."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    for cache in ("figures", "mkdocs-jupyter"):
        if (ROOT / ".cache" / cache).is_dir():
            shutil.copytree(ROOT / ".cache" / cache, dest / ".cache" / cache)
    if (ROOT / "node_modules").is_dir():
        (dest / "node_modules").symlink_to(ROOT / "node_modules")
    return dest


def _env() -> dict[str, str]:
    return dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONDONTWRITEBYTECODE="1")


def _run(args: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=_env()
    )


def _pytest(python: str, repo: Path, *args: str) -> subprocess.CompletedProcess:
    return _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], repo)


@pytest.mark.slow
def test_scaffolded_chapter_builds_and_its_stub_test_fails(tmp_path: Path) -> None:
    repo = _copy_of_repo(tmp_path / "repo")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)  # dates: nothing committed yet
    bindir = ROOT / ".venv" / "bin"
    if not (bindir / "mkdocs").exists():
        bindir = Path(sys.executable).parent
    python = str(bindir / "python")

    made = _run(
        [
            python,
            "-m",
            "tools.new_chapter",
            "demo-topic",
            "--title",
            "Demo topic",
            "--zh-title",
            "演示主题",
        ],
        repo,
    )
    assert made.returncode == 0, made.stderr
    assert "TODO(new-chapter)" in made.stdout  # the next steps name the placeholders
    slug = next((repo / "docs" / "chapters").glob("[0-9][0-9]-demo-topic.md")).stem

    # build the site and run the chapter's tests at the same time (each takes a while)
    site = tmp_path / "site"
    build = subprocess.Popen(
        [python, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
        cwd=repo,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    tests = _pytest(
        python,
        repo,
        "tests/site/test_codeblocks.py",
        "tests/site/test_snippets.py",
        "tests/chapters/test_demo_topic.py",
        "-k",
        "demo-topic or demo_topic",
    )
    log, _ = build.communicate(timeout=300)

    # its code blocks and snippets pass; its stub test fails and says what to write
    assert re.search(r"\b1 failed, \d+ passed", tests.stdout), tests.stdout[-3000:]
    assert "FAILED tests/chapters/test_demo_topic.py" in tests.stdout
    assert "write the tests for chapter demo-topic" in tests.stdout

    # it builds in both languages with --strict, figure, edit link and date included
    assert build.returncode == 0 and "WARNING" not in log, log[-4000:]
    en = (site / "chapters" / slug / "index.html").read_text(encoding="utf-8")
    zh = (site / "zh" / "chapters" / slug / "index.html").read_text(encoding="utf-8")
    assert "<h1" in en and "Demo topic" in en and "演示主题" in zh
    assert f"chapters/{slug}/" in (site / "index.html").read_text(encoding="utf-8")
    assert f"chapters/{slug}/" in (site / "zh" / "index.html").read_text(encoding="utf-8")
    assert (site / "figures" / "demo-topic-example.svg").is_file()
    today = datetime.date.today().isoformat()
    for html, source in ((en, f"{slug}.md"), (zh, f"{slug}.zh.md")):
        assert f"/edit/main/docs/chapters/{source}" in html
        assert f'<time datetime="{today}">' in html
    assert "/blob/main/CONTRIBUTING.md" in en and "/blob/main/CONTRIBUTING.zh.md" in zh  # footer

    # the twin and snippet checks find nothing wrong with it; the placeholder check names it
    for tool in ("tools.parity", "tools.check_snippets"):
        checked = _run([python, "-m", tool], repo).stdout
        assert "demo-topic" not in checked and "demo_topic" not in checked, (tool, checked)
    left = "\n".join(_placeholders(repo))
    for path in (
        f"docs/chapters/{slug}.md",
        f"docs/chapters/{slug}.zh.md",
        "snippets/demo_topic/demo_topic.py",
        "docs/index.md",
        "docs/index.zh.md",
    ):
        assert path + ":" in left

    # once the test is written, it passes
    (repo / "tests" / "chapters" / "test_demo_topic.py").write_text(
        "def test_claim() -> None:\n    assert sum(range(4)) == 6\n", encoding="utf-8"
    )
    written = _pytest(python, repo, "tests/chapters/test_demo_topic.py")
    assert written.returncode == 0, written.stdout
