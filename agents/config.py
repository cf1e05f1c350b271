"""Training-run configs (``configs/*.yaml``): load, check, and build the env they describe.

A config is a YAML mapping; every key is checked against :data:`SCHEMA` (unknown keys and wrong
types are refused with a :class:`ConfigError` that names the key, e.g. ``ppo.batch_size``), and
missing optional keys take the defaults below. ``configs/seahaven_c4.yaml`` shows every key.

Reward modes: the env's own (see ``SolitaireEnv``): ``foundation`` (the default), ``fair``,
``app`` and ``win``. ``foundation`` is +1 for each card put on a foundation, −1 for each card taken
back, plus ``win_bonus`` on the winning move, computed by the env's compiled step from the engine.
It is potential-based (the potential is the number of cards on the foundations), so no cycle of
moves gains anything, and an episode's return is the number of cards it ended with on the
foundations (plus the bonus when won). ``win_bonus`` is used by ``foundation`` only.

``shaping`` (``foundation`` with MaskablePPO): ``difference``, the env's reward as it is; or
``potential``, ``gamma * Phi(s') - Phi(s)`` with ``Phi`` the cards on the foundations and
``gamma`` the config's ``ppo.gamma`` (the trainer adds ``(gamma - 1) * Phi(s')``). Discounted
returns of ``difference`` are not free of cycles: a card put home now and taken back ``k`` moves
later gains ``1 - gamma**k``; with ``potential`` every cycle's discounted sum is 0.

``deals``: which training deals the env draws, ``random`` (any deal of the training split) or
``solvable`` (the shipped list of training deals the solver proved solvable, see
``solitaire_gym.envs.deal_lists``). Periodic and final evaluation play the evaluation split
either way.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from solitaire_gym.engine.catalog import GAME_OPTIONS
from solitaire_gym.engine.threads import MAX_TORCH_THREADS, SHARED_CORE_THREADS
from solitaire_gym.envs.core import DEAL_SOURCES, REWARD_MODES
from solitaire_gym.errors import SHOWN_CHARS, SolitaireError, is_int, shown
from solitaire_gym.files import FileFormatError, read_limited, strict_json

ALGORITHMS = ("maskable_ppo", "rllib_ppo")
VECTORIZE = ("native", "sync")
ACTIVATIONS = ("tanh", "relu")
# ppo.policy: lean = agents.masked_policy.LeanMaskablePolicy (the same policy, faster), sb3 = stock
PPO_POLICIES = ("lean", "sb3")
# shaping (foundation reward, MaskablePPO): difference = the env's Phi(s') - Phi(s); potential =
# gamma * Phi(s') - Phi(s) (agents.training.TrainingReward), Phi = cards on the foundations
SHAPINGS = ("difference", "potential")
GAMES = tuple(GAME_OPTIONS)
KEEP_ALL = "all"
"""``checkpoint.keep``'s value that keeps every step checkpoint."""
RESUME_MAY_CHANGE = ("total_timesteps", "checkpoint")
"""The config keys a resumed run may change (:func:`check_run_folder`): how long it runs and
which checkpoints it keeps change nothing that is trained."""


class ConfigError(SolitaireError):
    """A config that cannot be used; the message names the file and the key."""


MAX_CONFIG_BYTES = 2**20  # a config is a page of YAML
MAX_NET_WEIGHTS = 2**26
"""Most weights the hidden layers of a config's network may have (``net_arch``: the products of
the sizes of neighbouring layers, summed): 256 MiB as float32, per network."""
# A run's name is also its folder under runs/: a plain name, never a path.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$", re.ASCII)
# What a run folder holds (agents/training.py); --restart deletes only a folder of these.
RUN_FILES = frozenset(
    {"config.yaml", "checkpoints", "eval.csv", "train.csv", "timing.json", "state.json", "tb"}
)

# Ranges of the numbers: key -> (low, high, low included, high included). Every number must also
# be finite; integer keys not listed here must be positive.
RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "win_bonus": (0.0, 1e6, True, True),
    "reward_scale": (0.0, 1e6, False, True),
    "seed": (0, 2**32 - 1, True, True),  # numpy's and torch's seeds
    "num_envs": (1, 2**16, True, True),
    "torch_threads": (1, MAX_TORCH_THREADS, True, True),
    "ppo.learning_rate": (0.0, 1.0, False, True),
    "ppo.gamma": (0.0, 1.0, False, True),
    "ppo.gae_lambda": (0.0, 1.0, True, True),
    "ppo.clip_range": (0.0, 10.0, False, True),
    "ppo.ent_coef": (0.0, 10.0, True, True),
    "ppo.vf_coef": (0.0, 10.0, True, True),
    "ppo.max_grad_norm": (0.0, 1e6, False, True),
}


