#!/usr/bin/env python3
"""ZINC against llama.cpp on the same GGUF in one run: prompt and generation tok/s, the ratio,
the decode share of the memory-bandwidth roofline, and a bar chart (SVG).

    scripts/bench_vs_llama.py --zinc target/release/zinc -m model.gguf \
        --llama-bench path/to/llama-bench        # or --llama-server path/to/llama-server
        [-p 512] [-n 128] [-r 3] [-d 0] [--bandwidth-gbs 4800] [--out DIR]
        [--anchor 'llama.cpp CUDA 0c1e570:pp=8921,tg=248'] [--llama-arg=--flag ...] [--zinc-arg=--flag ...]

ZINC runs `zinc bench -o json` (warm-ups for a second, then the mean of -r runs). llama.cpp runs either
llama-bench (`-o json`, its own warm-up) or, where only the server is at hand, llama-server with
-r + 1 `/completion` requests of random token ids (`n_predict`, `ignore_eos`, no prompt cache),
the first discarded, the mean of `timings.prompt_per_second` / `predicted_per_second`. With -d,
generation runs after a context of that many tokens (the server: a prompt of that length).
Anchors are figures recorded elsewhere (e.g. the issue's), printed as extra columns. Under the
table, where ZINC's backend tells, each test's share of time the host waited for the device, the
share the device's steps spanned, and its idle µs between generated tokens (also in bench.json,
`zinc_shares`). Standard library only.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time
import urllib.request


def run_zinc(a):
    tests = []
    if a.depth:
        tests.append(["-p", "0", "-n", str(a.n_gen), "-d", str(a.depth)])
    else:
        tests.append(["-p", str(a.n_prompt), "-n", str(a.n_gen)])
    out = {}
    shares = {}
    size = 0
    for t in tests:
        cmd = [a.zinc, "bench", "-m", a.model, "--backend", a.backend, "-r", str(a.reps), "-o", "json", *t,
               *a.zinc_arg]
        print("+", " ".join(cmd), file=sys.stderr, flush=True)
        rep = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        size = rep["model_size"]
        for r in rep["results"]:
            t = label(r["test"][:2], r["n_prompt"] or r["n_gen"], a.depth)
            out[t] = r["avg_ts"]
            keys = ("host_wait_share", "device_span_share", "idle_us_per_token", "stages_per_step",
                    "recording_us_per_token", "pieces_per_token", "ahead_share")
            shares[t] = {k: r[k] for k in keys if k in r}
    return out, size, shares


def label(kind, n, depth):
    return f"{kind}{n}" + (f" @ d{depth}" if depth else "")


def run_llama_bench(a):
    cmd = [a.llama_bench, "-m", a.model, "-ngl", "99", "-r", str(a.reps), "-o", "json",
           "-p", "0" if a.depth else str(a.n_prompt), "-n", str(a.n_gen), *a.llama_arg]
    if a.depth:
        cmd += ["-d", str(a.depth)]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    out = {}
    for r in json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout):
        kind = "pp" if r["n_prompt"] and not r["n_gen"] else "tg"
        out[label(kind, r["n_prompt"] or r["n_gen"], a.depth)] = r["avg_ts"]
    return out


def run_llama_server(a):
    ctx = max(a.depth, a.n_prompt) + a.n_gen + 64
    port = 8099
    cmd = [a.llama_server, "-m", a.model, "-ngl", "99", "-c", str(ctx), "--port", str(port), *a.llama_arg]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(os.path.abspath(a.llama_server)))
    log = open(os.path.join(a.out, "llama-server.log"), "w")
    srv = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if json.load(urllib.request.urlopen(base + "/health", timeout=2)).get("status") == "ok":
                    break
            except Exception:
                pass
            if srv.poll() is not None:
                sys.exit("llama-server exited; see llama-server.log")
            time.sleep(1)
        rng = random.Random(1)
        pp, tg = [], []
        n_prompt = a.depth or a.n_prompt
        for rep in range(a.reps + 1):
            ids = [rng.randrange(300, 150000) for _ in range(n_prompt)]
            body = json.dumps({"prompt": ids, "n_predict": a.n_gen, "ignore_eos": True,
                               "cache_prompt": False, "temperature": 0}).encode()
            req = urllib.request.Request(base + "/completion", body, {"Content-Type": "application/json"})
            t = json.load(urllib.request.urlopen(req, timeout=600))["timings"]
            print(f"  llama-server rep {rep}: pp {t['prompt_per_second']:.1f} tg {t['predicted_per_second']:.1f}",
                  file=sys.stderr, flush=True)
            if rep:
                pp.append(t["prompt_per_second"])
                tg.append(t["predicted_per_second"])
    finally:
        srv.terminate()
        srv.wait()
    out = {label("tg", a.n_gen, a.depth): sum(tg) / len(tg)}
    if not a.depth:
        out[label("pp", a.n_prompt, 0)] = sum(pp) / len(pp)
    return out


def svg(path, tests, series):
    """Grouped bars: one group per test, one bar per series, values printed on the bars."""
    w, h, left, top, bottom = 760, 360, 60, 40, 60
    colors = ["#2f6fdf", "#e07b28", "#7a7a7a", "#4aa35a"]
    groups = len(tests)
    gw = (w - left - 20) / max(groups, 1)
    bw = gw * 0.8 / max(len(series), 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{left}" y="22" font-size="15">tok/s, higher is better (each test on its own scale)</text>']
    for gi, t in enumerate(tests):
        vals = [s[1].get(t) for s in series]
        top_v = max([v for v in vals if v] or [1])
        for si, v in enumerate(vals):
            if not v:
                continue
            bh = (h - top - bottom) * v / top_v
            x = left + gi * gw + gw * 0.1 + si * bw
            y = h - bottom - bh
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bw - 4:.1f}" height="{bh:.1f}" fill="{colors[si % 4]}"/>')
            parts.append(f'<text x="{x + (bw - 4) / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle">{v:,.0f}</text>')
        parts.append(f'<text x="{left + gi * gw + gw / 2:.1f}" y="{h - bottom + 18}" text-anchor="middle">{t}</text>')
    for si, (name, _) in enumerate(series):
        x = left + si * 190
        parts.append(f'<rect x="{x}" y="{h - 24}" width="12" height="12" fill="{colors[si % 4]}"/>')
        parts.append(f'<text x="{x + 16}" y="{h - 14}">{name}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zinc", required=True)
    p.add_argument("-m", "--model", required=True)
    p.add_argument("--backend", default="vulkan")
    p.add_argument("--llama-bench")
    p.add_argument("--llama-server")
    p.add_argument("--llama-arg", action="append", default=[], help="an extra llama.cpp argument")
    p.add_argument("--zinc-arg", action="append", default=[], help="an extra `zinc bench` argument")
    p.add_argument("-p", "--n-prompt", type=int, default=512)
    p.add_argument("-n", "--n-gen", type=int, default=128)
    p.add_argument("-r", "--reps", type=int, default=3)
    p.add_argument("-d", "--depth", type=int, default=0)
    p.add_argument("--bandwidth-gbs", type=float, help="memory bandwidth for the decode roofline share")
    p.add_argument("--anchor", action="append", default=[], help="'name:pp=…,tg=…' recorded figures")
    p.add_argument("--out", default=".")
    a = p.parse_args()
    if not (a.llama_bench or a.llama_server):
        p.error("give --llama-bench or --llama-server")
    os.makedirs(a.out, exist_ok=True)
    zinc, size, shares = run_zinc(a)
    llama = run_llama_bench(a) if a.llama_bench else run_llama_server(a)
    anchors = []
    for s in a.anchor:
        name, _, vals = s.rpartition(":")
        figures = dict(kv.split("=") for kv in vals.split(","))
        anchors.append((name, {label(k, a.n_prompt if k == "pp" else a.n_gen, a.depth): float(v)
                               for k, v in figures.items()}))
    tests = list(zinc)
    head = "| test | ZINC | llama.cpp | ratio |" + "".join(f" {n} | ratio |" for n, _ in anchors)
    if a.bandwidth_gbs:
        head += " ZINC share of roofline |"
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    for t in tests:
        z, l = zinc[t], llama.get(t)
        row = f"| {t} | {z:,.1f} | {l:,.1f} | {z / l:.2f}× |" if l else f"| {t} | {z:,.1f} | – | – |"
        for _, f in anchors:
            row += f" {f[t]:,.0f} | {z / f[t]:.2f}× |" if t in f else " – | – |"
        if a.bandwidth_gbs:
            row += f" {100 * z * size / (a.bandwidth_gbs * 1e9):.1f}% |" if t.startswith("tg") else " |"
        print(row)
    # Where the GPU's time went on ZINC's side: the host's waiting share, the share its steps
    # spanned, and its idle µs between generated tokens (where the backend tells).
    for t in tests:
        sh = shares.get(t, {})
        if sh:
            parts = []
            if "host_wait_share" in sh:
                parts.append(f"host waited {100 * sh['host_wait_share']:.0f}%")
            if "device_span_share" in sh:
                parts.append(f"device spanned steps {100 * sh['device_span_share']:.0f}%")
            if "idle_us_per_token" in sh:
                parts.append(f"{sh['idle_us_per_token']:.1f} µs idle between tokens")
            if "stages_per_step" in sh:
                per = "a prompt" if t.startswith("pp") else "a token"
                parts.append(f"{sh['stages_per_step']:.0f} dependent stages {per}")
            if "recording_us_per_token" in sh and "pieces_per_token" in sh:
                parts.append(f"the host recorded a step in {sh['recording_us_per_token']:.0f} µs, "
                             f"{sh['pieces_per_token']:.1f} pieces before its last submit")
            if "ahead_share" in sh:
                parts.append(f"{100 * sh['ahead_share']:.0f}% of steps recorded ahead")
            print(f"ZINC {t}: " + ", ".join(parts))
    series = [("ZINC", zinc), ("llama.cpp (this run)", llama)] + anchors
    svg(os.path.join(a.out, "bench.svg"), tests, series)
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump({"model_size": size, "zinc": zinc, "llama": llama, "anchors": dict(anchors),
                   "zinc_shares": shares}, f, indent=1)


if __name__ == "__main__":
    main()
