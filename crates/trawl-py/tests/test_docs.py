"""docs/python.md's examples against the package's stubs: the CSV example passes
`mypy --strict` on this machine's Python, and the stubs cover the native module."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import trawl
import trawl._trawl as native

ROOT = Path(__file__).resolve().parents[3]


def example(heading: str) -> str:
    text = (ROOT / "docs" / "python.md").read_text()
    section = text.split(f"## {heading}", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, f"no python block under {heading!r}"
    return found.group(1)


def test_the_csv_example_passes_mypy_strict(tmp_path: Path) -> None:
    path = tmp_path / "pages_to_csv.py"
    path.write_text(example("Example: pages to CSV"))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_stubs_name_every_public_name_and_each_has_a_docstring() -> None:
    stub = (Path(trawl.__file__).parent / "__init__.pyi").read_text()
    assert (Path(trawl.__file__).parent / "py.typed").is_file()
    for name in trawl.__all__:
        assert re.search(rf"\b{re.escape(name)}\b", stub), name
    for cls in (native.Crawl, native.Page, native.PageStream, native.OutcomeStream):
        assert cls.__doc__, cls
        for attr, value in vars(cls).items():
            if not attr.startswith("_"):
                assert getattr(value, "__doc__", None), f"{cls.__name__}.{attr}"
                assert re.search(rf"def {attr}\b", stub), f"{cls.__name__}.{attr} not in the stubs"
