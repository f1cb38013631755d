"""Client-side tests of `zinc serve`'s OpenAI-compatible HTTP API (the contract in the server docs).

They talk to a live server, through the official `openai` package where a real client would and
through httpx (or raw sockets) where the wire itself is under test. Start the server with an API
key, then run:

    zinc serve -m qwen2.5-coder-0.5b-instruct-q4_k_m.gguf --port 8080 --api-key KEY &
    python -m pip install openai pytest          # httpx comes with openai
    ZINC_URL=http://127.0.0.1:8080 ZINC_API_KEY=KEY ZINC_MODEL_ID=qwen2.5-coder-0.5b-instruct-q4_k_m \
        python -m pytest -q tests/server/test_openai_client.py

Without ZINC_URL and ZINC_MODEL_ID the module is skipped; without ZINC_API_KEY the auth tests are.
Written for Qwen2.5-Coder-0.5B-Instruct on a CPU: generations are short (a whole run takes about a
minute or two), and the server must keep its default --max-body (4 MiB). The tests run in file
order; the client-disconnect test is last because a server that fails it keeps generating.
"""

from __future__ import annotations

import functools
import json
import os
import re
import select
import socket
import threading
import time
import urllib.parse

import pytest

URL = os.environ.get("ZINC_URL", "").rstrip("/")
KEY = os.environ.get("ZINC_API_KEY") or None
MODEL = os.environ.get("ZINC_MODEL_ID", "")
if not URL or not MODEL:
    pytest.skip("set ZINC_URL and ZINC_MODEL_ID to test a running `zinc serve`", allow_module_level=True)

import openai  # noqa: E402  (only needed, and then required, when a server is given)

try:
    import httpx
except ImportError:  # newer openai releases depend on the fork "httpx2" instead
    import httpx2 as httpx  # type: ignore[no-redef]

AUTH = {"Authorization": f"Bearer {KEY}"} if KEY else {}
TIMEOUT = 60.0

# Prompts, picked so that the small coder model gives stable, plain answers.
P_SEA = "Write one sentence about the sea."
P_FRANCE = "What is the capital of France? Answer in one word."
P_STORY = "Write a long story about a dragon who learns to program computers."
P_BEACH = "Describe a sunny day at the beach in two sentences."
P_COUNT = "Count from 1 to 30, separated by commas."
P_RANDOM = "Write a random sentence about anything you like."
P_CODE = "def fibonacci(n):\n"

METRIC_NAMES = [
    "zinc_requests_total", "zinc_prompt_tokens_total", "zinc_generated_tokens_total",
    "zinc_decode_tokens_per_second", "zinc_prompt_tokens_per_second", "zinc_queue_depth",
    "zinc_requests_running", "zinc_kv_cache_used_tokens", "zinc_kv_cache_capacity_tokens",
    "zinc_cancelled_total",
]


# ----------------------------------------------------------------------------------------------
# Clients and helpers
# ----------------------------------------------------------------------------------------------

def make_client(api_key: str | None = KEY) -> "openai.OpenAI":
    return openai.OpenAI(base_url=URL + "/v1", api_key=api_key or "no-key", max_retries=0,
                         timeout=TIMEOUT)


@functools.lru_cache(maxsize=None)
def _client() -> "openai.OpenAI":
    return make_client()


