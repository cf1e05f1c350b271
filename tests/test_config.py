"""Training-run configs (``agents/config.py``) as files from elsewhere: every value range-checked,
the name a plain folder name, the YAML read safely (not UTF-8, a folder, deep nesting, duplicate
keys), and ``--restart`` deleting only a run folder. The schema's keys and the shipped configs are
tested with training, in ``test_agents.py``."""

import copy

import pytest
from refusing import refused, write_file

TINY = {"name": "tiny", "game": "seahaven_towers", "total_timesteps": 512}


@pytest.mark.parametrize("name", ["/some/folder", "", "..", ".", "a/b", "../up", "x\\y", "ü"])
def test_config_name_is_a_plain_name(name):
    pytest.importorskip("yaml")
    from agents.config import ConfigError, check_config

    message = refused(ConfigError, check_config, dict(TINY, name=name))
    assert "name" in message


def test_restart_deletes_only_a_run_folder(tmp_path, monkeypatch):
    pytest.importorskip("yaml")
    from agents.config import ConfigError, remove_run_folder

    monkeypatch.chdir(tmp_path)
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    (precious / "config.yaml").write_text("name: x\n")
    assert "thesis.tex" in refused(ConfigError, remove_run_folder, precious)
    assert (precious / "thesis.tex").exists()
    for folder in (tmp_path, tmp_path.parent, tmp_path / "."):
        refused(ConfigError, remove_run_folder, folder)
    assert (precious / "thesis.tex").exists()
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("name: run\n")
    (run / "eval.csv").write_text("step\n")
    remove_run_folder(run)
    assert not run.exists()


def test_train_restart_refuses_a_folder_that_is_not_a_run(tmp_path):
    pytest.importorskip("sb3_contrib")
    from agents.config import ConfigError, check_config
    from agents.training import TrainRun

    out = tmp_path / "notes"
    out.mkdir()
    (out / "todo.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="run folder"):
        TrainRun(check_config(TINY), out, progress=False).train(restart=True)
    assert (out / "todo.txt").read_text() == "keep me"


def test_config_not_utf8(tmp_path):
    pytest.importorskip("yaml")
    from agents.config import ConfigError, load_config

    refused(ConfigError, load_config, write_file(tmp_path, "c.yaml", b"name: \xff\xfe\n"))
    refused(ConfigError, load_config, tmp_path)  # a folder
    refused(ConfigError, load_config, write_file(tmp_path, "d.yaml", b"[" * 50_000))


BAD_VALUES = [
    ("ppo.gamma", -1), ("ppo.gamma", 5), ("ppo.gamma", float("nan")), ("ppo.gamma", 0),
    ("ppo.learning_rate", -0.1), ("ppo.learning_rate", float("inf")), ("ppo.clip_range", -1),
    ("ppo.gae_lambda", 2), ("reward_scale", 0), ("win_bonus", float("nan")), ("seed", -1),
    ("seed", 2**40), ("options.cells", True), ("ppo.ent_coef", -1), ("ppo.vf_coef", float("inf")),
    ("ppo.max_grad_norm", 0), ("num_envs", 10**9), ("network.net_arch", [2**30]),
    ("torch_threads", 10**6),
]  # fmt: skip


@pytest.mark.parametrize("key,value", BAD_VALUES, ids=[f"{k}={v!r}" for k, v in BAD_VALUES])
def test_config_values_are_range_checked(key, value):
    pytest.importorskip("yaml")
    from agents.config import ConfigError, check_config

    data = copy.deepcopy(TINY)
    section, _, name = key.rpartition(".")
    (data.setdefault(section, {}) if section else data)[name] = value
    assert key in refused(ConfigError, check_config, data)


def test_config_duplicate_keys(tmp_path):
    pytest.importorskip("yaml")
    from agents.config import ConfigError, load_config

    p = write_file(
        tmp_path,
        "dup.yaml",
        b"name: a\ngame: seahaven_towers\ntotal_timesteps: 64\nppo:\n  gamma: 0.9\n  gamma: 0.5\n",
    )
    assert "gamma" in refused(ConfigError, load_config, p)


def test_a_run_saved_before_a_key_had_a_default_resumes(tmp_path):
    """A run folder whose config.yaml predates a key (``shaping``, ``ppo.policy``) holds that
    key's default: it resumes under the same config, and a saved value other than the default
    is still another config."""
    import yaml
    from scripts import ROOT

    from agents.config import ConfigError, check_run_folder, load_config

    cfg = load_config(ROOT / "configs" / "seahaven_c4.yaml")
    old = {k: v for k, v in cfg.raw.items() if k != "shaping"}
    old["ppo"] = {k: v for k, v in cfg.raw["ppo"].items() if k != "policy"}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(old))
    check_run_folder(tmp_path, dict(cfg.raw))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(dict(old, shaping="potential")))
    with pytest.raises(ConfigError, match="key shaping differs"):
        check_run_folder(tmp_path, dict(cfg.raw))
