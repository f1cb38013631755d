#!/usr/bin/env python3
"""Records llama.cpp's token ids for tests/fixtures/tokenizer/corpus.json on both test models.

  python3 scripts/gen_tokenizer_fixtures.py LLAMA_BIN_DIR

For every corpus string, runs (exactly, one process per string, no shell):
  llama-tokenize -m MODEL --ids --no-bos --no-escape --log-disable -p TEXT                  (special parsed)
  llama-tokenize -m MODEL --ids --no-bos --no-escape --log-disable --no-parse-special -p TEXT
and writes tests/fixtures/tokenizer/<model>.json. llama.cpp: commit 0c1e570 (the copy vendored in
the llama-cpp-python 0.3.36 sdist), CPU build.
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "tokenizer"


def model_path(name):
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_test_models.py"), name],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def tokenize(binary, model, text, special):
    cmd = [binary, "-m", model, "--ids", "--no-bos", "--no-escape", "--log-disable"]
    if not special:
        cmd.append("--no-parse-special")
    cmd += ["-p", text]
    out = subprocess.run(cmd, check=True, capture_output=True)
    line = out.stdout.decode().strip().splitlines()[-1]
    return json.loads(line)


def main():
    bindir = pathlib.Path(sys.argv[1])
    binary = str(bindir / "llama-tokenize")
    corpus = json.loads((FIX / "corpus.json").read_text())
    for name in ["gemma3", "qwen2"]:
        model = model_path(name)
        cases = []
        for text in corpus:
            cases.append({
                "text": text,
                "ids": tokenize(binary, model, text, True),
                "ids_no_special": tokenize(binary, model, text, False),
            })
        doc = {
            "model": pathlib.Path(model).name,
            "llama_cpp_commit": "0c1e570",
            "command": "llama-tokenize -m MODEL --ids --no-bos --no-escape --log-disable [--no-parse-special] -p TEXT",
            "cases": cases,
        }
        (FIX / f"{name}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
        print(f"{name}: {len(cases)} cases")


if __name__ == "__main__":
    main()