@functools.lru_cache(maxsize=None)
def _http() -> "httpx.Client":
    return httpx.Client(base_url=URL, headers=AUTH, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def client():
    return _client()


@pytest.fixture(scope="module")
def http():
    return _http()


@pytest.fixture(scope="module")
def n_ctx(http):
    r = http.get("/v1/models")
    assert r.status_code == 200, r.text
    n = r.json()["data"][0]["meta"]["n_ctx"]
    assert isinstance(n, int) and n > 0, n
    return n


def user(text):
    return [{"role": "user", "content": text}]


def chat(prompt, *, max_tokens=16, temperature=0.0, client=None, **kw):
    """One chat completion through the openai client; `prompt` is a string or a message list.
    max_tokens=None leaves the field out."""
    args = dict(model=MODEL, messages=user(prompt) if isinstance(prompt, str) else prompt,
                temperature=temperature, **kw)
    if max_tokens is not None:
        args["max_tokens"] = max_tokens
    return (client or _client()).chat.completions.create(**args)


def stream_chat(prompt, *, max_tokens=16, temperature=0.0, **kw):
    """A streamed chat completion through the openai client, as the list of its chunks."""
    return list(chat(prompt, max_tokens=max_tokens, temperature=temperature, stream=True, **kw))


def stream_text(chunks):
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def complete(prompt, *, max_tokens=16, temperature=0.0, **kw):
    return _client().completions.create(model=MODEL, prompt=prompt, max_tokens=max_tokens,
                                        temperature=temperature, **kw)


@functools.lru_cache(maxsize=None)
def greedy(prompt: str, max_tokens: int):
    """The temperature-0 answer to a one-message chat, computed once per (prompt, max_tokens):
    (content, finish_reason, prompt_tokens, completion_tokens)."""
    r = chat(prompt, max_tokens=max_tokens)
    c = r.choices[0]
    return c.message.content, c.finish_reason, r.usage.prompt_tokens, r.usage.completion_tokens


def check_usage(usage, max_tokens=None):
    assert usage is not None
    assert usage.prompt_tokens > 0
    assert usage.completion_tokens > 0
    assert usage.prompt_tokens + usage.completion_tokens == usage.total_tokens
    if max_tokens is not None:
        assert usage.completion_tokens <= max_tokens


def chat_body(prompt=P_FRANCE, **fields):
    body = {"model": MODEL, "messages": user(prompt), "max_tokens": 4, "temperature": 0}
    body.update(fields)
    return body


def post(path, body, *, headers=None, client=None):
    """POST a dict as JSON, or bytes/str as they are (declared as JSON), with the API key."""
    h = {"Content-Type": "application/json", **(headers or {})}
    content = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    return (client or _http()).post(path, content=content, headers=h)


def assert_error(resp, status, *, code=None, param=None, mentions=(), type_=None):
    """`resp` is an OpenAI-shaped error: {"error": {"message", "type", "param", "code"}}."""
    assert resp.status_code == status, f"{resp.status_code} {resp.text[:500]}"
    assert "application/json" in resp.headers.get("content-type", ""), resp.headers
    err = resp.json()["error"]
    assert {"message", "type", "param", "code"} <= set(err), err
    assert isinstance(err["message"], str) and err["message"], err
    assert isinstance(err["type"], str) and err["type"], err
    if code is not None:
        assert err["code"] == code, err
    if param is not None:
        assert err["param"] == param, err
    if type_ is not None:
        assert err["type"] == type_, err
    for m in mentions:
        assert m.lower() in err["message"].lower(), err
    return err


def sse_payloads(path, body, *, client=None):
    """POST a streaming request; return every `data:` payload in order (the last one should be
    "[DONE]") after checking the response is an event stream."""
    out = []
    with (client or _http()).stream("POST", path, json=body) as r:
        assert r.status_code == 200, r.read()
        assert r.headers.get("content-type", "").startswith("text/event-stream"), r.headers
        for line in r.iter_lines():
            if line.startswith("data:"):
                out.append(line[5:].lstrip(" "))
    return out


def tokenize(text, **kw):
    r = post("/tokenize", {"content": text, **kw})
    assert r.status_code == 200, r.text
    toks = r.json()["tokens"]
    assert toks and all(isinstance(t, int) for t in toks), toks
    return toks


_METRIC_LINE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def metrics_text(client=None):
    r = (client or _http()).get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers.get("content-type", "").startswith("text/plain"), r.headers
    return r.text


def metric(text, name, **labels):
    """Sum of the samples of `name` whose labels include `labels`; None when there is none."""
    total = None
    for line in text.splitlines():
        m = _METRIC_LINE.match(line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        if any(have.get(k) != v for k, v in labels.items()):
            continue
        total = (total or 0.0) + float(m.group(3))
    return total


def metric_now(name, **labels):
    v = metric(metrics_text(), name, **labels)
    assert v is not None, f"{name}{labels or ''} missing from /metrics"
    return v


def raw_request(method, path, headers, body: bytes, timeout=30.0):
    """Send one HTTP/1.1 request over a plain socket, stopping the upload as soon as the server
    answers (a server refusing a large body may answer and close before reading all of it).
    Returns (status, headers dict, body bytes)."""
    u = urllib.parse.urlsplit(URL)
    host, port = u.hostname, u.port or 80
    head = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(body)}",
            "Connection: close"] + [f"{k}: {v}" for k, v in headers.items()]
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        view, sent, deadline = memoryview(body), 0, time.monotonic() + timeout
        while sent < len(body) and time.monotonic() < deadline:
            readable, writable, _ = select.select([sock], [sock], [], 1.0)
            if readable:
                break
            if writable:
                try:
                    sent += sock.send(view[sent:sent + 65536])
                except (BrokenPipeError, ConnectionResetError):
                    break
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                hdr, _, rest = data.partition(b"\r\n\r\n")
                cl = re.search(rb"(?im)^content-length:\s*(\d+)", hdr)
                if cl and len(rest) >= int(cl.group(1)):
                    break
    finally:
        sock.close()
    assert data, "the server closed the connection without an answer"
    hdr, _, rest = data.partition(b"\r\n\r\n")
    lines = hdr.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return status, hdrs, rest


