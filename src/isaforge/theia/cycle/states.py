"""The issue unit's states, and the constants its state machine shares with the stations.

The state numbers are the RTL's (Module_InstructionIssue, beta_2.0). One state per clock
cycle; the machine itself is written once, in the cycle loop of
:meth:`~isaforge.theia.cycle.model.VPCycleModel.run`:

* ``RESET``: the second thread's unit while multithreading is off; one cycle, then FETCH.
* ``FETCH``: the instruction memory output is examined; the PC advances when the station is
  free, the instruction is not a branch and no commit is queued. A commit seen here clears
  its dependency-table entry directly.
* ``ISSUE`` / ``ISSUE_FWD``: the issue packet goes to the stations; the destination's entry
  in the dependency table is set to the station. ``ISSUE_FWD`` follows a commit and takes
  the just-committed value (forwarding). An instruction therefore issues every 2 cycles.
* ``FIFO_UPDATE``: a commit that arrived while the unit was busy is taken from its 2-entry
  FIFO and its dependency-table entry cleared (one cycle each).
* ``UPDATE_PC``: after a branch, wait for its result on the commit bus and load the target.
"""

from __future__ import annotations

RESET, FETCH, ISSUE_FWD, ISSUE, FIFO_UPDATE, UPDATE_PC = 0, 1, 2, 3, 4, 6
STATE_NAMES = {RESET: "IDLE", FETCH: "FETCH", ISSUE_FWD: "ISSUE_FWD", ISSUE: "ISSUE",
               FIFO_UPDATE: "FIFO_UPDATE", UPDATE_PC: "UPDATE_PC"}
FIFO_DEPTH = 2  # commits queued while the unit is busy
PC_MASK = 0xFFFF  # the PC is 16 bits
UNDEF = -1  # an x in the RTL's dependency table

__all__ = ["FETCH", "FIFO_DEPTH", "FIFO_UPDATE", "ISSUE", "ISSUE_FWD", "PC_MASK", "RESET",
           "STATE_NAMES", "UNDEF", "UPDATE_PC"]
