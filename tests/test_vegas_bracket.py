"""The win finder (``agents/search/finder.py``) and the Vegas bracket
(``experiments/vegas_bracket.py``, ``experiments/results/vegas/``): the finder reads the deal and
is no player, every committed win replays through the engine, and the committed table is what its
games, certificates and the solver's verdicts give."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from scripts import experiment

from agents import play_deals
from agents.play import VARIANTS
from agents.search import rollouts
from agents.search.finder import WinFinder, certify
from solitaire_gym.errors import ArgumentError

RESULTS = Path(__file__).parents[1] / "experiments" / "results" / "vegas"


def _committed() -> tuple[dict, dict, list[dict]]:
    bracket = json.loads((RESULTS / "bracket.json").read_text())
    certificates = json.loads((RESULTS / "certificates.json").read_text())
    with (RESULTS / "games.csv").open() as f:
        games = list(csv.DictReader(f))
    return bracket, certificates, games


def test_every_committed_win_replays_to_a_win():
    _, certificates, _ = _committed()
    assert certificates, "the bracket holds no certified win"
    for code, moves in certificates.items():
        assert code.startswith(("DS1-D1V-", "DS1-D3V-"))
        assert certify(code, moves), code


def test_the_committed_bracket_is_what_its_games_give():
    """Wins, deals, proven losses (from the solver's committed verdicts), CPU and the moves of
    the wins, recounted from the committed games and certificates; the README is the table of
    those rows."""
    vb = experiment("vegas_bracket")
    bracket, certificates, games = _committed()
    assert [r["variant"] for r in bracket["rows"]] == [v for v in vb.VEGAS if v in
                                                        {g["variant"] for g in games}]  # fmt: skip
    for row in bracket["rows"]:
        mine = [g for g in games if g["variant"] == row["variant"]]
        deals = [int(g["deal"]) for g in mine]
        won = [g for g in mine if g["won"] == "True"]
        assert row["deals"] == len(deals) == len(set(deals))
        assert (row["first"], row["last"]) == (min(deals), max(deals))
        assert row["runs"] == vb.runs_of(deals) and sum(b - a + 1 for a, b in row["runs"]) == len(
            deals
        )
        assert row["wins"] == len(won) == sum(c.startswith(row["variant"]) for c in certificates)
        assert {g["code"] for g in won} == {c for c in certificates if c.startswith(row["variant"])}
        assert row["win_moves"] == sorted(int(g["moves"]) for g in won)
        assert row["win_moves"] == sorted(len(certificates[g["code"]]) for g in won)
        assert row["cpu_s"] == pytest.approx(sum(float(g["cpu_s"]) for g in mine), abs=1e-6)
        verdicts = vb.solver_verdicts(row["variant"])
        assert row["lost"] == sum(verdicts.get(d) == "unsolvable" for d in deals)
        assert row["solver_lost"] == sum(v == "unsolvable" for v in verdicts.values())
        assert row["wins"] + row["lost"] <= row["deals"]  # a win and a proof of loss never meet
    assert (RESULTS / "README.md").read_text() == vb.readme(bracket["rows"], bracket["commands"])
    assert (RESULTS / "bracket.md").read_text() == vb.table(bracket["rows"], bracket["commands"])


def test_certify_refuses_what_is_not_a_win():
    _, certificates, _ = _committed()
    code, moves = next(iter(certificates.items()))
    assert not certify(code, moves[:-1])  # one move short
    assert not certify(code, [*moves, "draw"])  # a move past the win
    assert not certify(code, ["t1>t1", *moves[1:]])  # an illegal move
    assert not certify(code, ["not a move"])
    with pytest.raises(ArgumentError, match="moves must be a list"):
        certify(code, "draw")


def test_the_finder_reads_the_deal_and_is_no_player(monkeypatch):
    """It never deals the hidden cards anew (it searches the game itself), says so in its
    ``uses``, and gives up a game that stops gaining after ``patience`` moves."""
    game, options = VARIANTS["DS1-D3V"]

    def refuse(*args, **kwargs):
        raise AssertionError("the finder dealt hidden cards anew")

    monkeypatch.setattr(rollouts, "redeal_unseen", refuse)
    finder = WinFinder(game, options, nodes=16, patience=10)
    assert finder.uses == "position" and finder.name == "finder@16"
    [r] = play_deals(finder, game, options, [1], max_episode_steps=300)
    assert r.end == "resigned" and r.moves < 300
    [r] = play_deals(WinFinder(game, options, nodes=16), game, options, [1], max_episode_steps=60)
    assert r.end == "truncated"  # patience 0: never gives up
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ArgumentError, match="patience"):
            WinFinder(game, options, patience=bad)


def test_bracket_runs_resumes_and_refuses_other_settings(tmp_path, capsys):
    vb = experiment("vegas_bracket")
    run = ["run", "DS1-D3V", "--first", "1", "--deals", "2", "--nodes", "8", "--max-moves", "40",
           "--out", str(tmp_path / "run")]  # fmt: skip
    assert vb.main(run) == 0
    chunk = tmp_path / "run" / "DS1-D3V" / "1.json"
    before = chunk.read_bytes()
    assert vb.main(run) == 0 and chunk.read_bytes() == before  # done: kept, not replayed
    assert vb.main([*run[:-2], "--nodes", "16", "--out", str(tmp_path / "run")]) == 2
    assert "other deals or settings" in capsys.readouterr().err
    out = tmp_path / "out"
    assert vb.main(["collect", str(tmp_path / "run"), "--out", str(out)]) == 0
    rows = json.loads((out / "bracket.json").read_text())["rows"]
    assert rows[0]["deals"] == 2 and rows[0]["settings"]["nodes"] == 8
    data = json.loads(chunk.read_text())
    data["games"][0]["won"] = True  # a win claimed without its moves
    chunk.write_text(json.dumps(data))
    assert vb.main(["collect", str(tmp_path / "run"), "--out", str(out)]) == 2
    assert "not a chunk of this script" in capsys.readouterr().err
    text = json.loads(json.dumps(data))
    text["games"][0]["trace"] = "draw"  # moves as one string, not a list
    chunk.write_text(json.dumps(text))
    assert vb.main(["collect", str(tmp_path / "run"), "--out", str(out)]) == 2
    assert "not a chunk of this script" in capsys.readouterr().err
    wrong = json.loads(json.dumps(data))
    wrong["games"][0].update(won=False, trace=None, code="DS1-D3V-AAAAAAD")  # another deal's code
    chunk.write_text(json.dumps(wrong))
    assert vb.main(["collect", str(tmp_path / "run"), "--out", str(out)]) == 2
    assert "not a chunk of this script" in capsys.readouterr().err
    data["games"][0]["trace"] = ["draw"]  # a win whose moves do not win
    chunk.write_text(json.dumps(data))
    assert vb.main(["collect", str(tmp_path / "run"), "--out", str(out)]) == 2
    assert "does not replay" in capsys.readouterr().err
    chunk.unlink()
    chunk.mkdir()  # a folder where a chunk file was
    assert vb.main(["collect", str(tmp_path / "run"), "--out", str(out)]) == 2
    assert "is not a file" in capsys.readouterr().err
    chunk.rmdir()
    with pytest.raises(SystemExit):
        vb.main(["run", "DS1-D3V", "--deals", "0"])
    assert np.all([p.suffix == ".json" for p in (tmp_path / "run" / "DS1-D3V").iterdir()])


def test_restore_gives_back_the_run_that_made_the_committed_bracket(tmp_path):
    """``restore`` writes the run folder back from the committed results; ``collect`` on it gives
    the committed rows, certificates and games again, and ``run`` with the committed settings
    finds every chunk done."""
    vb = experiment("vegas_bracket")
    run, out = tmp_path / "run", tmp_path / "out"
    assert vb.main(["restore", str(RESULTS), "--out", str(run)]) == 0
    assert vb.main(["restore", str(RESULTS), "--out", str(run)]) == 0  # again: the same chunks
    assert vb.main(["collect", str(run), "--out", str(out)]) == 0
    bracket, certificates, games = _committed()
    assert json.loads((out / "bracket.json").read_text())["rows"] == bracket["rows"]
    assert json.loads((out / "certificates.json").read_text()) == certificates
    assert (out / "games.csv").read_text() == (RESULTS / "games.csv").read_text()
    for row in bracket["rows"]:  # nothing left to play: a run that played would take minutes
        chunks = sorted((run / row["variant"]).glob("*.json"), key=lambda p: int(p.stem))
        want = [x for a, b in row["runs"] for x in range(a, b + 1, vb.CHUNK)]
        assert [int(p.stem) for p in chunks] == want
    # a run cut short in two places (two processes on two halves) leaves whole chunks out: the
    # chunks that are there come back, and collect counts their deals
    [d1] = [r for r in bracket["rows"] if r["variant"] == "DS1-D1V"]
    last = d1["last"]
    assert d1["runs"] == [[1, last]] and last > 50
    (run / "DS1-D1V" / "26.json").unlink()
    assert vb.main(["collect", str(run), "--out", str(out)]) == 0
    assert vb.main(["restore", str(out), "--out", str(tmp_path / "again")]) == 0
    again = sorted(int(p.stem) for p in (tmp_path / "again" / "DS1-D1V").glob("*.json"))
    assert again == [x for x in range(1, last, vb.CHUNK) if x != 26]
    rows = json.loads((out / "bracket.json").read_text())["rows"]
    assert rows[0]["runs"] == [[1, 25], [51, last]]  # the table and its commands name both
    assert f"| DS1-D1V | 1 … 25, 51 … {last} ({last - 25}) |" in (out / "bracket.md").read_text()
    commands = json.loads((out / "bracket.json").read_text())["commands"]
    second = f" run DS1-D1V --first 51 --deals {last - 50} "
    assert sum(" run DS1-D1V --first 1 --deals 25 " in c or second in c for c in commands) == 2


def test_restore_refuses_results_that_are_not_a_bracket(tmp_path, capsys):
    vb = experiment("vegas_bracket")
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("bracket.json", "certificates.json", "games.csv"):
        (bad / name).write_bytes((RESULTS / name).read_bytes())
    lines = (RESULTS / "games.csv").read_text().splitlines()
    cases = {
        "line 3": [lines[0], lines[1], lines[2].replace(",False,", ",maybe,"), *lines[3:]],
        "not a run's chunk": [*lines[:5], *lines[6:]],  # a deal left out of its chunk
        # a loss said to be a win: the results hold no moves for it
        "not a chunk of this script": [
            *lines[:2],
            lines[2].replace(",False,", ",True,"),
            *lines[3:],
        ],
    }
    for message, text in cases.items():
        (bad / "games.csv").write_text("\n".join(text) + "\n")
        assert vb.main(["restore", str(bad), "--out", str(tmp_path / "run")]) == 2
        assert message in capsys.readouterr().err, message
        assert not (tmp_path / "run").exists()  # nothing written
    (bad / "games.csv").write_bytes((RESULTS / "games.csv").read_bytes())
    (bad / "certificates.json").write_text("[]")
    assert vb.main(["restore", str(bad), "--out", str(tmp_path / "run")]) == 2
    assert "not a results folder of this script" in capsys.readouterr().err
    (bad / "certificates.json").write_bytes('{"\u00e9": 1}'.encode())
    assert vb.main(["restore", str(bad), "--out", str(tmp_path / "run")]) == 2
    assert "is not a certificates.json of this script" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow  # the finder at 4096 nodes a move: the fastest committed win, seconds
def test_the_finder_plays_a_committed_win_again():
    """The committed win the finder found fastest, played again with the run's settings: the same
    moves, move for move (the finder is deterministic for its seed)."""
    vb = experiment("vegas_bracket")
    bracket, certificates, games = _committed()
    won = min((g for g in games if g["won"] == "True"), key=lambda g: float(g["cpu_s"]))
    row = next(r for r in bracket["rows"] if r["variant"] == won["variant"])
    [again] = vb.play_chunk(won["variant"], [int(won["deal"])], row["settings"])
    assert again["won"] and again["trace"] == certificates[won["code"]]


def test_runs_of_deals():
    vb = experiment("vegas_bracket")
    assert vb.runs_of([5, 1, 2, 3, 9, 10]) == [[1, 3], [5, 5], [9, 10]]
    assert vb.runs_of([]) == []


def test_the_table_gives_the_moves_of_the_wins_as_median_and_range():
    vb = experiment("vegas_bracket")
    assert vb._spread([]) == "–"
    assert vb._spread([300, 250, 270]) == "270 (250 … 300)"
    assert vb._spread([250, 271]) == "260.5 (250 … 271)"
    assert vb._spread([259]) == "259 (259 … 259)"
