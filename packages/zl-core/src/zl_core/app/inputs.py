"""Bad input, found before any cell runs and before anything is written.

Each check raises one :mod:`zl_core.foundation.errors` error whose one-line message names
what is wrong and what to do: a runs root zl cannot write campaigns into, an
operator or dtype the suite does not offer, a broken checkout (exit 3, as its
cells' preflight would say), an adaptive round budget too small to look even once.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from zl_core.campaigns.judging import MIN_LOOK_ROUNDS
from zl_core.foundation.errors import BadInputError, ResultsUnwritableError, UsageError
from zl_core.interface.opspec import OpSpec, dtype_problem
from zl_core.interface.provider import Provider
from zl_core.store.layout import enclosing_campaign

#: Filesystems that hold no files of their own: a campaign there cannot be kept.
VIRTUAL_ROOTS = ("/proc", "/sys", "/dev")
#: The fewest rounds a verdict can come from: two with each side first (zl_core.stats).
MIN_ROUNDS = MIN_LOOK_ROUNDS
_WHERE = "pass --runs-root DIR (or set ZL_RUNS_ROOT) to a writable folder on a real disk"


RUNS_ROOT_ENV = "ZL_RUNS_ROOT"


def runs_root(value: Path | None) -> Path:
    """The runs root, refused (one line, exit 2) where no campaign can be written."""
    given = Path(value or os.environ.get(RUNS_ROOT_ENV) or "runs").expanduser()
    try:
        resolved = given.resolve()
    except (RuntimeError, OSError) as exc:  # a loop of symbolic links (RuntimeError up to 3.12)
        raise UsageError(f"runs root {given} cannot be resolved ({exc}); a symbolic link on its way "
                         "leads in a loop: fix the links, or pass --runs-root elsewhere") from None
    return check_runs_root(resolved)


def check_runs_root(root: Path) -> Path:
    """``root`` if campaigns can be created under it; nothing is created here."""
    root = Path(root)
    for virtual in VIRTUAL_ROOTS:
        if root == Path(virtual) or Path(virtual) in root.parents:
            raise BadInputError(f"runs root {root} is under {virtual}, which holds no files of "
                                f"its own; {_WHERE}")
    existing = root
    while not os.path.lexists(existing) and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        what = "is a file" if existing == root else f"is under {existing}, which is a file"
        raise BadInputError(f"runs root {root} {what}, not a folder; {_WHERE}")
    try:
        read_only = bool(os.statvfs(existing).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False  # safe: a read-only root still fails, naming itself, at the first write
    if read_only:
        raise BadInputError(f"runs root {root} is on a read-only filesystem ({existing}); {_WHERE}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise BadInputError(f"runs root {root} cannot be written by this user ({existing} is not "
                            f"writable); {_WHERE}")
    return root


def check_rounds(rounds: int | None, max_rounds: int) -> None:
    """A campaign must be able to reach a verdict: ``rounds`` None is adaptive, and its
    budget must reach the first look; a fixed campaign needs the rounds of one look."""
    if rounds is None and max_rounds < MIN_ROUNDS:
        raise UsageError(f"--rounds auto --max-rounds {max_rounds}: an adaptive campaign first "
                         f"looks at round {MIN_ROUNDS}; pass --max-rounds {MIN_ROUNDS} or more, "
                         "or a fixed --rounds N")
    if rounds is not None and rounds < MIN_ROUNDS:
        raise UsageError(f"--rounds {rounds}: a verdict needs at least {MIN_ROUNDS} rounds, two with "
                         f"each side first, so that no single process decides it; pass --rounds "
                         f"{MIN_ROUNDS} or more (the default, 8, calls most 1-3% effects)")


def check_ops_offered(provider: Provider, source: str | None, ops: Sequence[OpSpec], *,
                      source_names: Sequence[str] = ()) -> None:
    """Every operator (with its file) and dtype is one the suite offers; ``source_names``
    (a campaign of several sources) go into the hint for an unknown operator.

    A provider that lists no operators at all is left to its cells' preflight.
    """
    offered = provider.list_ops(source)
    if not offered:
        return
    # Spelled as op specs spell them (a listing may say test_add.py for add).
    by_pair = {(o.op, _stem(o.op_file)): o for o in offered}
    names = sorted({o.op for o in offered})
    choices = provider.dtype_choices(source) if any(op.dtypes for op in ops) else ()
    for op in ops:
        info = by_pair.get((op.function, _stem(op.op_file)))
        if info is None:
            raise BadInputError(_unknown(provider, op, offered, names, source_names))
        for dtype in op.dtypes:
            problem = dtype_problem(op.op, dtype, runs=info.dtypes, choices=choices,
                                    suite=provider.name)
            if problem:
                raise BadInputError(problem)


def check_dtypes_offered(provider: Provider, source: str | None, op: OpSpec) -> None:
    """``op``'s dtypes, where the suite lists ``op`` (an operator it does not list is left
    to the cell's preflight, which names the files near it)."""
    if not op.dtypes:
        return
    info = next((o for o in provider.list_ops(source)
                 if (o.op, _stem(o.op_file)) == (op.function, _stem(op.op_file))), None)
    if info is None:
        return
    choices = provider.dtype_choices(source)
    for dtype in op.dtypes:
        problem = dtype_problem(op.op, dtype, runs=info.dtypes, choices=choices, suite=provider.name)
        if problem:
            raise BadInputError(problem)


