"""Loop replay: the cycle model's fast path for loops, exact by construction.

A loop that runs the same instructions from the same pipeline state takes the same cycles in
every iteration; only the register values change. This module finds such iterations and
replays them without stepping their cycles:

* at a *head* (a cycle boundary with nothing in flight: no result pending on the commit bus,
  no station waiting, the FIFO and the SMU's slots empty, no SMT) the model's state other
  than register values and counters is summed up in a key (the issue unit's registers, the
  dependency table, the stations' busy windows relative to the cycle, the defined lanes, R2
  and R3, ...);
* when a key comes back ``P`` cycles later, the iteration between the two heads is a
  template: its trace records (taken with the trace on), the pipeline's counters, and a
  Python function generated from the records that computes the iteration's register values
  from the registers at its head (operands read at issue, the SMU's modifiers, forwarded
  results, execution, the commits' writes);
* the function is checked on the recorded iteration itself (every operand, result and the
  registers at the next head must come out equal), then the following iterations are replayed
  with it as long as the ZERO and SIGN flags of every result that decided a branch (the model
  notes those cycles while it records: ``flag_probes``) are the template's: those are the
  only way register values reach the timing here, because a template is refused when the
  iteration writes R2 or R3, uses the IO station, a destination indexed by a register, a
  branch whose target is a register, or an operand read as x.

A replayed iteration moves the cycle and every busy window by ``P``, adds the template's
counts (issues, commits, stalls, grants; ``steps`` counts only the cycles stepped) and,
with a trace, appends the template's
records with the new values and stamps. The first iteration whose flags differ (the loop's
exit) is stepped cycle by cycle as usual. Only the RTL's scoreboard (``rtl_scoreboard``) is
replayed, with the RTL's branch decision (``branch_next_cycle``); the designed machine
always steps.

Heads are searched for by stepping one cycle at a time for a while (``SEARCH`` cycles); a
search that finds nothing waits twice as long before the next one, so code without loops
runs at nearly the plain speed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..machine.alu import MASK32, OP_ADD, OP_IO, ZERO, addressing, execute, flags, modify
from . import events as ev
from .smu import forwarded_src0, forwarded_src1
from .stations import NEVER

SEARCH = 400  # cycles stepped one by one while looking for a loop head
BACKOFF_MAX = 1 << 20

_GLOBALS = {"modify": modify, "execute": execute, "flags": flags, "ZERO": ZERO,
            "M": MASK32, "fs1": forwarded_src1, "fs0": forwarded_src0}


class Template:
    """One recorded iteration: its length, what it adds to the counters, its records, and
    the generated function computing its values."""

    __slots__ = ("head", "period", "deltas", "events", "values", "step", "nvals")

    def __init__(self, head: int, period: int, deltas: dict[str, int], events: list[ev.Event],
                 values: Callable[..., Any], step: Callable[..., Any], nvals: int) -> None:
        self.head = head  # the cycle of the recorded iteration's head (its records' base)
        self.period = period
        self.deltas = deltas
        self.events = events
        self.values = values  # rf -> (writes, per-record values) or None (flags differ)
        self.step = step  # rf -> True (rf updated) or False (flags differ, rf untouched)
        self.nvals = nvals

    def records(self, shift: int, values: tuple) -> list[ev.Event]:
        """The records of an iteration ``shift`` cycles after the recorded one, with the
        values ``values`` (one entry per record, from :attr:`values`)."""
        out: list[ev.Event] = []
        Issue, Commit = ev.Issue, ev.Commit
        for e, v in zip(self.events, values, strict=True):
            k = type(e)
            if k is Issue:
                out.append(Issue(
                    e.cycle + shift, e.thread, e.ip, e.address, e.word, e.rs, e.dst, e.we,
                    e.offset, e.index, e.dep1, e.dep0, v[0], v[1], e.known1, e.known0, v[2],
                    v[3], v[4], e.src1_addr, e.src0_addr))
            elif k is Commit:
                out.append(Commit(e.cycle + shift, e.thread, e.rs, e.word, e.dst, e.we, v,
                                  e.known))
            else:
                out.append(ev.BranchTaken(e.cycle + shift, e.thread))
        return out


def _rel(v: int, t: int) -> int | None:
    """A cycle number relative to ``t`` (None: in the past, or never)."""
    if v >= NEVER or v < t - 1:
        return None
    return v - t


def head_key(m: Any, t: int) -> tuple | None:
    """The pipeline state at the boundary before cycle ``t`` when nothing is in flight (None:
    not a head)."""
    if m.arb.pending or m.n_waiting or m.smu.used or m.mt_on or m.done:
        return None
    rf = m.rf
    if rf[2][2] & 1:
        return None
    i0, i1 = m.iius
    if i0.fifo or i1.fifo:
        return None
    st = m.stations
    for s in st:
        if s.waiting is not None or s.out:
            return None
    lat = i0.latched
    bop = i0.branch_op
    return (i0.state, i0.pc, i0.prev_pc, None if lat is None else lat.dst,
            None if bop is None else (bop.waits, bop.dep1, bop.dep0),
            i0.branch_target, _rel(i0.resume_at, t), i0.ended, i0.bubble, i0.enabled,
            i0.one_more, i1.state, i1.pc, i1.prev_pc, i1.ended,
            tuple((_rel(s.busy_from, t), _rel(s.busy_end, t)) for s in st),
            m.arb.last, m.idle_hint, m.pre, m.pre2, tuple(m.prev_enabled), rf[2], rf[3],
            bytes(m.known), tuple(i0.sb))


_COUNTERS = ("seq", "commits", "fifo_overflows", "dropped")  # (not steps: cycles stepped)


def counters(m: Any) -> dict[str, int]:
    """The counters a replayed iteration adds to."""
    c = {k: getattr(m, k) for k in _COUNTERS}
    i0 = m.iius[0]
    c["i0.issued"] = i0.issued
    c["i0.stall_cycles"] = i0.stall_cycles
    c["arb.grants"] = m.arb.grants
    c["smu.stalls"] = m.smu.stalls
    for s in m.stations:
        c[f"rs{s.id}.executed"] = s.executed
    return c


def build(events: list[ev.Event], rf_a: list, rf_b: list, head: int, period: int,
          deltas: dict[str, int], probes: set[int]) -> Template | None:
    """The template of the iteration from the head at cycle ``head`` to the next, ``period``
    cycles later, whose records are ``events`` (registers ``rf_a`` at its head, ``rf_b`` at
    the next), or None when it cannot be replayed. ``probes``: the cycles in which a branch
    decision read the commit's flags (the replay checks those flags)."""
    if deltas["dropped"] or deltas["fifo_overflows"] or -1 in probes:
        return None
    src: list[str] = []  # the generated function's body
    reg: dict[int, str] = {}  # register -> the local holding its current value
    reads: dict[int, str] = {}  # registers read before any write -> local
    nv = 0

    def new(prefix: str) -> str:
        nonlocal nv
        nv += 1
        return f"{prefix}{nv}"

    def read(r: int) -> str:
        name = reg.get(r)
        if name is None:
            name = reads[r] = reg[r] = f"H{r}"
        return name

    pending: dict[int, list[dict]] = {}  # station -> issued ops not committed yet, in order
    waiting: list[dict] = []  # issued ops waiting for an operand
    vals: list[str] = []  # per record, the locals holding its values (for the trace)
    for e in events:
        if type(e) is ev.Issue:
            w = e.word
            if e.dep1 < 0 or e.dep0 < 0 or e.thread or e.rs <= 0:
                return None
            opc = w >> 48 & 7
            if opc == OP_IO or (w >> 57 & 1 and w >> 63):
                return None
            if e.known1 != 7 or e.known0 != 7:
                return None
            a = addressing(w, e.offset, e.index)
            s1a, s0a, s1v, dst, dix = a
            if dix or dst != e.dst:
                return None
            if s1v is not None:
                r1 = f"{tuple(s1v)!r}"
            elif s1a is not None:
                r1 = read(s1a)
            else:
                r1 = "ZERO"
            r0 = read(s0a) if s0a is not None else "ZERO"
            if w >> 63:
                sc = w >> 59 & 9 == 9
                m1 = f"modify({r1}, 0, 0, True)" if sc else r1
                m0 = r0
            else:
                p1 = (w >> 31 & 7, w >> 25 & 0x3F, w >> 59 & 9 == 9)
                p0 = (w >> 14 & 7, w >> 8 & 0x3F, False)
                m1 = f"modify({r1}, {p1[0]}, {p1[1]}, {p1[2]})" if p1 != (0, 0, False) else r1
                m0 = f"modify({r0}, {p0[0]}, {p0[1]}, False)" if p0 != (0, 0, False) else r0
            v1, v0 = new("a"), new("b")
            x1 = f"{read(s1a)}[0]" if s1a is not None else "0"
            src.append(f"{v1} = {r1}; {v0} = {r0}")
            s1, s0 = new("s"), new("s")
            src.append(f"{s1} = {m1}; {s0} = {m0}")
            op = {"word": w, "dst": dst, "we": e.we, "issue": e.cycle, "dep1": e.dep1,
                  "dep0": e.dep0, "s1": s1, "s0": s0, "res": new("r"), "rs": e.rs}
            if e.dep1 or e.dep0:
                # the tags the records show for a pending operand are constants
                waiting.append(op)
            else:
                if opc == OP_ADD:
                    src.append(f"{op['res']} = (({s1}[0] + {s0}[0]) & M, ({s1}[1] + {s0}[1]) "
                               f"& M, ({s1}[2] + {s0}[2]) & M)")
                else:
                    src.append(f"{op['res']} = execute({w}, {s1}, {s0}) or ZERO")
            pending.setdefault(e.rs, []).append(op)
            vals.append(f"({v1}, {v0}, {s1 if not e.dep1 else repr(e.mod1)}, "
                        f"{s0 if not e.dep0 else repr(e.mod0)}, {x1})")
        elif type(e) is ev.Commit:
            q = pending.get(e.rs)
            if not q:
                return None
            op = q.pop(0)
            if op["word"] != e.word or op["dst"] != e.dst or op["we"] != e.we or e.known != 7:
                return None
            if any(x is op for x in waiting):  # committed before it started: cannot be
                return None
            res = op["res"]
            if e.cycle in probes:  # a branch was decided by this result's flags
                src.append(f"if flags({res}) != {flags(e.result)!r}: return None")
            we = e.we
            if we:
                d = e.dst
                if d in (2, 3):
                    return None
                old = read(d) if we != 7 else None
                nvn = new("W")
                if we == 7:
                    src.append(f"{nvn} = {res}")
                else:
                    parts = [f"{res}[{i}]" if we & b else f"{old}[{i}]"
                             for i, b in enumerate((4, 2, 1))]
                    src.append(f"{nvn} = ({', '.join(parts)})")
                reg[d] = nvn
            vals.append(f"{res}")
            # the stations waiting for this station's result (RTL: matched by station id)
            for wo in list(waiting):
                if wo["issue"] >= e.cycle:
                    continue
                hit = False
                if wo["dep1"] == e.rs:
                    src.append(f"{wo['s1']} = fs1({wo['word']}, {res})")
                    wo["dep1"] = 0
                    hit = True
                if wo["dep0"] == e.rs:
                    src.append(f"{wo['s0']} = fs0({wo['word']}, {res})")
                    wo["dep0"] = 0
                    hit = True
                if hit and not wo["dep1"] and not wo["dep0"]:
                    waiting.remove(wo)
                    # the station starts later, but its result depends only on the operands
                    if wo["word"] >> 48 & 7 == OP_ADD:
                        a1, a0 = wo["s1"], wo["s0"]
                        src.append(f"{wo['res']} = (({a1}[0] + {a0}[0]) & M, ({a1}[1] + "
                                   f"{a0}[1]) & M, ({a1}[2] + {a0}[2]) & M)")
                    else:
                        src.append(f"{wo['res']} = execute({wo['word']}, {wo['s1']}, "
                                   f"{wo['s0']}) or ZERO")
        else:
            vals.append("None")
    if waiting or any(pending.values()):
        return None
    writes = sorted(r for r, n in reg.items() if reads.get(r) != n)
    loads = "".join(f"    H{r} = rf[{r}]\n" for r in sorted(reads))
    body = "".join(f"    {line}\n" for line in src)
    store = "".join(f"    rf[{r}] = {reg[r]}\n" for r in writes)
    step_src = f"def step(rf):\n{loads}{body.replace('return None', 'return False')}{store}" \
               "    return True\n"
    vals_src = (f"def values(rf):\n{loads}{body}    return ("
                + "".join(f"({r}, {reg[r]}), " for r in writes) + "), ("
                + "".join(f"{v}, " for v in vals) + ")\n")
    ns: dict[str, Any] = dict(_GLOBALS)
    exec(compile(step_src + vals_src, "<theia loop template>", "exec"), ns)  # noqa: S102
    tpl = Template(head, period, deltas, events, ns["values"], ns["step"], len(vals))
    # check the function on the recorded iteration itself
    out = tpl.values(list(rf_a))
    if out is None:
        return None
    wr, per = out
    got = list(rf_a)
    for r, v in wr:
        got[r] = v
    if got != list(rf_b):
        return None
    for e, v in zip(events, per, strict=True):
        if type(e) is ev.Issue:
            if v != (e.raw1, e.raw0, e.mod1, e.mod0, e.src1_x):
                return None
        elif type(e) is ev.Commit and v != e.result:
            return None
    probe = list(rf_a)
    if not tpl.step(probe) or probe != list(rf_b):
        return None
    return tpl


