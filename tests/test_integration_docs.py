"""README's "Integrating the kernels": every snippet is verbatim from a file
that a test builds or runs (examples/), and the Python example runs."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SNIPPETS = {  # README fence language -> (file, start marker, end marker)
    "cpp": ("examples/cpp/driver.cpp", "// [launch]", "// [launch end]"),
    "fortran": ("examples/fortran/driver.f90", "! [launch]", "! [launch end]"),
    "python": ("examples/python/run_kernels.py", "# [python]", "# [python end]"),
}


def snippet(path: str, start: str, end: str) -> str:
    """The lines between the start and end marker lines of ``path``, dedented."""
    lines = (ROOT / path).read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip().startswith(start))
    last = next(i for i, line in enumerate(lines) if line.strip() == end)
    body = lines[first + 1:last]
    indent = min(len(line) - len(line.lstrip()) for line in body if line.strip())
    return "\n".join(line[indent:] for line in body)


def integration_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Integrating the kernels")
    return text[start:text.index("\n## ", start + 1)]


def test_readme_snippets_are_the_example_files():
    section = integration_section()
    for language, (path, start, end) in SNIPPETS.items():
        assert f"```{language}\n{snippet(path, start, end)}\n```" in section, f"README's {language} call != {path}"


def test_a_changed_example_would_fail_the_check():
    """Companion: a snippet that differs by one character is not found."""
    text = snippet(*SNIPPETS["cpp"]).replace("n, n, NULL", "n, n, 0", 1)
    assert f"```cpp\n{text}\n```" not in integration_section()


def test_python_example_runs_and_matches_the_reference():
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / "run_kernels.py"), "64"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "h2o2_chemistry on the " in done.stdout and "64 points, largest error" in done.stdout
