"""VCD waveforms of the cycle model parse back and show what the trace says."""

from __future__ import annotations

import io

from vcd.reader import TokenKind, tokenize

from isaforge.theia.cycle import Quirks, run_cycles
from isaforge.theia.cycle import events as ev
from isaforge.theia.cycle.waves import write_vcd
from isaforge.theia.image import read_mem
from tests.refdata import refdata


def _parse(text: str) -> tuple[dict[str, str], dict[str, list[tuple[int, int]]]]:
    """(name -> id, id -> [(time, value)]) from VCD text."""
    ids: dict[str, str] = {}
    values: dict[str, list[tuple[int, int]]] = {}
    now = 0
    for tok in tokenize(io.BytesIO(text.encode())):
        if tok.kind is TokenKind.VAR:
            ids[tok.data.reference] = tok.data.id_code
        elif tok.kind is TokenKind.CHANGE_TIME:
            now = tok.data
        elif tok.kind in (TokenKind.CHANGE_SCALAR, TokenKind.CHANGE_VECTOR):
            v = tok.data.value
            values.setdefault(tok.data.id_code, []).append(
                (now, int(v) if isinstance(v, int) else int(str(v) == "1")))
    return ids, values


def _rises(series: list[tuple[int, int]]) -> list[int]:
    out, prev = [], 0
    for t, v in series:
        if v and not prev:
            out.append(t)
        prev = v
    return out


def test_vcd_parses_back_with_issues_commits_and_busy_stations() -> None:
    d = refdata("theia", "regressions", "test_branches_1", "code.mem").parent
    model = run_cycles(read_mem((d / "code.mem").read_text()), quirks=Quirks.rtl())
    buf = io.StringIO()
    write_vcd(model, buf)
    ids, values = _parse(buf.getvalue())
    for name in ("issue", "issue_station", "issue_word", "cbus_owner", "cbus_data", "commit",
                 "ADD_0_busy", "DIV_busy", "IO_busy", "branch_taken_t0"):
        assert name in ids
    issues = [e for e in model.events if isinstance(e, ev.Issue)]
    commits = [e for e in model.events if isinstance(e, ev.Commit)]
    # back-to-back issues never happen (one issue every 2 cycles), so each is one pulse
    assert _rises(values[ids["issue"]]) == [20 * e.cycle for e in issues]
    words = dict(values[ids["issue_word"]])
    assert all(words.get(20 * e.cycle, e.word) == e.word for e in issues)
    owner = values[ids["cbus_owner"]]
    for c in commits:
        assert (20 * c.cycle, c.rs) in owner
    # the one DIV of test_branches_1: busy from the cycle after its issue to its commit
    div_issue = next(e.cycle for e in issues if e.rs == 3)
    div_commit = next(e.cycle for e in commits if e.rs == 3)
    assert div_commit - div_issue == 66
    assert values[ids["DIV_busy"]] == [(0, 0), (20 * (div_issue + 1), 1),
                                       (20 * (div_commit + 1), 0)]


def test_vcd_of_a_designed_run_with_a_stuck_station_free_program() -> None:
    d = refdata("theia", "regressions", "test1_tmem", "code.mem").parent
    tmem = [int(x, 16) for x in (d / "tmem.mem").read_text().split()]
    model = run_cycles(read_mem((d / "code.mem").read_text()), tmem=tmem)
    buf = io.StringIO()
    write_vcd(model, buf)
    ids, values = _parse(buf.getvalue())
    io_busy = values[ids["IO_busy"]]
    tmreads = [e for e in model.events if isinstance(e, ev.Issue) and e.rs == 7
               and e.word >> 59 & 7 == 1]
    assert tmreads
    first = tmreads[0].cycle
    assert (20 * (first + 1), 1) in io_busy and (20 * (first + 13), 0) in io_busy
