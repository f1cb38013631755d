#!/usr/bin/env python3
"""A timeline (SVG) of one generated token's stages as the kernels' clock saw them
(`zinc bench --vk-clock --clock-out clock.json`): a row per kernel, each stage a bar from its
first workgroup's start to its last one's end, the lighter head of the bar the time its
workgroups took to start, a tick at its workgroups' median duration; the white between bars is
the time between stages. Standard library only.

    scripts/plot_clock.py clock.json out.svg [--token N] [--from US] [--span US] [--title T]

--token: which clocked token (default: the middle one); --from / --span: the window in µs from
the token's first start (default: the first 200 µs).
"""
import argparse
import json
from html import escape

COLORS = ["#2f6fdf", "#e07b28", "#3a9d5d", "#8e5fc2", "#c23b3b", "#1f9fa8", "#a8841f", "#d45a9a"]


def render(stages, t0, span, title):
    window = [s for s in stages if s["groups"] > 0 and s["last_end"] / 1e3 > t0
              and s["first_start"] / 1e3 < t0 + span]
    rows = []
    for s in window:
        if s["label"] not in rows:
            rows.append(s["label"])
    # The labels' column as wide as the longest (about 6.2 px a character at 11 px).
    left = max(160, int(6.2 * max((len(r) for r in rows), default=0)) + 20)
    top, row_h, plot_w = 70, 22, 900
    height = top + row_h * len(rows) + 60
    width = left + plot_w + 30
    x = lambda us: left + (us - t0) / span * plot_w
    clocked = [s for s in stages if s["groups"] > 0]
    if not clocked:
        raise SystemExit("the token has no clocked stage")
    step = max(max(s["last_end"] for s in clocked) / 1e3, 1e-9)
    gaps = sum(max(0.0, b["first_start"] - a["last_end"]) for a, b in zip(clocked, clocked[1:])) / 1e3
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="22" font-size="15">{escape(title)}</text>',
        f'<text x="10" y="42" fill="#555">µs {t0:.0f}–{t0 + span:.0f} of a {step:.0f} µs step '
        f'({len(clocked)} stages; between them {gaps:.0f} µs, {100 * gaps / step:.1f}%). Bar: first '
        'workgroup start to last end; light head: workgroups starting; tick: median workgroup.</text>',
    ]
    for i, label in enumerate(rows):
        y = top + i * row_h
        out.append(f'<text x="{left - 6}" y="{y + 14}" text-anchor="end">{escape(label)}</text>')
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y + row_h - 1}" '
                   f'y2="{y + row_h - 1}" stroke="#eee"/>')
    for s in window:
        i = rows.index(s["label"])
        y = top + i * row_h + 3
        c = COLORS[i % len(COLORS)]
        a, b, e = (max(t0, s[k] / 1e3) for k in ("first_start", "last_start", "last_end"))
        e = min(e, t0 + span)
        b = min(b, e)
        out.append(f'<rect x="{x(a):.2f}" y="{y}" width="{max(0.5, x(e) - x(a)):.2f}" '
                   f'height="{row_h - 6}" fill="{c}"><title>{escape(s["label"])}: '
                   f'{(s["last_end"] - s["first_start"]) / 1e3:.2f} µs, {s["groups"]} workgroups, '
                   f'median {s["wg_median"] / 1e3:.2f} µs</title></rect>')
        out.append(f'<rect x="{x(a):.2f}" y="{y}" width="{max(0.0, x(b) - x(a)):.2f}" '
                   f'height="{row_h - 6}" fill="white" opacity="0.45"/>')
        m = s["first_start"] / 1e3 + s["wg_median"] / 1e3
        if t0 <= m <= t0 + span:
            out.append(f'<line x1="{x(m):.2f}" x2="{x(m):.2f}" y1="{y - 2}" y2="{y + row_h - 4}" '
                       'stroke="black" stroke-width="1"/>')
    base = top + row_h * len(rows) + 4
    out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{base}" y2="{base}" stroke="#333"/>')
    tick = 1
    while span / tick > 12:
        tick *= 2.5 if str(tick)[0] == "2" else 2  # 1, 2, 5, 10, 20, 50, …
        tick = round(tick)
    t = (int(t0) // tick + 1) * tick if t0 % tick else t0
    while t <= t0 + span:
        out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{base}" y2="{base + 5}" stroke="#333"/>')
        out.append(f'<text x="{x(t):.1f}" y="{base + 18}" text-anchor="middle">{t:g}</text>')
        t += tick
    out.append(f'<text x="{left + plot_w / 2}" y="{base + 36}" text-anchor="middle" fill="#555">'
               'µs from the token\'s first workgroup</text>')
    out.append("</svg>")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("clock")
    p.add_argument("out")
    p.add_argument("--token", type=int)
    p.add_argument("--from", dest="start", type=float, default=0.0)
    p.add_argument("--span", type=float, default=200.0)
    p.add_argument("--title", default="One generated token, stage by stage (the kernels' clock)")
    a = p.parse_args()
    steps = json.load(open(a.clock))
    stages = steps[a.token if a.token is not None else len(steps) // 2]
    with open(a.out, "w") as f:
        f.write(render(stages, a.start, a.span, a.title))


if __name__ == "__main__":
    main()
