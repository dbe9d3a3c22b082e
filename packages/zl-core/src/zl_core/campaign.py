"""What screen and A/B campaigns share: the campaign folder, its description,
progress output, and the background telemetry sampler."""

from __future__ import annotations

import json
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import attrs

from zl_core.backend import Backend
from zl_core.errors import BadInputError
from zl_core.host import PluginHost
from zl_core.opspec import OpSpec
from zl_core.provider import CellRequest, Provider
from zl_core.switches import Sides
from zl_core.ttgir_layout import safe_component

CAMPAIGN_NAME = "campaign.json"
TELEMETRY_NAME = "telemetry.tsv"
TELEMETRY_HEADER = ("timestamp", "index", "sm_clock_mhz", "mem_clock_mhz", "temp_c", "power_w", "util_pct")


@attrs.frozen(kw_only=True)
class CellSettings:
    """The measurement settings every cell of a campaign shares (its caliber)."""

    python: str
    source: str | None
    shape_file: Path | None
    shapes: str
    level: str
    timer: str
    direct_repeat: int
    isolate_tuner_cache: bool
    timeout_s: float
    compile_only: bool
    target: str | None

    def request(self, *, op: OpSpec, backend: Backend, device: str | None, out_dir: Path,
                env: dict[str, str], side: str, autotune_mode: str,
                replay_from: Path | None) -> CellRequest:
        if self.compile_only:
            # Compile-only cells compile every config; nothing is tuned to pin.
            autotune_mode, replay_from = "none", None
        return CellRequest(op=op, backend=backend, out_dir=out_dir, python=self.python,
                           device=device, source=self.source, shape_file=self.shape_file,
                           shapes=self.shapes, level=self.level, autotune_mode=autotune_mode,
                           replay_from=replay_from, timer=self.timer,
                           direct_repeat=self.direct_repeat,
                           isolate_tuner_cache=self.isolate_tuner_cache, env=env,
                           timeout_s=self.timeout_s, compile_only=self.compile_only,
                           target=self.target, side=side)


def new_campaign_dir(root: Path, kind: str, switch: str) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{kind}_{safe_component(switch)}_{stamp}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}.{n}")
    path.mkdir(parents=True)
    return path


def write_campaign(path: Path, *, kind: str, sides: Sides, backend: Backend, provider: Provider,
                   settings: CellSettings, ops: list[OpSpec], device: str | None,
                   **extra: object) -> dict:
    data = {
        "schema": 1, "kind": kind, **sides.to_json(), "backend": backend.name,
        "device": device, "suite": provider.name, "source": settings.source,
        "ops": [str(o) for o in ops], "compile_only": settings.compile_only,
        "target": settings.target, "level": settings.level, "timer": settings.timer,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **extra,
    }
    tmp = path / (CAMPAIGN_NAME + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path / CAMPAIGN_NAME)
    return data


def read_campaign(path: Path) -> dict:
    file = Path(path) / CAMPAIGN_NAME
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadInputError(f"cannot read {file}: {exc.strerror}; is {path} a campaign folder?") from None
    except ValueError as exc:
        raise BadInputError(f"corrupt {file}: {exc}") from None
    if not isinstance(data, dict) or "kind" not in data:
        raise BadInputError(f"corrupt {file}: no 'kind'")
    return data


class Progress:
    """A progress display on a terminal, plain lines otherwise."""

    def __init__(self, total: int, title: str, *, stream=None) -> None:
        self._stream = stream or sys.stdout
        self._rich = None
        self.total = total
        self.done = 0
        if hasattr(self._stream, "isatty") and self._stream.isatty():
            try:
                from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
                from rich.progress import Progress as RichProgress

                self._rich = RichProgress(TextColumn("{task.description}"), BarColumn(),
                                          TextColumn("{task.completed}/{task.total} cells"),
                                          TimeElapsedColumn(), transient=False)
                self._task = self._rich.add_task(title, total=total)
                self._rich.start()
            except Exception:  # noqa: BLE001 - no rich, or not a real terminal: plain lines
                self._rich = None
        if self._rich is None:
            self.line(f"{title}: {total} cells planned")

    def line(self, text: str) -> None:
        if self._rich is not None:
            self._rich.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self._stream, flush=True)

    def advance(self, text: str) -> None:
        self.done += 1
        if self._rich is not None:
            self._rich.update(self._task, advance=1)
            self._rich.console.print(text, markup=False, highlight=False)
        else:
            self.line(f"[{self.done}/{self.total}] {text}")

    def grow(self, n: int) -> None:
        self.total += n
        if self._rich is not None:
            self._rich.update(self._task, total=self.total)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()


class TelemetrySampler:
    """Samples the backend's telemetry into ``telemetry.tsv`` in a background thread.

    A missing or failing sampler is a quiet note, never a failure: no telemetry is
    missing evidence, not a reason to stop measuring.
    """

    def __init__(self, host: PluginHost, backend: Backend, device: str | None, path: Path,
                 interval_s: float) -> None:
        self.host, self.backend, self.device = host, backend, device
        self.path, self.interval_s = Path(path), interval_s
        self.note = ""
        self.samples = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.interval_s <= 0:
            self.note = "telemetry off (--telemetry-interval 0)"
            return
        if self.host.telemetry_command(self.backend, self.device) is None:
            self.note = f"telemetry: backend {self.backend.name} declares no sampler"
            return
        self._thread = threading.Thread(target=self._loop, name="zl-telemetry", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        from zl_core.telemetry import sample_once

        with open(self.path, "a", encoding="utf-8") as fh:
            if fh.tell() == 0:
                fh.write("\t".join(TELEMETRY_HEADER) + "\n")
            while not self._stop.is_set():
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                rows, reason = sample_once(self.host, self.backend, self.device)
                if rows:
                    fh.writelines("\t".join([stamp, *(row.get(c, "") for c in TELEMETRY_HEADER[1:])]) + "\n" for row in rows)
                    self.samples += len(rows)
                    fh.flush()
                elif reason and not self.note:
                    self.note = f"telemetry: {reason}"
                self._stop.wait(self.interval_s)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=15)