def replay(m: Any, tpl: Template, t: int, bound: int, trace: bool) -> int:
    """Replay ``tpl`` from the head at cycle ``t`` as long as its flags hold and the
    iteration ends by ``bound``; returns the number of iterations replayed."""
    P = tpl.period
    n = 0
    rf = m.rf
    if not trace:
        step = tpl.step
        while t + P * (n + 1) <= bound and step(rf):
            n += 1
    elif m.blocks:  # one record for all the iterations (LogFormatter prints them)
        values = tpl.values
        per = []
        while t + P * (n + 1) <= bound:
            out = values(rf)
            if out is None:
                break
            for r, v in out[0]:
                rf[r] = v
            per.append(out[1])
            n += 1
        if n:
            m.events.append(ev.Replayed(t - tpl.head, 0, tpl, per))
    else:
        values = tpl.values
        events = m.events
        while t + P * (n + 1) <= bound:
            out = values(rf)
            if out is None:
                break
            for r, v in out[0]:
                rf[r] = v
            events += tpl.records(t + P * n - tpl.head, out[1])
            n += 1
    if not n:
        return 0
    d = P * n
    m.cycle = t + d
    for k, v in tpl.deltas.items():
        if not v:
            continue
        v *= n
        if k.startswith("i0."):
            obj, name = m.iius[0], k[3:]
        elif k.startswith("arb."):
            obj, name = m.arb, k[4:]
        elif k.startswith("smu."):
            obj, name = m.smu, k[4:]
        elif k.startswith("rs"):
            sid, name = k[2:].split(".")
            obj = m.stations[int(sid)]
        else:
            obj, name = m, k
        setattr(obj, name, getattr(obj, name) + v)
    for s in m.stations:
        if _rel(s.busy_from, t) is not None:
            s.busy_from += d
        if _rel(s.busy_end, t) is not None:
            s.busy_end += d
    i0 = m.iius[0]
    if i0.resume_at < NEVER:
        i0.resume_at += d
    return n