def _stem(op_file: str) -> str:
    return op_file.removeprefix("test_").removesuffix(".py")


def _unknown(provider: Provider, op: OpSpec, offered, names: list[str],
             source_names: Sequence[str]) -> str:
    files = sorted({_stem(o.op_file) for o in offered if o.op == op.function})
    if files:
        prefix = f"{op.source}:" if op.source else ""
        # A function several files define is named with its file (op@file), else op:file.
        joint = "@" if len(files) > 1 else ":"
        specs = ", ".join(f"{prefix}{op.function}{joint}{f}" for f in files[:3])
        return (f"operator {op.op} is not in the {provider.name} suite's benchmark file "
                f"{op.op_file!r}; it is defined in {', '.join(files[:3])} (spec {specs})")
    close = difflib.get_close_matches(op.function, names, n=3, cutoff=0.6)
    hint = f"; close names: {', '.join(close)}" if close else ""
    where = f" (source {op.source or source_names[0]})" if len(source_names) > 1 else ""
    others = (f"; the sources are {', '.join(source_names)}, another's operators are "
              f"NAME:op" if len(source_names) > 1 else "")
    return (f"unknown operator {op.op!r} in the {provider.name} suite{where}{hint}{others}; "
            f"'zl ops' lists the {len(offered)} it offers")


def _own_campaign(root: Path) -> Path | None:
    """The campaign under ``root`` this process was running (its campaign.json says so)."""
    import json

    for path in sorted(Path(root).glob("*_*/campaign.json")):
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # written atomically: a torn one is not this process's
            continue
        if isinstance(meta, dict) and meta.get("pid") == os.getpid():
            return path.parent
    return None


@contextlib.contextmanager
def results_written_under(root: Path, command: str) -> Iterator[None]:
    """A campaign's own writes failing (a full disk, a folder removed under it) end
    it on one line naming the runs root and how to go on, exit 6; what was written stays."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        what = exc.strerror or type(exc).__name__
        where = f" ({exc.filename})" if exc.filename else ""
        # The campaign whose file failed (a resumed one may lie under another runs root).
        campaign = (enclosing_campaign(Path(exc.filename)) if exc.filename else None) or _own_campaign(root)
        base = campaign.parent if campaign is not None else root
        fix = _REMEDY.get(exc.errno, "fix that folder") if exc.errno is not None else "fix that folder"
        then = (f"then continue it with {command} --resume {campaign} (its finished cells are kept)"
                if campaign is not None and exc.errno != errno.ENAMETOOLONG else f"then run {command} again")
        raise ResultsUnwritableError(
            f"cannot write the campaign under {base}: {what}{where}; {fix}, {then}, "
            "or pass --runs-root elsewhere") from None


#: What to do about the runs root, by the error its write met.
_REMEDY = {errno.ENOSPC: "free space there", errno.EDQUOT: "free space there (a quota is full)",
           errno.EROFS: "its file system is mounted read-only: make it writable",
           errno.EACCES: "this user cannot write there: fix its permissions",
           errno.EPERM: "this user cannot write there: fix its permissions",
           errno.ENAMETOOLONG: "a path under it is too long for its file system: choose a shorter runs root"}
