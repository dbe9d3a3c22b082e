"""The background telemetry sampler of a campaign: ``telemetry.tsv`` while cells run."""

from __future__ import annotations

import threading
from pathlib import Path

from zl_core.foundation.backend import Backend
from zl_core.foundation.stamps import utc_stamp
from zl_core.plugins.host import PluginHost
from zl_core.store.layout import TELEMETRY_TSV_COLUMNS as TELEMETRY_COLUMNS


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
        from zl_core.plugins.telemetry import passed_over

        # Asked up front, so that a vendor library that cannot sample (NVML without a
        # driver) is named once, as the campaign starts, before its tool takes over.
        reading = self.host.sample_telemetry(self.backend, self.device)
        command = self.host.telemetry_command(self.backend, self.device)
        if reading is None and command is None:
            self.note = f"telemetry: backend {self.backend.name} declares no sampler"
            return
        if passed_over(reading, command):
            self.note = f"telemetry: {passed_over(reading, command)}"
        self._thread = threading.Thread(target=self._loop, name="zl-telemetry", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        from zl_core.plugins.telemetry import take_sample

        with open(self.path, "a", encoding="utf-8") as fh:
            if fh.tell() == 0:
                fh.write("\t".join(TELEMETRY_COLUMNS) + "\n")
            while not self._stop.is_set():
                stamp = utc_stamp()
                sample = take_sample(self.host, self.backend, self.device)
                rows, reason = sample.rows, sample.reason
                if rows:
                    fh.writelines("\t".join([stamp, *(row.get(c, "") for c in TELEMETRY_COLUMNS[1:])]) + "\n" for row in rows)
                    self.samples += len(rows)
                    fh.flush()
                elif reason and not self.note:
                    self.note = f"telemetry: {reason}"
                self._stop.wait(self.interval_s)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=15)
