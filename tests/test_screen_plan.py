"""``zl screen --plan``: the operators a screen would run and its cost from this host's
earlier screens, with nothing run or written (real cells of tests/fake_cell.py)."""

from __future__ import annotations

import json

from zl_core.campaigns.estimate import estimate
from zl_core.cli import main
from zl_core.interface import caliber


def test_plan_estimates_from_earlier_screens_and_writes_nothing(fake_host, tmp_path, capsys):
    root = tmp_path / "runs"
    assert main(["screen", "--plan", "--ops", "gemm", "pointwise", "--suite", "fake",
                 "--runs-root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "estimates from 0 earlier screen(s)" in out and "gemm" in out and "unseen" in out
    assert "estimate: none" in out
    assert not root.exists()  # a plan creates no runs root

    assert main(["screen", "--ops", "gemm", "--suite", "fake", "--runs-root", str(root)]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in root.iterdir())
    assert main(["screen", "--plan", "--ops", "gemm", "pointwise", "--suite", "fake",
                 "--runs-root", str(root)]) == 0
    out = capsys.readouterr().out
    assert sorted(p.name for p in root.iterdir()) == before
    gemm = next(line for line in out.splitlines() if line.strip().startswith("gemm"))
    assert "median of 2 cell(s)" in gemm and "mostly interpreter start and imports" in gemm
    assert any(line.split() == ["pointwise", "unseen"] for line in out.splitlines())
    assert "1 unseen operator(s) counted at the median" in out


def test_history_skips_other_hosts_and_unreadable_cells(fake_host, tmp_path, capsys):
    root = tmp_path / "runs"
    assert main(["screen", "--ops", "gemm", "pointwise", "--suite", "fake",
                 "--runs-root", str(root)]) == 0
    campaign = next(root.glob("screen_*"))
    ident = caliber.read_identity(campaign / "gemm" / "A").to_json()  # a copy to edit
    ident["host"] = "another-host"
    caliber.write_identity(campaign / "gemm" / "A", ident)
    (campaign / "gemm" / "B" / "run_identity.json").write_text("{not json")
    capsys.readouterr()
    assert main(["screen", "--plan", "--ops", "gemm", "pointwise", "--suite", "fake",
                 "--runs-root", str(root)]) == 0
    out = capsys.readouterr().out
    assert any(line.split() == ["gemm", "unseen"] for line in out.splitlines())
    assert any(line.split()[:1] == ["pointwise"] and "median of 2 cell(s)" in line
               for line in out.splitlines())


def test_longest_first_over_lanes():
    seen = {op: {"A": [{"wall_s": s, "seconds": None}], "B": [{"wall_s": s, "seconds": None}]}
            for op, s in (("a", 30.0), ("b", 20.0), ("c", 10.0))}
    est = estimate(["a", "b", "c", "d"], seen, sides=2, lanes=2, campaigns_read=1)
    assert [o.seconds for o in est.ops] == [60.0, 40.0, 20.0, None]
    assert est.assumed_s == 40.0 and est.total_s == 160.0 and est.unseen == 1
    # 60 | 40 then 40 -> lane 2 (80), 20 -> lane 1 (80): the campaign ends at 80 s.
    assert est.makespan_s == 80.0
    assert json.dumps(est.makespan_s)


def test_a_cell_without_phases_is_estimated_from_its_status_row(fake_host, tmp_path, capsys):
    # A cell written before phases were recorded: its status.tsv row's elapsed seconds
    # stand for its wall time (this once raised TypeError: a status row is a record).
    root = tmp_path / "runs"
    assert main(["screen", "--ops", "gemm", "--suite", "fake", "--runs-root", str(root)]) == 0
    campaign = next(root.glob("screen_*"))
    for side in ("A", "B"):
        path = campaign / "gemm" / side / "run_identity.json"
        ident = json.loads(path.read_text())
        del ident["phases"]
        path.write_text(json.dumps(ident))
    capsys.readouterr()
    assert main(["screen", "--plan", "--ops", "gemm", "--suite", "fake", "--runs-root", str(root)]) == 0
    gemm = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("gemm"))
    assert "median of 2 cell(s)" in gemm
