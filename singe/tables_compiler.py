"""Compiling the chemistry kernel in its table form (``singe.kernels.table_form``).

``compile_tables`` is what ``singe.compiler.compile_kernel`` runs when the
form chosen is 'tables': mechanism -> tables -> warp programs, kept in a
``TableKernel``, a ``CompiledKernel`` without a dataflow graph or mapping
(the tables take their place), so the simulator, the host runtime,
validation and codegen take it as they take any compiled kernel.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from singe.compiler import CompiledKernel
from singe.kernels.chemistry_tables import ChemistryTables, chemistry_tables
from singe.kernels.table_form import table_programs
from singe.mechanism import Mechanism
from singe.options import CompileOptions


@dataclass(frozen=True)
class TableKernel(CompiledKernel):
    """The chemistry kernel of a mechanism in the table form, with its tables."""

    tables: ChemistryTables | None = None

    form = "tables"

    def verify(self) -> None:
        """The barrier proof of the programs (every workspace access of every row)."""
        self.programs.verify()

    def summary(self) -> str:
        tables, programs = self.tables, self.programs
        return (f"{self.mechanism.name} chemistry (tables): {programs.warps} warps, {tables.n_species} species, "
                f"{tables.n_rows} reaction rows, {programs.shared_slots} workspace slots "
                f"({programs.slot_bytes} B per CTA in global memory), {programs.plan}")


def compile_tables(mech: Mechanism, options: CompileOptions, progress=None) -> TableKernel:
    """The table-form chemistry kernel of ``mech``; ``progress(stage, seconds)`` after each stage."""
    start = time.perf_counter()
    tables = chemistry_tables(mech)
    if progress:
        progress("tables", time.perf_counter() - start)
    start = time.perf_counter()
    programs = table_programs(mech, options)
    if progress:
        progress("programs", time.perf_counter() - start)
    return TableKernel(mech, "chemistry", options, None, None, programs, tables)
