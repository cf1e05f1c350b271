"""The package as installed: ``solitaire-gym --version``, the licence as an SPDX string, the
extras' requirements (any torch 2.x, and what their snippets need), and the README naming where
``random_legal_actions`` lives."""

import subprocess
import sys

import solitaire_gym


def test_version():
    out = subprocess.run(
        [sys.executable, "-m", "solitaire_gym.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == f"solitaire-gym {solitaire_gym.__version__}"


def test_readme_says_where_random_legal_actions_lives():
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert "solitaire_gym.envs.sampling.random_legal_actions" in readme
    from solitaire_gym.envs.sampling import random_legal_actions  # noqa: F401


def test_license_is_an_spdx_string():
    import tomllib
    from pathlib import Path

    meta = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "MIT"
    req = [r for r in meta["build-system"]["requires"] if r.startswith("setuptools")]
    assert req == ["setuptools>=77"]  # the first setuptools that takes an SPDX string


def test_extras_take_any_torch_2_and_what_their_snippets_need():
    """A user with another torch 2.x (a CUDA build) keeps it when installing an extra; the
    Makefile, not the extras, installs this machine's CPU build; SB3's progress bars need rich."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for name in ("agents", "ray"):
        torch = [r for r in extras[name] if r.startswith("torch")]
        assert torch == ["torch>=2.3,<3"], (name, torch)
    assert {"rich", "tqdm"} <= set(extras["agents"])
    assert "TORCH_CPU := torch==" in (root / "Makefile").read_text()
