"""Helpers shared by bench/summarize.py and bench/serve/summarize.py: reading numbers from CSV
cells that may be empty or '-', and medians that skip them."""
import statistics


def fnum(x):
    """The cell as a float, or None when it is empty or not a number."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def med(xs):
    """The median of the values that are not None; None when there are none."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
