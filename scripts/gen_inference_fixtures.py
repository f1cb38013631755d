#!/usr/bin/env python3
"""Records llama.cpp's greedy continuations and perplexities on both real test models.

  python3 scripts/gen_inference_fixtures.py LLAMA_BIN_DIR

Greedy text, for each prompt (one process each, no shell):
  llama-completion -m MODEL -p PROMPT -n N --temp 0 -no-cnv --no-escape --no-display-prompt
                   -t 2 -c 2048 --seed 1
Perplexity on tests/fixtures/text/gpl-3.0.txt:
  llama-perplexity -m MODEL -f gpl-3.0.txt -c 512 -t 2 [--chunks 4]
Writes tests/fixtures/inference/<model>.json. llama.cpp: commit 0c1e570 (vendored in the
llama-cpp-python 0.3.36 sdist), CPU build.
"""
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TEXT = ROOT / "tests" / "fixtures" / "text" / "gpl-3.0.txt"
N = 40

LONG_PROMPT = TEXT.read_text()[:3200]  # about 700 tokens: crosses Gemma 3's 512-token window

PROMPTS = {
    "gemma3": [
        "The capital of France is",
        "Once upon a time, in a small village by the sea,",
        "def fibonacci(n):\n",
        "List three colours of the rainbow:\n1.",
        LONG_PROMPT,
    ],
    "qwen2": [
        "The capital of France is",
        "def quicksort(arr):\n",
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n<|im_start|>assistant\n",
        "// A C function that reverses a string in place\n",
        LONG_PROMPT,
    ],
}


def model_path(name):
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_test_models.py"), name],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def complete(bindir, model, prompt):
    cmd = [str(bindir / "llama-completion"), "-m", model, "-p", prompt, "-n", str(N), "--temp", "0",
           "-no-cnv", "--no-escape", "--no-display-prompt", "-t", "2", "-c", "2048", "--seed", "1"]
    out = subprocess.run(cmd, check=True, capture_output=True)
    return out.stdout.decode("utf-8")


def perplexity(bindir, model, chunks):
    cmd = [str(bindir / "llama-perplexity"), "-m", model, "-f", str(TEXT), "-c", "512", "-t", "2"]
    if chunks:
        cmd += ["--chunks", str(chunks)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    m = re.search(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)", out.stdout + out.stderr)
    return {"chunks": chunks, "ctx": 512, "ppl": float(m.group(1)), "stderr": float(m.group(2))}


def main():
    bindir = pathlib.Path(sys.argv[1])
    out_dir = ROOT / "tests" / "fixtures" / "inference"
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, prompts in PROMPTS.items():
        model = model_path(name)
        cases = [{"prompt": p, "n_predict": N, "text": complete(bindir, model, p)} for p in prompts]
        ppl = [perplexity(bindir, model, 4), perplexity(bindir, model, None)]
        doc = {
            "model": pathlib.Path(model).name,
            "llama_cpp_commit": "0c1e570",
            "completion_command": "llama-completion -m MODEL -p PROMPT -n N --temp 0 -no-cnv --no-escape --no-display-prompt -t 2 -c 2048 --seed 1",
            "perplexity_command": "llama-perplexity -m MODEL -f tests/fixtures/text/gpl-3.0.txt -c 512 -t 2 [--chunks 4]",
            "greedy": cases,
            "perplexity": ppl,
        }
        (out_dir / f"{name}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
        print(name, [c["text"][:40] for c in cases], ppl)


if __name__ == "__main__":
    main()
