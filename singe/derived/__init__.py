"""Tables derived from a ``Mechanism``, built once per mechanism object
(``singe.memo.per_mechanism``) and read by both the kernels and ``singe.reference``.

* ``thermo``: the stacked NASA7/NASA9 polynomials and their evaluation;
* ``stoichiometry``: reaction stoichiometry and the stiff species' nu', nu'';
* ``rates``: the rate tables (Arrhenius, falloff, PLOG, Chebyshev, third-body
  efficiencies, reversibility, concentration products);
* ``qssa``: the structure of the linearized QSSA system;
* ``transport``: the transport fits (viscosity, diffusion, conductivity).

The package imports only ``singe.mechanism``, ``singe.constants``,
``singe.errors`` and ``singe.memo``: the kernels never need the reference's
internals, and the reference only evaluates these tables.
"""
