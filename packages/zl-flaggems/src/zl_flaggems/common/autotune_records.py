"""Autotune record / replay bookkeeping: formats, keys, files, the backend guard.

Nothing here imports triton or torch; the pytest plugin
(:mod:`zl_flaggems.cell.plugins.autotune`) feeds it keys and ``triton.Config``-like
objects. Layout of ``<cell>/autotune_records/``::

    meta.json          {"schema", "backend", "flaggems_vendor", "triton_version", "op"}
    <tuner id>.json    {"schema", "kernel", "tuner", "tuner_class",
                        "entries": [{"key": <key json>, "config": {...},
                                     "sweep": [{"config": {...}, "ms": <median>}, ...]}, ...]}

``sweep`` (each candidate's median time, fastest first) is there when the cell timed
the key's candidates itself, not when the pick came from a cache or a replay.

A *key* is what the tuner itself indexes its cache by (Triton: key-arg values plus
``str(dtype)`` of each tensor arg; FlagGems' LibTuner: the strategy-normalised
values plus dtypes). It is stored as one canonical JSON string, so a replay in a
fresh process matches by string equality, never by re-parsing.
"""

from __future__ import annotations

import enum
import inspect
import json
import math
import numbers
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from zl_core.foundation.atomic import write_json_atomic
from zl_core.interface import contract
from zl_core.interface.ttgir_layout import safe_component

SCHEMA = 1
RECORDS_DIR = "autotune_records"
META_NAME = "meta.json"
FALLBACK_MARKER = contract.AUTOTUNE_REPLAY_FALLBACK
#: The launch options every triton.Config carries; written even when None.
CONFIG_FIELDS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


class NotDecodable(ValueError):
    """A recorded value that was stored by description only (a repr, a tensor)."""


# -- values and keys ------------------------------------------------------------


