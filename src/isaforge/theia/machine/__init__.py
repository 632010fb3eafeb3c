"""The THEIA GPU at instruction level, one module per unit.

* :mod:`.alu`: what one VP instruction computes (pure functions, shared with the cycle
  model);
* :mod:`.vp`: one vector processor (registers, OMEM, two threads) and :mod:`.jit`, which
  compiles its straight-line code into Python functions;
* :mod:`.cp`: the control processor; :mod:`.memory`: main memory, TMEM and the memory
  controller; :mod:`.ccb`: the control command bus;
* :mod:`.gpu`: the whole GPU (CP, MCU, CCB, VPs) with its run loop, and :mod:`.hooks`:
  what its hooks report;
* :mod:`.loader`: a program as the test bench is given one; :mod:`.dumps`: what a run
  leaves behind (``rf.vp.N.log``, ``OMEM.vp.N.log``, OMEM as a picture).


The package imports nothing until a name is used (PEP 562): :mod:`.options` (the limits and
quirk names the command line offers) comes without the simulator and numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .gpu import Gpu, RunResult

__all__ = ["Gpu", "RunResult"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import gpu

    value = getattr(gpu, name)
    globals()[name] = value
    return value