def pick_stop_word(text):
    """A word of `text` (4+ letters) whose first occurrence, as a substring, is at the word itself
    and as near the middle as possible. Returns (word, text before it)."""
    best = None
    for m in re.finditer(r"[A-Za-z]{4,}", text):
        w = m.group()
        if text.find(w) != m.start() or m.start() < 3:
            continue
        dist = abs(m.start() - len(text) / 2)
        if best is None or dist < best[0]:
            best = (dist, w, text[:m.start()])
    assert best is not None, f"no usable stop word in {text!r}"
    return best[1], best[2]


# ----------------------------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------------------------

def test_models_list(client, http):
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL]
    j = http.get("/v1/models").json()
    assert j["object"] == "list"
    (m,) = j["data"]
    assert m["id"] == MODEL and m["object"] == "model" and m["owned_by"] == "zinc"
    assert isinstance(m["created"], int)
    assert isinstance(m["meta"]["n_ctx"], int) and m["meta"]["n_ctx"] > 0


# ----------------------------------------------------------------------------------------------
# Chat completions
# ----------------------------------------------------------------------------------------------

def test_chat_nonstream_basic_and_deterministic():
    r = chat(P_SEA, max_tokens=16)
    assert r.object == "chat.completion"
    assert r.id.startswith("chatcmpl-")
    assert r.model == MODEL
    assert isinstance(r.created, int)
    (c,) = r.choices
    assert c.index == 0 and c.message.role == "assistant"
    assert c.message.content and c.message.content.strip()
    assert c.finish_reason in ("stop", "length")
    check_usage(r.usage, max_tokens=16)
    if c.finish_reason == "length":
        assert r.usage.completion_tokens == 16
    assert c.logprobs is None
    again = chat(P_SEA, max_tokens=16)
    assert again.choices[0].message.content == c.message.content
    assert again.usage.completion_tokens == r.usage.completion_tokens
    assert again.usage.prompt_tokens == r.usage.prompt_tokens


def test_chat_raw_response_has_timings():
    r = post("/v1/chat/completions", chat_body(P_SEA, max_tokens=6))
    assert r.status_code == 200, r.text
    j = r.json()
    t = j["timings"]
    for k in ("prompt_n", "prompt_ms", "prompt_per_second", "predicted_n", "predicted_ms",
              "predicted_per_second"):
        assert isinstance(t[k], (int, float)), (k, t)
    assert t["predicted_n"] == j["usage"]["completion_tokens"]


def test_chat_max_tokens_gives_length():
    r = chat(P_STORY, max_tokens=5)
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 5
    assert r.choices[0].message.content


def test_chat_capital_of_france():
    text, finish, _, _ = greedy(P_FRANCE, 8)
    assert "Paris" in text, text


def test_chat_max_completion_tokens():
    r = chat(P_STORY, max_tokens=None, max_completion_tokens=4)
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 4


