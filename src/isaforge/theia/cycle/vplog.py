"""The RTL's ``vp.N.log`` trace format (rtl/FlowDumper.v): writer, reader, comparison.

One record per issue (``<t>ns VP[n] IP <pc-1> ISSUE (<word>) <station> <dst>.<we> <srcs>
<src1 station> | <src0 station> | <src1>.<swizzle> | <src0>.<swizzle> s(<scop>)|  -> <src1
after SMU> | <src0 after SMU>``), one per commit (``<t>ns VP[n] COMMIT <station> R[<dst>].<we>
X Y Z``) and a ``THREAD 0: BRANCH TAKEN`` line whenever the issue unit sees a taken-branch
condition on the commit bus. Numbers are printed the way Verilog's ``%d``/``%h`` print them
(right-aligned to the width of the signal); register lanes never written print as ``x``.
Times are ``start_ns + 20 * cycle`` (a 50 MHz clock).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..machine.alu import ZERO, Lanes
from . import events as ev
from .smu import forwarded_src0, forwarded_src1, known_after
from .stations import RS_IO, RS_LOGIC, RS_NAMES

CLOCK_NS = 20
MASK32 = 0xFFFF_FFFF
LOGIC_NAMES = ("AND", "OR", "NOT", "SHL", "SHR")
_WE = {0: ".nowrite ", 1: ".z ", 2: ".y ", 4: ".x ", 7: ".xyz "}


def _we(we: int) -> str:
    return _WE.get(we, f" {we:03b} ")


def _lanes(v: Lanes, known: int = 7) -> str:
    return "".join(f"{x:08x}" if known & b else "xxxxxxxx"
                   for x, b in zip(v, (4, 2, 1), strict=True))


def _nibbles(value: int, xbits: int) -> str:
    """A 32-bit lane as Verilog's ``%h`` prints it with the bits ``xbits`` unknown: a digit
    whose 4 bits are all x is ``x``, one with some x bits ``X``."""
    out = []
    for sh in range(28, -1, -4):
        xb = xbits >> sh & 0xF
        out.append("x" if xb == 0xF else "X" if xb else "0123456789abcdef"[value >> sh & 0xF])
    return "".join(out)


def _after_smu(e: ev.Issue, src: int) -> str:
    """An operand after the SMU: the modified value, its x lanes, or (a pending operand) its
    tag; with a dependency read as x, the RTL's multiplexer mixes the tag and the modified
    register value: the bits where they differ are x."""
    dep, mod = (e.dep1, e.mod1) if src == 1 else (e.dep0, e.mod0)
    raw, known = (e.raw1, e.known1) if src == 1 else (e.raw0, e.known0)
    if dep > 0:
        return _lanes(mod)
    if dep == 0:
        return _lanes(mod, known_after(e.word, src, known))
    value = (forwarded_src1 if src == 1 else forwarded_src0)(e.word, raw)
    k = known_after(e.word, src, known)
    return "".join(_nibbles(t, t ^ v if k & b else MASK32)
                   for t, v, b in zip(mod, value, (4, 2, 1), strict=True))


def _station(rs: int, word: int) -> str:
    if rs < 0:
        return " xxxx "
    if rs == RS_IO:
        return " IO " + (" TMREAD " if word >> 59 & 7 == 1 else " OMWRITE ")
    if rs == RS_LOGIC:
        return " 0110 "
    if rs == 0:
        return " 0000 "
    return f" {RS_NAMES[rs]} "


def _issue_station(e: ev.Issue) -> str:
    w = e.word
    if e.rs == RS_LOGIC:
        scop = w >> 59 & 0xF
        return f" LOGIC( {LOGIC_NAMES[scop] if scop < 5 else 'UNKNOWN'})  "
    if e.rs == RS_IO:
        return " IO " + (" TMREAD " if w >> 59 & 7 == 1 else " OMWRITE ")
    return f" {RS_NAMES[e.rs]} "


def _operands(e: ev.Issue) -> str:
    w = e.word
    dstf = w >> 34 & 0xFF
    off = e.offset
    if not w >> 63:
        dst = f"R[{dstf:3d} + {off:3d}]" if w >> 47 & 1 else f"R[{dstf:3d}]"
        s1 = (f"R[{w >> 17 & 0xFF:3d} + {off:3d}] " if w >> 46 & 1 else f"R[{e.src1_addr:3d}] ")
        s0 = (f"R[{w & 0xFF:3d} + {off:3d}] " if w >> 45 & 1 else f"R[{e.src0_addr:3d}] ")
        return dst + _we(e.we) + s1 + s0
    mode = w >> 45 & 7
    imm = w & 0xFFFF_FFFF
    if mode in (0, 4):
        dst = f"R[{dstf:3d}]"
    elif mode == 3:
        dst = f"R[{dstf:3d} + {off:3d} + {e.src1_x:10d}]"
    else:
        dst = f"R[{dstf:3d} + {off:3d}]"
    a1, a0, ix = e.src1_addr, e.src0_addr, e.index
    srcs = {
        0: f"I({imm:08x}) R[{dstf:3d}]",
        1: f"**!!I({imm:08x}) R[{dstf:3d} + {off:3d}] ",
        2: f"R[{a1:3d}+{off:3d}] R[{a0:3d}+{off:3d}+{ix:3d}]",
        3: f"0 R[{a0:3d} + {off:3d}]",
        4: f"I({imm:08x}) 0",
        5: f"I({imm:08x}) 0",
        6: f"R[{a1:3d} + {off:3d} + {ix:3d}] 0",
        7: f"R[{w >> 17 & 0xFF:3d} + {off:3d} + {ix:3d}] R[{a0:3d} + {off:3d}]",
    }[mode]
    return dst + _we(e.we) + srcs


def format_issue(e: ev.Issue, vp: int, start_ns: int) -> str:
    w = e.word
    t = start_ns + CLOCK_NS * e.cycle
    if e.thread:  # the dumper's second-thread block: fewer station names, no raw operands
        head = f"\n THREAD 1 {t:20d}ns IP {e.ip:10d}    ISSUE  ({w:016x}) \t"
        if w >> 57 & 1:
            head += " BRANCH "
        name = f" {RS_NAMES[e.rs]} " if 0 < e.rs < RS_LOGIC else f" {e.rs:04b} "
        return (head + name + _operands(e) + "\t\t\t\t" + _station(e.dep1, w) + " | "
                + _station(e.dep0, w) + " | " + f" {_after_smu(e, 1)} | {_after_smu(e, 0)}")
    head = f"\n{t:20d}ns VP[{vp:10d}] IP {e.ip:10d}    ISSUE  ({w:016x}) \t"
    if w >> 57 & 1:
        head += " BRANCH "
    swz1 = 0 if w >> 63 else w >> 25 & 0x3F
    swz0 = 0 if w >> 63 else w >> 8 & 0x3F
    return (head + _issue_station(e) + _operands(e) + "\t\t\t\t"
            + _station(e.dep1, w) + " | " + _station(e.dep0, w) + " | "
            + f" {_lanes(e.raw1, e.known1)}.{swz1:06b} | {_lanes(e.raw0, e.known0)}.{swz0:06b}"
            + f" s({w >> 59 & 0xF:04b})|  ->  {_after_smu(e, 1)} | {_after_smu(e, 0)}")


def format_commit(e: ev.Commit, vp: int, start_ns: int) -> str:
    t = start_ns + CLOCK_NS * e.cycle
    vals = _lanes(e.result, e.known)
    xyz = f" {vals[0:8]} {vals[8:16]} {vals[16:24]}"
    if e.rs == RS_LOGIC:
        name = LOGIC_NAMES[e.word >> 59 & 3]  # the unit decodes LOP[1:0] (SHR reads as AND)
        return (f"\n{t:20d}ns VP[{vp:10d}]\t COMMIT LOGIC( {name})   R[{e.dst:3d}]"
                + _we(e.we) + xyz + "\n")
    name = "IO TMREAD" if e.rs == RS_IO else RS_NAMES[e.rs]
    tail = " \n" if e.rs in (RS_IO, 5) else "\n"
    return f"\n{t:20d}ns\t VP[{vp:10d}] COMMIT {name} R[{e.dst:3d}]" + _we(e.we) + xyz + tail


def format_log(events: Iterable[ev.Event], vp: int = 2, start_ns: int = 0) -> str:
    """The vp.N.log text of a cycle-model run."""
    return "".join(LogFormatter(vp, start_ns).lines(events))


_CACHE_LIMIT = 1024


def _pct(text: str) -> str:
    return text.replace("%", "%%")


class LogFormatter:
    """vp.N.log records, fast: what :func:`format_issue` and :func:`format_commit` print,
    with the parts that depend only on the instruction and its addressing formatted once
    (cached by those fields) and the register values' text cached by value. A long trace
    repeats the same few instructions, so each record costs a few string joins."""

    def __init__(self, vp: int = 2, start_ns: int = 0) -> None:
        self.vp = vp
        self.start_ns = start_ns
        self._issue: dict[tuple[int, ...], tuple[str, str, str, str]] = {}
        self._commit: dict[tuple[int, int, int, int], tuple[str, str]] = {}
        self._lanes: dict[tuple[Lanes, int], str] = {}
        self._defined: dict[Lanes, str] = {}  # every lane defined (known = 7)
        self._spaced: dict[tuple[Lanes, int], str] = {}  # a commit's " X Y Z"
        self._blocks: dict[Any, Any] = {}  # replay template -> its text function (or False)
        self._spaced7: dict[Lanes, str] = {}  # a commit's " X Y Z", every lane defined

    def lanes(self, v: Lanes, known: int = 7) -> str:
        """``_lanes``, cached by value."""
        if known == 7:
            s = self._defined.get(v)
            if s is None:
                if len(self._defined) > _CACHE_LIMIT:
                    self._defined.clear()
                s = self._defined[v] = _lanes(v)
            return s
        key = (v, known)
        s = self._lanes.get(key)
        if s is None:
            if len(self._lanes) > _CACHE_LIMIT:
                self._lanes.clear()
            s = self._lanes[key] = _lanes(v, known)
        return s

    def _spaced_lanes(self, v: Lanes, known: int) -> str:
        key = (v, known)
        if len(self._spaced) > _CACHE_LIMIT:
            self._spaced.clear()
        x = _lanes(v, known)
        s = self._spaced[key] = f" {x[0:8]} {x[8:16]} {x[16:24]}"
        return s

    def _issue_parts(self, e: ev.Issue) -> tuple[str, str, str, str]:
        # the record split around its time stamp and its four register values (a template
        # of format_issue with marker values, cut at the markers)
        probe = ev.Issue(0, e.thread, e.ip, e.address, e.word, e.rs, e.dst, e.we, e.offset,
                         e.index, e.dep1, e.dep0, e.raw1, e.raw0, e.known1, e.known0,
                         e.mod1, e.mod0, e.src1_x, e.src1_addr, e.src0_addr)
        text = format_issue(probe, self.vp, 0)
        stamp = f"{0:20d}ns"
        at = text.index(stamp)
        head, text = text[:at], text[at + len(stamp):]
        if e.thread:
            cut = text.rindex("\t\t\t\t")
            cut = text.index(" | ", text.index(" | ", cut) + 3) + 3
            return head, text[:cut] + " ", "", ""
        w = e.word
        swz1 = 0 if w >> 63 else w >> 25 & 0x3F
        swz0 = 0 if w >> 63 else w >> 8 & 0x3F
        cut = text.rindex(" s(")
        body = text[:cut]
        for _ in range(2):
            body = body[:body.rindex(" | ")]
        cut2 = text.rindex("|  ->  ") + len("|  ->  ")
        return head, body + " |  ", f".{swz1:06b} | ", f".{swz0:06b}" + text[cut:cut2]

    def issue(self, e: ev.Issue) -> str:
        """One issue record."""
        return next(self.lines([e]))

    def commit(self, e: ev.Commit) -> str:
        """One commit record."""
        return next(self.lines([e]))

    def _commit_parts(self, e: ev.Commit, key: tuple[int, int, int, int]) -> tuple[str, str]:
        probe = ev.Commit(0, e.thread, e.rs, e.word, e.dst, e.we, ZERO, 7)
        text = format_commit(probe, self.vp, 0)
        at = text.index("ns", text.index("0"))
        end = text.rindex(" 00000000 00000000 00000000")
        if len(self._commit) > _CACHE_LIMIT:
            self._commit.clear()
        parts = self._commit[key] = (text[:at - 20], text[at:end], text[end + 27:])
        return parts

    def lines(self, events: Iterable[ev.Event]) -> Iterator[str]:
        """The records of ``events``, in order (the work of format_issue / format_commit,
        written out here: a call per record was most of the time)."""
        issues, commits = self._issue, self._commit
        defined, spaced = self._defined, self._spaced
        lanes = self.lanes
        start = self.start_ns
        Issue, Commit, Replayed = ev.Issue, ev.Commit, ev.Replayed
        for e in events:
            k = type(e)
            if k is Issue:
                w = e.word
                key = (e.ip, w, e.thread, e.rs, e.dst, e.we, e.offset, e.index, e.dep1,
                       e.dep0, e.src1_addr, e.src0_addr,
                       e.src1_x if w >> 63 and w >> 45 & 7 == 3 else 0)
                parts = issues.get(key)
                if parts is None:
                    if len(issues) > _CACHE_LIMIT:
                        issues.clear()
                    parts = issues[key] = self._issue_parts(e)  # type: ignore[arg-type]
                head, mid, sw1, sw0 = parts
                # after the SMU (_after_smu): a tag, or the modified value with every lane
                # defined (else the rare x cases, printed by _after_smu itself)
                d = e.dep1
                if d > 0 or (not d and e.known1 == 7):
                    a1 = defined.get(e.mod1) or lanes(e.mod1)
                else:
                    a1 = _after_smu(e, 1)  # type: ignore[arg-type]
                d = e.dep0
                if d > 0 or (not d and e.known0 == 7):
                    a0 = defined.get(e.mod0) or lanes(e.mod0)
                else:
                    a0 = _after_smu(e, 0)  # type: ignore[arg-type]
                t = start + CLOCK_NS * e.cycle
                if e.thread:
                    yield f"{head}{t:20d}ns{mid}{a1} | {a0}"
                    continue
                r1 = (defined.get(e.raw1) or lanes(e.raw1)) if e.known1 == 7 else lanes(
                    e.raw1, e.known1)
                r0 = (defined.get(e.raw0) or lanes(e.raw0)) if e.known0 == 7 else lanes(
                    e.raw0, e.known0)
                yield f"{head}{t:20d}ns{mid}{r1}{sw1}{r0}{sw0}{a1} | {a0}"
            elif k is Commit:
                rs = e.rs
                key = (rs, e.word >> 59 & 3 if rs == RS_LOGIC else 0, e.dst, e.we)
                parts = commits.get(key) or self._commit_parts(e, key)  # type: ignore
                v = spaced.get((e.result, e.known)) or self._spaced_lanes(e.result, e.known)
                yield f"{parts[0]}{start + CLOCK_NS * e.cycle:20d}{parts[1]}{v}{parts[2]}"
            elif k is Replayed:
                yield from self._replayed(e)  # type: ignore[arg-type]
            else:
                yield f"\nTHREAD {e.thread}: BRANCH TAKEN "

    def _replayed(self, e: ev.Replayed) -> Iterator[str]:
        """The text of replayed iterations: one format string per recorded iteration, filled
        with each iteration's stamps and values (checked once against the record-by-record
        text of the recorded iteration; a template that does not match is expanded)."""
        tpl = e.template
        fn = self._blocks.get(tpl)
        if fn is None:
            if len(self._blocks) > _CACHE_LIMIT:
                self._blocks.clear()
            fn = self._blocks[tpl] = self._block_text(tpl)
        if fn is False:
            yield from self.lines(e.expand())
            return
        step = CLOCK_NS * tpl.period
        b = self.start_ns + CLOCK_NS * e.cycle
        for v in e.values:
            yield fn(b, v)
            b += step

    def _block_text(self, tpl: Any) -> Any:
        fmt: list[str] = []
        args: list[str] = []
        recorded: list[object] = []
        for i, e in enumerate(tpl.events):
            k = type(e)
            c = CLOCK_NS * e.cycle
            if k is ev.Issue:
                if e.thread or e.known1 != 7 or e.known0 != 7 or e.dep1 < 0 or e.dep0 < 0:
                    return False
                head, mid, sw1, sw0 = self._issue_parts(e)
                fmt.append(_pct(head) + "%20dns" + _pct(mid) + "%s" + _pct(sw1) + "%s"
                           + _pct(sw0) + "%s | %s")
                args.append(f"B + {c}")
                args += [f"D.get(V[{i}][{j}]) or H(V[{i}][{j}])" for j in range(4)]
                recorded.append((e.raw1, e.raw0, e.mod1, e.mod0, e.src1_x))
            elif k is ev.Commit:
                if e.known != 7:
                    return False
                rs = e.rs
                key = (rs, e.word >> 59 & 3 if rs == RS_LOGIC else 0, e.dst, e.we)
                p0, p1, p2 = self._commit_parts(e, key)
                fmt.append(_pct(p0) + "%20d" + _pct(p1) + "%s" + _pct(p2))
                args.append(f"B + {c}")
                args.append(f"S.get(V[{i}]) or HS(V[{i}])")
                recorded.append(e.result)
            elif k is ev.BranchTaken:
                fmt.append(_pct(f"\nTHREAD {e.thread}: BRANCH TAKEN "))
                recorded.append(None)
            else:
                return False
        defined, spaced = self._defined, self._spaced7

        def hexes(v: Lanes) -> str:  # (the caches stay small: values of a counter change)
            if len(defined) > _CACHE_LIMIT:
                defined.clear()
            x = defined[v] = _lanes(v)
            return x

        def spaced_hexes(v: Lanes) -> str:
            if len(spaced) > _CACHE_LIMIT:
                spaced.clear()
            x = spaced[v] = f" {v[0]:08x} {v[1]:08x} {v[2]:08x}"
            return x

        ns: dict[str, Any] = {"FMT": "".join(fmt), "D": defined, "H": hexes,
                              "S": spaced, "HS": spaced_hexes}
        src = f"def text(B, V):\n    return FMT % ({', '.join(args)}{',' if args else ''})\n"
        exec(compile(src, "<theia log template>", "exec"), ns)  # noqa: S102
        fn = ns["text"]
        if fn(self.start_ns, tuple(recorded)) != "".join(self.lines(tpl.events)):
            return False
        return fn


# --------------------------------------------------------------------------------------------
# Reading a vp.N.log back, for comparisons
# --------------------------------------------------------------------------------------------

_ISSUE = re.compile(r"\s*(?:THREAD 1\s+)?(\d+)ns (?:VP\[\s*\d+\] )?IP\s+(\d+)\s+ISSUE\s+\((\w+)\)")
_COMMIT = re.compile(r"\s*(\d+)ns\s+VP\[\s*\d+\]\s+COMMIT (.*?)\s*R\[\s*(\d+)\](\S*|\s+\d+)\s+"
                     r"(\w+) (\w+) (\w+)")


@dataclass(frozen=True)
class Record:
    """One vp.N.log line, reduced to what a comparison looks at."""

    kind: str  # "I" issue, "C" commit, "B" branch taken
    ns: int
    thread: int
    text: str  # the rest of the line, with the time removed

    def fields(self) -> tuple[str, ...]:
        return tuple(self.text.split())


def parse_log(text: str) -> list[Record]:
    """The records of a vp.N.log (blank lines dropped)."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        s = line.strip()
        if s.startswith("THREAD") and "BRANCH TAKEN" in s:
            out.append(Record("B", -1, int(s.split()[1].rstrip(":")), ""))
            continue
        thread = 1 if s.startswith("THREAD 1") else 0
        m = re.search(r"(\d+)ns", s)
        if m is None:
            continue
        ns = int(m.group(1))
        rest = s[m.end():]
        kind = "I" if "ISSUE" in s else "C" if "COMMIT" in s else "?"
        out.append(Record(kind, ns, thread, rest))
    return out


