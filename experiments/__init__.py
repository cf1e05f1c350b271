"""The repository's experiment scripts, one command each (``experiments/README.md``).

Run one as ``python experiments/<name>.py …`` or ``python -m experiments.<name> …``. They import
``solitaire_gym``, ``agents`` and ``experiments`` itself (``demo.py`` runs ``evaluate.py``,
which is built from ``experiments/evaluation/``) as installed packages: ``pip install -e
'.[agents]'`` (or ``make``) installs all three from the checkout, and no script edits
``sys.path``. ``python -m`` from the root of a checkout imports that checkout's packages even when
another one is installed.
"""