def test_chat_content_parts_equal_plain_string():
    plain = greedy(P_SEA, 16)[0]
    parts = [{"role": "user", "content": [{"type": "text", "text": P_SEA}]}]
    assert chat(parts, max_tokens=16).choices[0].message.content == plain
    sys_parts = [{"role": "system", "content": [{"type": "text", "text": "You are helpful."}]},
                 {"role": "user", "content": [{"type": "text", "text": P_SEA}]}]
    sys_plain = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": P_SEA}]
    assert (chat(sys_parts, max_tokens=8).choices[0].message.content
            == chat(sys_plain, max_tokens=8).choices[0].message.content)


def test_chat_accepts_documented_optional_fields():
    """Neutral values of every documented optional field leave the greedy answer unchanged."""
    extra = {"top_k": 40, "min_p": 0.05, "repeat_penalty": 1.0, "chat_template_kwargs": {},
             "enable_thinking": False}
    r = chat(P_SEA, max_tokens=8, top_p=1.0, presence_penalty=0.0, frequency_penalty=0.0,
             seed=7, n=1, user="tester", logit_bias={}, extra_body=extra)
    assert r.choices[0].message.content == greedy(P_SEA, 8)[0]


# ----------------------------------------------------------------------------------------------
# Streaming
# ----------------------------------------------------------------------------------------------

def check_chunks(chunks, expect_text, expect_finish):
    assert chunks, "no chunks"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert len({c.id for c in chunks}) == 1 and chunks[0].id.startswith("chatcmpl-")
    assert all(c.object == "chat.completion.chunk" and c.model == MODEL for c in chunks)
    with_choices = [c for c in chunks if c.choices]
    finishing = [i for i, c in enumerate(with_choices) if c.choices[0].finish_reason]
    assert finishing == [len(with_choices) - 1], "finish_reason must be on the last chunk only"
    assert with_choices[-1].choices[0].finish_reason == expect_finish
    assert not with_choices[-1].choices[0].delta.content
    assert stream_text(chunks) == expect_text


def test_chat_stream_matches_nonstream():
    text, finish, _, _ = greedy(P_SEA, 16)
    chunks = stream_chat(P_SEA, max_tokens=16)
    check_chunks(chunks, text, finish)
    assert all(c.choices for c in chunks)
    assert all(c.usage is None for c in chunks)


def test_chat_stream_include_usage():
    text, finish, prompt_tokens, completion_tokens = greedy(P_SEA, 16)
    chunks = stream_chat(P_SEA, max_tokens=16, stream_options={"include_usage": True})
    check_chunks(chunks, text, finish)
    last = chunks[-1]
    assert last.choices == []
    check_usage(last.usage, max_tokens=16)
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (prompt_tokens, completion_tokens)
    assert all(c.usage is None for c in chunks[:-1])


def test_chat_stream_raw_sse_ends_with_done():
    text = greedy(P_SEA, 16)[0]
    payloads = sse_payloads("/v1/chat/completions",
                            chat_body(P_SEA, max_tokens=16, stream=True,
                                      stream_options={"include_usage": True}))
    assert payloads[-1] == "[DONE]" and payloads.count("[DONE]") == 1
    events = [json.loads(p) for p in payloads[:-1]]
    assert all("error" not in e for e in events), events
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert events[-1]["choices"] == [] and "timings" in events[-1]
    u = events[-1]["usage"]
    assert u["prompt_tokens"] + u["completion_tokens"] == u["total_tokens"]
    assert all("usage" in e and e["usage"] is None for e in events[:-1])
    assert events[-2]["choices"][0]["delta"] == {}
    assert events[-2]["choices"][0]["finish_reason"] in ("stop", "length")
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events[:-1]) == text


