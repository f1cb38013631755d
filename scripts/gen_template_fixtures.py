#!/usr/bin/env python3
"""Records the chat prompts llama.cpp's server renders for our test models.

  # Qwen2.5: the GGUF's own Jinja template
  llama-server -m qwen2.5-coder-0.5b-instruct-q4.gguf --port 8391 -c 512 &
  python3 scripts/gen_template_fixtures.py http://127.0.0.1:8391 qwen2-templates
  # Gemma 3 270M ships no template: llama.cpp's built-in gemma format, which our fallback mirrors
  llama-server -m gemma-3-270m-q4_k_m.gguf --no-jinja --chat-template gemma --port 8392 -c 512 &
  python3 scripts/gen_template_fixtures.py http://127.0.0.1:8392 gemma3-fallback-templates

Each conversation is POSTed to /apply-template ({"messages": [...]}); the returned "prompt" is
stored in tests/fixtures/tokenizer/NAME.json. llama.cpp: commit 0c1e570 (the copy vendored in the
llama-cpp-python 0.3.36 sdist), CPU build.
"""
import json
import pathlib
import sys
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent

CONVERSATIONS = {
    "single_turn": [{"role": "user", "content": "Hello!"}],
    "system_prompt": [
        {"role": "system", "content": "You are a terse assistant. Answer in one word."},
        {"role": "user", "content": "What colour is the sky?"},
    ],
    "multi_turn": [
        {"role": "user", "content": "Write a haiku about rust."},
        {"role": "assistant", "content": "Iron sleeps in rain\nred blooms where the water stays\ntime eats the hard things"},
        {"role": "user", "content": "Now one about zinc."},
    ],
    "system_multi_turn": [
        {"role": "system", "content": "You answer in French."},
        {"role": "user", "content": "Hi, who are you?"},
        {"role": "assistant", "content": "Je suis un assistant."},
        {"role": "user", "content": "Quelle heure est-il ?\n\nRéponds en détail: «précisément»."},
    ],
    "whitespace_is_trimmed_by_gemma": [
        {"role": "system", "content": "  Be brief. "},
        {"role": "user", "content": " Hello! "},
        {"role": "assistant", "content": "Hi.\n"},
        {"role": "user", "content": "Bye"},
    ],
    "unicode_and_code": [
        {"role": "user", "content": "Explain this:\n```python\nprint('ünïcödé 你好 🚀')\n```"},
    ],
}


def main():
    base = sys.argv[1].rstrip("/")
    out = {"llama_cpp_commit": "0c1e570", "endpoint": "POST /apply-template", "cases": []}
    for name, messages in CONVERSATIONS.items():
        req = urllib.request.Request(base + "/apply-template", data=json.dumps({"messages": messages}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as r:
            prompt = json.load(r)["prompt"]
        out["cases"].append({"name": name, "messages": messages, "prompt": prompt})
        print(name, "ok")
    path = ROOT / "tests" / "fixtures" / "tokenizer" / f"{sys.argv[2]}.json"
    path.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
