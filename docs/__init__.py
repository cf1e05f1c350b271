# A package only so that pytest imports docs/conftest.py under its own name (docs.conftest),
# beside tests/conftest.py.
