"""What machine produced a result: the one place benchmarks and experiments read it from."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_name() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what the platform module reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
