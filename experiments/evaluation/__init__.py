"""``experiments/evaluate.py``, in modules by concern:

- ``records``: the files of an output folder (``results.json``, ``episodes.csv``,
  ``verdicts.json``, ``traces/``): their shapes, read back checked, written atomically;
- ``merge``: the games of earlier output folders taken in (``--include``, ``--replace``);
- ``play``: the policies played on the deals, here or on Ray, and the run as a whole;
- ``tables``: the Markdown table and the line printed per policy and variant;
- ``plots``: ``win_rates.png`` and ``learning_curves.png``;
- ``cli``: the command line.

Importing the package sets ``OMP_WAIT_POLICY=PASSIVE`` (unless it is set already), before any of
its modules starts numba or torch.
"""

import os

# numba's and torch's OpenMP threads spin-wait between calls by default; when the env kernels and
# the policy take turns in one process on few cores, that spinning starves the other side (10x
# slower evaluation measured on 2 cores). Set before numba or torch start their threads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
