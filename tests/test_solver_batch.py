"""Many deals at once (``solitaire_gym.solver.batch``: ``parse_deals``, ``solve_many``, results
files) and ``solitaire-gym solve``: deal lists parsed, ASCII and bounded; every argument checked
before the first deal is solved; results files read back to resume, every line checked and a bad
one refused naming it; the command's exit codes."""

from __future__ import annotations

import json

import pytest
from refusing import refused, write_file

from solitaire_gym import GameCodeError
from solitaire_gym.cli import main
from solitaire_gym.engine.variants import parse_code
from solitaire_gym.errors import ArgumentError
from solitaire_gym.solver.batch import ResultsFileError, parse_deals, parse_variant, read_results

SH = "SH1-C4-AAAAAJ2"

# ---- deal lists ----------------------------------------------------------------------------------


def test_parse_deals_and_variant():
    assert parse_deals("1..3,7,2") == [1, 2, 3, 7]
    for bad in ["", "1..", "3..1", "a"]:
        with pytest.raises(GameCodeError):
            parse_deals(bad)
    assert parse_variant("sh1-c2").cells == 2
    with pytest.raises(GameCodeError):
        parse_variant("SH1-C4-AAAAAAB")


@pytest.mark.parametrize("deals", ["١..٣", "1..３", "²"])
def test_deal_lists_are_ascii(deals, tmp_path, capsys):
    refused(GameCodeError, parse_deals, deals)
    out = tmp_path / "r.jsonl"
    assert main(["solve", "--deals", deals, "--game", "SH1-C4", "--out", str(out)]) == 2
    assert not out.exists()


def test_huge_deal_range_is_refused(tmp_path, capsys):
    refused(GameCodeError, parse_deals, "0..34359738367")
    out = tmp_path / "r.jsonl"
    args = ["solve", "--deals", "0..34359738367", "--game", "SH1-C4", "--out", str(out)]
    assert main(args) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


# ---- solve_many checks its arguments first -------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"variant": "SH1-C4"}, ArgumentError, "variant must be a Variant"),
        ({"deals": [1, 2**40]}, GameCodeError, "deal 1099511627776"),
        ({"deals": [1, 2.0]}, GameCodeError, "deal 2.0"),
        ({"max_nodes": -1}, ArgumentError, "max_nodes must be 1 or more"),
        ({"max_seconds": float("nan")}, ArgumentError, "max_seconds"),
        ({"jobs": 1.5}, ArgumentError, "jobs must be an integer"),
        ({"jobs": "x"}, ArgumentError, "jobs must be an integer"),
        ({"chunk": -1}, ArgumentError, "chunk must be an integer"),
        ({"out": 5}, ArgumentError, "out must be a path"),
    ],
)
def test_solve_many_checks_everything_before_it_starts(tmp_path, kwargs, error, message):
    """The call itself refuses (not the first ``next``), before the out file or its folder is
    made and before any deal is solved."""
    from solitaire_gym.solver.batch import parse_variant, solve_many

    out = tmp_path / "new" / "out.jsonl"
    call = {"variant": parse_variant("SH1-C4"), "deals": [1, 2], "max_seconds": 1.0,
            "out": out, "progress": False, **kwargs}  # fmt: skip
    with pytest.raises(error, match=message):
        solve_many(call.pop("variant"), call.pop("deals"), **call)
    assert list(tmp_path.iterdir()) == []


# ---- results files: every line is checked --------------------------------------------------------


def test_resume_file_deeply_nested_or_a_folder(tmp_path):
    refused(ResultsFileError, read_results, write_file(tmp_path, "r.jsonl", b"[" * 100_000))
    refused(ResultsFileError, read_results, tmp_path)
    refused(ResultsFileError, read_results, write_file(tmp_path, "u.jsonl", b"\xff\n"))
    refused(ResultsFileError, read_results, write_file(tmp_path, "i.jsonl", b"9" * 5000 + b"\n"))


