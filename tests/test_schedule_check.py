"""The static barrier proof (``singe.programs.verify``) on hand-built warp programs.

Each rejected program is paired with its corrected twin, which must pass, and
the dynamic simulator is asked to agree where a schedule can show the bug.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from test_simulator import (CONSUME_X, PRODUCE_X, big_programs, crossed, fast_producer, kinds, make_programs,
                            op, ping_pong, pipeline, temperatures)

from singe.errors import SingeInternalError
from singe.kernels.ir import Imm, Instr, Reg
from singe.programs import Arrive, Compute, FullSync, SharedLoad, SharedStore, Sync, SyncPoint, WarpProgram
from singe.programs.verify import check_programs
from singe.sim import simulate


def rejected(programs, match: str) -> str:
    """The message of the SingeInternalError check_programs raises (must contain ``match``)."""
    with pytest.raises(SingeInternalError) as caught:
        check_programs(programs)
    assert match in str(caught.value), str(caught.value)
    return str(caught.value)


def replace_item(programs, warp: int, index: int, item):
    """``programs`` with item ``index`` of ``warp`` replaced."""
    warps = [list(p.items) for p in programs.programs]
    warps[warp][index] = item
    return make_programs(warps, programs.sync_points, programs.shared_slots)


# --------------------------------------------------------------------------- accepted

@pytest.mark.parametrize("build", [lambda: pipeline(full_sync=True), lambda: ping_pong(full_sync=True),
                                   big_programs])
def test_correct_programs_pass_and_verify(build):
    programs = build()
    check_programs(programs)


# --------------------------------------------------------------------------- races

def test_removed_barrier_is_a_static_race():
    message = rejected(pipeline(barrier=False, full_sync=True), "synchronization check")
    assert ("slot 0: warp 1 item 0 (ld.shared x <- [0]) is not ordered after any store to the slot "
            "(it should read warp 0 item 1 (st.shared [0] <- x))") in message
    with pytest.raises(SingeInternalError, match="not ordered after any store"):
        check_programs(pipeline(barrier=False, full_sync=True))


def test_cross_slab_write_after_read_needs_the_trailing_full_sync():
    message = rejected(pipeline(), "write after read")
    assert ("slot 0: warp 0 item 1 (st.shared [0] <- x, next slab) is not ordered after warp 1 item 1 "
            "(ld.shared x <- [0]), which reads the value it overwrites (write after read)") in message
    result = simulate(pipeline(), {"temperature": temperatures(64)}, 64, slabs=2, strict=False)
    assert "race" in kinds(result.hazards)  # the simulator agrees
    check_programs(pipeline(full_sync=True))


def test_unordered_stores_to_one_slot_are_write_after_write():
    other = op("other", [Instr("mov", "w", (Imm(5.0),))], (), ("w",))
    warps = [[Compute(PRODUCE_X), SharedStore("x", 0), FullSync()],
             [Compute(other), SharedStore("w", 0), FullSync()]]
    message = rejected(make_programs(warps, slots=1), "(write after write)")
    assert "slot 0: warp 1 item 1 (st.shared [0] <- w) is not ordered after warp 0 item 1" in message
    ordered = [[Compute(PRODUCE_X), SharedStore("x", 0), Arrive(1, 64, 1, ("x",)), FullSync()],
               [Compute(other), Sync(1, 64, 1, ("x",)), SharedStore("w", 0), FullSync()]]
    check_programs(make_programs(ordered, [SyncPoint(1, 1, (0,), (1,), ("x",))], slots=1))


def test_load_ordered_after_the_wrong_store_is_caught():
    """Warp 1 loads x from a slot whose last ordered store is y (x went to another slot)."""
    plus = op("plus", [Instr("add", "y", (Reg("x"), Imm(1.0)))], ("x",), ("y",))
    warps = [[Compute(PRODUCE_X), Compute(plus), SharedStore("x", 1), SharedStore("y", 0),
              Arrive(1, 64, 1, ("x",)), FullSync()],
             [Sync(1, 64, 1, ("x",)), SharedLoad("x", 0), Compute(CONSUME_X), FullSync()]]
    points = [SyncPoint(1, 1, (0,), (1,), ("x",))]
    message = rejected(make_programs(warps, points), "reads y: the last store ordered before it is "
                                                     "warp 0 item 3 (st.shared [0] <- y)")
    assert "slot 0: warp 1 item 1 (ld.shared x <- [0])" in message
    fixed = replace_item(make_programs(warps, points), 1, 1, SharedLoad("x", 1))
    check_programs(fixed)


def test_value_used_before_the_warp_has_it_is_a_register_error():
    warps = [[Compute(PRODUCE_X), SharedStore("x", 0), Arrive(1, 64, 1, ("x",)), FullSync()],
             [Compute(CONSUME_X), Sync(1, 64, 1, ("x",)), SharedLoad("x", 0), FullSync()]]
    rejected(make_programs(warps, [SyncPoint(1, 1, (0,), (1,), ("x",))]),
             "warp 1 item 0 (compute consume_x) uses x before the warp computes or loads it")


# --------------------------------------------------------------------------- deadlock and barrier reuse

def test_crossed_barriers_are_a_static_deadlock():
    message = rejected(crossed(), "can deadlock")
    assert ("warp 1 item 0 (bar.sync 1, 64  // point 1: a) waits for point 1 on barrier 1, which needs "
            "warp 0 item 1 (bar.arrive 1, 64  // point 1: a)") in message
    assert "waits for point 2 on barrier 2, which needs warp 1 item 1 (bar.arrive 2, 64" in message
    uncrossed = make_programs([[Arrive(1, 64, 1), Sync(2, 64, 2)], [Sync(1, 64, 1), Arrive(2, 64, 2)]],
                              crossed().sync_points)
    check_programs(uncrossed)


def test_barrier_reused_by_a_fast_producer_is_unsafe():
    message = rejected(fast_producer(), "barrier 1 is reused unsafely")
    assert ("point 2 can join the generation of point 1, since warp 0 item 5 (bar.arrive 1, 64  // point 2: y) "
            "is not ordered after warp 1 item 0 (bar.sync 1, 64  // point 1: x)") in message
    safe = fast_producer()
    points = (safe.sync_points[0], dataclasses.replace(safe.sync_points[1], barrier_id=2))
    warps = [list(p.items) for p in safe.programs]
    warps[0][5] = Arrive(2, 64, 2, ("y",))
    warps[2][0] = Sync(2, 64, 2, ("y",))
    for items in warps:
        items.append(FullSync())
    check_programs(make_programs(warps, points))


def test_reuse_across_slabs_needs_ordering():
    """Ping-pong reuses barrier 1 and slot 0 safely within a slab, not across slabs."""
    message = rejected(ping_pong(), "point 1 of the next slab can join the generation of point 3")
    assert "barrier 1 is reused unsafely" in message
    check_programs(ping_pong(full_sync=True))


def test_alternating_arrivals_that_round_robin_hides_are_still_rejected():
    """Warp 0 arrives at points 1 and 2 on barrier 1 back to back: safe only by luck."""
    points = [SyncPoint(1, 1, (0,), (1,)), SyncPoint(2, 1, (0,), (1,))]
    warps = [[Arrive(1, 64, 1), Arrive(1, 64, 2), FullSync()], [Sync(1, 64, 1), Sync(1, 64, 2), FullSync()]]
    rejected(make_programs(warps, points), "point 2 can join the generation of point 1")
    spaced = [[Arrive(1, 64, 1), Sync(2, 64, 3), Arrive(1, 64, 2), FullSync()],
              [Sync(1, 64, 1), Arrive(2, 64, 3), Sync(1, 64, 2), FullSync()]]
    check_programs(make_programs(spaced, points + [SyncPoint(3, 2, (1,), (0,))]))


# --------------------------------------------------------------------------- structure

def _one_point(items0, items1, point=SyncPoint(1, 1, (0,), (1,))):
    return make_programs([[*items0, FullSync()], [*items1, FullSync()]], [point])


@pytest.mark.parametrize("programs, match", [
    (_one_point([Arrive(1, 64, 1)], []), "point 1 (barrier 1): syncer warp 1 has no bar.sync for it"),
    (_one_point([Arrive(1, 64, 1)], [Sync(1, 96, 1)]),
     "point 1: warp 1 item 0 (bar.sync 1, 96  // point 1: ): 96 threads, but the point has 2 participants"),
    (_one_point([Sync(1, 64, 1)], [Sync(1, 64, 1)]), "the warp is an arriver, so it must use bar.arrive"),
    (_one_point([Arrive(2, 64, 1)], [Sync(1, 64, 1)]), "barrier 2, but the point is on 1"),
    (_one_point([Arrive(1, 64, 1), Arrive(1, 64, 1)], [Sync(1, 64, 1)]),
     "warp 0 items 0 and 1 both belong to point 1"),
    (_one_point([Arrive(1, 64, 1), Arrive(1, 64, 7)], [Sync(1, 64, 1)]),
     "warp 0 item 1 (bar.arrive 1, 64  // point 7: ) belongs to no sync point"),
    (make_programs([[FullSync()], []]), "warps execute different numbers of FullSync: [1, 0]"),
    (_one_point([Arrive(0, 64, 1)], [Sync(0, 64, 1)], SyncPoint(1, 0, (0,), (1,))),
     "point 1 uses barrier 0, reserved for FullSync"),
    (make_programs([[Compute(PRODUCE_X), SharedStore("x", 2)]], slots=2), "slot outside 0..1"),
    (dataclasses.replace(make_programs([[], []]), programs=(WarpProgram(1, ()), WarpProgram(0, ()))),
     "programs are for warps [1, 0], expected 0..1 in order"),
])
def test_structure_errors(programs, match):
    rejected(programs, match)


def test_structure_twin_passes():
    check_programs(_one_point([Arrive(1, 64, 1)], [Sync(1, 64, 1)]))


# --------------------------------------------------------------------------- speed

def test_static_check_is_fast_on_2000_items():
    programs = big_programs()
    start = time.perf_counter()
    check_programs(programs)
    assert time.perf_counter() - start < 2.0
