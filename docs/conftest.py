# pytest runs the examples of the docs pages (doctests of docs/*.md; tests/test_docs.py runs
# their ``python`` blocks). The Python files here are MkDocs helpers, not tests: they need the
# docs extra, which a plain test run may not have.
collect_ignore_glob = ["*.py"]
