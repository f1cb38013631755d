#!/usr/bin/env python3
"""A grouped bar chart (SVG) of benchmark results from several engines: one group per test, each
test on its own scale (its best result fills the height), the value over each bar and, where a
reference engine is named, the ratio to it under the other bars. Standard library only.

    scripts/plot_bench.py results.json out.svg

results.json:
    {"title": "...", "reference": "llama.cpp CUDA",          # reference optional
     "engines": ["ZINC Vulkan", "llama.cpp Vulkan", "llama.cpp CUDA"],
     "tests": [{"name": "Qwen3-8B pp512", "values": {"ZINC Vulkan": 7811, ...}}, ...]}
"""
import json
import sys
from html import escape

COLORS = ["#2f6fdf", "#e07b28", "#3a9d5d", "#8e5fc2", "#c23b3b"]


def fmt(v):
    return f"{v:,.0f}" if v >= 1000 else f"{v:,.1f}"


def render(spec):
    engines = spec["engines"]
    tests = spec["tests"]
    ref = spec.get("reference")
    bar, gap, top, height, left = 46, 34, 64, 230, 40
    group = bar * len(engines) + gap
    width = left + group * len(tests) + 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + height + 110}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{top + height + 110}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="15">{escape(spec.get("title", ""))}</text>',
        f'<text x="{left}" y="42" fill="#555">tok/s, higher is better; each test on its own scale'
        + (f"; × = ratio to {escape(ref)}" if ref else "")
        + "</text>",
    ]
    base = top + height
    for ti, t in enumerate(tests):
        vals = t["values"]
        most = max(v for v in vals.values() if v is not None)
        x0 = left + ti * group
        for ei, e in enumerate(engines):
            v = vals.get(e)
            if v is None:
                continue
            h = height * v / most
            x = x0 + ei * bar
            out.append(
                f'<rect x="{x + 3}" y="{base - h:.1f}" width="{bar - 6}" height="{h:.1f}" '
                f'fill="{COLORS[ei % len(COLORS)]}"/>'
            )
            out.append(f'<text x="{x + bar / 2}" y="{base - h - 4:.1f}" text-anchor="middle">{fmt(v)}</text>')
            if ref and e != ref and vals.get(ref):
                out.append(
                    f'<text x="{x + bar / 2}" y="{base + 14}" text-anchor="middle" fill="#333">'
                    f"{v / vals[ref]:.2f}×</text>"
                )
        out.append(
            f'<text x="{x0 + bar * len(engines) / 2}" y="{base + 32}" text-anchor="middle" '
            f'font-size="12">{escape(t["name"])}</text>'
        )
    y = base + 62
    for ei, e in enumerate(engines):
        x = left + ei * 190
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{COLORS[ei % len(COLORS)]}"/>')
        out.append(f'<text x="{x + 16}" y="{y + 10}">{escape(e)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    with open(sys.argv[2], "w") as f:
        f.write(render(spec))


if __name__ == "__main__":
    main()
