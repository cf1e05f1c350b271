"""Policies × games on a fixed set of evaluation-split deals.

    python experiments/evaluate.py --policies random,greedy,solver --variants all --deals 1000 \\
        --out runs/baselines
    python experiments/evaluate.py --policies random,greedy \\
        --checkpoint runs/seahaven_c4/checkpoints/best.npz --variants SH1-C4 --deals 1000 \\
        --verdicts runs/baselines/verdicts.json --out runs/ppo_sh
    python experiments/evaluate.py --policies "" --include runs/baselines --include runs/ppo_sh \\
        --out runs/all          # one table and plot from earlier runs (same deals)
    python experiments/evaluate.py --policies "" --include runs/all --replace runs/tf_d3n \\
        --out runs/all          # runs/tf_d3n's games in place of the same variant and policy's
    python experiments/evaluate.py --policies random,greedy,solver --deals 100000 --ray auto \\
        --out runs/big          # the deals in ranges on a Ray cluster: the same results

Every policy plays the same deals ``0 … n−1`` of each variant (the evaluation split: no training
game is dealt from it). Reports per variant and policy: wins, win rate with its 95% Wilson
interval, mean app score (Vegas: dollars), mean moves, mean cards on the foundations, how the
games ended, and the share of the solver-solvable deals that the policy won (from the solver's
verdicts: this run's if ``solver`` is among the policies, else ``--verdicts``, else those of the
``--include`` folders; all of one solver budget, or the run stops before it plays).

Writes into ``--out``: ``results.json`` (the summaries and the command), ``results.md`` (the
table), ``episodes.csv`` (one row per game), ``verdicts.json`` (the solver's verdicts and the
budget they were made with),
``win_rates.png`` (win rate per policy and variant, with the intervals), ``learning_curves.png``
(from ``--runs`` training folders), and ``traces/`` (the first ``--traces`` games of each policy,
as trace files).

Policies: those of ``--policies`` (``random``, ``greedy``, ``learned``, ``search@N``, ``puct@N``,
``solver``: ``--help`` says what each is; the solver plays with ``--solver-nodes`` /
``--solver-seconds`` per deal, and a deal it finds no solution for within them counts as not
won), and each ``--checkpoint [NAME@][TAG=]CHECKPOINT`` (a MaskablePPO zip, which needs
``--trusted``; its weights-only ``.npz``, ``checkpoints/best.npz`` of ``train.py``, which does
not; or a policy network ``.npz``; ``--ppo`` is the option's older name), evaluated on the
variant it was trained on, or on TAG, e.g. ``SH1-C2``; shown as NAME, e.g.
``ppo-best@runs/seahaven_c4/checkpoints/best.npz``.

The networks of ``learned`` and ``--checkpoint`` play on ``--device`` (default ``auto``: CUDA
when torch sees it, else the CPU) with ``--torch-threads`` CPU threads
(``agents/torch_setup.py``).

The code is in ``experiments/evaluation/`` (its ``__init__.py`` says which module does what);
this file is the command.
"""

import sys

from experiments.evaluation.cli import build_parser, main, main_result

__all__ = ["build_parser", "main", "main_result"]

if __name__ == "__main__":
    sys.exit(main())
