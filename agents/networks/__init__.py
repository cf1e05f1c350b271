"""The policy networks: each maps an observation to one score per action (illegal actions are
masked, never chosen).

- :mod:`agents.networks.spec`: :func:`~agents.networks.spec.game_spec`, what a network reads of
  a game (sizes, places, each action's source, target, kind and run length); numpy only.
- :mod:`agents.networks.mlp`: :class:`~agents.networks.mlp.MLP`, the ``"mlp"`` network.
- :mod:`agents.networks.cards`: :class:`~agents.networks.cards.CardNet`, the ``"cards"``
  network (card embeddings pooled per place, one score per legal action) and its options.
- :mod:`agents.networks.build`: :func:`~agents.networks.build.build_net`, the one factory from
  an architecture record to a network.

This package's ``__init__`` imports none of them: importing the spec does not import torch or
the factory, and the checkpoint module (:mod:`agents.checkpoint`) can use the spec while the
factory uses its error class. The public names are also offered by :mod:`agents.policy`.
"""
