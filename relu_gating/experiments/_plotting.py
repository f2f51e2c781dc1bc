"""Small plotting helpers shared by the experiments (private; needs the ``plot`` extra).

Every figure: a title saying what is shown, labelled axes (with units), the legend outside
the data area, saved with :func:`save`.  :func:`pyplot` fails with one line before any work
when matplotlib is missing.
"""

from __future__ import annotations

from typing import Any, Callable

from relu_gating.errors import InputError

__all__ = ["pyplot", "figure", "label", "band", "save"]


def pyplot() -> Any:
    """``matplotlib.pyplot`` with the non-interactive Agg backend, or InputError naming the extra."""
    try:
        import matplotlib
    except ImportError as exc:
        raise InputError('plotting needs matplotlib: pip install ".[plot]"') from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure(title: str, ncols: int = 1, *, width: float = 5.2, height: float = 4.0) -> tuple[Any, list]:
    """A figure with ``ncols`` axes side by side and ``title`` as its suptitle."""
    plt = pyplot()
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols + 1.5, height), squeeze=False)
    fig.suptitle(title, fontsize=10)
    return fig, list(axes[0])


def label(ax: Any, title: str, xlabel: str, ylabel: str, *, log: bool = False) -> None:
    """Axis title and labels; a light grid; log y scale on request."""
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)


def band(ax: Any, x: Any, rows: Any, label_: str, **kw: Any) -> None:
    """Median line of ``rows`` (shape (runs, len(x))) with a min-max band (NaNs ignored)."""
    import numpy as np

    R = np.asarray(rows, float)
    lo, mid, hi = np.nanmin(R, axis=0), np.nanmedian(R, axis=0), np.nanmax(R, axis=0)
    line, = ax.plot(x, mid, label=label_, **kw)
    if R.shape[0] > 1:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)


def save(fig: Any, path: str) -> None:
    """Put every legend below its axes (never over data), lay out, save, close."""
    plt = pyplot()
    for ax in fig.axes:
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2,
                      frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def saver(figure: Callable[[Any], Any]) -> Callable[[Any, str], None]:
    """``plot(result, path)`` of an experiment whose ``figure(result)`` builds the Figure: save it as a PNG."""
    def plot(result: Any, path: str) -> None:
        save(figure(result), path)
    plot.__doc__ = f"Save ``{figure.__name__}(result)`` as a PNG at ``path`` (legends below the axes)."
    return plot
