"""The README's Python example runs as written, from the repository root."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def python_example() -> str:
    """The first ```python block of the README's "From Python" section."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## From Python"):]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_readme_python_example_runs(tmp_path):
    """Run in a copy of the repository root's layout (its mechanisms folder), so
    the example's ``out/`` lands in a temporary folder."""
    (tmp_path / "mechanisms").symlink_to(ROOT / "mechanisms")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", python_example()], cwd=tmp_path, env=environment,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "out" / "h2o2_viscosity.cu").is_file()


def test_readme_example_uses_the_top_level_api():
    """Only ``singe.`` names: no import of the compiler's internal modules."""
    code = python_example()
    assert not re.search(r"^\s*from singe\.|^\s*import singe\.", code, re.MULTILINE)
    assert "singe.compile_kernel" in code and "singe.load_mechanism" in code
