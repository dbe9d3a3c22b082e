"""Summarise `zl run` cells for the validation write-up (run on the device).

usage: python cell_checks.py RECORD_CELL REPLAY_CELL
Prints: rows from results.json vs the table parsed from run.log, the TTGIR file
sets of both cells, per-row latency deltas, and the marker counts.
"""

import json
import sys
from pathlib import Path

from zl_core.decisions.pairing import pair_rows
from zl_core.interface.rows import parse_results_json
from zl_core.plugins.cell_rows import read_cell
from zl_flaggems.host.table import parse_table

rec, rep = (Path(p) for p in sys.argv[1:3])
for cell in (rec, rep):
    ident = json.loads((cell / "run_identity.json").read_text())
    rows, _ = parse_results_json(cell / "results.json")
    table = parse_table((cell / "run.log").read_text(errors="replace"))
    agree = [(r.dtype, r.size_detail, round(r.latency_ms, 6), round(r.provider_value("torch_latency_ms"), 6))
             for r in rows] == [(t.dtype, t.size_detail, round(t.latency_ms, 6),
                                 round(t.provider_value("torch_latency_ms"), 6)) for t in table]
    timers = sorted({(r.timer, r.fallback) for r in rows})
    print(f"{cell.name}: timer={ident.get('timer')} device_name={ident.get('device_name')} "
          f"triton={ident.get('triton_version')} torch={ident.get('torch_version')} "
          f"rows={len(rows)} table_rows={len(table)} json_matches_table={agree} "
          f"row_timers={timers} markers={ident.get('markers')} elapsed={ident.get('elapsed_s')}s")
    index = (cell / "ttgir" / "index.tsv")
    print(f"  ttgir files={len(list((cell / 'ttgir').rglob('*.ttgir')))} index_rows="
          f"{len(index.read_text().splitlines()) - 1 if index.exists() else 'missing'}")
set_a = {p.relative_to(rec / "ttgir").as_posix() for p in (rec / "ttgir").rglob("*.ttgir")}
set_b = {p.relative_to(rep / "ttgir").as_posix() for p in (rep / "ttgir").rglob("*.ttgir")}
same_content = all((rec / "ttgir" / f).read_bytes() == (rep / "ttgir" / f).read_bytes()
                   for f in set_a & set_b)
print(f"same TTGIR file set: {set_a == set_b} (record {len(set_a)}, replay {len(set_b)}); "
      f"identical contents: {same_content}")
for pair in pair_rows(read_cell(rec).rows, read_cell(rep).rows):
    d = pair.delta_pct
    print(f"  {pair.dtype:9} {pair.size_detail[:60]:60} rec={pair.a.gems_latency_ms if pair.a else None} "
          f"rep={pair.b.gems_latency_ms if pair.b else None} delta={f'{d:+.2f}%' if d is not None else '-'} {pair.cls}")
