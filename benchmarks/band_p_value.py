"""Is the band's p-value (docs/statistics.md section 6) valid? For t-distributed estimates
of an effect inside or at the edge of the band [-h, +h], count how often it falls to a
level or below; a valid p-value does so at most that often.

    python benchmarks/band_p_value.py [--draws 1000000]

Needs numpy and scipy (not dependencies of zl). The formula is zl's
(``zl_core.stats.sequential._interval_p``), vectorised.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

HALF = 0.01  # the band's half-width (a 1% threshold on the log scale)
LEVELS = (0.001, 0.01, 0.05, 0.2)


def band_p(estimate: np.ndarray, se: np.ndarray, df: float) -> np.ndarray:
    distance = np.abs(estimate)
    return np.minimum(1.0, stats.t.sf((distance - HALF) / se, df) + stats.t.sf((distance + HALF) / se, df))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1_000_000, help="estimates per case")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    print("| df | spread / band half-width | effect | " + " | ".join(f"share at {a:g}" for a in LEVELS) + " |")
    print("|---|---|---|" + "---|" * len(LEVELS))
    worst = 0.0
    for df in (2, 6, 20, 56):
        for spread in (0.2, 0.5, 1.0, 3.0):
            for where, effect in (("+h", HALF), ("-h", -HALF), ("0", 0.0), ("+h/2", HALF / 2)):
                sd = spread * HALF
                estimate = effect + sd * rng.standard_normal(args.draws)
                se = sd * np.sqrt(rng.chisquare(df, args.draws) / df)
                p = band_p(estimate, se, df)
                shares = [(p <= a).mean() for a in LEVELS]
                worst = max(worst, *(s / a for s, a in zip(shares, LEVELS, strict=True)))
                print(f"| {df} | {spread:g} | {where} | " + " | ".join(f"{s:.5f}" for s in shares) + " |")
    print(f"\nlargest share over its level: {worst:.3f} (sampling error of the rarest level: "
          f"about {1 / np.sqrt(args.draws * LEVELS[0]):.3f})")


if __name__ == "__main__":
    main()