# key -> (type or tuple of types, default); a dict value is a nested section.
NUMBER = (int, float)
"""A schema's type for a number: an int or a float, read as a float."""
SCHEMA: dict[str, Any] = {
    "name": (str, None),
    "description": (str, ""),
    "game": (str, None),
    "options": (dict, {}),
    "algorithm": (str, "maskable_ppo"),
    "reward_mode": (str, "foundation"),
    "win_bonus": (NUMBER, 10.0),
    "reward_scale": (NUMBER, 1.0),
    "shaping": (str, "difference"),
    "deals": (str, "random"),
    "total_timesteps": (int, None),
    "num_envs": (int, 32),
    "max_episode_steps": ((int, type(None)), None),
    "seed": (int, 0),
    "torch_threads": (int, SHARED_CORE_THREADS),
    "deterministic_eval": (bool, False),
    "network": {
        "net_arch": (list, [256, 256]),
        "activation": (str, "tanh"),
    },
    "ppo": {
        "policy": (str, "lean"),
        "n_steps": (int, 128),
        "batch_size": (int, 512),
        "n_epochs": (int, 4),
        "learning_rate": (NUMBER, 3e-4),
        "gamma": (NUMBER, 0.99),
        "gae_lambda": (NUMBER, 0.95),
        "clip_range": (NUMBER, 0.2),
        "ent_coef": (NUMBER, 0.01),
        "vf_coef": (NUMBER, 0.5),
        "max_grad_norm": (NUMBER, 0.5),
    },
    "eval": {
        "every_steps": (int, 100_000),
        "deals": (int, 200),
    },
    # keep: how many of the latest step checkpoints stay (best.zip always stays), or "all"
    "checkpoint": {
        "every_steps": (int, 100_000),
        "keep": ((int, str), 1),
    },
    # rllib_ppo only (experiments/train_rllib.py): num_envs games per env runner, n_steps per
    # game per runner make a rollout; runners 0 = sampling in the driver process.
    "rllib": {
        "num_env_runners": (int, 1),
        "vectorize": (str, "native"),
    },
}
REQUIRED = ("name", "game", "total_timesteps")


def _type_name(t) -> str:
    if isinstance(t, tuple):
        return " or ".join(_type_name(x) for x in t)
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false",
            list: "a list", dict: "a mapping", type(None): "null"}[t]  # fmt: skip


def _check_type(value: Any, t, key: str, where: str) -> None:
    types = t if isinstance(t, tuple) else (t,)
    ok = any(
        isinstance(value, x) and not (isinstance(value, bool) and x in (int, float)) for x in types
    )
    if not ok:
        raise ConfigError(f"{where}: {key} must be {_type_name(t)}, not {shown(value)}")


def merge_schema(schema: dict, data: Any, prefix: str, where: str) -> dict:
    """``data`` (a mapping read from the config ``where``) checked against ``schema``
    ({key: (type, default)}, a dict value a nested section) with the defaults filled in: a
    :class:`ConfigError` names an unknown key or a value of the wrong type. ``prefix``: the
    dotted path of ``data`` in the config, for messages."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: {prefix.rstrip('.') or 'the config'} must be a mapping")
    unknown = sorted((k for k in data if k not in schema), key=repr)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {prefix}{str(unknown[0])[:SHOWN_CHARS]} (known: {', '.join(sorted(schema))})"
        )
    out: dict[str, Any] = {}
    for key, spec in schema.items():
        if isinstance(spec, dict):
            out[key] = merge_schema(spec, data.get(key, {}), f"{prefix}{key}.", where)
            continue
        t, default = spec
        if key in data:
            _check_type(data[key], t, prefix + key, where)
            value = data[key]
            try:
                out[key] = float(value) if t == NUMBER else value
            except OverflowError:  # an integer too large for a float
                raise ConfigError(f"{where}: {prefix}{key} is out of range") from None
        else:
            out[key] = copy.deepcopy(default)
    return out


@dataclass(frozen=True)
class CheckedConfig:
    """A checked config: ``raw`` is the full mapping (defaults filled in), read as attributes
    (``cfg.variant`` is ``cfg.raw["variant"]``); ``path`` where it came from."""

    raw: dict[str, Any]
    path: str = "<dict>"

    def __getattr__(self, key: str) -> Any:
        try:
            return self.raw[key]
        except KeyError:
            raise AttributeError(key) from None


@dataclass(frozen=True)
class TrainConfig(CheckedConfig):
    """A checked training config (:func:`check_config`)."""

    @property
    def env_kwargs(self) -> dict[str, Any]:
        """Arguments of ``SB3VecEnv`` / ``SolitaireEnv`` for this game (reward aside)."""
        return dict(self.raw["options"])

    @property
    def env_reward_kwargs(self) -> dict[str, Any]:
        """The env's reward arguments: ``reward_mode``, and ``win_bonus`` for ``foundation``."""
        mode = self.raw["reward_mode"]
        if mode == "foundation":
            return {"reward_mode": mode, "win_bonus": float(self.raw["win_bonus"])}
        return {"reward_mode": mode}

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.raw, sort_keys=False)


