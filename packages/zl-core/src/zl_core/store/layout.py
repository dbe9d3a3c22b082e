"""Where the files of a campaign live; the one place that spells the folder layout.

::

    <runs root>/<kind>_<switch>_<stamp>/      a campaign
        campaign.json  status.tsv  telemetry.tsv  screen.tsv  screen.json  report.json
        summary.csv                           every measured row, written at the end
        <op>/A  <op>/B                        a screen's pair (round 0)
        <op>/r01/A  <op>/r01/B  <op>/r02/...  an A/B campaign's rounds
        <op>/rNN/R  <op>/r01/A2               a re-tuned campaign's side R, A's second record

    <cell>/                                   one cell (CellLayout)
        run.log  run_identity.json  results.json  autotune_records/  ttgir/index.tsv

The campaign engine writes through these objects and the report reads through them.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from zl_core.foundation.backend import TELEMETRY_COLUMNS
from zl_core.foundation.stamps import folder_stamp
from zl_core.interface.caliber import IDENTITY_NAME
from zl_core.interface.contract import AUTOTUNE_RECORDS_DIR, COMPILE_CACHES
from zl_core.interface.rows import LOG_NAME, RESULTS_NAME
from zl_core.interface.ttgir_layout import INDEX_NAME, TTGIR_DIR, safe_component

CAMPAIGN_FILE = "campaign.json"
CHECK_DIR = "check"  # an operator's accuracy-test cells, one per side
STATUS_FILE = "status.tsv"
TELEMETRY_FILE = "telemetry.tsv"
#: telemetry.tsv's columns: when, then one device's sample.
TELEMETRY_TSV_COLUMNS = ("timestamp", *TELEMETRY_COLUMNS)
SCREEN_TSV = "screen.tsv"
SCREEN_JSON = "screen.json"
REPORT_JSON = "report.json"
SUMMARY_CSV = "summary.csv"
SIDES = ("A", "B")
#: A re-tuned campaign's third side (``zl ab --retuned``): side B's environment with its
#: own autotune picks, recorded in its round 1 and replayed in its later rounds.
RETUNED = "R"
#: Side A recording its picks a second time (``<op>/r01/A2``, a re-tuned campaign's):
#: how often they reproduce is what a changed pick is read against.
REPICK = "A2"
_ROUND_DIR = re.compile(r"^r(\d+)$")


def enclosing_campaign(path: Path) -> Path | None:
    """The campaign folder ``path`` lies in (or is), if any: the nearest folder at or
    above it that holds a campaign.json."""
    here = Path(path).expanduser().absolute()
    for folder in (here, *here.parents):
        if (folder / CAMPAIGN_FILE).is_file():
            return folder
    return None


def round_name(round_no: int) -> str:
    """The folder (and label) of an A/B round: ``r01``, ``r02``, ..."""
    return f"r{int(round_no):02d}"


def parse_round(name: str) -> int | None:
    """The round number of a round folder's name, None for any other name."""
    m = _ROUND_DIR.match(name)
    return int(m.group(1)) if m else None


def op_dir_of(cell_dir: Path) -> Path:
    """The operator folder a cell folder belongs to: ``<op>/<side>`` or ``<op>/rNN/<side>``."""
    parent = Path(cell_dir).parent
    return parent.parent if parse_round(parent.name) is not None else parent


def op_folder(op: str) -> str:
    """The folder of an operator: its name, with a source prefix's ``:`` spelled ``+``
    (``vllm:fused_moe`` -> ``vllm+fused_moe``) so no relative link reads it as a scheme."""
    return op.replace(":", "+")


def op_of_folder(name: str) -> str:
    """The operator a folder holds (the inverse of :func:`op_folder`)."""
    return name.replace("+", ":")


def cell_label(op: str, side: str, round_no: int = 0) -> str:
    """How reports name a cell: ``op r01/A`` in a rounds campaign, ``op A`` in a screen."""
    return f"{op} {round_name(round_no)}/{side}" if round_no else f"{op} {side}"


