"""The NASA9 air example (N2, O2, NO, N, O with NASA RP-1311 thermo from
Cantera's airNASA9.yaml, transport and the reactions among them from
air.yaml), written both as Cantera YAML and as CHEMKIN files.

Used by the YAML/CHEMKIN comparisons (test_cantera_yaml.py) and by the fuzz
test (fuzz_mechanisms.py)."""

from __future__ import annotations

import pathlib

import cantera as ct
from cantera.yaml2ck import convert as yaml2ck

AIR_SPECIES = ("N2", "O2", "NO", "N", "O")


def nasa9_text(species: list[ct.Species]) -> str:
    """THERMO NASA9 text (NASA RP-1311, Appendix A) of Cantera species."""
    out = ["THERMO NASA9", "    200.000  1000.000  6000.000 20000.000   9/09/04"]
    for spec in species:
        c = list(spec.thermo.coeffs)
        formula = "".join(f"{e:<2}{n:6.2f}" for e, n in spec.composition.items())
        out.append(f"{spec.name:<24}NASA RP-1311 data via Cantera")
        out.append(f"{int(c[0]):2d} g 9/09 {formula:<40}0{spec.molecular_weight:13.7f}{0.0:15.3f}")
        for r in range(int(c[0])):
            T_min, T_max, *a = c[1 + 11 * r:12 + 11 * r]
            out.append(f" {T_min:10.3f}{T_max:10.3f} 7 -2.0 -1.0  0.0  1.0  2.0  3.0  4.0  0.0{0.0:17.3f}")
            out.append("".join(f"{x:16.9E}".replace("E", "D") for x in a[0:5]))
            out.append("".join(f"{x:16.9E}".replace("E", "D") for x in a[5:7]) + " " * 16
                       + "".join(f"{x:16.9E}".replace("E", "D") for x in a[7:9]))
    return "\n".join(out + ["END", ""])


def air_solution(thermo_source: str) -> ct.Solution:
    """N2, O2, NO, N, O with thermo from ``thermo_source``, transport and the
    reactions among them from Cantera's air.yaml."""
    air = ct.Solution("air.yaml")
    by_name = {s.name: s for s in ct.Species.list_from_file(thermo_source)}
    species = []
    for name in AIR_SPECIES:
        spec = by_name[name]
        spec.transport = air.species(name).transport
        species.append(spec)
    base = ct.Solution(thermo="ideal-gas", kinetics="gas", species=species, reactions=[])
    reactions = []
    for reaction in air.reactions():
        if set(reaction.reactants) | set(reaction.products) <= set(AIR_SPECIES):
            data = dict(reaction.input_data)
            if "efficiencies" in data:
                data["efficiencies"] = {k: v for k, v in data["efficiencies"].items() if k in AIR_SPECIES}
            reactions.append(ct.Reaction.from_dict(data, base))
    return ct.Solution(thermo="ideal-gas", kinetics="gas", transport_model="mixture-averaged",
                       species=species, reactions=reactions)


def write_air_nasa9(folder: pathlib.Path, thermo_name: str = "air9.dat") -> dict[str, pathlib.Path]:
    """Write air9.yaml (Cantera), and the same as CHEMKIN: air9.inp and
    air9.tran (yaml2ck of a NASA7 stand-in) with ``thermo_name`` (NASA9)."""
    folder.mkdir(parents=True, exist_ok=True)
    gas = air_solution("airNASA9.yaml")
    gas.write_yaml(str(folder / "air9.yaml"))
    stand_in = air_solution("air.yaml")
    yaml2ck(stand_in, mechanism_path=folder / "air9.inp", thermo_path=folder / "air7.therm",
            transport_path=folder / "air9.tran", overwrite=True)
    (folder / thermo_name).write_text(nasa9_text([gas.species(n) for n in AIR_SPECIES]))
    return {"yaml": folder / "air9.yaml", "inp": folder / "air9.inp", "thermo": folder / thermo_name,
            "transport": folder / "air9.tran"}