def check_config(data: Any, where: str = "<dict>") -> TrainConfig:
    """Check a parsed config mapping; raise :class:`ConfigError` naming the first bad key."""
    raw = merge_schema(SCHEMA, data, "", where)
    for key in REQUIRED:
        if raw[key] is None:
            raise ConfigError(f"{where}: missing key {key}")
    if not NAME_RE.match(raw["name"]) or set(raw["name"]) == {"."}:
        raise ConfigError(
            f"{where}: name must be a plain name (letters, digits, '_', '-', '.'; not a path), "
            f"not {shown(raw['name'])}: it names the run's folder"
        )
    if raw["game"] not in GAMES:
        raise ConfigError(
            f"{where}: game must be one of {', '.join(GAMES)}, not {shown(raw['game'])}"
        )
    allowed = GAME_OPTIONS[raw["game"]]
    for key, value in raw["options"].items():
        if key not in allowed:
            raise ConfigError(
                f"{where}: unknown key options.{str(key)[:SHOWN_CHARS]} for {raw['game']} "
                f"(known: {', '.join(allowed)})"
            )
        if type(value) is not type(allowed[key][0]) or value not in allowed[key]:
            raise ConfigError(
                f"{where}: options.{key} must be one of {list(allowed[key])}, not {shown(value)}"
            )
    choices = {
        "algorithm": ALGORITHMS,
        "reward_mode": tuple(REWARD_MODES),
        "deals": DEAL_SOURCES,
        "network.activation": ACTIVATIONS,
        "ppo.policy": PPO_POLICIES,
        "shaping": SHAPINGS,
        "rllib.vectorize": VECTORIZE,
    }
    for key, allowed_values in choices.items():
        section, _, name = key.rpartition(".")
        value = raw[section][name] if section else raw[name]
        if value not in allowed_values:
            raise ConfigError(
                f"{where}: {key} must be one of {', '.join(allowed_values)}, not {shown(value)}"
            )
    arch = raw["network"]["net_arch"]
    if (
        not arch
        or len(arch) > 64
        or not all(isinstance(x, int) and not isinstance(x, bool) and 0 < x <= 2**16 for x in arch)
    ):
        raise ConfigError(
            f"{where}: network.net_arch must be a list of 1 to 64 layer sizes (integers "
            f"1 … {2**16}), not {shown(arch)}"
        )
    weights = sum(a * b for a, b in itertools.pairwise(arch))
    if weights > MAX_NET_WEIGHTS:
        raise ConfigError(
            f"{where}: network.net_arch asks for {weights:,} weights between its layers; at most "
            f"{MAX_NET_WEIGHTS:,} (the products of the sizes of neighbouring layers, summed)"
        )
    for key, (low, high, low_in, high_in) in RANGES.items():
        section, _, name = key.rpartition(".")
        value = raw[section][name] if section else raw[name]
        ok = not (isinstance(value, float) and not math.isfinite(value))
        ok = ok and (low <= value if low_in else low < value)
        ok = ok and (value <= high if high_in else value < high)
        if not ok:
            span = f"{'[' if low_in else '('}{low:g}, {high:g}{']' if high_in else ')'}"
            raise ConfigError(f"{where}: {key} must lie in {span}, not {shown(value)}")
    keep = raw["checkpoint"]["keep"]
    if keep != KEEP_ALL and not (isinstance(keep, int) and keep > 0):
        raise ConfigError(
            f"{where}: checkpoint.keep must be a positive integer or {KEEP_ALL!r}, not {shown(keep)}"
        )
    positive = ["total_timesteps", "num_envs", "torch_threads", "ppo.n_steps", "ppo.batch_size",
                "ppo.n_epochs", "eval.every_steps", "eval.deals", "checkpoint.every_steps"]  # fmt: skip
    for key in positive:
        section, _, name = key.rpartition(".")
        value = raw[section][name] if section else raw[name]
        if value <= 0:
            raise ConfigError(f"{where}: {key} must be positive, not {shown(value)}")
    if raw["win_bonus"] < 0:
        raise ConfigError(f"{where}: win_bonus must be >= 0, not {raw['win_bonus']!r}")
    if raw["shaping"] != "difference" and (raw["algorithm"], raw["reward_mode"]) != (
        "maskable_ppo",
        "foundation",
    ):
        raise ConfigError(f"{where}: shaping {raw['shaping']} is for reward_mode foundation with "
                          "algorithm maskable_ppo only")  # fmt: skip
    if raw["algorithm"] != "rllib_ppo":
        if data.get("rllib") is not None:
            raise ConfigError(f"{where}: the rllib section is for algorithm rllib_ppo only")
        del raw["rllib"]  # an SB3 config stays what it was (a resumed run compares it)
    elif raw["rllib"]["num_env_runners"] < 0:
        raise ConfigError(f"{where}: rllib.num_env_runners must be 0 or more")
    if raw["max_episode_steps"] is not None and raw["max_episode_steps"] <= 0:
        raise ConfigError(f"{where}: max_episode_steps must be positive or null")
    if raw["ppo"]["batch_size"] > raw["ppo"]["n_steps"] * raw["num_envs"]:
        raise ConfigError(
            f"{where}: ppo.batch_size ({raw['ppo']['batch_size']}) is larger than one rollout "
            f"(ppo.n_steps × num_envs = {raw['ppo']['n_steps'] * raw['num_envs']})"
        )
    return TrainConfig(raw, where)


