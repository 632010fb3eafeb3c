"""Cycle-level model of the THEIA VP pipeline (issue unit, SMU, stations, commit bus).

``run_cycles(code)`` runs a program and returns the model with its issue/commit trace;
``vplog.format_log(model)`` writes it in the RTL's vp.N.log format and ``vcd.write_vcd``
draws it for GTKWave. See README.md in this directory for what is modelled and where the
designed machine and the RTL differ.
"""

from .model import VPCycleModel, run_cycles
from .quirks import DESIGNED, RTL, Quirks, Timing

__all__ = ["DESIGNED", "RTL", "Quirks", "Timing", "VPCycleModel", "run_cycles"]
