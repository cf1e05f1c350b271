"""Nested rollouts over the engine, blind to hidden cards, with a budget in nodes per move.

A **node** is one move applied by the engine inside the search: a candidate's first move, each
move of a rollout, and at level 2 every move of the inner searches. The budget ``nodes`` bounds
the nodes spent on one decision; a forced move (one legal move) costs none.

**Level 1** (one rollout level, as in Yan et al. 2005 and Bjarnason et al. 2007). The legal moves
are ordered by the greedy player's priorities (``agents/greedy.py``) and the first
``C = min(L, candidates, max(2, nodes // (1 + MIN_ROLLOUT)))`` of them are candidates: few
candidates with long rollouts beat many with short ones (measured, docs/search.md). Each
candidate is tried on ``K ≤ samples`` copies of the game (:func:`plan`):

- in a game with hidden cards, the copies are determinizations, the same ``K`` for every
  candidate: the unseen cards dealt anew at random into the unseen places
  (``solitaire_gym.engine.information.redeal_unseen``), each from its own seed;
- where nothing is hidden (Seahaven Towers; the others once every card has been seen), copy 0 is
  rolled out by the greedy player and the others by a *noisy* greedy player: Gumbel noise of
  scale ``noise`` added to its priorities, so the copies try different lines.

**The rollout player** is the greedy player, or a policy network (``rollout``; names
``search@N-p``): it plays the highest of its scores, and a noisy copy adds Gumbel noise of scale
``noise`` to them (:data:`POLICY_NOISE` by default: with scale 1 on a policy's logits, a noisy
copy samples its moves from the policy). A network costs far more per node than the greedy
player (docs/search.md, **Limits**).

Each candidate is played on each copy and followed by a rollout of
``D = nodes // (C·K) − 1`` moves at most (``MAX_DEPTH`` at most; it stops earlier when the copy
is won or stuck).

**Waves.** The nodes the first wave leaves unspent (rollouts that ended stuck or won early) pay
for further waves: every copy rolled out again, by the noisy player, on the same sampled deals,
with rollouts as long as what is left affords (at least ``MIN_WAVE`` moves). A game that hides
nothing stops at its first won copy. With ``hindsight=False``, the further waves of a game with
hidden cards deal new sampled deals instead, rolled out by greedy, and a candidate is worth the
mean over all its copies.

**Level 2**: the rollouts are played by level-1 searches on the copy (no new determinization:
the copy's cards are a sample already; no noise, no waves), each with ``n₁ = ⌊√(P − 1)⌋``
nodes, ``P = nodes // (C·K)`` nodes per candidate and copy, for ``(P − 1) // (n₁ + 1)`` moves.

**Values.** A rollout's value is 1 when its copy is won, else half the share of cards on the
foundations, or, with a value network (``value``; names ``search@N-v``), the network's estimate
that its last position is winnable (0 when stuck: ``agents/search/value.py``). Where nothing is
hidden a candidate is worth its best rollout (the game can replay it: **Lines**); where cards are
hidden it is worth the mean, over the sampled deals, of its best rollout on each (hindsight
optimisation; candidates of equal value there go by the mean of all their rollouts: :data:`TIE`).
The best candidate is played, ties to the greedy order.

**Lines.** Where a game hides no card (Seahaven Towers always, the others once every card has
been seen), a copy plays exactly as the real game would: the search keeps, per game, the line of
moves its best candidate's rollout played (the candidate's move, then the rollout's) and that
line's value. At the next decision the line's next move is played when the line is worth at least
the best candidate the new search finds; a won line is followed without searching (no nodes). So
the value the game is heading for never drops, as in nested Monte Carlo search (Cazenave 2009).
The line is dropped when another move is played, when the game starts anew and wherever a card is
unseen (a line found on one sampled deal proves nothing about the real one). A line is kept only
when it ends won or with more cards home than the game has ever had: one that merely takes cards
back from the foundations and puts them home again would lead the game round in circles.

**Circles.** The candidates are taken in the greedy player's order *with its memory of the
game*: the moves played least often from this very position first. And the search remembers,
per game, every position it has stood on (hashes of the observation: what the player sees); a
candidate whose resulting position was met before in the same game loses 2 (it is played only
when every candidate leads back). Together they leave a circle the way greedy does.

**A budget shared over the game** (``bank``; names ``search@N-b``): the nodes a decision
leaves unspent (a forced move, a won line followed, rollouts that end early) go into its game's
bank, which holds at most ``bank · nodes``; a decision may spend ``nodes`` plus the whole bank.
The nodes spent per move played, over a game, never exceed ``nodes``; a single decision may
spend up to ``(1 + bank) · nodes``. Without it (``bank=0``, the shipped player) every decision
has ``nodes``.

**Determinism and blindness.** The random generator of a decision is seeded from ``seed``, the
hash of the observation and the move counter: the same observation in the same game history gives
the same move, whatever batch the game is played in. Nothing reads the hidden cards: the search
copies the engine's rows and deals their unseen cards anew before it applies a move.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from agents.base import view_of
from agents.greedy import GreedyAgent, obs_hashes
from agents.search.base import EngineSearch
from solitaire_gym.engine.information import copy_rows, redeal_unseen, unseen_counts
from solitaire_gym.envs import kernels
from solitaire_gym.errors import ArgumentError, is_int, shown

DEFAULT_NODES = 256
"""The shipped search player's budget (``search`` in ``agents.make_agent``)."""
MAX_NODES = 1 << 20
MAX_LEVEL = 2
DEFAULT_SAMPLES = 4
MAX_DEPTH = 400
"""Longest rollout (moves); also bounds the rollout player's memory."""
MIN_ROLLOUT = 32
"""Fewest rollout moves per candidate the budget is shared for: with fewer nodes, fewer of the
greedy player's first choices are candidates (two below 99 nodes)."""
MAX_CANDIDATES = 8
"""Most candidates per decision by default (``candidates``): a larger budget goes into longer
rollouts and further waves."""
CIRCLE_PENALTY = 2.0
NOISE = 25.0
"""Default scale (``noise``) of the Gumbel noise added to the greedy player's priorities in a
noisy rollout (the priorities step by 5 to 50: docs of ``agents/greedy.py``)."""
POLICY_NOISE = 1.0
"""Default scale of the noise added to a policy network's scores when it plays the rollouts:
Gumbel noise of scale 1 on logits draws a move from the policy's own distribution."""
MIN_WAVE = 8
"""Fewest rollout moves a further wave of rollouts is run for (``_search_group``)."""
TIE = 1e-7
"""Weight of a candidate's mean rollout value beside its hindsight value (the mean over the
sampled deals of its best rollout on each): small enough to order only candidates whose hindsight
values are equal (they differ by 0.5 / cards / samples at least)."""
DEEP_CANDIDATES = 4
DEEP_SAMPLES = 2
"""The deep setting (``candidates``, ``samples``; names ``search@N-d``): four candidates on two
copies each, so that at the same budget each rollout is four times as long as with the default
(eight candidates on four copies): 127 moves at 1024 nodes instead of 31 (docs/search.md)."""
MAX_BANK = 64
"""Most a game's bank may hold, in budgets (``bank``)."""
NAMED_BANK = 3
"""The bank of the players named ``search@N-b``: a decision spends at most 4 budgets."""
MAX_ROWS = 4096
"""Copies simulated together (rows of one engine batch)."""


