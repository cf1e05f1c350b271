"""Every committed policy (``agents/checkpoints/``, and the solver-taught ones that expert
iteration started from) loads and, played on its recorded evaluation deals, wins exactly the
deals recorded beside it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from agents.play import VARIANTS, eval_deals, play_deals  # noqa: E402
from agents.policy import (  # noqa: E402
    CHECKPOINT_DIR,
    committed_policies,
    load_policy,
    read_policy_meta,
)
from solitaire_gym.envs.core import EnvOptions  # noqa: E402
from solitaire_gym.envs.observation import layout_id  # noqa: E402

SOLVER_TAUGHT = sorted((CHECKPOINT_DIR / "solver_taught").glob("*.npz"))
"""The solver-taught policies that expert iteration started from (``configs/exit_*.yaml``),
kept where the policy of the variant is now the expert iteration's."""


@pytest.mark.parametrize(
    "path",
    [*(p for _, p in sorted(committed_policies().items())), *SOLVER_TAUGHT],
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_committed_policy_reproduces_its_recorded_wins(path):
    """Every committed checkpoint loads (its layout is the package's) and, played
    deterministically on its 20 recorded evaluation deals, wins exactly the deals recorded (and
    ends each game with the foundation cards and steps recorded, where they are)."""
    variant = path.stem
    meta = read_policy_meta(path)
    game, options = VARIANTS[variant]
    assert meta["layout_id"] == layout_id(EnvOptions.build(game, **options).variant.cfg)
    check = meta["check"]
    deals = eval_deals(check["count"], check["first"])
    agent = load_policy(path, game=game, options=options)
    results = play_deals(agent, game, options, deals)
    assert [r.deal for r in results if r.won] == check["won"]
    if "foundation" in check:  # recorded by experiments/publish_policy.py since 13b
        assert [r.foundation for r in results] == check["foundation"]
        assert [r.steps for r in results] == check["steps"]


def test_there_are_committed_policies():
    assert {"SH1-C4", "TF1-D1N", "TF1-D3N", "DS1-D1N", "DS1-D3N"} <= set(committed_policies())
