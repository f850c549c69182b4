"""Rebuild data/corpus.txt: a fixed selection of CPython 3.11 standard-library source files.

The corpus ships in the repository (data/corpus.txt, PSF licence in data/LICENSE-PSF.txt), so the
experiment never downloads anything and gives the same text on every Python version. This script
only documents where the text came from; run it with a Python 3.11 interpreter to regenerate it:

    python experiments/extrapolation/make_corpus.py
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

# Prose-heavy modules (long docstrings and comments), in a fixed order.
FILES = [
    "textwrap.py", "argparse.py", "difflib.py", "heapq.py", "bisect.py", "fractions.py",
    "functools.py", "dataclasses.py", "typing.py", "collections/__init__.py", "statistics.py",
    "pprint.py", "string.py", "shlex.py", "calendar.py",
]  # fmt: skip

# ASCII printable characters plus newline: everything else becomes "?".
ALPHABET = "\n" + "".join(chr(c) for c in range(32, 127))


def clean(text: str) -> str:
    text = text.replace("\t", "    ")
    return "".join(ch if ch in ALPHABET else "?" for ch in text)


def main() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    parts = [clean((stdlib / name).read_text(encoding="utf-8")) for name in FILES]
    out = Path(__file__).resolve().parent / "data" / "corpus.txt"
    out.write_text("".join(parts), encoding="ascii")
    print(f"wrote {out} ({out.stat().st_size} characters)")


if __name__ == "__main__":
    main()
