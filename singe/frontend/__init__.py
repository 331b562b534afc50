"""The frontend: CHEMKIN, THERMO (NASA7, NASA9), TRANSPORT and QSS files, or
a Cantera YAML file -> ``Mechanism``.

``load_mechanism`` is the one entry point.  Files not given are looked for
beside the chemistry file (``therm.dat``, ``thermo.dat``, ``<stem>.therm``;
``tran.dat``, ``<stem>.tran``; ``<stem>.qss``) or taken from the sections
embedded in it.
"""

from __future__ import annotations

from singe.frontend.loader import find_companion, load_mechanism

__all__ = ["load_mechanism", "find_companion"]
