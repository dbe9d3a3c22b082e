"""A sealed campaign's manifest: the contract a reviewer reads, in YAML.

Every problem of a manifest is named at once (a reviewer fixes them together), each
with where it is (``workloads[2].dtypes``) and what is expected. Narrowing what a
workload measures (fewer dtypes than its benchmark offers) needs a stated reason, so
an exclusion stays visible in review.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import attrs

from zl_core.foundation.errors import BadInputError
from zl_core.foundation.small_files import read_small
from zl_core.interface.contract import L2_MODES, TIMING_PLANS

SCHEMA = 1
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
TIMERS = ("graph", "direct")
#: The keys a manifest may hold, and those a workload may hold.
KEYS = ("schema", "campaign", "claim", "suite", "sources", "backend", "device", "device_name",
        "compile_only", "target", "switch", "timer", "timing", "l2", "replay_ms", "level", "rounds", "max_rounds",
        "threshold_pct", "launch_floor", "gain_pct", "regression_pct", "timeout_s", "correctness",
        "control", "retuned", "workloads")
WORKLOAD_KEYS = ("op", "source", "op_file", "dtypes", "timeout_s", "reason", "correctness")
CORRECTNESS_KEYS = ("file", "select", "reason", "skip")
MAX_MANIFEST_BYTES = 1 << 20


class ManifestError(BadInputError):
    """Raised when a manifest cannot be frozen; ``problems`` names each thing wrong."""

    def __init__(self, path: Path, problems: list[str]):
        self.problems = tuple(problems)
        super().__init__(f"{path}: {len(problems)} problem(s) in the manifest; fix each "
                         "and freeze again")


@attrs.frozen(kw_only=True)
class SourceEntry:
    name: str
    path: Path  # absolute, resolved against the manifest's folder
    commit: str


@attrs.frozen(kw_only=True)
class Workload:
    op: str
    source: str | None = None
    op_file: str | None = None
    dtypes: tuple[str, ...] = ()
    timeout_s: float | None = None
    reason: str = ""  # why the workload is narrowed (dtypes chosen)
    #: Its accuracy tests when the manifest names them: the file, the pytest arguments that
    #: select the measured variant's tests, and why they were narrowed to those.
    check_file: str | None = None
    check_select: tuple[str, ...] = ()
    check_reason: str = ""
    check_skip: str = ""  # why this workload's accuracy tests are not run


@attrs.frozen(kw_only=True)
class Manifest:
    campaign: str
    claim: str
    suite: str
    sources: tuple[SourceEntry, ...]
    backend: str
    device: str | None
    device_name: str | None
    compile_only: bool
    target: str | None
    switch: str
    a_value: str
    b_value: str
    timer: str
    timing: str | None  # None: the command's default (a screen times the operator alone)
    l2: str | None  # None: the command's default (--l2)
    replay_ms: float
    level: str
    rounds: int | None  # None: adaptive up to max_rounds
    max_rounds: int
    threshold_pct: float
    launch_floor: int
    gain_pct: float  # class G: faster by at least this in both run orders
    regression_pct: float  # class R: slower by at least this in both run orders
    timeout_s: float
    correctness: bool  # each side runs the workloads' accuracy tests
    #: The control side: side B's environment with these variables added (the switch on,
    #: every phase it gates off); its TTGIR must equal side A's. () when there is none.
    control_env: tuple[tuple[str, str], ...]
    workloads: tuple[Workload, ...]
    #: Side R too (``zl ab --retuned``): side B's environment with its own autotune picks.
    retuned: bool = False


def load_manifest(path: Path) -> Manifest:
    """The manifest at ``path``, or ManifestError naming every problem."""
    import yaml

    path = Path(path)
    raw = read_small(path, MAX_MANIFEST_BYTES, what="manifest",
                     hint="give the path of a manifest YAML file (it lists workloads, not data)")
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BadInputError(f"manifest {path} cannot be read as UTF-8 YAML: "
                            f"{' '.join(str(exc).split())[:160]}") from None
    if not isinstance(data, dict):
        raise ManifestError(path, ["the manifest must be a mapping of keys (schema, campaign, ...)"])
    return _Reader(data, path.parent.resolve()).manifest(path)


class _Reader:
    """Reads each key once, noting every problem instead of stopping at the first."""

    def __init__(self, data: dict, base: Path):
        self.data, self.base = data, base
        self.problems: list[str] = []

    def manifest(self, path: Path) -> Manifest:
        d = self.data
        self.unknown("", d, KEYS, "manifest")
        if d.get("schema") != SCHEMA:
            self.problems.append(f"schema: must be {SCHEMA}, got {d.get('schema')!r}")
        campaign = self.name("campaign", d.get("campaign"))
        claim = self.text("claim", d.get("claim"))
        compile_only = self.flag("compile_only", d.get("compile_only", False))
        device = d.get("device")
        if compile_only:
            if device is not None:
                self.problems.append("device: an IR-only (compile_only) campaign names no device")
        elif device is None or not isinstance(device, (str, int)) or isinstance(device, bool):
            self.problems.append("device: the device id the cells run on (e.g. \"0\"), required")
        switch = d.get("switch")
        if not isinstance(switch, dict):
            switch = {}
            self.problems.append("switch: a mapping {name, a, b}")
        rounds = d.get("rounds", 6)
        if rounds != "auto":
            rounds = self.count("rounds", rounds, low=4)
        manifest = Manifest(
            campaign=campaign, claim=claim, suite=self.text("suite", d.get("suite")),
            sources=self.sources(d.get("sources", [])),
            backend=self.text("backend", d.get("backend")),
            device=None if device is None else str(device),
            device_name=self.optional_text("device_name", d.get("device_name")),
            compile_only=compile_only, target=self.optional_text("target", d.get("target")),
            switch=self.text("switch.name", switch.get("name")),
            a_value=self.text("switch.a", switch.get("a"), allow_empty=True),
            b_value=self.text("switch.b", switch.get("b"), allow_empty=True),
            timer=self.choice("timer", d.get("timer", "graph"), TIMERS),
            timing=None if d.get("timing") is None else self.choice("timing", d.get("timing"), TIMING_PLANS),
            l2=None if d.get("l2") is None else self.choice("l2", d.get("l2"), L2_MODES),
            replay_ms=self.number("replay_ms", d.get("replay_ms", 100.0)),
            level=self.text("level", d.get("level", "core")),
            rounds=None if rounds == "auto" else rounds,
            max_rounds=self.count("max_rounds", d.get("max_rounds", 12), low=4),
            threshold_pct=self.number("threshold_pct", d.get("threshold_pct", 1.0)),
            launch_floor=self.count("launch_floor", d.get("launch_floor", 4), low=0),
            gain_pct=self.number("gain_pct", d.get("gain_pct", 5.0)),
            regression_pct=self.number("regression_pct", d.get("regression_pct", 3.0)),
            timeout_s=self.number("timeout_s", d.get("timeout_s", 1200.0)),
            correctness=self.flag("correctness", d.get("correctness", True)),
            control_env=self.control(d.get("control")),
            workloads=self.workloads(d.get("workloads")),
            retuned=self.flag("retuned", d.get("retuned", False)))
        if self.problems:
            raise ManifestError(path, self.problems)
        return manifest

    def sources(self, value: object) -> tuple[SourceEntry, ...]:
        if not isinstance(value, list):
            self.problems.append("sources: a list of {name, path, commit}")
            return ()
        out, names = [], set()
        for i, item in enumerate(value):
            where = f"sources[{i}]"
            if not isinstance(item, dict) or set(item) - {"name", "path", "commit"}:
                self.problems.append(f"{where}: a mapping of name, path and commit")
                continue
            name = self.name(f"{where}.name", item.get("name"))
            if name in names:
                self.problems.append(f"{where}.name: {name!r} is named twice")
            names.add(name)
            commit = item.get("commit")
            if not isinstance(commit, str) or not COMMIT.match(commit):
                self.problems.append(f"{where}.commit: the checkout's 40-character lowercase git "
                                     f"commit, got {commit!r}")
            text = self.text(f"{where}.path", item.get("path"))
            out.append(SourceEntry(name=name, path=(self.base / Path(text).expanduser()).resolve()
                                   if text else self.base, commit=str(commit)))
        return tuple(out)

    def workloads(self, value: object) -> tuple[Workload, ...]:
        if not isinstance(value, list) or not value:
            self.problems.append("workloads: a non-empty list of {op, ...}")
            return ()
        out, seen = [], set()
        for i, item in enumerate(value):
            where = f"workloads[{i}]"
            if not isinstance(item, dict):
                self.problems.append(f"{where}: a mapping with at least op")
                continue
            self.unknown(f"{where}.", item, WORKLOAD_KEYS, "workload")
            dtypes, reason = self.narrowing(
                where, item, "dtypes", "a list of dtype names",
                lambda got: f"narrowing to dtypes {got} needs a stated reason, so the exclusion "
                            "stays visible in review")
            check = self.correctness(f"{where}.correctness", item.get("correctness", {}))
            workload = Workload(
                **check,
                op=self.name(f"{where}.op", item.get("op")),
                source=self.optional_text(f"{where}.source", item.get("source")),
                op_file=self.optional_text(f"{where}.op_file", item.get("op_file")),
                dtypes=tuple(dtypes),
                timeout_s=None if item.get("timeout_s") is None
                else self.number(f"{where}.timeout_s", item["timeout_s"]),
                reason=reason)
            key = (workload.source, workload.op, workload.op_file)
            if key in seen:
                self.problems.append(f"{where}: workload {workload.op} is listed twice")
            seen.add(key)
            out.append(workload)
        return tuple(out)

    def control(self, value: object) -> tuple[tuple[str, str], ...]:
        """``control: {env: {NAME: VALUE, ...}}``: what turns side B into the control side."""
        if value is None:
            return ()
        env = value.get("env") if isinstance(value, dict) else None
        if not isinstance(value, dict) or set(value) != {"env"} or not isinstance(env, dict) or not env:
            self.problems.append("control: a mapping {env: {NAME: VALUE, ...}}: the variables that "
                                 "keep the switch on with every phase it gates off")
            return ()
        pairs = []
        for name, val in env.items():
            if not isinstance(name, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
                self.problems.append(f"control.env: {name!r} is not a variable name")
                continue
            pairs.append((name, self.text(f"control.env.{name}", val, allow_empty=True)))
        return tuple(pairs)

    def correctness(self, where: str, value: object) -> dict:
        """A workload's ``correctness: {file, select, reason}`` or ``{skip: reason}``."""
        if not isinstance(value, dict):
            self.problems.append(f"{where}: a mapping of {', '.join(CORRECTNESS_KEYS)}")
            return {}
        self.unknown(f"{where}.", value, CORRECTNESS_KEYS, "correctness")
        if "skip" in value:
            if set(value) - {"skip"}:
                self.problems.append(f"{where}: skip goes alone (its tests are not run)")
            return {"check_skip": self.text(f"{where}.skip", value.get("skip"))}
        select, reason = self.narrowing(
            where, value, "select", "a list of pytest arguments (\"-k\", \"EXPR\", or node ids)",
            lambda got: f"selecting {got} narrows the tests to a variant; say why, so the "
                        "narrowing stays visible in review")
        return {"check_file": self.optional_text(f"{where}.file", value.get("file")),
                "check_select": tuple(select),
                "check_reason": reason}

    def unknown(self, prefix: str, given: dict, known: tuple[str, ...], what: str) -> None:
        for key in sorted(set(given) - set(known), key=str):
            self.problems.append(f"{prefix}{key}: not a {what} key (known: {', '.join(known)})")

    def narrowing(self, where: str, given: dict, key: str, expected: str, why_needed) -> tuple[list, str]:
        """``given[key]`` (a list of non-empty strings) and ``given["reason"]``; a list
        without a reason is a problem: what a workload leaves out must say why."""
        values = given.get(key, [])
        if not isinstance(values, list) or not all(isinstance(x, str) and x for x in values):
            self.problems.append(f"{where}.{key}: {expected}")
            values = []
        reason = given.get("reason", "")
        if values and (not isinstance(reason, str) or not reason.strip()):
            self.problems.append(f"{where}.reason: {why_needed(values)}")
        return values, reason.strip() if isinstance(reason, str) else ""

    # -- one value each -------------------------------------------------------

    def text(self, where: str, value: object, *, allow_empty: bool = False) -> str:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)  # a switch value such as 0 or 1, written without quotes
        if not isinstance(value, str) or (not value.strip() and not allow_empty):
            self.problems.append(f"{where}: a non-empty string, got {value!r}")
            return ""
        return value.strip()

    def optional_text(self, where: str, value: object) -> str | None:
        return None if value is None else self.text(where, value)

    def name(self, where: str, value: object) -> str:
        if not isinstance(value, str) or not NAME.match(value):
            self.problems.append(f"{where}: letters, digits, '.', '_' or '-', at most 64, "
                                 f"got {value!r}")
            return str(value)
        return value

    def flag(self, where: str, value: object) -> bool:
        if not isinstance(value, bool):
            self.problems.append(f"{where}: true or false, got {value!r}")
            return False
        return value

    def choice(self, where: str, value: object, choices: tuple[str, ...]) -> str:
        if value not in choices:
            self.problems.append(f"{where}: one of {', '.join(choices)}, got {value!r}")
            return choices[0]
        return str(value)

    def number(self, where: str, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            self.problems.append(f"{where}: a number > 0, got {value!r}")
            return 1.0
        return float(value)

    def count(self, where: str, value: object, *, low: int) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 1000:
            self.problems.append(f"{where}: a whole number from {low} to 1000, got {value!r}")
            return max(low, 1)
        return value