def _result_line(**changes):
    rec = {"code": "SH1-C4-AAAAAAB", "deal": 1, "verdict": "unknown", "solution": [],
           "nodes": 10, "seconds": 0.5}  # fmt: skip
    rec.update(changes)
    return json.dumps(rec)


@pytest.mark.parametrize(
    "line,words",
    [
        (_result_line(deal=True), ["line 2", "deal"]),
        (_result_line(verdict="solvable"), ["line 2", "solution"]),
        (_result_line(verdict="solvable", solution=[1]), ["line 2", "solution"]),
        (_result_line(solution=["t1>c"]), ["line 2", "solution"]),
        (_result_line(verdict=["unknown"]), ["line 2", "verdict"]),
        (_result_line(deal=1.0), ["line 2", "deal"]),
        (_result_line(nodes=-1), ["line 2", "nodes"]),
        (_result_line(code="SH1-C4-AAAAAAß"), ["line 2"]),
    ],
)
def test_resume_lines_are_validated(tmp_path, line, words):
    p = tmp_path / "r.jsonl"
    p.write_text(_result_line(deal=1) + "\n" + line + "\n")
    message = refused(ResultsFileError, read_results, p)
    for w in words:
        assert w in message


def test_good_resume_file_still_read(tmp_path):
    p = tmp_path / "r.jsonl"
    good = _result_line(verdict="solvable", solution=["t1>c"], deal=1)
    p.write_text(good + "\n\n" + _result_line(code="SH1-C4-AAAAAAC", deal=2) + "\n")
    assert sorted(read_results(p, parse_code("SH1-C4-AAAAAAA")[0])) == [1, 2]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"solution": ["\u00df\u0663"]}, "list of moves \\(ASCII\\)"),
        ({"solution": ["\u00a0t1>t7"]}, "list of moves \\(ASCII\\)"),
        ({"nodes": 1.5}, "'nodes' must be an integer"),
        ({"nodes": 1e308}, "'nodes' must be an integer"),
    ],
)
def test_results_file_fields(tmp_path, change, message):
    rec = {"code": SH, "deal": parse_code(SH)[1], "verdict": "solvable", "solution": ["t1>t7"],
           "nodes": 10, "seconds": 0.5, **change}  # fmt: skip
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    refused(ResultsFileError, read_results, path)
    with pytest.raises(ResultsFileError, match=message):
        read_results(path)
    with pytest.raises(ArgumentError, match="variant must be a Variant"):
        read_results(path, "SH1-C4")


# ---- the command ---------------------------------------------------------------------------------


def test_cli_single(capsys):
    assert main(["solve", "TF1-D3N-AAAAAAD", "--max-seconds", "5"]) == 0
    out = capsys.readouterr().out
    assert "verdict: solvable" in out and "thoughtful" in out and "nodes:" in out


def test_cli_batch_resumes(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    args = ["solve", "--deals", "1..3", "--game", "SH1-C1", "--jobs", "1", "--out", str(out)]
    assert main([*args, "--quiet"]) == 0
    assert len(out.read_text().splitlines()) == 3
    assert main([*args[:2], "1..4", *args[3:], "--quiet"]) == 0
    done = read_results(out, parse_variant("SH1-C1"))
    assert sorted(done) == [1, 2, 3, 4]
    capsys.readouterr()
    out.write_text(out.read_text() + '{"code": "SH1-C1-AAAAAAF", "verd')
    assert main([*args, "--quiet"]) == 2
    assert "line 5" in capsys.readouterr().err
    with pytest.raises(ResultsFileError):
        read_results(out)
    other = tmp_path / "o.jsonl"
    other.write_text(out.read_text().splitlines()[0] + "\n")
    assert main(["solve", "--deals", "1", "--game", "SH1-C4", "--out", str(other)]) == 2


def test_cli_refuses_bad_arguments(capsys):
    assert main(["solve", "XX1-C4-AAAAAAB"]) == 2
    assert main(["solve"]) == 2
    with pytest.raises(SystemExit):
        main(["solve", "SH1-C4-AAAAAAB", "--max-seconds", "0"])
    capsys.readouterr()