MAX_CONFIG_DEPTH = 32
"""Deepest nesting of lists and mappings a config file may have (the schema needs 3)."""
MAX_CONFIG_INT_DIGITS = 30
"""Longest integer a config file may write (a seed or a step count needs 20 digits at most)."""


class _ConfigLoader(yaml.SafeLoader):
    """YAML's safe loader for files from elsewhere: no aliases (``*name``: an alias repeats a
    node, and nested aliases grow exponentially, the "billion laughs"), nesting at most
    :data:`MAX_CONFIG_DEPTH` deep, integers of at most :data:`MAX_CONFIG_INT_DIGITS` digits, no key
    given twice in one mapping (PyYAML keeps the last)."""

    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.events.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not read in a config", self.peek_event().start_mark
            )
        self._depth += 1
        try:
            if self._depth > MAX_CONFIG_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_CONFIG_DEPTH} deep",
                    self.peek_event().start_mark,
                )  # fmt: skip
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node):
        digits = sum(c.isdigit() for c in str(node.value))
        if digits > MAX_CONFIG_INT_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, f"an integer of {digits} digits (at most {MAX_CONFIG_INT_DIGITS})",
                node.start_mark,
            )  # fmt: skip
        return super().construct_yaml_int(node)

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: construct_mapping refuses it below
                duplicate = False
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {shown(key)} is given twice", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)


_ConfigLoader.add_constructor("tag:yaml.org,2002:int", _ConfigLoader.construct_yaml_int)


def read_yaml(path: str | Path) -> tuple[Any, str]:
    """The parsed YAML file at ``path`` and the name to give it in messages: the one reader of
    every config (training, imitation). A regular file of at most :data:`MAX_CONFIG_BYTES`
    (a named pipe is refused, not waited on), UTF-8, read by :class:`_ConfigLoader` (safe: no
    objects are built; no aliases, nesting, long integers or keys given twice). Anything else is
    a :class:`ConfigError` naming the file, quoting a few hundred characters at most."""
    where = shown(str(path), 120)
    try:
        text = read_limited(path, MAX_CONFIG_BYTES).decode("utf-8")
    except FileFormatError as e:
        raise ConfigError(f"cannot read config {where}: {e}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{where}: not UTF-8 text (byte {e.start})") from None
    try:
        data = yaml.load(text, Loader=_ConfigLoader)
    except yaml.YAMLError as e:
        raise ConfigError(f"{where}: not valid YAML: {shown(str(e), 300)}") from None
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to be a config") from None
    except ValueError as e:  # e.g. an integer longer than Python converts
        raise ConfigError(f"{where}: {shown(str(e), 200)}") from None
    return (data if data is not None else {}), where


MAX_STATE_BYTES = 2**16  # a run's state.json: a step count, the best result and a few timings


