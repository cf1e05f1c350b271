"""Pictures of positions (rgb_array), videos and the render command; the frame rate and the output
paths they are given are checked."""

import gymnasium as gym
import imageio.v2 as imageio
import imageio.v3 as iio
import numpy as np
import pytest
from refusing import MAX_MESSAGE

import solitaire_gym  # noqa: F401  (registers the ids)
from solitaire_gym import Game
from solitaire_gym.cli import main
from solitaire_gym.rendering import image
from solitaire_gym.rendering.image import board_size, render_position
from solitaire_gym.rendering.replay import write_gif, write_mp4
from solitaire_gym.traces import Trace, load_trace, save_trace

CODES = [
    "DS1-D1N-AAAAAAB",
    "DS1-D1V-AAAAAAB",
    "DS1-D3N-AAAAAAB",
    "DS1-D3V-AAAAAAB",
    "TF1-D1N-AAAAAAB",
    "TF1-D3N-AAAAAAB",
    "SH1-C4-AAAAAJ2",
    "SH1-C2-AAAAAJ2",
    "SH1-C1-AAAAAJ2",
]
ENV_IDS = [
    "solitaire_gym/DoubleSolitaire-v0",
    "solitaire_gym/SolitaireReflechi-v0",
    "solitaire_gym/SeahavenTowers-v0",
]
FELT = np.array(image.FELT, np.uint8)


def played(code: str, n: int = 12) -> tuple[Game, list[str]]:
    """A game a few moves in (foundation moves first, then draws, then the last legal move),
    and its moves."""
    g, moves = Game.from_code(code), []
    for _ in range(n):
        legal = sorted(g.legal_moves())
        if not legal:
            break
        pick = [m for m in legal if m.endswith(">f")] or [m for m in legal if m == "draw"]
        moves.append(pick[0] if pick else legal[-1])
        g.play(moves[-1])
    return g, moves


def reds(a: np.ndarray) -> int:
    return int(((a[..., 0] > 150) & (a[..., 1] < 70) & (a[..., 2] < 70)).sum())


def blacks(a: np.ndarray) -> int:
    return int((a.max(axis=-1) < 50).sum())


def felt(a: np.ndarray) -> np.ndarray:
    return (a == FELT).all(axis=-1)


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("glyphs", [True, False], ids=["font", "shapes"])
def test_picture_of_every_game_and_option(code, glyphs):
    g, _ = played(code)
    a = render_position(g.to_dict(), use_glyphs=glyphs)
    assert a.dtype == np.uint8 and a.ndim == 3 and a.shape == (*board_size(code), 3)
    assert a.shape[0] % 16 == 0 and a.shape[1] % 16 == 0
    packed = (a[..., 0].astype(np.uint32) << 16) | (a[..., 1].astype(np.uint32) << 8) | a[..., 2]
    assert len(np.unique(packed)) > 20  # not a single colour
    assert reds(a) > 500 and blacks(a) > 500  # red and black cards
    assert felt(a).mean() > 0.3  # the table shows
    start = render_position(Game.from_code(code).to_dict(), use_glyphs=glyphs)
    assert start.shape == a.shape and (start != a).any()


