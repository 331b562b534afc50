"""Mechanisms shipped with singe (generated from Cantera's data by mechanisms/generate.py)."""

from __future__ import annotations

import pathlib

from singe.errors import SingeInputError

_PACKAGE = pathlib.Path(__file__).resolve().parent
# In a source checkout the folder is top-level; an installed wheel carries it in the package.
_LOCATIONS = (_PACKAGE.parent / "mechanisms", _PACKAGE / "mechanisms")


def bundled_names() -> list[str]:
    """Names of the bundled mechanisms (e.g. 'gri30', 'h2o2')."""
    names = set()
    for folder in _LOCATIONS:
        if folder.is_dir():
            names.update(p.name for p in folder.iterdir() if (p / f"{p.name}.inp").is_file())
    return sorted(names)


def bundled_path(name: str) -> pathlib.Path | None:
    """Path of bundled mechanism ``name``'s reaction file, or None."""
    for folder in _LOCATIONS:
        candidate = folder / name / f"{name}.inp"
        if candidate.is_file():
            return candidate
    return None


def resolve_mechanism(argument: str) -> pathlib.Path:
    """A file path as given, or the bundled mechanism of that name."""
    path = pathlib.Path(argument)
    if path.is_file() or path.suffix.lower() in (".yaml", ".yml"):
        return path  # a YAML name may be one of Cantera's data files
    if path.is_dir():
        inputs = sorted(p.name for p in path.glob("*.inp")) + sorted(p.name for p in path.glob("*.yaml"))
        raise SingeInputError(f"{argument}: is a directory; give the CHEMKIN reaction file"
                              + (f" ({', '.join(inputs[:5])} is there)" if inputs else ""))
    bundled = bundled_path(argument)
    if bundled is None:
        raise SingeInputError(f"{argument}: no such mechanism file, and no bundled mechanism of that name "
                              f"(bundled: {', '.join(bundled_names())})")
    return bundled
