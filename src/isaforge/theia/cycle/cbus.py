"""The commit bus (CBUS) and its fair round-robin arbiter.

A station whose result is ready raises its request; the arbiter grants the bus one cycle
after the request (the result's ``ready`` cycle is request + 1). With several requests the
search starts after the station granted last, so each waits at most one turn per requester.
"""

from __future__ import annotations

from .stations import Op, Station


class Arbiter:
    """Round-robin over the stations (ids 1..7, index 0 unused)."""

    __slots__ = ("stations", "last", "grants", "pending", "only")

    def __init__(self, stations: list[Station]) -> None:
        self.stations = stations
        self.last = len(stations) - 1  # so the first search starts at station 1
        self.grants = 0
        self.pending = 0  # results waiting in the stations' output queues
        self.only: Station | None = None  # the station holding them when it is just one

    def post(self, station: Station, ready: int, op: Op) -> None:
        """A station's result can own the bus from cycle ``ready`` on."""
        station.out.append((ready, op))
        self.pending += 1
        self.only = station if self.pending == 1 else None

    def grant(self, t: int) -> Op | None:
        """The op that owns the bus in cycle ``t`` (removed from its station), or None."""
        s = self.only
        if s is not None:  # a single result pending: no search
            if s.out[0][0] > t:
                return None
            self.last = s.id
            self.grants += 1
            self.pending = 0
            self.only = None
            return s.out.popleft()[1]
        st = self.stations
        n = len(st)
        i = self.last
        for _ in range(n - 1):
            i += 1
            if i == n:
                i = 1
            s = st[i]
            if s.out and s.out[0][0] <= t:
                self.last = i
                self.grants += 1
                self.pending -= 1
                op = s.out.popleft()[1]
                if self.pending == 1:
                    self.only = next(x for x in st if x.out)
                return op
        return None

    def next_ready(self) -> int | None:
        """The earliest cycle any pending result can be granted (None: nothing pending)."""
        best = None
        for s in self.stations[1:]:
            if s.out:
                r = s.out[0][0]
                if best is None or r < best:
                    best = r
        return best
