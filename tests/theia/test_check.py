"""Regression criteria (.config) as the upstream run_regressions.pl judges them."""

from __future__ import annotations

from pathlib import Path

import pytest

from isaforge.theia.check import CheckError, check, evaluate, parse_config

RF = "r0\t00000000 00000001 00000002\nr66\t0000aced 0000aced 0000aced\nr67\txxxxxxxx 00000005 x" \
     "xxxxxxx\n"
OMEM = "@00\t0000cafe\n@01\txxxxxxxx\n@10\t0000beef\n"


@pytest.fixture
def dumps(tmp_path: Path) -> Path:
    (tmp_path / "rf.vp.2.log").write_text(RF)
    (tmp_path / "OMEM.vp.2.log").write_text(OMEM)
    return tmp_path


def _judge(text: str, directory: Path) -> list[bool | None]:
    return [o.passed for o in evaluate(parse_config(text, "t.config"), directory)]


def test_equal_criteria(dumps: Path) -> None:
    assert _judge("vp[2].r[66] == 0000aced 0000aced 0000aced\nvp[2].omem[0] == 0000cafe",
                  dumps) == [True, True]
    assert _judge("vp[2].r[66] == 0000aced 0000aced 0000acee\nvp[2].omem[10] == 0000cafe",
                  dumps) == [False, False]


def test_x_matches_undefined_bits_as_a_pattern(dumps: Path) -> None:
    assert _judge("vp[2].omem[1] == x\nvp[2].r[67] == xxxxxxxx 00000005 xxxxxxxx\n"
                  "vp[2].omem[0] == x", dumps) == [True, True, False]


def test_not_equal_lines_are_not_judged_and_comments_skip_whole_lines(dumps: Path) -> None:
    text = "vp[2].omem[1] != x\nvp[2].omem[0] == 1234 // commented out upstream\n"
    assert _judge(text, dumps) == [None]


def test_missing_dump_fails_and_missing_directory_is_an_error(tmp_path: Path) -> None:
    outcomes = evaluate(parse_config("vp[3].r[1] == 0"), tmp_path)
    assert outcomes[0].passed is False and "no rf.vp.3.log" in outcomes[0].actual
    with pytest.raises(CheckError, match="no such directory"):
        evaluate(parse_config("vp[3].r[1] == 0"), tmp_path / "nope")


def test_malformed_criteria_are_errors_with_a_location(tmp_path: Path) -> None:
    with pytest.raises(CheckError) as e:
        parse_config("\nvp[2].r[66] == 1\n  vp[2].reg[1] == 5\n", "t.config")
    assert str(e.value).startswith("t.config:3:3: error:")
    with pytest.raises(CheckError, match="1 to 1 value"):
        parse_config("vp[2].omem[1] == 1 2")
    (tmp_path / "c.config").write_bytes(b"\xff\xfe")
    with pytest.raises(CheckError, match="not a text file"):
        check(tmp_path / "c.config", tmp_path)