def test_pictures_follow_the_position():
    sh = {c: render_position(Game.from_code(f"SH1-{c}-AAAAAJ2").to_dict()) for c in ("C4", "C1")}
    # Removed cells are absent: where C4 draws its fourth cell, C1 shows bare table.
    x0 = (sh["C4"].shape[1] - (10 * image.PITCH - image.GAP)) // 2 + 6 * image.PITCH
    y0 = image.HEADER + 8 + image.LABEL
    box = (slice(y0 + 4, y0 + image.CARD_H - 4), slice(x0 + 1, x0 + image.CARD_W - 1))
    assert not felt(sh["C4"][box]).all() and felt(sh["C1"][box]).all()

    # Draw 3 fans the top three waste cards; draw 1 shows only the top one.
    pics = {}
    for draw in (1, 3):
        g = Game.from_code(f"DS1-D{draw}N-AAAAAAB")
        for _ in range(3 // draw):
            g.play("draw")
        assert len(g.to_dict()["waste"]) == 3
        pics[draw] = render_position(g.to_dict())
    x = image.MARGIN + image.PITCH + 2 * image.FAN_WASTE + image.CARD_W - 8
    column = pics[3][y0 + 30 : y0 + 60, x]
    assert (column > 240).all()  # a card face
    assert felt(pics[1][y0 + 30 : y0 + 60, x]).all()

    # A won game says so; the stock shows its count.
    g = Game.from_code("TF1-D1N-AAAAAAB")
    d = g.to_dict()
    won = dict(d, tableau=[[] for _ in d["tableau"]], stock=[], waste=[])
    won["foundations"] = ["KS", "KH", "KD", "KC"]
    assert image.is_won(won) and not image.is_won(d)
    assert (render_position(won) == image.WON_TEXT).all(axis=-1).sum() > 100
    assert not (render_position(d) == image.WON_TEXT).all(axis=-1).any()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_env_rgb_array(env_id):
    env = gym.make(env_id, render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"]
    obs, info = env.reset(seed=0)
    first = env.render()
    assert isinstance(first, np.ndarray) and first.dtype == np.uint8
    assert first.shape == (*board_size(info["code"]), 3)
    np.testing.assert_array_equal(first, render_position(env.unwrapped.to_dict()))
    rng = np.random.default_rng(0)
    for _ in range(5):
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        assert env.render().shape == first.shape  # constant size: videos need it
        if term or trunc:
            break
    venv = gym.make_vec(env_id, num_envs=2, render_mode="rgb_array")
    venv.reset(seed=1)
    frames = venv.render()
    assert len(frames) == 2 and all(f.shape == first.shape for f in frames)


def test_record_video(tmp_path):
    from gymnasium.wrappers import RecordVideo

    env = gym.make("solitaire_gym/SeahavenTowers-v0", render_mode="rgb_array", max_episode_steps=8)
    folder = tmp_path / "videos"
    env = RecordVideo(env, str(folder), episode_trigger=lambda k: True, disable_logger=True)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, r, term, trunc, info = env.step(action)
        done = term or trunc
    env.close()
    videos = list(folder.glob("*.mp4"))
    assert len(videos) == 1
    frames = list(iio.imiter(videos[0], plugin="FFMPEG"))
    assert len(frames) >= 9 and frames[0].shape == (*board_size("SH1-C4-AAAAAAB"), 3)


@pytest.fixture(scope="module")
def short_trace(tmp_path_factory) -> Trace:
    g, moves = played("DS1-D3N-AAAAAAB", 10)
    path = save_trace(tmp_path_factory.mktemp("trace") / "t.json", g.code, moves, agent="test")
    return load_trace(path)


def test_gif_and_mp4(tmp_path, short_trace):
    n = len(short_trace.positions)
    gif = write_gif(short_trace, tmp_path / "a.gif", fps=5)
    frames = iio.imread(gif, index=None)
    assert frames.shape[0] == n and frames.shape[1:3] == board_size(short_trace.code)
    first = frames[0][..., :3]
    assert reds(first) > 500 and blacks(first) > 500
    assert (frames[0] != frames[-1]).any()
    mp4 = write_mp4(short_trace, tmp_path / "a.mp4", fps=5)
    reader = imageio.get_reader(mp4, format="FFMPEG")
    count = sum(1 for _ in reader)
    reader.close()
    assert count >= n  # the last position is held a while


def test_render_command(tmp_path, short_trace, capsys):
    path = short_trace.save(tmp_path / "t.json")
    out = {k: tmp_path / f"o.{k}" for k in ("gif", "html", "png")}
    args = ["render", str(path), "--fps", "8", "--step", "0"]
    for k, p in out.items():
        args += [f"--{k}", str(p)]
    assert main(args) == 0
    assert all(p.stat().st_size > 1000 for p in out.values())
    png = iio.imread(out["png"])
    np.testing.assert_array_equal(png[..., :3], render_position(short_trace.positions[0]))
    assert "wrote" in capsys.readouterr().out
    assert main(["render", str(path)]) == 2
    assert main(["render", str(path), "--png", str(out["png"]), "--step", "999"]) == 2


# ---- the replay page: drawn by the page from layout data ---------------------------------------
@pytest.fixture(scope="module")
def long_trace(tmp_path_factory):
    """A 300-move Double Solitaire game (random legal moves, fixed seed)."""
    g, moves = Game.from_code("DS1-D1N-AAAAAAB"), []
    rng = np.random.default_rng(3)
    while len(moves) < 300:
        legal = g.legal_moves()
        moves.append(legal[int(rng.integers(len(legal)))])
        g.play(moves[-1])
    path = save_trace(tmp_path_factory.mktemp("long") / "t.json", g.code, moves, agent="random")
    return load_trace(path)


def test_replay_page_of_300_moves_is_small_and_self_contained(long_trace):
    from solitaire_gym.rendering.replay import html_page

    page = html_page(long_trace)
    assert len(page.encode("utf-8")) <= 500_000
    assert page.isascii()
    assert "http://" not in page and "https://" not in page and "<link" not in page
    assert "src=" not in page.replace("im.src", "")  # no external picture, no script file


def test_replay_data_paints_what_board_ops_lays_out(long_trace):
    from solitaire_gym.rendering.replay import replay_data

    data = replay_data(long_trace)
    assert len(data["frames"]) == len(long_trace.positions) == 301
    assert len(data["ops"]) == len({tuple(map(str, op)) for op in data["ops"]})  # each once
    kinds = {"c": "card", "s": "slot", "t": "text", "b": "badge", "B": "bar", "l": "line"}
    for k in (0, 150, 300):
        size, ops = image.board_ops(long_trace.positions[k])
        stored = [data["ops"][i] for i in data["frames"][k]]
        assert [kinds[op[0]] for op in stored] == [op[0] for op in ops]
        for mine, op in zip(stored, ops, strict=True):
            if op[0] == "slot":  # its mark is stored as the name of its picture
                mine, op = mine[:3], op[:3]
            numbers = [v for v in op[1:] if isinstance(v, (int, float))]
            assert [v for v in mine[1:] if isinstance(v, (int, float))] == pytest.approx(
                numbers, abs=0.05
            )
        assert data["size"] == list(size)
    # Every sprite the operations name is in the page.
    named = {op[1] for op in data["ops"] if op[0] == "c"} | {
        op[3] for op in data["ops"] if op[0] == "s"
    }
    assert named == set(data["sprites"])


def test_board_ops_paint_the_picture():
    g = Game.from_code("TF1-D3N-AAAAAAB")
    for _ in range(4):
        g.play("draw")
    size, ops = image.board_ops(g.to_dict())
    painted = np.asarray(image.paint(ops, size), dtype=np.uint8)
    np.testing.assert_array_equal(painted, render_position(g.to_dict()))
    assert {op[0] for op in ops} >= {"bar", "text", "card", "slot", "badge"}


# ---- notebook display ------------------------------------------------------------------------
def _png_picture(data: bytes) -> np.ndarray:
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def test_game_displays_as_its_board():
    g = Game.from_code("SH1-C4-AAAAAJ2")
    g.play("t1>t7")
    np.testing.assert_array_equal(_png_picture(g._repr_png_()), render_position(g.to_dict()))
    page = g._repr_html_()
    assert page.startswith("<div>") and "data:image/png;base64," in page
    assert "SH1-C4-AAAAAJ2" in page and "moves 1" in page and "legal moves" in page


def test_trace_displays_as_the_replay_widget(short_trace):
    import html as html_module

    page = short_trace._repr_html_()
    assert page.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in page
    raw = page.split('srcdoc="', 1)[1].split('" style=', 1)[0]
    assert '"' not in raw  # the page is escaped whole into the attribute
    inner = html_module.unescape(raw)
    assert '<canvas id="board"' in inner and "replay-data" in inner
    final = _png_picture(short_trace._repr_png_())
    np.testing.assert_array_equal(final, render_position(short_trace.final))


def test_envs_display_their_current_frame():
    from solitaire_gym import SolitaireEnv, SolitaireVectorEnv

    env = SolitaireEnv("solitaire_reflechi")
    assert env._repr_png_() is None and env._repr_html_() is None  # before reset
    env.reset(seed=0)
    np.testing.assert_array_equal(_png_picture(env._repr_png_()), render_position(env.to_dict()))
    assert env.code in env._repr_html_() and "steps 0" in env._repr_html_()
    wrapped = gym.make("solitaire_gym/SolitaireReflechi-v0")
    wrapped.reset(seed=0)
    assert wrapped.unwrapped._repr_png_() is not None  # the route through gym.make's wrappers
    vec = SolitaireVectorEnv(6, "seahaven_towers")
    assert vec._repr_html_() is None
    vec.reset(seed=0)
    page = vec._repr_html_()
    assert page.count("<figure") == 4 and "and 2 more games" in page
    np.testing.assert_array_equal(_png_picture(vec._repr_png_()), render_position(vec.to_dict(0)))


# ---- the frame rate and the outputs are checked --------------------------------------------------


def _render_args(tmp_path):
    pytest.importorskip("PIL")
    trace = save_trace(tmp_path / "t.json", "SH1-C4-AAAAAJ2", ["t1>t7"])
    return ["render", str(trace)]


@pytest.mark.parametrize("fps", ["1e-300", "0", "-1", "nan", "inf", "1e300", "٣"])
def test_render_fps_out_of_range(tmp_path, capsys, fps):
    args = _render_args(tmp_path)
    try:
        code = main([*args, "--gif", str(tmp_path / "a.gif"), "--fps", fps])
    except SystemExit as e:  # argparse refuses text that is no number: usage and one line
        code = e.code
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err and len(err) < MAX_MESSAGE + 400


def test_render_png_naming_a_folder(tmp_path, capsys):
    args = _render_args(tmp_path)
    folder = tmp_path / "pictures"
    folder.mkdir()
    assert main([*args, "--png", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "folder" in err and len(err.strip().splitlines()) == 1


def test_write_gif_and_mp4_check_fps_from_python(tmp_path):
    """The range the CLI's --fps has is checked by the writers themselves (finding 5)."""
    pytest.importorskip("PIL")
    from solitaire_gym.errors import SolitaireError
    from solitaire_gym.rendering import replay

    trace = load_trace(save_trace(tmp_path / "t.json", "SH1-C4-AAAAAJ2", ["t1>t7"]))
    for bad in (1e-300, 0, -1, float("nan"), 1e9, True, "4"):
        for write in (replay.write_gif, replay.write_mp4):
            with pytest.raises(SolitaireError, match="fps"):
                write(trace, tmp_path / "x.gif", fps=bad)
    assert not (tmp_path / "x.gif").exists()