# ----------------------------------------------------------------------------------------------
# Stop strings
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["string", "list"])
@pytest.mark.parametrize("streaming", [False, True], ids=["nonstream", "stream"])
def test_chat_stop(form, streaming):
    text = greedy(P_BEACH, 24)[0]
    word, before = pick_stop_word(text)
    stop = word if form == "string" else ["@@never-appears@@", word]
    if streaming:
        chunks = stream_chat(P_BEACH, max_tokens=24, stop=stop)
        check_chunks(chunks, before, "stop")
        out = stream_text(chunks)
    else:
        c = chat(P_BEACH, max_tokens=24, stop=stop).choices[0]
        assert c.finish_reason == "stop"
        out = c.message.content
    assert out == before, (word, text)
    assert word not in out


# ----------------------------------------------------------------------------------------------
# Sampling: seeds
# ----------------------------------------------------------------------------------------------

def test_chat_seed_reproducible_and_varied():
    def sample(seed):
        return chat(P_RANDOM, max_tokens=12, temperature=1.0, seed=seed).choices[0].message.content

    first = sample(1234)
    assert sample(1234) == first
    outputs = {first} | {sample(s) for s in (1, 2, 3, 4)}
    assert len(outputs) >= 2, outputs


# ----------------------------------------------------------------------------------------------
# Logprobs
# ----------------------------------------------------------------------------------------------

def test_chat_logprobs():
    r = chat(P_COUNT, max_tokens=8, logprobs=True, top_logprobs=3)
    c = r.choices[0]
    entries = c.logprobs.content
    assert len(entries) == r.usage.completion_tokens
    assert "".join(e.token for e in entries) == c.message.content
    for e in entries:
        assert e.logprob <= 1e-6, e
        tops = e.top_logprobs
        assert len(tops) == 3, e
        lps = [t.logprob for t in tops]
        assert lps == sorted(lps, reverse=True), e
        assert all(lp <= 1e-6 for lp in lps), e
        # temperature 0 picks the most likely token
        assert e.token == tops[0].token, e
        assert abs(e.logprob - tops[0].logprob) < 1e-4, e


def test_chat_stream_logprobs_match_nonstream():
    ref = chat(P_COUNT, max_tokens=8, logprobs=True, top_logprobs=3).choices[0].logprobs.content
    chunks = stream_chat(P_COUNT, max_tokens=8, logprobs=True, top_logprobs=3)
    got = [e for c in chunks if c.choices and c.choices[0].logprobs
           for e in (c.choices[0].logprobs.content or [])]
    assert [e.token for e in got] == [e.token for e in ref]
    assert all(abs(a.logprob - b.logprob) < 1e-3 for a, b in zip(got, ref))


# ----------------------------------------------------------------------------------------------
# Legacy completions
# ----------------------------------------------------------------------------------------------

def test_completions_prompt_forms_agree():
    r = complete(P_CODE)
    assert r.object == "text_completion" and r.model == MODEL
    text = r.choices[0].text
    assert text and r.choices[0].finish_reason in ("stop", "length")
    check_usage(r.usage, max_tokens=16)
    assert complete([P_CODE]).choices[0].text == text
    ids = tokenize(P_CODE, add_special=False)
    by_ids = complete(ids)
    assert by_ids.choices[0].text == text
    assert by_ids.usage.prompt_tokens == len(ids)


def test_completions_stream():
    ref = complete(P_CODE).choices[0]
    chunks = list(complete(P_CODE, stream=True))
    assert chunks and all(c.object == "text_completion" for c in chunks)
    assert "".join(c.choices[0].text for c in chunks if c.choices) == ref.text
    with_choices = [c for c in chunks if c.choices]
    finishing = [i for i, c in enumerate(with_choices) if c.choices[0].finish_reason]
    assert finishing == [len(with_choices) - 1]
    assert with_choices[-1].choices[0].finish_reason == ref.finish_reason


def test_completions_legacy_logprobs():
    r = complete(P_CODE, max_tokens=8, logprobs=2)
    c = r.choices[0]
    lp = c.logprobs
    n = r.usage.completion_tokens
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.text_offset) == n
    assert "".join(lp.tokens) == c.text
    assert lp.text_offset == sorted(lp.text_offset) and lp.text_offset[0] >= 0
    for tok, tlp, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs):
        assert tlp <= 1e-6
        assert isinstance(top, dict) and len(top) == 2, top
        assert tok in top and abs(top[tok] - max(top.values())) < 1e-4, (tok, top)