def differences(ours: list[Record], ref: list[Record], *, times: bool = True,
                limit: int = 10) -> list[str]:
    """Where two record lists differ (empty: identical). Fields of ``ref`` that contain an
    undefined value (``x``) match anything; ``times=False`` ignores the cycle stamps."""
    diffs: list[str] = []
    for i in range(max(len(ours), len(ref))):
        if i >= len(ours) or i >= len(ref):
            diffs.append(f"record {i}: ours {'missing' if i >= len(ours) else ours[i]} / "
                         f"ref {'missing' if i >= len(ref) else ref[i]}")
            break
        a, b = ours[i], ref[i]
        if a.kind != b.kind or a.thread != b.thread or (times and a.ns != b.ns):
            diffs.append(f"record {i}: ours {a.kind}@{a.ns} {a.text[:70]!r} / ref "
                         f"{b.kind}@{b.ns} {b.text[:70]!r}")
        else:
            fa, fb = a.fields(), b.fields()
            if len(fa) != len(fb) or any(not _match(x, y) for x, y in zip(fa, fb, strict=True)):
                diffs.append(f"record {i} @{b.ns}ns: ours {a.text!r}\n   ref {b.text!r}")
        if len(diffs) >= limit:
            break
    return diffs


def _match(ours: str, ref: str) -> bool:
    if ours == ref:
        return True
    if len(ours) != len(ref) or ("x" not in ref and "X" not in ref):
        return False
    return all(r in "xX" or o == r for o, r in zip(ours, ref, strict=True))
