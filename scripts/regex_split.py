#!/usr/bin/env python3
"""Splits texts with Python's `regex` package, the reference for our pre-tokenizers.

stdin: {"patterns": [P1, P2, ...], "texts": [T1, ...]}; stdout: [[piece, ...], ...].
The patterns are applied in turn as llama.cpp applies a pre-tokenizer's expressions: each one
cuts every piece left by the previous into its matches and the gaps between them.
"""
import json
import sys

import regex


def split(patterns, text):
    pieces = [text]
    for p in patterns:
        r = regex.compile(p)
        nxt = []
        for piece in pieces:
            last = 0
            for m in r.finditer(piece):
                if m.start() > last:
                    nxt.append(piece[last:m.start()])
                if m.end() > m.start():
                    nxt.append(piece[m.start():m.end()])
                    last = m.end()
            if last < len(piece):
                nxt.append(piece[last:])
        pieces = nxt
    return pieces


def main():
    req = json.load(sys.stdin)
    json.dump([split(req["patterns"], t) for t in req["texts"]], sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