# ----------------------------------------------------------------------------------------------
# Tokenizer endpoints
# ----------------------------------------------------------------------------------------------

def test_tokenize_detokenize_round_trip():
    s = "Hello, 世界! 🦀🎉 naïve café — 日本語のテキスト 👩‍💻"
    toks = tokenize(s)
    r = post("/detokenize", {"tokens": toks})
    assert r.status_code == 200, r.text
    assert r.json()["content"] == s


def test_tokenize_special_tokens():
    s = "<|im_start|>user"
    parsed = tokenize(s, parse_special=True)
    literal = tokenize(s, parse_special=False)
    assert len(parsed) < len(literal)
    assert post("/detokenize", {"tokens": literal}).json()["content"] == s


@pytest.mark.parametrize("tokens", [[10_000_000], [1, 2, 4_000_000_000], [-1]])
def test_detokenize_out_of_range(tokens):
    assert_error(post("/detokenize", {"tokens": tokens}), 400)


# ----------------------------------------------------------------------------------------------
# Metrics
# ----------------------------------------------------------------------------------------------

def test_metrics_counts_generated_tokens():
    before = metrics_text()
    gen0 = metric(before, "zinc_generated_tokens_total") or 0.0
    req0 = metric(before, "zinc_requests_total", endpoint="chat") or 0.0
    r = chat(P_STORY, max_tokens=6)
    after = metrics_text()
    for name in METRIC_NAMES:
        assert metric(after, name) is not None, f"{name} missing from /metrics"
    assert metric(after, "zinc_generated_tokens_total") >= gen0 + r.usage.completion_tokens
    assert metric(after, "zinc_requests_total", endpoint="chat") >= req0 + 1
    assert metric(after, "zinc_kv_cache_capacity_tokens") > 0


# ----------------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------------

@pytest.mark.skipif(not KEY, reason="ZINC_API_KEY not set")
def test_auth_required():
    bad = make_client("definitely-not-the-key")
    with pytest.raises(openai.AuthenticationError) as ei:
        bad.chat.completions.create(model=MODEL, messages=user("hi"), max_tokens=2)
    assert ei.value.status_code == 401 and ei.value.code == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        bad.models.list()
    with httpx.Client(base_url=URL, timeout=TIMEOUT) as anon:
        for path in ("/v1/models", "/metrics"):
            assert_error(anon.get(path), 401, code="invalid_api_key", type_="invalid_request_error")
        for path, body in (("/v1/chat/completions", chat_body()), ("/tokenize", {"content": "x"}),
                           ("/detokenize", {"tokens": [1]})):
            assert_error(post(path, body, client=anon), 401, code="invalid_api_key")
            assert_error(post(path, body, client=anon, headers={"Authorization": "Bearer nope"}),
                         401, code="invalid_api_key")
        assert anon.get("/health").status_code == 200
        assert anon.get("/").status_code == 200


def test_unknown_model_is_404():
    with pytest.raises(openai.NotFoundError) as ei:
        _client().chat.completions.create(model="no-such-model", messages=user("hi"), max_tokens=2)
    assert ei.value.status_code == 404 and ei.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        _client().completions.create(model="no-such-model", prompt="hi", max_tokens=2)


def test_n_greater_than_one_is_400():
    with pytest.raises(openai.BadRequestError) as ei:
        chat(P_FRANCE, max_tokens=2, n=2)
    assert ei.value.status_code == 400 and ei.value.param == "n"
    assert re.search(r"\bn\b", ei.value.body["message"]), ei.value.body


def test_unknown_field_is_400_naming_it():
    with pytest.raises(openai.BadRequestError) as ei:
        chat(P_FRANCE, max_tokens=2, extra_body={"frobnicate_level": 3})
    assert ei.value.param == "frobnicate_level"
    assert "frobnicate_level" in ei.value.body["message"]
    assert_error(post("/v1/completions", {"model": MODEL, "prompt": "x", "max_tokens": 2,
                                          "frobnicate_level": 3}), 400, param="frobnicate_level",
                 mentions=["frobnicate_level"])


