"""The signature an emitted kernel carries: entry point, fields, species order.

Codegen appends one comment line to every ``.cu`` file it writes::

    // singe-signature: {"entry": "h2o2_viscosity", "kernel": "viscosity", "style": "warp-specialized",
    //                   "species": ["H2", ...], "parameters": [{"field": "temperature", "output": false,
    //                   "rows": "point"}, ...]}

(on one line, JSON).  The entry point is ``extern "C" int entry(<one double
array per parameter, const for inputs>, int n_points, int species_stride,
void *stream)``; ``rows`` is "point" (n_points values) or "species"
(len(species) rows, species-major).  The host runner reads this line, not
the code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

MARKER = "// singe-signature: "
POINT = "point"
SPECIES = "species"


@dataclass(frozen=True)
class Parameter:
    """One array argument of the kernel's C entry point."""

    field: str
    output: bool
    rows: str = SPECIES  # POINT or SPECIES


@dataclass(frozen=True)
class Signature:
    entry: str
    kernel: str
    style: str
    species: tuple[str, ...]
    parameters: tuple[Parameter, ...]

    def row_count(self, field: str) -> int:
        """Rows of a field's array: 1, or the number of species."""
        rows = {p.field: p.rows for p in self.parameters}[field]
        return 1 if rows == POINT else len(self.species)

    def line(self) -> str:
        """The comment line codegen appends to the kernel."""
        data = {"entry": self.entry, "kernel": self.kernel, "style": self.style, "species": list(self.species),
                "parameters": [{"field": p.field, "output": p.output, "rows": p.rows} for p in self.parameters]}
        return MARKER + json.dumps(data, separators=(", ", ": ")) + "\n"


def find_signature(text: str) -> Signature | None:
    """The signature carried by kernel ``text``; None if it carries none.
    Raises ValueError on a malformed signature line."""
    lines = [line for line in text.splitlines() if line.startswith(MARKER)]
    if not lines:
        return None
    if len(lines) > 1:
        raise ValueError(f"{len(lines)} signature lines, expected one")
    try:
        data = json.loads(lines[0][len(MARKER):])
        parameters = tuple(Parameter(p["field"], bool(p["output"]), p["rows"]) for p in data["parameters"])
        signature = Signature(data["entry"], data["kernel"], data["style"], tuple(data["species"]), parameters)
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise ValueError(f"malformed signature line: {error}") from None
    if any(p.rows not in (POINT, SPECIES) for p in parameters):
        raise ValueError(f"signature rows must be '{POINT}' or '{SPECIES}'")
    return signature
