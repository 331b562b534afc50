"""Topological order, written once (the dataflow graph, the scheduler's global
order and the barrier proof of the warp programs use it)."""

from __future__ import annotations

import heapq
from collections import deque
from typing import Callable, Hashable, Iterable


def topological_order(nodes: Iterable[Hashable], successors: Callable[[Hashable], Iterable[Hashable]],
                      priority: Callable[[Hashable], tuple] | None = None) -> list:
    """Kahn's algorithm: ``nodes`` ordered so that every node comes after the
    nodes it is a successor of.  Ready nodes are taken first in, first out
    (in ``nodes`` order at the start), or smallest ``priority`` first when one
    is given.  A cycle leaves its nodes out: the result is then shorter than
    ``nodes`` and the caller reports it."""
    nodes = list(nodes)
    indegree = {n: 0 for n in nodes}
    for n in nodes:
        for m in successors(n):
            indegree[m] += 1
    start = [n for n in nodes if indegree[n] == 0]
    if priority is None:
        ready: deque = deque(start)
        take, put = ready.popleft, ready.append
    else:
        heap = [(priority(n), i, n) for i, n in enumerate(start)]
        heapq.heapify(heap)
        counter = [len(heap)]

        def take():
            return heapq.heappop(heap)[2]

        def put(node):
            counter[0] += 1
            heapq.heappush(heap, (priority(node), counter[0], node))
        ready = heap  # type: ignore[assignment]
    order = []
    while ready:
        n = take()
        order.append(n)
        for m in successors(n):
            indegree[m] -= 1
            if indegree[m] == 0:
                put(m)
    return order