def encode_value(value: Any) -> Any:
    """A JSON value that depends on ``value`` only (never on addresses or order).

    Plain scalars stay themselves; everything else becomes a one-key tagged
    object so that decoding is unambiguous and foreign objects stay readable.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, (tuple, list)):
        return {"tuple": [encode_value(v) for v in value]}
    if isinstance(value, enum.Enum):
        return {"enum": f"{type(value).__qualname__}.{value.name}"}
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    if kind.__name__ == "dtype" and module.startswith("torch"):
        return {"torch_dtype": str(value)}
    if kind.__name__ == "dtype" and module.startswith("triton"):
        return {"tl_dtype": str(value)}
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        if len(value.shape) == 0 and hasattr(value, "item"):  # numpy / torch scalars
            return encode_value(value.item())
        # a tensor in a key: describe it (never its address or contents)
        return {"tensor": {"shape": [int(s) for s in value.shape], "dtype": str(value.dtype)}}
    if hasattr(value, "__index__"):
        return int(value.__index__())
    if isinstance(value, numbers.Real):
        return encode_value(float(value))
    text = _ADDRESS.sub("0x?", repr(value))
    return {"repr": f"{kind.__qualname__}:{text}"}


def decode_value(value: Any) -> Any:
    """Inverse of :func:`encode_value` where one exists; raises NotDecodable otherwise."""
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise NotDecodable(f"not a tagged value: {value!r}")
    (tag, inner), = value.items()
    if tag == "tuple":
        return tuple(decode_value(v) for v in inner)
    if tag == "float":
        return float(inner)
    if tag == "torch_dtype":
        import torch  # only reached when a config really carries a torch dtype

        return getattr(torch, str(inner).rsplit(".", 1)[-1])
    if tag == "tl_dtype":
        import triton.language as tl

        return tl.dtype(str(inner))
    raise NotDecodable(f"recorded only as a description: {value!r}")


def key_to_json(key: Any) -> str:
    """The canonical string of a tuner key: compact JSON of its encoded parts."""
    parts = key if isinstance(key, (tuple, list)) else (key,)
    return json.dumps([encode_value(p) for p in parts], separators=(",", ":"), sort_keys=True)


def key_from_json(text: str) -> tuple:
    """The key tuple back from :func:`key_to_json` (for display and tests)."""
    return tuple(decode_value(v) for v in json.loads(text))


# -- configs --------------------------------------------------------------------


def _callable_name(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"


def config_to_dict(config: Any) -> dict:
    """Every attribute of a ``triton.Config``: kwargs, launch options, and extras.

    Extras are whatever else the installed Triton/FlagTree put on the object
    (``ir_override``, warp-specialisation fields, ...). A ``pre_hook`` is code and
    cannot be stored; its name is noted so a replay can say when it was lost.
    """
    fields = dict(vars(config)) if hasattr(config, "__dict__") else {}
    kwargs = fields.pop("kwargs", None)
    if kwargs is None:
        kwargs = getattr(config, "kwargs", {}) or {}
    pre_hook = fields.pop("pre_hook", getattr(config, "pre_hook", None))
    out: dict[str, Any] = {"kwargs": {str(k): encode_value(v) for k, v in sorted(kwargs.items())}}
    for name in CONFIG_FIELDS:
        out[name] = encode_value(fields.pop(name, getattr(config, name, None)))
    for name in sorted(fields):
        if not name.startswith("_"):
            out[name] = encode_value(fields[name])
    out["pre_hook"] = None if pre_hook is None else {"serialisable": False, "name": _callable_name(pre_hook)}
    return out


def config_identity(data: Mapping) -> str:
    """What makes two recorded configs the same launch: everything but the pre_hook."""
    return json.dumps({k: v for k, v in data.items() if k != "pre_hook"}, sort_keys=True,
                      separators=(",", ":"))


def config_from_dict(data: Mapping, config_cls: type) -> Any:
    """Build a config object; attributes the constructor does not take are set after.

    Raises NotDecodable when a value was recorded by description only; the
    caller then treats the key as missing (and says so) instead of guessing.
    """
    kwargs = {k: decode_value(v) for k, v in (data.get("kwargs") or {}).items()}
    try:
        accepted = set(inspect.signature(config_cls).parameters)
    except (TypeError, ValueError):
        accepted = set(CONFIG_FIELDS)
    init: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for name, raw in data.items():
        if name in ("kwargs", "pre_hook"):
            continue
        value = decode_value(raw)
        if name in accepted:
            init[name] = value
        elif value is not None:
            extra[name] = value
    config = config_cls(kwargs, **init)
    for name, value in extra.items():
        setattr(config, name, value)
    return config


# -- tuner identity -------------------------------------------------------------


@attrs.frozen(kw_only=True)
class TunerId:
    """Who a record belongs to.

    ``kernel`` is the Python name of the tuned function (what markers print);
    ``tuner`` adds its module and, when several tuners wrap the same function,
    the construction ordinal (``#1``, ``#2``...), so records never mix.
    """

    kernel: str
    tuner: str
    tuner_class: str = ""

    @property
    def file_name(self) -> str:
        return safe_component(self.tuner) + ".json"


def tuner_id_for(base_fn: Any, ordinal: int = 0, tuner_class: str = "") -> TunerId:
    kernel = getattr(base_fn, "__name__", None) or type(base_fn).__name__
    qual = getattr(base_fn, "__qualname__", kernel)
    module = getattr(base_fn, "__module__", None) or "?"
    tuner = f"{module}.{qual}" + (f"#{ordinal}" if ordinal else "")
    return TunerId(kernel=kernel, tuner=tuner, tuner_class=tuner_class)


# -- files ----------------------------------------------------------------------


def _atomic_write_json(path: Path, data: Any) -> None:
    write_json_atomic(path, data, indent=1, sort_keys=True, default=None)


def write_meta(records_dir: Path, *, backend: str, flaggems_vendor: str, triton_version: str,
               op: str = "") -> Path:
    path = Path(records_dir) / META_NAME
    _atomic_write_json(path, {"schema": SCHEMA, "backend": backend, "flaggems_vendor": flaggems_vendor,
                              "triton_version": triton_version, "op": op})
    return path


def read_meta(records_dir: Path) -> dict | None:
    """The record's meta, or None when absent or unreadable."""
    path = Path(records_dir) / META_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def replay_problem(records_dir: Path, current_backend: str) -> tuple[str, str] | None:
    """``(check, detail)`` when replaying ``records_dir`` here must be refused, else None.

    Configs tuned on one vendor's hardware say nothing about another's, and a
    silent cross-vendor replay would pin nonsense. A record without a readable
    meta.json cannot prove its backend, so it is refused too (zl always writes one).
    """
    records_dir = Path(records_dir)
    if not records_dir.is_dir():
        return ("replay_dir", (f"replay dir {records_dir} does not exist; point ZL_REPLAY_DIR at a "
                               f"recorded cell's {RECORDS_DIR}/ folder"))
    meta = read_meta(records_dir)
    if meta is None:
        return ("replay_backend", (f"no readable {META_NAME} in {records_dir}, so its backend is "
                                   "unknown; re-record the source cell"))
    recorded = str(meta.get("backend") or "").strip().lower()
    current = (current_backend or "").strip().lower()
    if not recorded:
        return ("replay_backend", f"{records_dir / META_NAME} names no backend; re-record the source cell")
    if recorded != current:
        return ("replay_backend", (f"recorded on backend={recorded}, this cell runs "
                                   f"backend={current or '<unset>'}; replay a record made on this backend"))
    return None


def preflight_line(check: str, detail: str) -> str:
    return f"PREFLIGHT_FAILED check={check} {detail}"


def fallback_line(kernel: str, key_json: str) -> str:
    return f"{FALLBACK_MARKER} kernel={kernel} key={key_json}"


class AutotuneRecorder:
    """What this process picked, per tuner and key; each change is written at once.

    Writing immediately (one small atomic file per tuner) keeps the record even
    when the process dies later; a new key only appears on the first, untimed
    call for that input, never inside a timed loop.
    """

    def __init__(self, records_dir: Path, *, autowrite: bool = True):
        self.records_dir = Path(records_dir)
        self.autowrite = autowrite
        self._tuners: dict[str, TunerId] = {}
        self._entries: dict[str, dict[str, dict]] = {}
        self._sweeps: dict[str, dict[str, list[dict]]] = {}
        self._dirty: set[str] = set()
        self.changed_picks = 0

    def observe(self, tuner: TunerId, key_json: str, config: Mapping,
                sweep: list[dict] | None = None) -> bool:
        """Note the config used for one key (and the sweep that picked it, when this
        process timed one); True when it is new or different."""
        entries = self._entries.setdefault(tuner.tuner, {})
        self._tuners[tuner.tuner] = tuner
        if sweep:
            self._sweeps.setdefault(tuner.tuner, {})[key_json] = list(sweep)
            self._dirty.add(tuner.tuner)
        old = entries.get(key_json)
        if old is not None and config_identity(old) == config_identity(config):
            return False  # a sweep noted with it is written at the next flush
        if old is not None:
            self.changed_picks += 1  # a later pick for the same key wins: it is what ran last
        entries[key_json] = dict(config)
        self._dirty.add(tuner.tuner)
        if self.autowrite:
            self.flush()
        return True

    def flush(self) -> list[Path]:
        written = []
        for name in sorted(self._dirty):
            tuner = self._tuners[name]
            sweeps = self._sweeps.get(name, {})
            entries = [{"key": k, "config": v, **({"sweep": sweeps[k]} if k in sweeps else {})}
                       for k, v in sorted(self._entries[name].items())]
            path = self.records_dir / tuner.file_name
            _atomic_write_json(path, {"schema": SCHEMA, "kernel": tuner.kernel, "tuner": tuner.tuner,
                                      "tuner_class": tuner.tuner_class, "entries": entries})
            written.append(path)
        self._dirty.clear()
        return written

    def recorded(self, tuner: str, key_json: str) -> dict | None:
        """The config noted for ``key_json`` of ``tuner`` (its id string), or None."""
        return self._entries.get(tuner, {}).get(key_json)

    @property
    def keys_recorded(self) -> int:
        return sum(len(e) for e in self._entries.values())

    @property
    def tuners(self) -> list[str]:
        return sorted(self._entries)


def read_records(records_dir: Path) -> dict[str, dict]:
    """Every tuner file in a records dir: tuner id -> {"kernel", "tuner_class", "entries":
    {key json: config}, "sweeps": {key json: [{"config", "ms"}, ...]}}."""
    out: dict[str, dict] = {}
    for path in sorted(Path(records_dir).glob("*.json")):
        if path.name == META_NAME:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a half-written file from a killed recorder: its keys fall back loudly
        if not isinstance(data, dict) or "tuner" not in data:
            continue
        entries = {str(e["key"]): e["config"] for e in data.get("entries", [])
                   if isinstance(e, dict) and "key" in e and isinstance(e.get("config"), dict)}
        sweeps = {str(e["key"]): e["sweep"] for e in data.get("entries", [])
                  if isinstance(e, dict) and "key" in e and isinstance(e.get("sweep"), list)}
        out[str(data["tuner"])] = {"kernel": str(data.get("kernel", "")),
                                   "tuner_class": str(data.get("tuner_class", "")), "entries": entries,
                                   "sweeps": sweeps}
    return out


class ReplayBook:
    """A source cell's records, looked up by tuner and key; misses are reported once."""

    def __init__(self, records: Mapping[str, Mapping]):
        self._records = {t: dict(r.get("entries", {})) for t, r in records.items()}
        by_kernel: dict[str, list[str]] = {}
        for tuner, rec in records.items():
            by_kernel.setdefault(str(rec.get("kernel", "")), []).append(tuner)
        # A tuner id can drift when a module is renamed; the plain kernel name is
        # used only when exactly one recorded tuner carries it.
        self._unique_kernel = {k: v[0] for k, v in by_kernel.items() if len(v) == 1}
        self._reported: set[tuple[str, str]] = set()
        self.pinned = 0
        self.fallbacks = 0

    @classmethod
    def load(cls, records_dir: Path, **kwargs: Any) -> ReplayBook:
        return cls(read_records(records_dir), **kwargs)

    def __len__(self) -> int:
        return sum(len(e) for e in self._records.values())

    def lookup(self, tuner: TunerId, key_json: str) -> dict | None:
        entries = self._records.get(tuner.tuner)
        if entries is None and tuner.kernel in self._unique_kernel:
            entries = self._records.get(self._unique_kernel[tuner.kernel])
        found = (entries or {}).get(key_json)
        if found is not None:
            self.pinned += 1
        return found

    def report_missing(self, tuner: TunerId, key_json: str) -> str | None:
        """The fallback marker line for this (kernel, key), or None when already reported.

        The caller prints it (the pytest plugin does so past output capture).
        """
        ident = (tuner.kernel, key_json)
        if ident in self._reported:
            return None
        self._reported.add(ident)
        self.fallbacks += 1
        return fallback_line(tuner.kernel, key_json)
