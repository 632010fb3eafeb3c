"""The configuration unit: SETC16 (ThreadConfig), WRCFG, RDCFG and RMWCIB0..3 (Config).

Config has two banks; a thread reads and writes the one its ThreadConfig
``CFG_STATE_ID_StateID`` selects. An index outside Config or ThreadConfig, or a GPR index
of 64 or more, is undefined behaviour; when continuing, the write is dropped (Config,
ThreadConfig) or the GPR index keeps its low six bits.

Writing the value a register already holds leaves it alone (so the Matrix Unit's cached
configuration, :class:`~.matrix.MathRegs`, stays valid). ``watch``, set by the machine while
a ``reg_write`` hook is registered, is told of every write these instructions make.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from .dispatch import Execute, Fields, Report, Unit
from .state import Config, GPRs, ThreadConfig, WriteWatch


class ConfigUnit(Unit):
    """SETC16, WRCFG, RDCFG, RMWCIB*: on ThreadConfig, Config and the GPRs."""

    def __init__(self, config: Config, thread_config: ThreadConfig, gpr: GPRs,
                 report_ub: Report) -> None:
        self.config = config
        self.thread_config = thread_config
        self.gpr = gpr
        self.report_ub = report_ub
        self.watch: WriteWatch | None = None

    def handlers(self) -> Mapping[str, Execute]:
        return {"SETC16": self.setc16, "WRCFG": self.wrcfg, "RDCFG": self.rdcfg,
                "RMWCIB0": lambda t, f: self.rmwcib(t, f, 0),
                "RMWCIB1": lambda t, f: self.rmwcib(t, f, 1),
                "RMWCIB2": lambda t, f: self.rmwcib(t, f, 2),
                "RMWCIB3": lambda t, f: self.rmwcib(t, f, 3)}

    def quiet(self) -> Collection[str]:
        # Config and ThreadConfig only (RDCFG writes a GPR); a reg_write hook they call is
        # seen by the coprocessor
        return ("SETC16", "WRCFG", "RMWCIB0", "RMWCIB1", "RMWCIB2", "RMWCIB3")

    def state_id(self, t: int) -> int:
        """The Config bank thread ``t`` uses."""
        return self.thread_config.bank(t)

    def setc16(self, t: int, f: Fields) -> None:
        reg = f["setc16_reg"]
        if reg >= ThreadConfig.N_REGS:
            self.report_ub(f"ThreadConfig register {reg} does not exist "
                           f"(0..{ThreadConfig.N_REGS - 1})")
            return
        value = f["setc16_value"]
        if self.thread_config.regs.item(t, reg) != value:  # unchanged: caches stay valid
            self.thread_config.regs[t, reg] = value
        if self.watch is not None:
            self.watch("thread_config", t, reg, value, None)

    def _cfg_index(self, index: int) -> int | None:
        if index >= Config.N_WORDS:
            self.report_ub(f"Config word {index} is out of range (0..{Config.N_WORDS - 1})")
            return None
        return index

    def _gpr_index(self, index: int) -> int:
        if index >= GPRs.N:
            self.report_ub(f"GPR {index} does not exist (0..63)")
        return index & (GPRs.N - 1)

    def wrcfg(self, t: int, f: Fields) -> None:
        idx = f["CfgReg"]
        if idx >= Config.N_WORDS:  # (_cfg_index)
            self._cfg_index(idx)
            return
        g = f["GprAddress"]
        if g >= GPRs.N:
            g = self._gpr_index(g)
        s = self.state_id(t)
        if f["wr128b"]:
            first, g = idx & ~3, g & ~3
            self.config.words[s, first:first + 4] = self.gpr.v[t, g:g + 4]
            written = range(first, first + 4)
        else:
            self.config.words[s, idx] = self.gpr.v[t, g]
            written = range(idx, idx + 1)
        if self.watch is not None:
            for i in written:
                self.watch("config", t, i, int(self.config.words[s, i]), s)

    def rdcfg(self, t: int, f: Fields) -> None:
        idx = self._cfg_index(f["CfgReg"])
        if idx is None:
            return
        g = self._gpr_index(f["GprAddress"])
        self.gpr.set(t, g, int(self.config.words[self.state_id(t), idx]))

    def rmwcib(self, t: int, f: Fields, byte: int) -> None:
        idx = self._cfg_index(f["CfgRegAddr"])
        if idx is None:
            return
        s = self.state_id(t)
        word = int(self.config.words[s, idx])
        old = word >> (8 * byte) & 0xFF
        new = (f["Data"] & f["Mask"]) | (old & ~f["Mask"] & 0xFF)
        if new != old:  # an unchanged value keeps caches valid
            word = word & ~(0xFF << (8 * byte)) & 0xFFFFFFFF | (new << (8 * byte))
            self.config.words[s, idx] = word
        if self.watch is not None:
            self.watch("config", t, idx, word, s)


__all__ = ["ConfigUnit"]
