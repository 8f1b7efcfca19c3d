#!/usr/bin/env python3
"""Plots a soak CSV (bench/results/soak-<UTC>.csv, from `tierlog-bench.jar soak`) as one PNG of six panels.

Usage: python3 bench/soak-plot.py bench/results/soak-<UTC>.csv docs/img/soak.png [trend-minutes]
Needs matplotlib (Debian: apt-get install python3-matplotlib). The shaded span is the window whose trend the
soak's summary judges (the last 20 minutes by default).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def column(rows, name):
    out = []
    for r in rows:
        v = r.get(name, "")
        out.append(float(v) if v not in ("", None) else float("nan"))
    return out


def main():
    source, target = sys.argv[1], sys.argv[2]
    trend_minutes = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
    with open(source, newline="") as f:
        rows = list(csv.DictReader(f))
    minutes = [float(r["elapsed_s"]) / 60 for r in rows]
    fig, axes = plt.subplots(3, 2, figsize=(13, 10), sharex=True)
    panels = [
        ("Memory (MiB)", [("rss_mib", "RSS"), ("heap_used_mib", "heap used"),
                          ("live_after_full_gc_mib", "heap after full GC")]),
        ("Off-heap (MiB)", [("direct_mib", "JVM direct buffers"), ("netty_direct_mib", "Netty direct")]),
        ("Open files", [("open_files", "open file descriptors")]),
        ("Threads", [("threads", "threads")]),
        ("p99 latency per 10 s (ms)", [("produce_p99_ms", "produce"), ("fetch_p99_ms", "fetch (tail)")]),
        ("Records/s", [("produced_rps", "produced"), ("tail_read_rps", "tail read"), ("replay_rps", "cold replay"),
                       ("long_poll_rps", "long-poll"), ("stream_rps", "SSE")]),
    ]
    end = minutes[-1] if minutes else 0
    for ax, (title, series) in zip(axes.flat, panels):
        for col, label in series:
            ax.plot(minutes, column(rows, col), label=label, linewidth=1)
        ax.axvspan(max(0, end - trend_minutes), end, color="0.92", zorder=0)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="best")
        ax.set_ylim(bottom=0)
    for ax in axes[-1]:
        ax.set_xlabel("minutes")
    load = column(rows, "load1")
    fig.suptitle("Tierlog soak: %s (load average %.0f-%.0f on 2 cores; shaded: last %.0f min)"
                 % (source.split("/")[-1], min(load), max(load), trend_minutes))
    fig.tight_layout()
    fig.savefig(target, dpi=90)


if __name__ == "__main__":
    main()
