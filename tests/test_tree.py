"""The tree search (``agents/search/tree.py``): PUCT with the policy network as prior and the value
network at the leaves; blind to hidden cards, deterministic, within its budget, built by name."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from test_search import assert_blind  # noqa: E402

from agents import make_agent, play_deals  # noqa: E402
from agents.named import PUCT_NODES, is_policy_name, puct_budget  # noqa: E402
from agents.play import VARIANTS  # noqa: E402
from agents.policy import learned_agent  # noqa: E402
from agents.search.tree import TreeSearch  # noqa: E402
from agents.search.value import ValueFunction, build_value_net  # noqa: E402
from solitaire_gym.envs.core import EnvCore, EnvOptions  # noqa: E402
from solitaire_gym.errors import ArgumentError  # noqa: E402


def _tree(tag: str, nodes: int, seed: int = 0) -> TreeSearch:
    """A tree search with the committed policy and an untrained value network (seeded): what is
    tested here does not depend on how good the networks are."""
    game, options = VARIANTS[tag]
    dim = EnvCore(EnvOptions.build(game, **options), 1).obs_dim
    torch.manual_seed(0)
    value = ValueFunction(build_value_net({"hidden": 8, "layers": 1}, dim),
                          {"variant": tag, "obs_dim": dim})  # fmt: skip
    policy = learned_agent(tag, game=game, options=options)
    return TreeSearch(game, options, policy=policy, value=value, nodes=nodes, seed=seed)


@pytest.mark.parametrize("tag", ["TF1-D1N", "DS1-D3N"])
def test_tree_search_is_blind_to_hidden_cards(tag):
    assert_blind(_tree(tag, 40, seed=3), tag, 8)


def test_tree_search_is_deterministic_within_budget_and_batch_free():
    game, options = VARIANTS["TF1-D3N"]
    deals = [0, 1]
    agent = _tree("TF1-D3N", 24)
    together = play_deals(agent, game, options, deals, max_episode_steps=15)
    alone = [play_deals(_tree("TF1-D3N", 24), game, options, [d], max_episode_steps=15)[0]
             for d in deals]  # fmt: skip
    for a, b in zip(together, alone, strict=True):
        assert a.to_dict() == b.to_dict()
    assert agent.decisions == sum(r.steps for r in together) > 0
    assert 0 < agent.nodes_spent <= 24 * agent.decisions


def test_tree_search_checks_its_arguments_and_names():
    game, options = VARIANTS["SH1-C4"]
    agent = _tree("SH1-C4", 8)
    for kw, what in (({"nodes": 0}, "nodes must be"), ({"c": -1.0}, "c must be"),
                     ({"seed": -1}, "seed must be")):  # fmt: skip
        with pytest.raises(ArgumentError, match=what):
            TreeSearch(game, options, policy=agent.policy, value=agent.value, **kw)
    with pytest.raises(ArgumentError, match="policy must be a policy network"):
        TreeSearch(game, options, policy=None, value=agent.value)
    assert puct_budget("puct") == PUCT_NODES and puct_budget("puct@64") == 64
    assert puct_budget("search@64") is None and is_policy_name("puct@8")
    for bad in ("puct@", "puct@0", "puct@x", "puct@٣"):
        with pytest.raises(ValueError, match="bad tree search budget"):
            puct_budget(bad)
    built = make_agent("puct@8", "SH1-C4")
    assert isinstance(built, TreeSearch) and built.nodes == 8 and built.name == "puct@8"
    res = play_deals(built, game, options, [3], max_episode_steps=5)
    assert res[0].steps == 5
