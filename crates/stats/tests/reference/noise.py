#!/usr/bin/env python3
"""Reference figures for herd-stats' noise.rs, computed with scipy (Debian: python3-scipy).

Writes noise.txt beside it (or, with --check, compares against it and exits 1 on a
difference). tests/noise_reference.rs compares the Rust functions with that file; the
test command (scripts/test.sh) runs this with --check, so the file stays scipy's.

Lines (space-separated):
  t P DF T                    scipy.stats.t.ppf(P, DF)
  aa A,.. B,.. RATIO LOW HIGH SD DF
                              the A/A pair of figures A (the cell) and B (its twin)
  mde SD N M D POWER          d = (t.ppf(.975) + t.ppf(.8)) * SD * sqrt(1/N + 1/M),
                              df = N + M - 2; POWER (not compared): the two-sided 5 %
                              t-test's true power at a shift of d, by the noncentral t
"""
import math
import sys
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

OUT = Path(__file__).with_name("noise.txt")

T_CASES = [(p, df) for p in (0.975, 0.8) for df in (1, 2, 3, 4, 5, 8, 10, 18, 30, 58, 200)]

AA_CASES = [
    ([1000.0, 1020.0, 980.0], [1010.0, 1030.0, 995.0]),
    ([12207.0, 12480.0, 11990.0, 12300.0], [12100.0, 12650.0]),
    ([5.2, 5.9], [5.5, 6.4, 4.9, 5.0, 5.7]),
    ([30867.0], [30010.0, 31500.0]),
    ([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]),
    ([100.0, 150.0, 100.0, 150.0, 120.0], [90.0, 160.0, 140.0, 110.0, 100.0]),
]

MDE_CASES = [
    (0.02, 3, 3),
    (0.02, 10, 10),
    (0.05, 3, 5),
    (0.1, 2, 2),
    (0.013, 30, 30),
    (0.3, 1, 2),
]


def aa(a, b):
    la, lb = np.log(a), np.log(b)
    n, m = len(la), len(lb)
    df = n + m - 2
    ss = np.sum((la - la.mean()) ** 2) + np.sum((lb - lb.mean()) ** 2)
    sd = math.sqrt(ss / df)
    diff = lb.mean() - la.mean()
    half = stats.t.ppf(0.975, df) * sd * math.sqrt(1 / n + 1 / m)
    if n > 1 and m > 1 and sd > 0:
        # An independent check of the pooled standard deviation: scipy's own t-test.
        t = stats.ttest_ind(lb, la, equal_var=True).statistic
        assert abs(t - diff / (sd * math.sqrt(1 / n + 1 / m))) < 1e-9 * max(1, abs(t))
    return math.exp(diff), math.exp(diff - half), math.exp(diff + half), sd, df


def mde(sd, n, m):
    df = n + m - 2
    d = (stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) * sd * math.sqrt(1 / n + 1 / m)
    nc = d / (sd * math.sqrt(1 / n + 1 / m))
    crit = stats.t.ppf(0.975, df)
    # Boost's noncentral t warns of its own intermediate values at one or two degrees of
    # freedom; the power it returns is finite, and informative only.
    with np.errstate(all="ignore"):
        power = stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc)
    return d, power


def lines():
    out = [f"# written by noise.py with scipy {scipy.__version__}: do not edit"]
    for p, df in T_CASES:
        out.append(f"t {p!r} {df} {stats.t.ppf(p, df)!r}")
    for a, b in AA_CASES:
        ratio, low, high, sd, df = aa(a, b)
        fa, fb = ",".join(map(repr, a)), ",".join(map(repr, b))
        out.append(f"aa {fa} {fb} {ratio!r} {low!r} {high!r} {sd!r} {df}")
    for sd, n, m in MDE_CASES:
        d, power = mde(sd, n, m)
        out.append(f"mde {sd!r} {n} {m} {d!r} {power:.3f}")
    return "\n".join(out) + "\n"


def main():
    text = lines()
    if "--check" in sys.argv[1:]:
        # The header names scipy's version; the figures must agree to 1e-12 relative.
        have = OUT.read_text().splitlines()[1:]
        want = text.splitlines()[1:]
        if len(have) != len(want):
            sys.exit(f"{OUT}: {len(have)} lines, scipy gives {len(want)}: run noise.py")
        for h, w in zip(have, want):
            for x, y in zip(h.split(), w.split()):
                try:
                    same = math.isclose(float(x), float(y), rel_tol=1e-12, abs_tol=1e-15)
                except ValueError:
                    same = x == y
                if not same:
                    sys.exit(f"{OUT}: `{h}`, scipy gives `{w}`: run noise.py")
        print(f"{OUT.name}: as scipy {scipy.__version__} computes it")
    else:
        OUT.write_text(text)


if __name__ == "__main__":
    main()
