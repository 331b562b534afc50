"""Small CHEMKIN mechanisms written by tests, with thermo and transport data
taken from the bundled GRI-Mech 3.0 files (renamed copies where a test needs
species names with odd characters)."""

from __future__ import annotations

import pathlib

from cantera_reference import BUNDLED_MECHANISMS

GRI = BUNDLED_MECHANISMS / "gri30"


def _gri_thermo() -> dict[str, list[str]]:
    lines = (GRI / "therm.dat").read_text().splitlines()
    entries = {}
    for i, line in enumerate(lines):
        if line[79:80] == "1" and not line.startswith("!"):
            entries[line[:18].split()[0]] = lines[i:i + 4]
    return entries


def _gri_transport() -> dict[str, str]:
    records = {}
    for line in (GRI / "tran.dat").read_text().splitlines():
        words = line.split("!")[0].split()
        if len(words) == 7:
            records[words[0]] = line.split("!")[0]
    return records


def thermo_text(species: dict[str, str], header: str = "THERMO ALL\n   300.000  1000.000  5000.000\n",
                end: str = "END\n") -> str:
    """THERMO text for ``{name: gri_species_to_copy}``."""
    entries = _gri_thermo()
    out = [header]
    for name, source in species.items():
        card1, *rest = entries[source]
        out.append(f"{name:<18}{card1[18:]}\n")
        out.extend(line + "\n" for line in rest)
    out.append(end)
    return "".join(out)


def transport_text(species: dict[str, str]) -> str:
    """TRANSPORT records for ``{name: gri_species_to_copy}``."""
    records = _gri_transport()
    return "".join(f"{name:<18}{records[source][len(source):].strip():>60}\n" for name, source in species.items())


def write_mechanism(folder: pathlib.Path, reactions: str, species: dict[str, str] | None = None,
                    stem: str = "mech", header: str = "REACTIONS", qss: str | None = None,
                    elements: str = "H O N AR") -> pathlib.Path:
    """Write ``<stem>.inp``, ``therm.dat``, ``tran.dat`` (and ``<stem>.qss``) into ``folder``."""
    species = species or {n: n for n in ("H2", "H", "O", "O2", "OH", "H2O", "HO2", "H2O2", "N2", "AR")}
    text = (f"ELEMENTS\n{elements}\nEND\nSPECIES\n{' '.join(species)}\nEND\n"
            f"{header}\n{reactions.strip()}\nEND\n")
    chem = folder / f"{stem}.inp"
    chem.write_text(text)
    (folder / "therm.dat").write_text(thermo_text(species))
    (folder / "tran.dat").write_text(transport_text(species))
    if qss is not None:
        (folder / f"{stem}.qss").write_text(qss)
    return chem
