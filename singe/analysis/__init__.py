"""Analyses of warp programs: convergence, variance and divergence, scalarization.

``singe.analysis.program`` is the generic program form (an SSA control-flow
graph with a SIMT interpreter) the analyses run on; ``singe.analysis.scalarize``
holds the analyses and the scalarization report of warp programs.  Nothing
here imports codegen: the lowering both follow is ``singe.programs.lowering``.
"""
