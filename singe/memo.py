"""One memoisation scheme for everything derived from an object that is costly to hash.

Tables derived from a ``Mechanism`` (thermodynamic and rate tables,
stoichiometry, the QSSA structure, transport fits, kernel graphs) are built
once per mechanism object, and the layouts of ``WarpPrograms`` and the units of a
``WarpProgram`` once per programs object (the compiler, codegen and the timing model lay the
same programs out in turn): keyed on the object's identity (hashing a frozen
Mechanism walks every reaction, ~0.3 ms for n-heptane, too slow to repeat
on every call) and any further hashable arguments, and dropped when the
object is garbage-collected.
"""

from __future__ import annotations

import functools
import weakref
from typing import Callable, TypeVar

_Table = TypeVar("_Table")


def per_object(build: Callable[..., _Table]) -> Callable[..., _Table]:
    """Memoize ``build(mech, *args)`` per object ``mech`` (a Mechanism, warp programs) and ``args``."""
    cache: dict[tuple, tuple[weakref.ref, _Table]] = {}

    def forget(ref: weakref.ref, mech_id: int) -> None:
        for key in [k for k, (r, _) in cache.items() if k[0] == mech_id and r is ref]:
            del cache[key]

    @functools.wraps(build)
    def cached(mech, *args) -> _Table:
        key = (id(mech), *args)
        entry = cache.get(key)
        if entry is not None and entry[0]() is mech:
            return entry[1]
        table = build(mech, *args)
        cache[key] = (weakref.ref(mech, lambda ref, mech_id=id(mech): forget(ref, mech_id)), table)
        return table

    return cached


per_mechanism = per_object  # the name the mechanism's derived tables use
