"""A side's accuracy tests, read back: the JUnit XML report pytest writes (``--junitxml``)
in the side's check cell (``<op>/check/<side>/accuracy.xml``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from zl_core.interface.contract import ACCURACY_REPORT as REPORT
from zl_core.interface.contract import CHECK_REFUSED as REFUSED
from zl_core.store.layout import CampaignLayout

from .classes import Correctness


def read_side(layout: CampaignLayout, op: str, side: str) -> Correctness | None:
    """The side's accuracy tests of ``op``; None when the campaign ran none for it."""
    cell = layout.check_dir(op, side)
    if not cell.is_dir():
        return None
    refused = cell / REFUSED
    if refused.is_file():  # the check cell could not start: its preflight said why
        return Correctness(problem=" ".join(refused.read_text(encoding="utf-8", errors="replace").split())[:200])
    return read_report(cell / REPORT)


def read_report(path: Path) -> Correctness:
    """Counts from a JUnit XML report; a report that is missing or cannot be read is a
    problem (the tests did not run as asked), never a pass."""
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        return Correctness(problem=f"no {path.name}: the accuracy tests wrote no report")
    except (OSError, ET.ParseError) as exc:
        return Correctness(problem=f"{path.name} cannot be read ({' '.join(str(exc).split())[:80]})")
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if not suites:
        return Correctness(problem=f"{path.name} holds no testsuite")
    tests = failed = skipped = 0
    try:
        for suite in suites:
            tests += int(suite.get("tests", 0))
            failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            skipped += int(suite.get("skipped", 0))
    except ValueError:
        return Correctness(problem=f"{path.name} has counts that are not numbers")
    passed = tests - failed - skipped
    if passed <= 0 and not failed:
        return Correctness(passed=0, failed=0, skipped=skipped,
                           problem=f"no accuracy test ran ({skipped} skipped)")
    return Correctness(passed=passed, failed=failed, skipped=skipped)
