"""A sealed campaign's frozen task matrix (``matrix.json``) as a frozen record.

The matrix is bound by SHA-256 as zl freeze wrote it, so the record keeps every key as
written (a read-only mapping: what :mod:`.preconditions` compares key by key with the
manifest) and gives typed what the commands run from it: the suite, backend and device,
the switch, how cells measure, the rounds and the tasks. A matrix frozen before a key
existed reads that key as absent (None), and the command's default applies.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import attrs

from zl_core.interface.provider import CheckSpec


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _float(value: object, default: float = 0.0) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def _digests(value: object) -> dict[str, str | None]:
    """Files by SHA-256 (None: a file that could not be read)."""
    return {str(k): None if v is None else str(v) for k, v in _mapping(value).items()}


def _frozen_fields(data: Mapping[str, object]) -> dict[str, object]:
    return dict(data)


@attrs.frozen
class FrozenTask(Mapping[str, object]):
    """One workload of the matrix: an operator of one source, its dtypes, timeout, the
    files bound to it and its accuracy tests."""

    fields: Mapping[str, object] = attrs.field(converter=_frozen_fields)

    def __getitem__(self, key: str) -> object:
        return self.fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    @property
    def ordinal(self) -> int:
        return int(_float(self.fields.get("ordinal")))

    @property
    def op(self) -> str:
        return str(self.fields.get("op") or "")

    @property
    def op_file(self) -> str:
        return str(self.fields.get("op_file") or "")

    @property
    def source(self) -> str | None:
        """The source's name (None: the manifest named none)."""
        return _text(self.fields.get("source"))

    @property
    def dtypes(self) -> tuple[str, ...]:
        value = self.fields.get("dtypes")
        return tuple(str(d) for d in value) if isinstance(value, list | tuple) else ()

    @property
    def timeout_s(self) -> float:
        return _float(self.fields.get("timeout_s"))

    @property
    def reason(self) -> str | None:
        return _text(self.fields.get("reason")) or None

    @property
    def files(self) -> dict[str, str | None]:
        """Each bound file (as shown) by SHA-256."""
        return _digests(self.fields.get("files"))

    @property
    def check(self) -> CheckSpec | None:
        """The accuracy tests the task runs after its rounds (None: none)."""
        check = self.fields.get("check")
        if not isinstance(check, Mapping):
            return None
        select = check.get("select")
        return CheckSpec(file=str(check.get("file")),
                         select=tuple(str(s) for s in select) if isinstance(select, list | tuple) else ())

    @property
    def check_tests(self) -> int | None:
        """How many tests the selection collected when frozen (None: unknown)."""
        value = self.fields.get("check_tests")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def check_why(self) -> str | None:
        return _text(self.fields.get("check_why")) or None


@attrs.frozen
class FrozenMatrix(Mapping[str, object]):
    """What a sealed campaign runs, as ``matrix.json`` holds it."""

    fields: Mapping[str, object] = attrs.field(converter=_frozen_fields)

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> FrozenMatrix:
        return cls(data)

    def to_json(self) -> dict[str, object]:
        return dict(self.fields)

    def __getitem__(self, key: str) -> object:
        return self.fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    # -- where it runs -------------------------------------------------------------------
    @property
    def campaign(self) -> str:
        return str(self.fields.get("campaign") or "")

    @property
    def suite(self) -> str:
        return str(self.fields.get("suite") or "")

    @property
    def backend(self) -> str:
        return str(self.fields.get("backend") or "")

    @property
    def device(self) -> str | None:
        return _text(self.fields.get("device"))

    @property
    def python(self) -> str | None:
        """The interpreter the cells run (the one zl freeze checked)."""
        return _text(self.fields.get("python"))

    @property
    def compile_only(self) -> bool:
        return bool(self.fields.get("compile_only"))

    @property
    def target(self) -> str | None:
        return _text(self.fields.get("target"))

    @property
    def sources(self) -> tuple[Mapping[str, object], ...]:
        """Each checkout: ``name``, ``path`` and the ``commit`` it was frozen at."""
        value = self.fields.get("sources")
        return tuple(_mapping(s) for s in value) if isinstance(value, list | tuple) else ()

    @property
    def imports(self) -> Mapping[str, object]:
        """Where the cells' interpreter imports each frozen module from."""
        return _mapping(self.fields.get("imports"))

    @property
    def zl_version(self) -> str:
        return str(_mapping(self.fields.get("zl")).get("version"))

    @property
    def zl_files(self) -> dict[str, str | None]:
        """zl's own files by SHA-256, as frozen."""
        return _digests(_mapping(self.fields.get("zl")).get("files"))

    @property
    def zl_files_sha256(self) -> str:
        return str(_mapping(self.fields.get("zl")).get("files_sha256"))

    # -- what the sides differ in ----------------------------------------------------------
    @property
    def switch(self) -> tuple[str, str, str]:
        """(name, side A's value, side B's value)."""
        switch = _mapping(self.fields.get("switch"))
        return str(switch.get("name")), str(switch.get("a")), str(switch.get("b"))

    @property
    def control_env(self) -> tuple[tuple[str, str], ...]:
        """The control side's variables (() where the campaign has none)."""
        env = _mapping(_mapping(self.fields.get("control")).get("env"))
        return tuple((str(k), str(v)) for k, v in env.items())

    # -- how cells measure and how many rounds -------------------------------------------
    @property
    def measure(self) -> Mapping[str, object]:
        """``timer``, ``replay_ms``, ``level``, ``timeout_s``, and ``timing`` and ``l2``
        where the manifest set them."""
        return _mapping(self.fields.get("measure"))

    @property
    def timer(self) -> str:
        return str(self.measure.get("timer"))

    @property
    def replay_ms(self) -> float:
        return _float(self.measure.get("replay_ms"))

    @property
    def level(self) -> str:
        return str(self.measure.get("level"))

    @property
    def timing(self) -> str | None:
        """None in a matrix frozen before the key, or without it: the command's default."""
        return _text(self.measure.get("timing")) or None

    @property
    def l2(self) -> str | None:
        """None in a matrix frozen before the key, or without it: the command's default."""
        return _text(self.measure.get("l2")) or None

    @property
    def timeout_s(self) -> float:
        return _float(self.measure.get("timeout_s"))

    @property
    def rounds(self) -> int | None:
        """The fixed rounds (None: adaptive, ``auto``)."""
        rounds = self.fields.get("rounds")
        return rounds if isinstance(rounds, int) and not isinstance(rounds, bool) else None

    @property
    def max_rounds(self) -> int:
        return int(_float(self.fields.get("max_rounds")))

    @property
    def threshold_pct(self) -> float:
        return _float(self.fields.get("threshold_pct"))

    @property
    def retuned(self) -> bool:
        """Whether the campaign runs side R beside A and B (a matrix frozen before the key: no)."""
        return self.fields.get("retuned") is True

    # -- the classes' rule (zl_core.seal.classes) -----------------------------------------
    @property
    def launch_floor(self) -> int:
        return int(_float(self.fields.get("launch_floor")))

    @property
    def gain_pct(self) -> float:
        return _float(self.fields.get("gain_pct"), 5.0)  # a matrix frozen before the key: the rule's

    @property
    def regression_pct(self) -> float:
        return _float(self.fields.get("regression_pct"), 3.0)

    @property
    def correctness(self) -> bool:
        return bool(self.fields.get("correctness"))

    @property
    def tasks(self) -> tuple[FrozenTask, ...]:
        value = self.fields.get("tasks")
        return tuple(FrozenTask(_mapping(t)) for t in value) if isinstance(value, list | tuple) else ()