def _deltas(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: v - before[k] for k, v in after.items()}


def run(m: Any, max_cycles: int, until: int | None,
        step: Callable[[int, int | None], Any]) -> None:
    """``VPCycleModel.run`` with loop replay: ``step(max_cycles, until)`` is the plain
    cycle loop (it raises at the cycle limit, as without replay)."""
    start = m.cycle
    limit = start + max_cycles
    stop = NEVER if until is None else until
    bound = min(stop, limit)
    while not m.done and m.cycle < bound:
        t = m.cycle
        if t < m.replay_next:
            step(limit - t + 1, min(bound, m.replay_next))
            continue
        if _search(m, bound, step):
            m.replay_next = m.cycle
            m.replay_backoff = SEARCH
        else:
            m.replay_next = m.cycle + m.replay_backoff
            m.replay_backoff = min(2 * m.replay_backoff, BACKOFF_MAX)
    if not m.done and stop > m.cycle >= limit:
        raise m.limit_error(max_cycles)


def _search(m: Any, bound: int, step: Callable[[int, int | None], Any]) -> bool:
    """Step one cycle at a time looking for loop heads, replaying the iterations of a known
    one; True if anything was replayed."""
    traced = m.trace
    events = m.events
    n_events = len(events)
    n_busy = len(m.busy_log)
    m.trace = True  # (the records make the templates; without a trace they are dropped)
    probes: set[int] = set()
    m.flag_probes = probes
    seen: dict[tuple, tuple[int, list, int, dict[str, int]]] = {}
    templates = m.replay_templates
    replayed = False
    end = min(bound, m.cycle + SEARCH)
    try:
        while m.cycle < end and not m.done:
            t = m.cycle
            key = head_key(m, t)
            if key is not None:
                tpl = templates.get(key)
                if tpl is not None:
                    if replay(m, tpl, t, bound, traced):
                        replayed = True
                        seen.clear()
                        end = min(bound, m.cycle + SEARCH)
                        continue
                else:
                    prev = seen.get(key)
                    if prev is not None:
                        ta, rf_a, ia, ca = prev
                        tpl = build(events[ia:], rf_a, list(m.rf), ta, t - ta,
                                    _deltas(counters(m), ca), probes)
                        if tpl is not None:
                            if len(templates) >= 64:
                                templates.clear()
                            templates[key] = tpl
                            continue
                    seen[key] = (t, list(m.rf), len(events), counters(m))
            step(2, t + 1)
    finally:
        m.flag_probes = None
        m.trace = traced
        if not traced:
            del events[n_events:]
            del m.busy_log[n_busy:]
    return replayed
