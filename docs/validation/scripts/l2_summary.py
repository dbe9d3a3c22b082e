"""The tables of docs/validation/2026-12-07-l2-flush.md from the run's files.

    python3 l2_summary.py DATA_DIR

DATA_DIR holds ``direct.jsonl`` (l2_direct.py's lines) and ``campaigns.tgz``, whose
folders ``ab-warm``, ``ab-flush``, ``aa-warm`` and ``aa-flush`` hold each campaign's
``report.json``, ``status.tsv`` and ``telemetry.tsv``. Prints markdown: the one-process
comparison, per shape the level, the noise and the effect under each mode, and the
clocks the 1 s telemetry caught while each operator's cells ran.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import statistics
import sys
import tarfile
from pathlib import Path


def direct_table(path: Path) -> list[str]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    head = rows[0]
    out = [(f"card {head['name']}, L2 {head['l2_bytes'] / 2**20:.0f} MiB, flush buffer "
           f"{head['flush_bytes'] / 2**20:.0f} MiB; {head['reps']} measurements a mode, "
           f"{head['replay_ms']:g} ms a replay"), "",
           ("| op | shape | working set MB | warm | flush | flush / warm | sd warm | sd flush "
           "| replay spread warm / flush | do_bench (direct, flushed) | do_bench_cudagraph (warm) "
           "| one flush |"),
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    cases = []
    for r in rows[1:]:
        if (r["op"], r["shape"]) not in cases:
            cases.append((r["op"], r["shape"]))
    for op, shape in cases:
        def of(kind, mode=None, op=op, shape=shape):
            return [r for r in rows[1:] if r["op"] == op and r["shape"] == shape and r["kind"] == kind
                    and (mode is None or r.get("mode") == mode)]
        warm = [r["median_ms"] for r in of("graph", "warm")]
        flush = [r["median_ms"] for r in of("graph", "flush")]
        w, f = statistics.median(warm), statistics.median(flush)
        spread_w = statistics.median(r["spread_pct"] for r in of("graph", "warm"))
        spread_f = statistics.median(r["spread_pct"] for r in of("graph", "flush"))
        one = statistics.median(r["flush_ms"] for r in of("graph", "flush"))
        db = statistics.median(r["median_ms"] for r in of("do_bench"))
        cg = statistics.median(r["median_ms"] for r in of("do_bench_cudagraph"))
        nbytes = of("graph")[0]["bytes"]
        out.append(f"| {op} | {shape} | {nbytes / 1e6:.1f} | {w * 1e3:.2f} us | {f * 1e3:.2f} us | "
                   f"{f / w:.3f} | {statistics.stdev(warm) / w * 100:.2f}% | "
                   f"{statistics.stdev(flush) / f * 100:.2f}% | {spread_w:.2f}% / {spread_f:.2f}% | "
                   f"{db * 1e3:.2f} us | {cg * 1e3:.2f} us | {one * 1e3:.1f} us |")
    return out


def shape_name(row: dict) -> str:
    detail = row["size_detail"].replace("torch.Size(", "").replace(")", "")
    return f"{row['op']} {detail}"


def campaign_rows(archive: tarfile.TarFile, name: str) -> dict[str, dict]:
    member = archive.extractfile(f"./{name}/report.json")
    model = json.loads(member.read().decode())
    return {shape_name(r): r for r in model["rows"]}


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}%"


def campaigns_table(data: Path) -> list[str]:
    with tarfile.open(data / "campaigns.tgz") as archive:
        runs = {name: campaign_rows(archive, name) for name in ("aa-warm", "aa-flush", "ab-warm", "ab-flush")}
    out = ["### Level and noise (A/A campaigns: both sides side A's environment)", "",
           ("| shape | warm | flush | flush / warm | side spread warm (A / B) | side spread flush (A / B) "
           "| delta sd warm | delta sd flush | A/A estimate warm [CI] | A/A estimate flush [CI] |"),
           "|---|---|---|---|---|---|---|---|---|---|"]
    for key, w in runs["aa-warm"].items():
        f = runs["aa-flush"].get(key)
        if f is None:
            continue
        wa, fa = statistics.median(w["a_ms"]), statistics.median(f["a_ms"])
        ws, fs = w["stats"], f["stats"]
        out.append(f"| {key} | {wa * 1e3:.2f} us | {fa * 1e3:.2f} us | {fa / wa:.3f} | "
                   f"{ws['a_spread_pct']:.2f}% / {ws['b_spread_pct']:.2f}% | "
                   f"{fs['a_spread_pct']:.2f}% / {fs['b_spread_pct']:.2f}% | {ws['own_sd_pct']:.2f}% | "
                   f"{fs['own_sd_pct']:.2f}% | {pct(ws['estimate_pct'])} [{pct(ws['ci_low_pct'])}, "
                   f"{pct(ws['ci_high_pct'])}] {w['verdict']} | {pct(fs['estimate_pct'])} "
                   f"[{pct(fs['ci_low_pct'])}, {pct(fs['ci_high_pct'])}] {f['verdict']} |")
    out += ["", "### The switch's effect (A/B campaigns: DISABLE_MMA_V3 0 vs 1)", "",
            ("| shape | A warm | B warm | A flush | B flush | estimate warm [CI] | estimate flush [CI] "
            "| delta sd warm / flush | verdict warm / flush |"),
            "|---|---|---|---|---|---|---|---|---|"]
    for key, w in runs["ab-warm"].items():
        f = runs["ab-flush"].get(key)
        if f is None:
            continue
        ws, fs = w["stats"], f["stats"]
        out.append(f"| {key} | {statistics.median(w['a_ms']) * 1e3:.2f} us | "
                   f"{statistics.median(w['b_ms']) * 1e3:.2f} us | {statistics.median(f['a_ms']) * 1e3:.2f} us | "
                   f"{statistics.median(f['b_ms']) * 1e3:.2f} us | {pct(ws['estimate_pct'])} "
                   f"[{pct(ws['ci_low_pct'])}, {pct(ws['ci_high_pct'])}] | {pct(fs['estimate_pct'])} "
                   f"[{pct(fs['ci_low_pct'])}, {pct(fs['ci_high_pct'])}] | {ws['own_sd_pct']:.2f}% / "
                   f"{fs['own_sd_pct']:.2f}% | {w['verdict']} / {f['verdict']} |")
    return out


def clocks_table(data: Path) -> list[str]:
    """Telemetry samples (1 s apart) taken while an operator's cells ran, the device busy
    (utilisation >= 50%): how many, the SM clock's lowest and median, the median power."""
    out = ["### Clocks while the cells ran (telemetry, 1 s samples, utilisation >= 50%)", "",
           "| campaign | op | samples | SM clock min / median MHz | power median W |",
           "|---|---|---|---|---|"]

    def stamp(text: str) -> float:
        return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()

    with tarfile.open(data / "campaigns.tgz") as archive:
        for name in ("ab-warm", "ab-flush", "aa-warm", "aa-flush"):
            def table(member: str, name=name) -> list[dict]:
                text = archive.extractfile(f"./{name}/{member}").read().decode()
                return list(csv.DictReader(io.StringIO(text), delimiter="\t"))
            status, telemetry = table("status.tsv"), table("telemetry.tsv")
            for op in ("relu", "mm"):
                spans = [(float(r["start"]), float(r["end"])) for r in status if r["op"] == op]
                busy = [t for t in telemetry if float(t["util_pct"]) >= 50
                        and any(a <= stamp(t["timestamp"]) <= b for a, b in spans)]
                if not busy:
                    continue
                clock = [int(t["sm_clock_mhz"]) for t in busy]
                power = [float(t["power_w"]) for t in busy]
                out.append(f"| {name} | {op} | {len(busy)} | {min(clock)} / {statistics.median(clock):.0f} "
                           f"| {statistics.median(power):.0f} |")
    return out


def main() -> int:
    data = Path(sys.argv[1])
    print("### One process (l2_direct.py)\n")
    print("\n".join(direct_table(data / "direct.jsonl")))
    print()
    print("\n".join(campaigns_table(data)))
    print()
    print("\n".join(clocks_table(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
