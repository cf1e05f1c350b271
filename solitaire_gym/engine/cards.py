"""Cards: integer ids, names and the colour/suit/rank helpers used by every rule.

A card is an ``int8`` id ``suit * 13 + rank`` with ``rank`` 0 (Ace) … 12 (King) and ``suit`` in app
order 0 ♠, 1 ♥, 2 ♦, 3 ♣. The two copies of a card in Double Solitaire share one id: the rules never
tell them apart. ``EMPTY`` (-1) marks a free slot.

The shuffle (``shuffle.py``) works on *deck indices* ``copy * 52 + id``, as docs/rules.md says; the
layout reduces them to ids.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.errors import shown

EMPTY = -1
N_FACES = 52
RANKS = "A23456789TJQK"
SUITS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"
KING = 12
ACE = 0


@nb.njit(cache=True, inline="always")
def suit_of(card: int) -> int:
    # Unsigned division: a card id is never negative, and floor division of a signed number
    # costs extra instructions in the hottest loops of move generation.
    return np.int64(np.uint64(card) // np.uint64(13))


@nb.njit(cache=True, inline="always")
def rank_of(card: int) -> int:
    return np.int64(np.uint64(card) % np.uint64(13))


@nb.njit(cache=True, inline="always")
def is_red(card: int) -> bool:
    return np.uint64(card) - np.uint64(13) < np.uint64(26)  # suit 1 or 2: ids 13 … 38


def card_name(card: int) -> str:
    """ASCII name, rank then suit: ``AS``, ``TH``, ``KC``."""
    if not 0 <= card < N_FACES:
        raise ValueError(f"not a card id: {card}")
    return RANKS[card % 13] + SUITS[card // 13]


def card_symbol(card: int) -> str:
    """Display name with the suit symbol: ``A♠``, ``10♥``."""
    rank = RANKS[card % 13]
    return ("10" if rank == "T" else rank) + SUIT_SYMBOLS[card // 13]


def parse_card(text: str) -> int:
    """Inverse of :func:`card_name` (any case). Raises ``ValueError`` naming the bad text."""
    if not isinstance(text, str) or len(text) != 2:
        raise ValueError(
            f"not a card: {shown(text)} (expected rank then suit, e.g. 'AS', 'TH', 'KC')"
        )
    r = RANKS.find(text[0].upper()) if text.isascii() else -1
    s = SUITS.find(text[1].upper()) if text.isascii() else -1
    if r < 0 or s < 0:
        raise ValueError(f"not a card: {text!r} (ranks {RANKS}, suits {SUITS})")
    return s * 13 + r