def check_run_folder(out: Path, raw: dict) -> None:
    """Refuse to resume in ``out`` a run of another config: its ``config.yaml`` (read by
    :func:`read_yaml`, as any config), with the defaults of the keys it lacks filled in as
    :func:`check_config` fills them (a run saved before a key existed has that key's default),
    must equal ``raw`` but for the keys of :data:`RESUME_MAY_CHANGE`."""
    path = Path(out) / "config.yaml"
    if not path.exists():
        return
    saved, where = read_yaml(path)
    if not isinstance(saved, dict):
        raise ConfigError(f"{where}: not a config (a mapping of keys)")
    with contextlib.suppress(ConfigError):  # one that fails the check is compared as it is
        saved = check_config(saved, where).raw
    diff = sorted(
        (
            k
            for k in set(saved) | set(raw)
            if k not in RESUME_MAY_CHANGE and saved.get(k) != raw.get(k)
        ),
        key=str,
    )
    if diff:
        raise ConfigError(
            f"{out} holds a run of another config (key {str(diff[0])[:60]} differs): use "
            "another --out, or --restart to start it over"
        )


def stale_checkpoints(found: list[Path], keep: int | str) -> list[Path]:
    """The step checkpoints of ``found`` (oldest first) that ``checkpoint.keep`` drops: all but
    the latest ``keep``, or none for :data:`KEEP_ALL`."""
    if keep == KEEP_ALL:
        return []
    return list(found[: max(0, len(found) - int(keep))])


def _number(v: Any) -> bool:
    return (is_int(v) or isinstance(v, float)) and math.isfinite(v)


def read_run_state(path: Path) -> dict:
    """A run folder's ``state.json`` as the trainers write it, ``{"step": int, "best": [numbers]
    or null, "timing": {name: number}}``: a regular file of at most :data:`MAX_STATE_BYTES`,
    strict JSON; anything else is a :class:`ConfigError` naming the file."""
    where = shown(str(path), 120)
    try:
        st = strict_json(read_limited(path, MAX_STATE_BYTES))
    except FileFormatError as e:
        raise ConfigError(f"cannot read run state {where}: {e}") from None
    except ValueError as e:  # not JSON at all
        raise ConfigError(f"{where}: not valid JSON ({shown(str(e), 120)})") from None
    ok = isinstance(st, dict) and is_int(st.get("step")) and st["step"] >= 0
    ok = ok and isinstance(st.get("timing"), dict) and len(st["timing"]) <= 64
    ok = ok and all(isinstance(k, str) and _number(v) for k, v in st["timing"].items())
    best = st.get("best") if ok else None
    ok = ok and (best is None or (isinstance(best, list) and len(best) <= 8
                                  and all(map(_number, best))))  # fmt: skip
    if not ok:
        raise ConfigError(f"{where}: not a run state (step, best, timing) as the trainers write it")
    return st


def with_overrides(cfg: TrainConfig, **values: Any) -> TrainConfig:
    """``cfg`` with the top-level keys of ``values`` that are not None replaced (a command's
    ``--timesteps``, ``--seed``), checked again as any config."""
    values = {k: v for k, v in values.items() if v is not None}
    return check_config(dict(cfg.raw, **values), cfg.path) if values else cfg


def load_config(path: str | Path) -> TrainConfig:
    """Read (:func:`read_yaml`) and check a YAML training config file."""
    data, where = read_yaml(path)
    return check_config(data, where)


def remove_run_folder(out: str | Path) -> None:
    """Delete a run folder for ``--restart``, after checking that it is one: a folder under the
    working directory or elsewhere, but not the working directory, one of its parents, the home
    folder or a filesystem root, holding nothing but what a run writes (:data:`RUN_FILES`) and
    its ``config.yaml``. Anything else is refused with a :class:`ConfigError`; nothing is
    deleted."""
    out = Path(out)
    if not out.exists():
        return
    where = shown(str(out), 120)
    if out.is_symlink() or not out.is_dir():
        raise ConfigError(f"--restart: {where} is not a run folder (not a folder)")
    real = out.resolve()
    cwd = Path.cwd().resolve()
    protected = {cwd, *cwd.parents, Path.home().resolve(), Path(real.anchor)}
    if real in protected:
        raise ConfigError(f"--restart: {where} is not a run folder; refusing to delete it")
    entries = {p.name for p in out.iterdir()}
    if not entries:
        return  # an empty folder: nothing to delete
    if "config.yaml" not in entries or not entries <= RUN_FILES:
        extra = sorted(entries - RUN_FILES)
        why = f"it holds {shown(extra[0])}" if extra else "it has no config.yaml"
        raise ConfigError(
            f"--restart: {where} does not look like a run folder ({why}); delete it yourself if "
            "it is one"
        )
    shutil.rmtree(out)
