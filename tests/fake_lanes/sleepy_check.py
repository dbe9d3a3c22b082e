"""A check cell of the sleepy suite: writes a JUnit XML report as pytest's --junitxml
does. "wrong*" operators return wrong results on side B (3 of 4 tests fail there);
"broken*" operators write no report on either side."""

import os
from pathlib import Path

cell = Path(os.environ["ZL_CELL_DIR"])
op = os.environ["ZL_OP"]
failures = 3 if op.startswith("wrong") and cell.name == "B" else 0
cases = "".join(f'<testcase classname="tests.test_{op}" name="test_{op}[{i}]">'
                + ("<failure message=\"assert_close: mismatch\"/>" if i < failures else "")
                + "</testcase>" for i in range(4))
if not op.startswith("broken"):
    (cell / "accuracy.xml").write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" '
        f'failures="{failures}" skipped="0" tests="4">{cases}</testsuite></testsuites>')
print(f"sleepy check op={op} side={cell.name}: {4 - failures} passed, {failures} failed")
raise SystemExit(1 if failures else 0)
