"""setmaxnreg in the simulator: each warpgroup's register count (the register plan's
``warp_budgets``, sm_90a) set at the kernel's start, run as the GPU runs it.

Every warp of a CTA starts with the launch budget.  Each warp issues its
warpgroup's ``setmaxnreg``; PTX requires all 4 warps of a warpgroup to issue
the same one.  The CTA's pool holds what the ``.dec`` warpgroups give back;
an ``.inc`` warpgroup takes its extra registers from it and waits while it
holds too few (forever, as every warpgroup issues only one, at the start).
Then each warp's values must fit its warpgroup's count (its floor in the
plan), else ptxas would spill them or fail.
"""

from __future__ import annotations

from singe.programs.plan import REGISTER_GRANULE, SETMAXNREG_RANGE, WARPGROUP


def setmaxnreg_hazards(programs, hazard) -> list:
    """The hazards (``hazard(kind, message, warps=...)``) of ``programs``' setmaxnreg counts."""
    plan = programs.plan
    if plan is None or not plan.warp_budgets:
        return []
    budgets, warps = plan.warp_budgets, programs.warps
    if len(budgets) != warps:
        return [hazard("misuse", f"setmaxnreg counts for {len(budgets)} warps in a CTA of {warps}")]
    found = []
    launch = plan.budget - plan.budget % REGISTER_GRANULE
    pool, incs = 0, []
    for first in range(0, warps, WARPGROUP):
        group = tuple(range(first, min(first + WARPGROUP, warps)))
        counts = sorted({budgets[w] for w in group})
        if len(group) < WARPGROUP or len(counts) > 1:
            found.append(hazard("misuse", f"warps {list(group)} issue setmaxnreg {counts}: all {WARPGROUP} warps "
                                          f"of a warpgroup must issue the same one", warps=group))
            continue
        count = counts[0]
        low, high = SETMAXNREG_RANGE
        if count % REGISTER_GRANULE or not low <= count <= high:
            found.append(hazard("misuse", f"warps {list(group)}: setmaxnreg {count} is no multiple of "
                                          f"{REGISTER_GRANULE} from {low} to {high}", warps=group))
        if count < launch:
            pool += (launch - count) * WARPGROUP
        elif count > launch:
            incs.append((group, count))
    for group, count in incs:
        extra = (count - launch) * WARPGROUP
        if extra > pool:
            found.append(hazard("deadlock", f"warps {list(group)}: setmaxnreg.inc {count} waits forever: it "
                                            f"needs {extra // WARPGROUP} more registers per thread than the "
                                            f"launch's {launch}, the pool holds {pool // WARPGROUP}", warps=group))
        pool = max(0, pool - extra)
    found += [hazard("misuse", f"warp {w} needs at least ~{plan.warp_floor(w)} registers per thread; its "
                               f"warpgroup's setmaxnreg gives {budgets[w]}", warps=(w,))
              for w in range(warps) if plan.warp_floor(w) > budgets[w]]
    return found