def plan(nodes: int, legal: int, samples: int, level: int,
         candidates: int = MAX_CANDIDATES) -> tuple[int, int, int, int]:  # fmt: skip
    """How a decision's first wave spends ``nodes`` over ``legal`` legal moves with up to
    ``samples`` copies and ``candidates`` candidates at most, at ``level``: (candidates, copies
    per candidate, moves per rollout, nodes per inner search (0 at level 1)). The first moves cost
    ``candidates · copies`` nodes, the rollouts at most ``candidates · copies · moves ·
    (1 + inner)``: never more than ``nodes`` in all."""
    c = max(1, min(legal, nodes, candidates, max(2, nodes // (1 + MIN_ROLLOUT))))
    k = max(1, min(samples, nodes // (c * (1 + MIN_ROLLOUT))))
    per = nodes // (c * k)  # nodes per candidate and copy, its first move included
    if level <= 1:
        return c, k, min(per - 1, MAX_DEPTH), 0
    inner = max(1, math.isqrt(max(per - 1, 0)))
    return c, k, min((per - 1) // (inner + 1), MAX_DEPTH), inner


def _check(name: str, value, low: int, high: int) -> int:
    if not is_int(value) or not low <= value <= high:
        raise ArgumentError(f"{name} must be an integer in {low} … {high}, not {shown(value)}")
    return int(value)


class RolloutSearch(EngineSearch):
    """Nested rollouts (module docstring) for ``game`` with ``options``: ``nodes`` per move,
    ``level`` 1 or 2, up to ``samples`` determinizations per decision where cards are hidden,
    random choices from ``seed``; ``value`` (a :class:`~agents.search.value.ValueFunction`, or
    None) values the rollouts that end unwon by the network instead of the cards home;
    ``rollout`` (a :class:`~agents.policy.PolicyAgent` of the same game, or None: the greedy
    player) plays the rollouts; ``candidates`` caps the candidates of a decision and ``noise``
    scales the noisy rollouts' Gumbel noise (:data:`MAX_CANDIDATES`; :data:`NOISE` for the
    greedy player, :data:`POLICY_NOISE` for a policy, when None); ``bank`` (0 …
    :data:`MAX_BANK`) shares the budget over the game (module docstring); ``hindsight=False``
    makes the further waves of a game with hidden cards deal new sampled deals, rolled out by
    greedy, and values a candidate by the mean over all its copies instead (module docstring,
    **Waves**).
    ``nodes_spent`` and ``decisions`` count the search's work (since the agent was made)."""

    def __init__(self, game: str, options: dict | None = None, *, nodes: int = DEFAULT_NODES,
                 level: int = 1, samples: int = DEFAULT_SAMPLES, seed: int = 0,
                 value=None, name: str | None = None, candidates: int = MAX_CANDIDATES,
                 noise: float | None = None, hindsight: bool = True,
                 rollout=None, bank: int = 0) -> None:  # fmt: skip
        self.nodes = _check("nodes", nodes, 1, MAX_NODES)
        self.level = _check("level", level, 1, MAX_LEVEL)
        self.samples = _check("samples", samples, 1, 256)
        self.seed = _check("seed", seed, 0, 2**63 - 1)
        self.candidates = _check("candidates", candidates, 1, 1024)
        self.bank = _check("bank", bank, 0, MAX_BANK)
        if rollout is not None and not (
            callable(getattr(rollout, "preferences", None))
            and callable(getattr(rollout, "commit", None))
            and callable(getattr(rollout, "check_env", None))
        ):
            raise ArgumentError(
                f"rollout must be a policy agent (agents.policy.PolicyAgent) or None, not "
                f"{shown(rollout)}"
            )
        if noise is None:
            noise = NOISE if rollout is None else POLICY_NOISE
        if (
            isinstance(noise, bool)
            or not isinstance(noise, (int, float, np.floating))
            or not (0.0 <= noise <= 1000.0)
        ):
            raise ArgumentError(f"noise must be a number in 0 … 1000, not {shown(noise)}")
        self.noise = float(noise)
        if not isinstance(hindsight, (bool, np.bool_)):
            raise ArgumentError(f"hindsight must be True or False, not {shown(hindsight)}")
        self.hindsight = bool(hindsight)
        if value is not None and not callable(value):
            raise ArgumentError(
                f"value must be a value network (callable) or None, not {shown(value)}"
            )
        self.value = value
        suffix = (f"-l{level}" if level != 1 else "") + ("-p" if rollout is not None else "")
        deep = (self.candidates, self.samples) == (DEEP_CANDIDATES, DEEP_SAMPLES)
        suffix += ("-d" if deep else "") + ("-b" if self.bank else "")
        suffix += "-v" if value is not None else ""
        self._setup(game, options, name or f"search@{nodes}{suffix}")
        self.n_cards = self.opts.variant.n_cards
        self._piles = self._batch(0, 1).n_piles  # foundation piles (read from the engine)
        if rollout is None:
            self._rollout = GreedyAgent(game, options, memory=2 * MAX_DEPTH + 16)
        else:
            rollout.check_env(game, options or {})  # a policy of another game is refused now
            self._rollout = _PolicyRollout(rollout)
        self._ranker = GreedyAgent(game, options, memory=16)  # priorities only: never records
        self._order = GreedyAgent(game, options)  # the real games' order, with greedy's memory
        self.lines: dict[int, _Line] = {}
        self.record: dict[int, int] = {}  # per game: the most cards it has had home
        self.banked: dict[int, int] = {}  # per game: the nodes its decisions left (bank > 0)

    def reset(self, n: int | None = None) -> None:
        super().reset(n)
        self._order.reset(n)
        self.lines = {}
        self.record = {}
        self.banked = {}

    # ---- simulation batches ------------------------------------------------------------------
    def _unseen(self, state, rows: np.ndarray) -> np.ndarray:
        """How many cards each game ``rows`` of ``state`` hides from its player: the copies of a
        game that hides some are dealt anew (the win finder, ``agents/search/finder.py``, which
        sees the deal, counts none)."""
        return unseen_counts(state, rows)

    def _priorities(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The greedy player's priorities (higher first, ``-inf`` where illegal)."""
        b = masks.shape[0]
        return self._ranker.preferences(obs, masks.astype(bool), np.zeros(b, bool))

    # ---- the decision ------------------------------------------------------------------------
    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        out, _ = self._decide(obs, masks, starts, active, view)
        self.played(obs, masks, out, active)
        return out

    def label(self, obs: np.ndarray, masks: np.ndarray, *, starts: np.ndarray,
              active: np.ndarray, view) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """The search's move for each ``active`` game, and whether a copy of the game was won
        after it (``True`` for a forced move), without playing it: the expert of expert
        iteration (``agents/search/expert.py``) labels positions that another player plays.
        Call :meth:`played` with the move actually played before the env steps. The arrays are
        the env's batch (``obs`` (B, D), ``masks`` (B, N), ``starts`` and ``active`` (B,));
        ``view`` the env or a :class:`~agents.base.GameView`."""
        masks = np.asarray(masks).astype(bool, copy=False)
        obs = np.asarray(obs, np.float32)
        b = masks.shape[0] if masks.ndim == 2 else -1
        if (
            obs.ndim != 2
            or obs.shape[0] != b
            or np.shape(starts) != (b,)
            or np.shape(active) != (b,)
        ):
            raise ArgumentError(
                "label takes a batch: obs (B, D), masks (B, N), starts and active (B,); got "
                f"{obs.shape}, {masks.shape}, {np.shape(starts)}, {np.shape(active)}"
            )
        return self._decide(obs, masks, np.asarray(starts, bool), np.asarray(active, bool),
                            view_of(view))  # fmt: skip

    def played(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray,
               active: np.ndarray) -> None:  # fmt: skip
        """Remember that the ``active`` games played ``actions`` from ``obs``: the candidates'
        order follows the real game (greedy's memory of the moves played from each position)."""
        playing = np.asarray(active, bool) & np.asarray(masks).any(axis=1)
        actions = np.asarray(actions, np.int64)
        self._order.commit(obs, masks, actions, playing)
        for r in np.flatnonzero(playing).tolist():
            line = self.lines.get(r)
            if line is not None and not line.advance(int(actions[r])):
                del self.lines[r]

    def _decide(self, obs, masks, starts, active, view) -> tuple[np.ndarray, np.ndarray]:
        out = np.zeros(len(masks), np.int64)
        wins = np.zeros(len(masks), bool)
        for r in np.flatnonzero(starts).tolist():
            self.lines.pop(r, None)
            self.record.pop(r, None)
            self.banked.pop(r, None)
        rows = np.flatnonzero(np.asarray(active, bool) & masks.any(axis=1))
        _, rngs = self._stand(obs, starts, rows, view)
        if rows.size == 0:
            return out, wins
        self.decisions += rows.size
        # a game that hides nothing and holds a won line plays it on without searching
        seen = self._unseen(view.state, rows) == 0
        home = view.state.found[rows, : self._piles].sum(axis=1)
        for i, r in enumerate(rows.tolist()):
            home[i] = self.record[r] = max(self.record.get(r, 0), int(home[i]))
        lines: list[_Line | None] = []
        for i, r in enumerate(rows.tolist()):
            line = self.lines.get(r) if seen[i] else self.lines.pop(r, None)
            if line is not None and not (masks[r, line.next] and line.gains(home[i])):
                self.lines.pop(r)  # not this game's line any more, or it gains nothing
                line = None
            lines.append(line)
        follow = np.array([line is not None and line.value >= 1.0 for line in lines], bool)
        for i in np.flatnonzero(follow):
            out[rows[i]] = lines[i].next
            wins[rows[i]] = True
            self._deposit(int(rows[i]), 0)
        search = np.flatnonzero(~follow)
        if search.size == 0:
            return out, wins
        rows_s = rows[search]
        # the greedy player's order in the real game: the moves least played from this very
        # position first (its memory of the game), then its priorities
        playing = np.zeros(len(masks), bool)
        playing[rows_s] = True
        prefs = self._order.preferences(obs, masks, starts, playing)[rows_s]
        visited = [self.visited[int(r)] for r in rows_s]
        won = np.ones(rows_s.size, bool)
        found: list[_Line | None] = [None] * rows_s.size
        record = [bool(seen[i]) for i in search]
        budget = np.array([self.nodes + self.banked.get(int(r), 0) for r in rows_s], np.int64)
        spent = np.zeros(rows_s.size, np.int64)
        out[rows_s] = self._choose(view.state, rows_s, prefs, self.level, budget,
                                   [rngs[i] for i in search], visited, won,
                                   (record, found), spent)  # fmt: skip
        for j, r in enumerate(rows_s.tolist()):
            self._deposit(r, int(spent[j]))
        wins[rows_s] = won
        for j, i in enumerate(search.tolist()):
            r, old, new = int(rows[i]), lines[i], found[j]
            if old is not None and (new is None or old.value >= new.value):
                out[r] = old.next  # the line kept is worth at least what this search found
                wins[r] = old.value >= 1.0
            elif new is not None and new.gains(home[i]):
                self.lines[r] = new
            else:
                self.lines.pop(r, None)
        return out, wins

    def _deposit(self, r: int, spent: int) -> None:
        """Game ``r``'s decision spent ``spent`` nodes: what it left of ``nodes`` goes into the
        game's bank (capped at ``bank · nodes``), what it took beyond comes out of it."""
        if self.bank:
            held = self.banked.get(r, 0) + self.nodes - spent
            self.banked[r] = max(0, min(held, self.bank * self.nodes))

    def _choose(self, src, rows, prefs, level, nodes, rngs, visited, won=None,
                lines=None, spent=None) -> np.ndarray:  # fmt: skip
        """The move for each game ``rows`` of state ``src``; ``prefs`` their priorities;
        ``nodes`` the budget (one for all, or one per game); ``spent`` (optional, one per game)
        receives the nodes each one's search spent. At the
        root (``rngs`` given) the copies' unseen cards are dealt anew; inside a level-2 rollout
        the copy is searched as it is (it is a sample already). ``won`` (optional, one per game)
        receives whether a copy was won after the move chosen (left as it is for a forced
        move); ``lines`` (optional: which games to record, and a list receiving a
        :class:`_Line` for each recorded game that was searched) the line its best copy
        played."""
        orders = [np.flatnonzero(np.isfinite(p)) for p in prefs]
        orders = [o[np.argsort(-prefs[i, o], kind="stable")] for i, o in enumerate(orders)]
        hidden = self._unseen(src, rows) if rngs is not None else np.zeros(rows.size, np.int64)
        nodes = np.broadcast_to(np.asarray(nodes, np.int64), rows.shape)
        plans = [
            plan(
                int(nodes[i]),
                o.size,
                self.samples if hidden[i] > 0 or rngs is not None else 1,
                level,
                self.candidates,
            )
            for i, o in enumerate(orders)
        ]
        out = np.array([o[0] for o in orders], np.int64)
        todo = [i for i, o in enumerate(orders) if o.size > 1]
        # games in groups whose copies fit in one batch
        group: list[int] = []
        size = 0
        for i in [*todo, None]:
            need = 0 if i is None else plans[i][0] * plans[i][1]
            if group and (i is None or size + need > MAX_ROWS):
                self._search_group(src, rows, group, orders, plans, level, nodes, rngs, hidden,
                                   visited, out, won, lines, spent)  # fmt: skip
                group, size = [], 0
            if i is not None:
                group.append(i)
                size += need
        return out

    def _search_group(self, src, rows, group, orders, plans, level, nodes, rngs, hidden,
                      visited, out, won=None, lines=None, spent=None) -> None:  # fmt: skip
        """Search the games ``group`` (indices into ``rows``) on batches of copies: ``hidden``
        their unseen cards (dealt anew at the root), ``nodes`` each one's budget; ``out``
        receives their moves, ``won`` (if given) whether a copy was won after each and ``lines``
        (if given) their lines.

        At the root, the nodes a wave of rollouts leaves unspent (rollouts that end stuck or won
        early) pay for further waves of noisy rollouts on the same copies, while they can
        afford rollouts of ``MIN_WAVE`` moves; a game that hides nothing stops at its first
        win."""
        tally = {i: _Tally(plans[i][0]) for i in group}
        left = {i: int(nodes[i]) for i in group}
        wave = 0
        todo = list(group)
        while todo:
            now = {}
            for i in todo:
                c, k, depth, inner = plans[i]
                afford = (left[i] // (c * k) - 1) // (inner + 1)
                if wave == 0 or afford >= MIN_WAVE:
                    now[i] = (c, k, min(depth, afford) if wave else depth, inner)
            if not now:
                break
            self._wave(src, rows, now, orders, level, rngs, hidden, visited, wave, tally, left,
                       lines is not None)  # fmt: skip
            wave += 1
            todo = [
                i for i in now
                if rngs is not None and not (hidden[i] == 0 and tally[i].won.any())
            ]  # fmt: skip
        for i in group:
            if spent is not None:
                spent[i] = int(nodes[i]) - left[i]
            t = tally[i]
            best = int(np.argmax(self._values(t, hidden[i], rngs is not None)))
            out[i] = orders[i][best]
            if won is not None:
                won[i] = bool(t.won[best])
            if lines is not None and lines[0][i] and t.line[best] is not None:
                lines[1][i] = _Line(t.line[best], float(t.best[best]), int(t.home[best]))

    def _values(self, t: _Tally, hidden: int, root: bool) -> np.ndarray:
        """What each candidate of a tally is worth: a game that hides nothing can replay its
        best copy (its line), so the best counts; elsewhere a copy is one sampled deal, so the
        mean over the deals of the best on each (hindsight), or of every copy (without)."""
        if root and hidden == 0:
            return t.best
        mean = t.total / t.count
        if self.hindsight or not root:
            # candidates the best rollouts value alike (late in a game, every candidate can be
            # won on every sampled deal) go by the mean of all their rollouts
            return t.sample.mean(axis=1) + TIE * mean
        return mean

    def _wave(self, src, rows, now, orders, level, rngs, hidden, visited, wave, tally,
              left, record) -> None:  # fmt: skip
        """One wave of rollouts: for each game ``i`` of ``now`` (its (candidates, copies,
        moves, inner nodes)), ``copies`` rollouts after each candidate, added to ``tally[i]``;
        ``left[i]`` pays for them. The moves of the best copies are kept only when ``record``
        (the root, which keeps lines); an inner search's waves keep their values alone."""
        group = list(now)
        game_of, first = [], []
        for i in group:
            c, k = now[i][0], now[i][1]
            game_of += [i] * (c * k)
            first += [int(orders[i][j]) for j in range(c) for _ in range(k)]
        game_of = np.array(game_of, np.int64)
        n = game_of.size
        core = self._batch(level, n)
        copy_rows(core.state, np.arange(n), src, rows[game_of])
        # where cards are hidden, copy k of every candidate is dealt alike; where nothing is
        # hidden, copy k of a candidate is a noisy rollout (NOISE), but for copy 0 of the first
        # wave (greedy itself); each copy's noise comes from its own key, so no copy depends on
        # the others in the batch
        noisy = np.zeros(n, bool)
        keys = np.zeros(n, np.uint64)
        if rngs is not None:
            start = 0
            dst, src_rows = [], []
            for i in group:
                c, k = now[i][0], now[i][1]
                t = tally[i]
                if hidden[i] > 0:
                    # the same k deals in every wave: sample kk of wave 0 is dealt from seed kk
                    if t.seeds is None or not self.hindsight:  # without hindsight: new deals
                        t.seeds = rngs[i].integers(1 << 62, size=k)
                    for kk in range(k):
                        rng = np.random.default_rng(int(t.seeds[kk]))
                        redeal_unseen(core.state, [start + kk], rng)  # candidate 0's copies
                    dst.append(np.arange(start + k, start + c * k))
                    src_rows.append(np.tile(np.arange(start, start + k), c - 1))
                if (wave > 0 and (hidden[i] == 0 or self.hindsight)) or (hidden[i] == 0 and k > 1):
                    kk = np.tile(np.arange(k), c)
                    noisy[start : start + c * k] = (kk > 0) | (wave > 0)
                    base = np.uint64(rngs[i].integers(1 << 62))
                    keys[start : start + c * k] = base + kk.astype(np.uint64)
                start += c * k
            if dst:
                copy_rows(core.state, np.concatenate(dst), core.state, np.concatenate(src_rows))
        core.refresh(np.arange(n, dtype=np.int64))
        core.step(np.array(first, np.int64))
        spent = n
        circle = np.zeros(n, bool)
        if visited is not None:
            h = obs_hashes(core.obs)
            circle = np.array([int(h[r]) in visited[game_of[r]] for r in range(n)], bool)
        depth = np.array([now[i][2] for i in game_of], np.int64)
        inner = np.array([now[i][3] for i in game_of], np.int64)
        steps = np.zeros(n, np.int64)
        playing = ~core.won & (core.counts > 0) & (steps < depth)
        starts = np.ones(n, bool)
        act = np.empty(n, np.int64)
        trail = np.zeros((n, int(depth.max(initial=0))), np.int32) if record else None
        while playing.any():
            act[:] = kernels.ROW_SKIP
            if level <= 1:
                ranks = self._rollout.preferences(core.obs, core.masks, starts, playing)
                shake = np.flatnonzero(noisy & playing)
                if shake.size:
                    rr, cc, u = _noise_uniforms(ranks, shake, keys[shake], steps[shake])
                    ranks[rr, cc] += self.noise * -np.log(-np.log(u))  # Gumbel noise
                chosen = np.argmax(ranks, axis=1)
                self._rollout.commit(core.obs, core.masks, chosen, playing)
                act[playing] = chosen[playing]
            else:
                for budget in np.unique(inner[playing]):  # inner searches count their own nodes
                    live = np.flatnonzero(playing & (inner == budget))
                    pr = self._priorities(core.obs[live], core.masks[live])
                    act[live] = self._choose(core.state, live, pr, level - 1, int(budget), None,
                                             None)  # fmt: skip
            starts[:] = False
            spent += int(playing.sum())
            if trail is not None:
                trail[playing, steps[playing]] = act[playing]
            core.step(act)
            steps[playing] += 1
            playing &= ~core.won & (core.counts > 0) & (steps < depth)
        if self.value is None:
            leaf = 0.5 * core.foundation_cards() / self.n_cards
        else:
            leaf = np.where(core.counts > 0, self.value(core.obs), 0.0)
        value = np.where(core.won, 1.0, leaf) - CIRCLE_PENALTY * circle
        home = core.foundation_cards()
        self.nodes_spent += spent
        start = 0
        for i in group:
            c, k = now[i][0], now[i][1]
            sl = slice(start, start + c * k)
            left[i] -= int((1 + steps[sl] * (1 + inner[sl])).sum())
            per = value[sl].reshape(c, k)
            t = tally[i]
            t.total += per.sum(axis=1)
            t.count += k
            if t.sample is None:
                t.sample = per.copy()
            else:
                np.maximum(t.sample, per, out=t.sample)
            t.won |= core.won[sl].reshape(c, k).any(axis=1)
            for j in np.flatnonzero(per.max(axis=1) > t.best):
                r = start + j * k + int(np.argmax(per[j]))
                t.best[j] = value[r]
                t.home[j] = home[r]
                if trail is not None:
                    t.line[j] = [int(orders[i][j]), *trail[r, : steps[r]].tolist()]
            start += c * k


class _PolicyRollout:
    """A policy network as the rollout player, with the greedy player's interface
    (``preferences`` with the games playing, ``commit``): its scores, -inf where illegal."""

    def __init__(self, agent) -> None:
        self.agent = agent

    def preferences(self, obs, masks, starts, playing) -> np.ndarray:
        return self.agent.preferences(obs, np.asarray(masks).astype(bool, copy=False), starts)

    def commit(self, obs, masks, actions, playing) -> None:
        self.agent.commit(obs, np.asarray(masks).astype(bool, copy=False), actions, playing)


class _Tally:
    """What the waves found for one game's ``c`` candidates: the best value on each copy, the
    best value of all and the line of the copy that reached it, and whether a copy was won."""

    __slots__ = ("best", "count", "home", "line", "sample", "seeds", "total", "won")

    def __init__(self, c: int) -> None:
        self.sample: np.ndarray | None = None  # (c, k): the best value on each sampled deal
        self.total = np.zeros(c)  # the sum of every copy's value, and how many copies
        self.count = 0
        self.seeds: np.ndarray | None = None  # the sampled deals' seeds
        self.best = np.full(c, -np.inf)
        self.line: list[list[int] | None] = [None] * c
        self.home = np.zeros(c, np.int64)  # cards home at the end of that line
        self.won = np.zeros(c, bool)


@nb.njit(cache=True)
def _noise_uniforms(ranks, rows, keys, steps):
    """The uniforms behind each copy's noise: for each row ``rows[i]`` and each column ``a``
    where ``ranks`` is finite (a legal move), ``u`` in (0, 1), a pure function of the copy's key
    ``keys[i]``, its step ``steps[i]`` and ``a`` (a splitmix64 hash), so that the same copy draws
    the same noise in any batch. Returns the rows, columns and uniforms, flat; the caller turns
    them into Gumbel noise (``-log(-log(u))``) with numpy. Illegal columns draw nothing."""
    m1, m2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03)
    m3, m4 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
    n = 0
    for i in range(rows.size):
        for a in range(ranks.shape[1]):
            if ranks[rows[i], a] != -np.inf:
                n += 1
    rr = np.empty(n, np.int64)
    cc = np.empty(n, np.int64)
    u = np.empty(n, np.float64)
    n = 0
    for i in range(rows.size):
        base = keys[i] * m1 + np.uint64(steps[i]) * m2
        for a in range(ranks.shape[1]):
            if ranks[rows[i], a] == -np.inf:
                continue
            z = base + np.uint64(a) * m3
            z = (z ^ (z >> np.uint64(30))) * m3
            z = (z ^ (z >> np.uint64(27))) * m4
            z = z ^ (z >> np.uint64(31))
            rr[n], cc[n] = rows[i], a
            u[n] = (np.float64(z >> np.uint64(11)) + 0.5) / 9007199254740992.0  # 2**53
            n += 1
    return rr, cc, u


class _Line:
    """A line of moves from a game's position and the value its simulation ended with;
    ``next`` is the move it plays from the game's position now."""

    __slots__ = ("at", "home", "moves", "value")

    def __init__(self, moves: list[int], value: float, home: int) -> None:
        self.moves = [int(m) for m in moves]
        self.at = 0
        self.value = value
        self.home = home  # cards on the foundations where it ends

    def gains(self, home: int) -> bool:
        """Whether the line ends won or with more cards home than ``home``, the most its game
        has had: a line that gains nothing is not kept, so that it cannot lead the game round
        in circles (cards taken back from the foundations and put home again)."""
        return self.value >= 1.0 or self.home > home

    @property
    def next(self) -> int:
        return self.moves[self.at]

    def advance(self, played: int) -> bool:
        """The game played ``played``: whether the line goes on from the new position."""
        if played != self.next:
            return False
        self.at += 1
        return self.at < len(self.moves)