@attrs.frozen
class CellLayout:
    """The files of one cell folder. Their names are the cell contract's, spelled where
    the cell's writers live (``caliber``, ``rows``, ``ttgir_layout``, ``contract``)."""

    root: Path = attrs.field(converter=Path)

    @property
    def log(self) -> Path:
        """Everything the cell process printed."""
        return self.root / LOG_NAME

    @property
    def identity(self) -> Path:
        """``run_identity.json``: the conditions the cell ran under (``caliber``)."""
        return self.root / IDENTITY_NAME

    @property
    def results(self) -> Path:
        """zl's own rows (``rows``); a cell without it is read by its provider."""
        return self.root / RESULTS_NAME

    @property
    def autotune_records(self) -> Path:
        """A recording cell's autotune picks, which the other cells replay."""
        return self.root / AUTOTUNE_RECORDS_DIR

    @property
    def ttgir(self) -> Path:
        """The TTGIR dump (``ttgir_layout``)."""
        return self.root / TTGIR_DIR

    @property
    def ttgir_index(self) -> Path:
        return self.ttgir / INDEX_NAME

    def wrote(self) -> bool:
        """Whether a cell wrote into this folder (it holds a log, an identity or rows)."""
        return any(path.is_file() for path in (self.identity, self.results, self.log))


@attrs.frozen
class CampaignLayout:
    """The folders and files of one campaign rooted at ``root``."""

    root: Path = attrs.field(converter=Path)

    @classmethod
    def create(cls, runs_root: Path, kind: str, switch: str) -> CampaignLayout:
        """A new, empty campaign folder ``<kind>_<switch>_<stamp>`` (``.2``, ... if taken)."""
        stamp = folder_stamp()
        base = Path(runs_root) / f"{kind}_{safe_component(switch)}_{stamp}"
        path, n = base, 1
        while path.exists():
            n += 1
            path = base.with_name(f"{base.name}.{n}")
        path.mkdir(parents=True)
        return cls(path)

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def campaign_file(self) -> Path:
        return self.root / CAMPAIGN_FILE

    @property
    def status_file(self) -> Path:
        return self.root / STATUS_FILE

    @property
    def telemetry_file(self) -> Path:
        return self.root / TELEMETRY_FILE

    @property
    def screen_tsv(self) -> Path:
        return self.root / SCREEN_TSV

    @property
    def screen_json(self) -> Path:
        return self.root / SCREEN_JSON

    @property
    def report_json(self) -> Path:
        return self.root / REPORT_JSON

    @property
    def summary_csv(self) -> Path:
        return self.root / SUMMARY_CSV

    def op_dir(self, op: str) -> Path:
        return self.root / op_folder(op)

    def check_dir(self, op: str, side: str) -> Path:
        """Where a side's accuracy tests of ``op`` ran: ``<op>/check/<side>``."""
        return self.op_dir(op) / CHECK_DIR / side

    def compile_caches(self, op: str) -> Path:
        """The folder of ``op``'s sides' Triton caches (:meth:`compile_cache`)."""
        return self.root / COMPILE_CACHES / op_folder(op)

    def compile_cache(self, op: str, side: str) -> Path:
        """Side ``side``'s Triton cache for ``op``'s cells, kept across its rounds."""
        return self.compile_caches(op) / side

    def round_dir(self, op: str, round_no: int) -> Path:
        return self.op_dir(op) / round_name(round_no)

    def cell_dir(self, op: str, side: str, round_no: int = 0) -> Path:
        """A cell's folder: ``<op>/<side>`` for a screen (round 0), else ``<op>/rNN/<side>``."""
        base = self.round_dir(op, round_no) if round_no else self.op_dir(op)
        return base / side

    def cell(self, op: str, side: str, round_no: int = 0) -> CellLayout:
        """A cell's files (:meth:`cell_dir`)."""
        return CellLayout(self.cell_dir(op, side, round_no))

    def rounds_on_disk(self, op: str, sides: tuple[str, ...] = SIDES) -> dict[int, frozenset[str]]:
        """The round folders of ``op`` and which of ``sides`` each holds."""
        found: dict[int, frozenset[str]] = {}
        op_dir = self.op_dir(op)
        if not op_dir.is_dir():
            return found
        for child in op_dir.iterdir():
            round_no = parse_round(child.name)
            if round_no is not None and child.is_dir():
                found[round_no] = frozenset(s for s in sides if (child / s).is_dir())
        return found

    def relative(self, path: Path) -> str:
        """``path`` relative to the campaign (as status.tsv names cells)."""
        return str(Path(path).resolve().relative_to(self.root.resolve()))