def test_wrong_type_is_400():
    assert_error(post("/v1/chat/completions", chat_body(temperature="hot")), 400,
                 type_="invalid_request_error")
    assert_error(post("/v1/chat/completions", chat_body(max_tokens="many")), 400)
    assert_error(post("/v1/chat/completions", chat_body(messages="hi")), 400)


def test_malformed_json_is_400():
    for body in (b'{"model": "x", "messages": [', b"not json at all", b"", b"[1, 2, 3]"):
        assert_error(post("/v1/chat/completions", body), 400, type_="invalid_request_error")


def test_non_utf8_body_is_400():
    body = b'{"messages": [{"role": "user", "content": "caf\xe9 \xff\xfe"}], "max_tokens": 2}'
    assert_error(post("/v1/chat/completions", body), 400, type_="invalid_request_error")
    assert_error(post("/tokenize", b'{"content": "\xc3\x28"}'), 400)


def test_huge_numbers_are_400():
    msgs = json.dumps(user(P_FRANCE))
    for extra in ('"max_tokens": 1e30', '"max_tokens": 4, "temperature": 1e400',
                  '"max_tokens": 1e30, "temperature": 0'):
        body = f'{{"model": {json.dumps(MODEL)}, "messages": {msgs}, {extra}}}'.encode()
        assert_error(post("/v1/chat/completions", body), 400)


DROP = "<field left out>"


@pytest.mark.parametrize("path,fields", [
    ("chat", {"messages": []}),
    ("chat", {"messages": DROP}),
    ("chat", {"messages": [{"role": "wizard", "content": "hi"}]}),
    ("chat", {"messages": [{"role": "user", "content": [{"type": "image_url",
                                                          "image_url": {"url": "http://x/y.png"}}]}]}),
    ("chat", {"temperature": 2.5}),
    ("chat", {"temperature": -0.1}),
    ("chat", {"presence_penalty": 3}),
    ("chat", {"stop": ["a", "b", "c", "d", "e"]}),
    ("chat", {"logprobs": True, "top_logprobs": 21}),
    ("chat", {"top_logprobs": 3}),
    ("completions", {"echo": True}),
    ("completions", {"suffix": "x"}),
], ids=lambda v: v if isinstance(v, str) else json.dumps(v)[:40])
def test_invalid_values_are_400(path, fields):
    if path == "chat":
        body = chat_body(**fields)
    else:
        body = {"model": MODEL, "prompt": "hi", "max_tokens": 2, **fields}
    body = {k: v for k, v in body.items() if v is not DROP}
    url = "/v1/chat/completions" if path == "chat" else "/v1/completions"
    assert_error(post(url, body), 400, type_="invalid_request_error")


def test_context_length_exceeded(n_ctx):
    words = n_ctx + 256
    if words * 5 > 3 * 1024 * 1024:
        pytest.skip(f"n_ctx {n_ctx} too large to exceed within the 4 MiB body limit")
    with pytest.raises(openai.BadRequestError) as ei:
        chat("word " * words, max_tokens=4)
    e = ei.value
    assert e.code == "context_length_exceeded", e.body
    numbers = [int(x) for x in re.findall(r"\d+", e.body["message"])]
    assert n_ctx in numbers, e.body
    assert any(x > n_ctx for x in numbers), e.body
    assert_error(post("/v1/completions", {"model": MODEL, "prompt": "word " * words, "max_tokens": 4}),
                 400, code="context_length_exceeded")


def test_body_over_limit_is_413():
    filler = "x" * (4 * 1024 * 1024 + 65536)
    body = json.dumps(chat_body(filler)).encode()
    status, _, _ = raw_request("POST", "/v1/chat/completions",
                               {**AUTH, "Content-Type": "application/json"}, body)
    assert status == 413


def test_unknown_route_and_wrong_method():
    assert_error(_http().get("/v1/no-such-route"), 404)
    assert_error(_http().get("/v1/chat/completions"), 405)


def test_healthy_after_errors():
    r = httpx.get(URL + "/health", timeout=5)
    assert r.status_code == 200 and r.json() == {"status": "ok"}
    assert "Paris" in chat(P_FRANCE, max_tokens=8).choices[0].message.content


