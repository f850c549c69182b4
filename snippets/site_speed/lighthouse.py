"""Page "How fast the site loads" (docs/reference/site-speed.md): the site's own Lighthouse scores.

Run it: python snippets/site_speed/lighthouse.py   (reads benchmarks/results/lighthouse.json,
written by `make lighthouse`, i.e. `python -m benchmarks.lighthouse`)
"""

# --8<-- [start:pages]
import statistics
import unicodedata

from benchmarks.results import load_lighthouse

lighthouse = load_lighthouse()  # benchmarks/results/lighthouse.json, checked against its schema

LABELS = {
    "en": {
        "head": ("page", "perf.", "runs", "a11y", "b.p.", "SEO", "HTML kB", "loaded kB"),
        "home": "(home)",
        "summary": "{pages} pages ({en} en, {zh} zh), {runs} Lighthouse runs each,"
        " measured {created}",
        "machine": "load average {start} at the start, {end} at the end ({cores} cores);"
        " benchmarkIndex {bench:.0f}",
        "below": "pages below budget: performance {perf}, accessibility {a11y},"
        " best practices {bp}, SEO {seo}",
    },
    "zh": {
        "head": ("页面", "性能", "各次", "无障碍", "最佳实践", "SEO", "HTML kB", "下载 kB"),
        "home": "（首页）",
        "summary": "{pages} 个页面（英文 {en}，中文 {zh}），每页 Lighthouse 测 {runs} 次，"
        "测于 {created}",
        "machine": "负载均值：开始时 {start}，结束时 {end}（{cores} 核）；benchmarkIndex {bench:.0f}",
        "below": "低于目标的页面数：性能 {perf}，无障碍 {a11y}，最佳实践 {bp}，SEO {seo}",
    },
}


def columns(text):
    """Width in terminal columns (a Chinese character takes two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in str(text))


def pad(text, width, right=False):
    """Pad to a width in terminal columns."""
    space = " " * max(width - columns(text), 0)
    return f"{space}{text}" if right else f"{text}{space}"


def pages_table(lang="en"):
    """One row per measured page: the median performance score and every run's, the other
    scores (from the first run), the page's HTML as served (gzip) and everything it loaded."""
    label = LABELS[lang]
    names = [row["page"] or label["home"] for row in lighthouse["pages"]]
    widths = (max(map(columns, names)), 5, 9, 7, 9, 4, 8, 9)

    def line(cells):  # the first column to the left, the numbers to the right
        sized = zip(cells, widths, strict=True)
        print(" ".join(pad(c, w, right=i > 0) for i, (c, w) in enumerate(sized)))

    line(label["head"])
    for name, row in zip(names, lighthouse["pages"], strict=True):
        s, runs = row["scores"], row["performance_runs"]
        # the page is judged by the median of its runs, never the best
        assert s["performance"] == round(statistics.median(runs))
        cells = (
            name,
            s["performance"],
            "/".join(str(r) for r in runs),
            s["accessibility"],
            s["best-practices"],
            s["seo"],
            f"{row['bytes']['html_gzip'] / 1e3:.0f}",
            f"{row['transfer_bytes'] / 1e3:.0f}",
        )
        line(cells)
    langs = [row["lang"] for row in lighthouse["pages"]]
    print(
        label["summary"].format(
            pages=len(langs),
            en=langs.count("en"),
            zh=langs.count("zh"),
            runs=lighthouse["runs"],
            created=lighthouse["created"][:16].replace("T", " ") + " UTC",
        )
    )
    bench = statistics.median(b for row in lighthouse["pages"] for b in row["benchmark_index"])
    load = lighthouse["load_average"]
    print(
        label["machine"].format(
            start=load["start"],
            end=load["end"],
            cores=lighthouse["machine"]["cpu_count"],
            bench=bench,
        )
    )
    below = {
        key: sum(row["scores"][key] < budget for row in lighthouse["pages"])
        for key, budget in lighthouse["budgets"].items()
    }
    print(
        label["below"].format(
            perf=below["performance"],
            a11y=below["accessibility"],
            bp=below["best-practices"],
            seo=below["seo"],
        )
    )


# --8<-- [end:pages]


# --8<-- [start:math]
MATH_LABELS = {
    "en": ("formulas", "HTML (gzip)", "loaded", "performance", "runs"),
    "zh": ("公式", "HTML（gzip）", "下载", "性能", "各次"),
}


def math_comparison(lang="en"):
    """Each formula-heavy chapter built with each formula output (* marks the site's): the
    formulas' bytes in the HTML, the page's HTML as served, everything it loaded, and
    Lighthouse's median performance score with every run's."""
    formulas, html, loaded, perf, runs = MATH_LABELS[lang]
    comparison = lighthouse["math_comparison"]
    modes, chosen = comparison["modes"], comparison["chosen"]
    for page in modes[chosen]:
        print(page)
        for mode, measured in modes.items():
            m = measured[page]
            mark = "*" if mode == chosen else " "
            print(
                f" {mark}{mode:11} {formulas} {m['bytes']['formulas'] / 1e3:5.0f} kB,"
                f" {html} {m['bytes']['html_gzip'] / 1e3:4.0f} kB,"
                f" {loaded} {m['transfer_bytes'] / 1e3:4.0f} kB,"
                f" {perf} {m['performance']:3} ({runs} {'/'.join(map(str, m['performance_runs']))})"
            )
            if mode != chosen:
                # the site's output is the lighter one: its formulas and its HTML as served
                for key in ("formulas", "html_gzip"):
                    assert m["bytes"][key] > modes[chosen][page]["bytes"][key]


# --8<-- [end:math]


if __name__ == "__main__":
    pages_table()
    math_comparison()
