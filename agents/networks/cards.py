"""The ``"cards"`` policy network, shaped like the game.

Each card row of the observation (where the card lies, its depth, ...) plus a learned embedding
of the card's identity goes through a small MLP shared by all cards; the card embeddings are
summed per place (each tableau column, the foundations, the waste, the stock, each free cell,
and all cells together) using the card's location flags; a global vector comes from the pile
block and the mean card. The score of an action is an MLP of ``layers`` ReLU layers of
``hidden`` units over the sum of the embeddings of its source and target places, of its kind
and run length, of how it relates to the previous action, and of the global vector (the first
layer is that sum), plus a bias per action. Sources, targets and places come from
:func:`agents.networks.spec.game_spec`. Only the legal actions are scored.

Options (each a key of the checkpoint's ``arch``, all off by default) add inputs or heads to
this one network; each only adds parameters, and the names of the others stay the same:

- ``heads="factored"``: two more scores per legal action from the same action embedding, a
  *rank* score (trained to order the moves as the greedy player does) and a *winnability*
  logit (trained on the solver's verdicts on the moves the teacher tried,
  :func:`agents.teacher.teacher_orders`). The agent's play rule
  (:mod:`agents.policy`) says how they are combined.
- ``memory``: per legal action, how often its game has already played that action from this
  very observation (:class:`agents.memory.PlayMemory`; ``memory_mode`` one of
  :data:`agents.memory.MODES`), as the greedy player and hence the teacher do. It is what the
  player has done, not search: nothing is tried ahead.
- ``piles``: each place's summed card embedding also gets a learned embedding of the place and
  a linear map of what the pile block says about that place alone (``place_feats`` of the
  spec): a column's length and face-down count, the waste's size, the stock's size and unseen
  count, whether a free cell is empty.
- ``lookup``: per action, projections of the embeddings of the card it moves and the card it
  goes on (a learned "none" where there is none).
- ``moves``: per action, projections of the embeddings of the card it moves, the card it goes
  on and the card it uncovers (a learned "none" when there is no such card or it lies face
  down); an embedding of the rank difference and the two suits of the moved card against each
  of those two; and an embedding of the face-up cards its source column keeps (0 …
  :data:`~agents.networks.spec.LEFT`, and whether face-down cards lie below them). Each card's
  embedding also gets embeddings of its rank and suit, shared by both copies of a card in
  Double Solitaire. Cards are found through the observation's card block, each row's face
  through ``observation.row_faces`` and its rank and suit through the engine's ``rank_of`` /
  ``suit_of``; which pairs build is learned, not coded.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from agents.memory import MODES
from agents.networks.spec import DEPTHS, LEFT, PAIRS
from solitaire_gym.engine.cards import RANKS, SUITS
from solitaire_gym.envs.observation import DEPTH_SCALE


class CardNet(nn.Module):
    """The ``"cards"`` network for the game of ``spec``
    (:func:`agents.networks.spec.game_spec`): ``hidden`` units, ``layers`` layers in the action
    MLP, and the options of the module docstring."""

    def __init__(
        self,
        spec: dict[str, Any],
        hidden: int,
        layers: int,
        *,
        heads: str = "policy",
        lookup: bool = False,
        memory: bool = False,
        memory_mode: str = "count",
        piles: bool = False,
        moves: bool = False,
    ) -> None:
        super().__init__()
        d, n = spec["obs_dim"], spec["n_actions"]
        e = hidden
        self.n_cards, self.width = spec["n_cards"], spec["width"]
        self.card_block = spec["card_block"]
        if self.card_block != self.n_cards * self.width:
            raise ValueError("the card block is not one row per card")
        self.register_buffer("places", torch.as_tensor(spec["places"]), persistent=False)
        self.cells = int(spec["cells"])
        n_places = len(spec["places"]) + (1 if self.cells else 0)
        self.card_id = nn.Embedding(self.n_cards, e)
        self.card_in = nn.Linear(self.width, e)
        self.card_mlp = nn.Sequential(nn.ReLU(), nn.Linear(e, e), nn.ReLU())
        pile = d - self.card_block
        self.glob = nn.Sequential(nn.Linear(pile + e, e), nn.ReLU(), nn.Linear(e, e))
        self.src_proj = nn.Linear(e, e)
        self.dst_proj = nn.Linear(e, e, bias=False)
        self.kind_emb = nn.Embedding(11, e)
        self.run_emb = nn.Embedding(14, e)
        self.out = nn.Linear(e, 1)
        self.bias = nn.Parameter(torch.zeros(n))
        self.factored = heads == "factored"
        self.lookup = lookup
        self.memory = memory
        self.memory_mode = memory_mode
        if memory:  # how often this game played the action from here (agents/memory.py)
            self.tried_emb = nn.Embedding(MODES[memory_mode], e)
            nn.init.zeros_(self.tried_emb.weight)
        self.depth_col = int(spec["depth_col"])
        for k in ("mv_depth", "tg_top", "un_depth", "moved"):
            self.register_buffer(k, torch.as_tensor(spec[k]), persistent=False)
        if lookup:  # the embeddings of the card moved and of the card it goes on
            self.none_card = nn.Parameter(torch.zeros(e))
            self.mv_proj = nn.Linear(e, e, bias=False)
            self.tg_proj = nn.Linear(e, e, bias=False)
        if self.factored:  # rank and winnability scores (module docstring)
            self.out_rank = nn.Linear(e, 1)
            self.bias_rank = nn.Parameter(torch.zeros(n))
            self.out_safe = nn.Linear(e, 1)
            self.bias_safe = nn.Parameter(torch.zeros(n))
        # the previous action (n: none), and how an action relates to it: 0 unrelated,
        # 1 takes from the place it filled, 2 fills the place it took from, 3 both (undoes it)
        self.prev_emb = nn.Embedding(n + 1, e)
        self.rel_emb = nn.Embedding(4, e)
        for k in ("src", "dst", "kind", "run"):
            self.register_buffer(k, torch.as_tensor(spec[k]), persistent=False)
        self.n_places = n_places
        # the action MLP's further layers (made last: a one-layer network is initialised
        # exactly as before this option existed)
        self.head = nn.Sequential(
            *(m for _ in range(layers - 1) for m in (nn.Linear(e, e), nn.ReLU()))
        )
        self.piles = piles
        if piles:  # each place's own pile-block values, and the place itself
            feats = torch.as_tensor(spec["place_feats"])
            self.register_buffer("feat_idx", feats.clamp(min=0), persistent=False)
            self.register_buffer("feat_on", (feats >= 0).float(), persistent=False)
            self.place_in = nn.Linear(feats.shape[1], e)
            self.place_emb = nn.Embedding(feats.shape[0], e)
        self.moves = moves
        if moves:  # the cards a move touches, their faces, what its column keeps
            self.rank_emb = nn.Embedding(len(RANKS), e)
            self.suit_emb = nn.Embedding(len(SUITS), e)
            self.none_move = nn.Parameter(torch.zeros(e))
            self.m_mv = nn.Linear(e, e, bias=False)
            self.m_tg = nn.Linear(e, e, bias=False)
            self.m_un = nn.Linear(e, e, bias=False)
            self.pair_tg = nn.Embedding(PAIRS + 1, e)
            self.pair_un = nn.Embedding(PAIRS + 1, e)
            self.left_emb = nn.Embedding(2 * (LEFT + 1) + 1, e)
            feats = torch.as_tensor(spec["place_feats"])[torch.as_tensor(spec["src"])]
            self.register_buffer("src_len", feats[:, 0].clamp(min=0), persistent=False)
            self.register_buffer("src_down", feats[:, 1], persistent=False)
            for k in ("rank", "suit"):  # per card row, then -1 for "no card"
                v = torch.as_tensor(spec[k])
                self.register_buffer(k, v, persistent=False)
                self.register_buffer(f"{k}_ext", torch.cat([v, v.new_full((1,), -1)]),
                                     persistent=False)  # fmt: skip

    def forward(self, obs, mask=None, prev=None, heads=False, tried=None):
        """Scores (B, N); with ``mask`` (B, N) bool only the legal actions are scored (the
        rest are −inf), which is what makes this network cheap: ~15 legal moves of ~1000.
        ``prev`` (B,): the action played just before in each game (N: none). ``tried``
        (B, N), a ``memory`` network only: how often each game has played each action from
        this observation (:class:`agents.memory.PlayMemory`; None: never). With
        ``heads`` (a factored network only) the tuple (policy, rank, winnability logits),
        each (B, N) and −inf where illegal."""
        b = obs.shape[0]
        cards = obs[:, : self.card_block].reshape(b, self.n_cards, self.width)
        h = self.card_in(cards) + self.card_id.weight  # (B, Nc, E)
        if self.moves:  # the face shared by both copies of a card
            h = h + self.rank_emb(self.rank) + self.suit_emb(self.suit)
        h = self.card_mlp(h)
        loc = cards[:, :, self.places]  # (B, Nc, L): where each card lies
        pooled = torch.einsum("bnl,bne->ble", loc, h)  # (B, L, E)
        if self.cells:
            pooled = torch.cat([pooled, pooled[:, -self.cells :].sum(1, keepdim=True)], 1)
        if self.piles:
            feats = obs[:, self.feat_idx] * self.feat_on  # (B, L', F)
            pooled = pooled + self.place_in(feats) + self.place_emb.weight
        g = self.glob(torch.cat([obs[:, self.card_block :], h.mean(1)], 1))
        n_act = self.bias.shape[0]
        if prev is None:
            prev = torch.full((b,), n_act, dtype=torch.long, device=obs.device)
        g = g + self.prev_emb(prev)
        sp, dp = self.src_proj(pooled), self.dst_proj(pooled)  # (B, L', E)
        if mask is None:
            mask = torch.ones(b, self.bias.shape[0], dtype=torch.bool, device=obs.device)
        rows, acts = mask.nonzero(as_tuple=True)
        p = prev[rows]
        had = p < n_act
        pc = p.clamp(max=n_act - 1)
        rel = (had & (self.src[acts] == self.dst[pc])).long() + 2 * (
            had & (self.dst[acts] == self.src[pc])
        ).long()
        z = (
            sp[rows, self.src[acts]] + dp[rows, self.dst[acts]]
            + self.kind_emb(self.kind[acts]) + self.run_emb(self.run[acts]) + g[rows]
            + self.rel_emb(rel)
        )  # fmt: skip
        if self.lookup:
            z = z + self._moved_cards(cards, loc, h, rows, acts)
        if self.moves:
            z = z + self._move_feats(obs, cards, loc, h, rows, acts)
        if self.memory:  # never played from here when not told
            t = torch.zeros_like(acts) if tried is None else tried[rows, acts].long()
            z = z + self.tried_emb(t.clamp(0, self.tried_emb.num_embeddings - 1))
        z = self.head(torch.relu(z))
        out = torch.full(mask.shape, float("-inf"), dtype=obs.dtype, device=obs.device)
        out[rows, acts] = self.out(z).squeeze(-1) + self.bias[acts]
        if not heads:
            return out
        if not self.factored:
            raise ValueError("this network has the policy head only")
        rank = torch.full_like(out, float("-inf"))
        rank[rows, acts] = self.out_rank(z).squeeze(-1) + self.bias_rank[acts]
        safe = torch.full_like(out, float("-inf"))
        safe[rows, acts] = self.out_safe(z).squeeze(-1) + self.bias_safe[acts]
        return out, rank, safe

    def _moved_cards(self, cards, loc, h, rows, acts):
        """Per scored action: projections of the embedding of the card it moves and of
        the card it goes on (a learned "none" where there is no such card)."""
        b = cards.shape[0]
        mv, tg = self.card_ids(cards, loc, rows, acts)
        h_ext = torch.cat([h, self.none_card.expand(b, 1, -1)], 1)
        return self.mv_proj(h_ext[rows, mv]) + self.tg_proj(h_ext[rows, tg])

    def _move_feats(self, obs, cards, loc, h, rows, acts):
        """Per scored action (``moves``): projections of the embeddings of the card it
        moves, of the card it goes on and of the card it uncovers (a learned "none" where
        there is no such card, or it lies face down); embeddings of the rank difference and
        the two suits of the moved card against each of the other two; and an embedding of
        the face-up cards its source column keeps (0 … LEFT, and whether face-down cards
        lie below them; one more value for a source that is no column)."""
        b = cards.shape[0]
        mv, tg, un, left = self.move_keys(obs, cards, loc, rows, acts)
        h_ext = torch.cat([h, self.none_move.expand(b, 1, -1)], 1)
        r, s = self.rank_ext, self.suit_ext
        ft_pair = self.pair_tg(_pair(r[mv], s[mv], r[tg], s[tg]))
        fu_pair = self.pair_un(_pair(r[mv], s[mv], r[un], s[un]))
        return (
            self.m_mv(h_ext[rows, mv]) + self.m_tg(h_ext[rows, tg])
            + self.m_un(h_ext[rows, un]) + ft_pair + fu_pair + self.left_emb(left)
        )  # fmt: skip

    def move_keys(self, obs, cards, loc, rows, acts):
        """Per action ``acts`` of position ``rows`` (``moves``): the card rows it moves, it
        goes on and it uncovers (``n_cards``: none, or face down), and the index of
        ``left_emb``: ``2 * min(kept, LEFT) + (face-down cards below)`` for the face-up
        cards ``kept`` in a column it takes from, ``2 * (LEFT + 1)`` for another source."""
        mv, tg, un = self.card_ids(cards, loc, rows, acts, under=True)
        n_len = (obs[rows, self.src_len[acts]] * DEPTH_SCALE).round().long()
        di = self.src_down[acts]
        n_down = torch.where(di >= 0, obs[rows, di.clamp(min=0)] * DEPTH_SCALE, 0.0)
        n_down = n_down.round().long()
        n_moved = self.moved[acts]
        left = (n_len - n_down - n_moved).clamp(0, LEFT) * 2 + (n_down > 0).long()
        left = torch.where(n_moved > 0, left, 2 * (LEFT + 1))
        return mv, tg, un, left

    def card_ids(self, cards, loc, rows, acts, under=False):
        """Per action ``acts`` of position ``rows``: the card row it moves (the card at
        depth ``mv_depth`` of its source place) and the top card of its target column,
        each ``n_cards`` for none; with ``under`` also the card it uncovers (depth
        ``un_depth`` of its source place)."""
        b, n_cards, _ = cards.shape
        n_loc = loc.shape[2]
        depth = (cards[:, :, self.depth_col] * DEPTH_SCALE).round().long()
        depth = depth.clamp(0, DEPTHS - 1)
        placed = loc.sum(2) > 0
        key = torch.where(placed, loc.argmax(2) * DEPTHS + depth, n_loc * DEPTHS)
        table = torch.full((b, n_loc * DEPTHS + 1), n_cards, dtype=torch.long,
                           device=cards.device)  # fmt: skip
        ids = torch.arange(n_cards, device=cards.device).expand(b, n_cards)
        table.scatter_(1, key, ids)  # (place, depth) -> the card there (n_cards: none)
        md = self.mv_depth[acts]
        src = self.src[acts].clamp(max=n_loc - 1)
        mv = torch.where(md >= 0, table[rows, src * DEPTHS + md.clamp(min=0)], n_cards)
        dst = self.dst[acts].clamp(max=n_loc - 1)
        tg = torch.where(self.tg_top[acts], table[rows, dst * DEPTHS], n_cards)
        if not under:
            return mv, tg
        ud = self.un_depth[acts]
        un = torch.where(ud >= 0, table[rows, src * DEPTHS + ud.clamp(0, DEPTHS - 1)], n_cards)
        return mv, tg, un


def _pair(rank_a, suit_a, rank_b, suit_b):
    """The :data:`PAIRS` index of cards ``a`` and ``b`` from their ranks and suits (tensors;
    rank −1: no card)."""
    idx = (rank_b - rank_a + len(RANKS)) * len(SUITS) ** 2 + suit_a * len(SUITS) + suit_b
    return torch.where((rank_a >= 0) & (rank_b >= 0), idx, PAIRS)