# ----------------------------------------------------------------------------------------------
# Concurrency: one generation at a time, /health and /metrics answer meanwhile
# ----------------------------------------------------------------------------------------------

def test_health_during_generation_and_fifo_queue():
    long_ref = chat(P_COUNT, max_tokens=60)           # the long request, alone
    short_ref = greedy(P_FRANCE, 8)[0]
    results, ends, errors = {}, {}, []

    def run(name, prompt, max_tokens):
        try:
            results[name] = chat(prompt, max_tokens=max_tokens, client=make_client())
            ends[name] = time.monotonic()
        except Exception as exc:  # reported by the main thread
            errors.append((name, exc))

    a = threading.Thread(target=run, args=("long", P_COUNT, 60))
    a.start()
    time.sleep(0.7)
    t0 = time.monotonic()
    h = httpx.get(URL + "/health", timeout=5)
    health_s = time.monotonic() - t0
    assert h.status_code == 200
    assert a.is_alive(), "the long generation ended before /health was asked; raise its max_tokens"
    assert health_s < 1.0, f"/health took {health_s:.2f}s during a generation"

    b = threading.Thread(target=run, args=("short", P_FRANCE, 8))
    b.start()
    max_queue = 0.0
    with httpx.Client(base_url=URL, headers=AUTH, timeout=5) as mc:
        while b.is_alive():
            t0 = time.monotonic()
            text = metrics_text(mc)
            assert time.monotonic() - t0 < 2.0, "/metrics was slow during a generation"
            if a.is_alive():
                max_queue = max(max_queue, metric(text, "zinc_queue_depth") or 0.0)
            time.sleep(0.1)
    a.join(TIMEOUT)
    b.join(TIMEOUT)
    assert not errors, errors
    assert results["long"].choices[0].message.content == long_ref.choices[0].message.content
    assert results["long"].usage.completion_tokens == long_ref.usage.completion_tokens
    assert results["short"].choices[0].message.content == short_ref
    assert ends["short"] >= ends["long"], "the queued request finished before the running one"
    assert max_queue >= 1, "zinc_queue_depth never showed the waiting request"


# ----------------------------------------------------------------------------------------------
# Client disconnect (last: a server that misses it keeps generating for minutes)
# ----------------------------------------------------------------------------------------------

def test_client_disconnect_cancels_generation():
    cancelled0 = metric(metrics_text(), "zinc_cancelled_total") or 0.0
    body = chat_body(P_STORY, max_tokens=2000, stream=True)
    content_chunks = 0
    with httpx.Client(base_url=URL, headers=AUTH, timeout=30) as sc:
        with sc.stream("POST", "/v1/chat/completions", json=body) as r:
            assert r.status_code == 200
            # Keep the line iterator referenced: a collected httpx generator closes the connection.
            lines = r.iter_lines()
            for line in lines:
                if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                    continue
                ev = json.loads(line[5:])
                assert "error" not in ev, ev
                if ev["choices"] and ev["choices"][0]["delta"].get("content"):
                    content_chunks += 1
                    if content_chunks >= 3:
                        break
            assert content_chunks >= 3, "the stream ended early"
            # the counter must be live while the generation runs, or the check below proves nothing
            live0 = metric_now("zinc_generated_tokens_total")
            time.sleep(1.0)
            live1 = metric_now("zinc_generated_tokens_total")
            assert live1 > live0, "zinc_generated_tokens_total did not rise during a generation"
        # leaving the blocks closes the response and the connection mid-stream
    time.sleep(1.0)
    g1 = metric_now("zinc_generated_tokens_total")
    time.sleep(1.5)
    g2 = metric_now("zinc_generated_tokens_total")
    assert g2 == g1, f"generation went on after the client left ({g1} -> {g2})"
    assert metric_now("zinc_cancelled_total") >= cancelled0 + 1
    assert metric_now("zinc_requests_running") == 0
    r = chat(P_FRANCE, max_tokens=8, client=make_client().with_options(timeout=20))
    assert "Paris" in r.choices[0].message.content
