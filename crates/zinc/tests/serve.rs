//! `zinc serve` against real clients: the official `openai` Python package
//! (`tests/server/test_openai_client.py`), headless Chromium driving the chat UI
//! (`tests/web/ui_test.cjs`), and hostile bytes over raw TCP. The server runs the Qwen2.5 test
//! model on the CPU; one server at a time (the machine has two cores).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use zinc_testdata::{model, repo_root, TestModel};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const API_KEY: &str = "sk-zinc-test";

struct Server {
    child: Child,
    addr: String,
    stderr: std::sync::Arc<Mutex<String>>,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        Self::start_with("serve", extra, &[])
    }

    fn start_with(command: &str, extra: &[&str], env: &[(&str, String)]) -> Server {
        let m = model(TestModel::Qwen2);
        let mut child = Command::new(env!("CARGO_BIN_EXE_zinc"))
            .args([command, "-m"])
            .arg(&m)
            .args(["--port", "0", "--api-key", API_KEY, "-c", "2048"])
            .args(extra)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("start zinc serve");
        let stderr = child.stderr.take().expect("stderr");
        let log = std::sync::Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let log2 = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = tx.send(addr);
                }
                let mut l = log2.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("zinc serve did not start: {}", log.lock().unwrap()));
        Server {
            child,
            addr,
            stderr: log,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends raw bytes as one HTTP/1.1 request and returns (status, body).
    fn raw(&self, request: &[u8]) -> (u16, String) {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(request).expect("send");
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        let text = String::from_utf8_lossy(&out).into_owned();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no HTTP status in {text:?}"));
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        (status, body)
    }

    fn post(&self, path: &str, body: &[u8]) -> (u16, String) {
        let mut req = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {API_KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(body);
        self.raw(&req)
    }

    fn get(&self, path: &str) -> (u16, String) {
        self.raw(
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {API_KEY}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
    }

    fn model_id(&self) -> String {
        let (status, body) = self.get("/v1/models");
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).expect("models JSON");
        v["data"][0]["id"].as_str().expect("model id").to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn artifacts() -> PathBuf {
    let dir = std::env::var_os("ZINC_ARTIFACTS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/zinc/artifacts"))
        })
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&dir).expect("artifact folder");
    dir
}

/// The `openai` package's own client (and httpx) against a live server.
#[test]
fn openai_python_client() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let py = zinc_testdata::python();
    let ok = Command::new(&py)
        .args(["-c", "import openai, pytest"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "{} cannot import openai/pytest; run the tests through scripts/test.sh",
        py.display()
    );
    let server = Server::start(&[]);
    let id = server.model_id();
    let out = Command::new(&py)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(repo_root().join("tests/server/test_openai_client.py"))
        .env("ZINC_URL", server.url())
        .env("ZINC_API_KEY", API_KEY)
        .env("ZINC_MODEL_ID", &id)
        .output()
        .expect("run pytest");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{report}");
    assert!(
        out.status.success(),
        "the openai client tests failed:\n{report}\nserver log:\n{}",
        server.log()
    );
}

/// Headless Chromium loads the chat UI, streams a reply, stops one, and saves screenshots.
#[test]
fn browser_chat_ui() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let node_path = std::env::var_os("ZINC_NODE_PATH")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/zinc/node/node_modules"))
        })
        .expect("HOME or ZINC_NODE_PATH");
    assert!(
        node_path.join("playwright-core").exists(),
        "playwright-core is not in {}; run the tests through scripts/test.sh",
        node_path.display()
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        std::path::Path::new(&chromium).exists(),
        "no Chromium at {chromium}; install Debian's chromium (.ci/run does) or set CHROMIUM"
    );
    let server = Server::start(&[]);
    let dir = artifacts();
    let out = Command::new("node")
        .arg(repo_root().join("tests/web/ui_test.cjs"))
        .env("NODE_PATH", &node_path)
        .env("ZINC_URL", server.url())
        .env("ZINC_API_KEY", API_KEY)
        .env("CHROMIUM", &chromium)
        .env("ZINC_ARTIFACTS", &dir)
        .output()
        .expect("run node");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{report}\nscreenshots in {}", dir.display());
    assert!(
        out.status.success(),
        "the browser test failed:\n{report}\nserver log:\n{}",
        server.log()
    );
    assert!(dir.join("ui-final.png").exists());
}

/// Garbage, wrong types, huge numbers, unknown fields, invalid UTF-8 and broken HTTP: every one
/// a 4xx with an OpenAI-shaped error, and the server keeps serving.
#[test]
fn hostile_requests_get_4xx_and_the_server_lives_on() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let server = Server::start(&["--max-body", "65536"]);
    let chat = "/v1/chat/completions";
    let msgs = r#"[{"role":"user","content":"hi"}]"#;
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        (chat, b"".to_vec(), 400),
        (chat, b"{".to_vec(), 400),
        (chat, b"null".to_vec(), 400),
        (chat, b"[]".to_vec(), 400),
        (chat, b"{\"messages\": \"\xff\xfe\"}".to_vec(), 400),
        (chat, br#"{"messages":[]}"#.to_vec(), 400),
        (chat, br#"{"messages":[{"role":"wizard","content":"x"}]}"#.to_vec(), 400),
        (chat, br#"{"messages":[{"role":"user","content":{"a":1}}]}"#.to_vec(), 400),
        (chat, br#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}"#.to_vec(), 400),
        (chat, format!(r#"{{"messages":{msgs},"max_tokens":1e30}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"max_tokens":-1}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"max_tokens":0}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"temperature":1e400}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"temperature":3}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"temperature":"hot"}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"top_p":[1]}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"n":2}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"stop":["a","b","c","d","e"]}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"logit_bias":{{"999999999":5}}}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"surprise":true}}"#).into_bytes(), 400),
        (chat, format!(r#"{{"messages":{msgs},"model":"gpt-4"}}"#).into_bytes(), 404),
        (chat, format!(r#"{{"messages":{msgs},"seed":"abc"}}"#).into_bytes(), 400),
        (chat, vec![b'x'; 70_000], 413),
        ("/v1/completions", br#"{"prompt":[999999999]}"#.to_vec(), 400),
        ("/v1/completions", br#"{"prompt":["a","b"]}"#.to_vec(), 400),
        ("/v1/completions", br#"{"prompt":""}"#.to_vec(), 400),
        ("/v1/completions", br#"{"prompt":"x","echo":true}"#.to_vec(), 400),
        ("/detokenize", br#"{"tokens":[-1]}"#.to_vec(), 400),
        ("/detokenize", br#"{"tokens":[18446744073709551615]}"#.to_vec(), 400),
        ("/tokenize", br#"{"content":5}"#.to_vec(), 400),
        ("/nowhere", b"{}".to_vec(), 404),
    ];
    for (path, body, want) in &cases {
        let (status, resp) = server.post(path, body);
        assert_eq!(
            status,
            *want,
            "{path} {:?} → {status} {resp}",
            String::from_utf8_lossy(body)
        );
        let v: serde_json::Value = serde_json::from_str(&resp)
            .unwrap_or_else(|e| panic!("{path}: error body is not JSON ({e}): {resp}"));
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{resp}"
        );
        assert!(v["error"]["type"].is_string(), "{resp}");
    }
    // Wrong method, wrong key, broken HTTP.
    assert_eq!(server.get("/v1/chat/completions").0, 405);
    let (status, body) = server.raw(
        b"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("invalid_api_key"), "{body}");
    // A cross-site form or text/plain post must not start work.
    let body = br#"{"messages":[{"role":"user","content":"hi"}]}"#;
    let mut req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {API_KEY}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    let (status, body) = server.raw(&req);
    assert_eq!(status, 415, "{body}");
    let (status, _) = server.raw(b"NONSENSE\r\n\r\n");
    assert!((400..500).contains(&status), "{status}");

    // Random mutations of a valid request: never a 5xx, never a dead server.
    let valid =
        br#"{"messages":[{"role":"user","content":"Say hi"}],"max_tokens":1,"temperature":0}"#;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..150 {
        let mut body = valid.to_vec();
        for _ in 0..rng.gen_range(1..6) {
            let at = rng.gen_range(0..body.len());
            match rng.gen_range(0..3) {
                0 => body[at] = rng.gen(),
                1 => {
                    body.remove(at);
                }
                _ => {
                    let junk = b"{}[]\",:0e-9\\\xc3";
                    body.insert(at, junk[rng.gen_range(0..junk.len())])
                }
            }
        }
        let (status, resp) = server.post(chat, &body);
        assert!(
            status == 200 || (400..500).contains(&status),
            "{:?} → {status} {resp}",
            String::from_utf8_lossy(&body)
        );
    }
    let (status, _) = server.get("/health");
    assert_eq!(status, 200);
    let (status, body) = server.post(chat, valid);
    assert_eq!(status, 200, "{body}");
    assert!(!server.log().contains("panicked"), "{}", server.log());
}

/// ChatML with a thinking switch, as Qwen3's template has: `enable_thinking` opens a `<think>`
/// block in the generation prompt, and earlier reasoning is shown to the model.
const THINKING_TEMPLATE: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n\
{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>\n{% endif %}\
{{ m.content }}<|im_end|>\n{% endfor %}\
{% if add_generation_prompt %}<|im_start|>assistant\n{% if enable_thinking %}<think>\n{% endif %}{% endif %}";

/// Template variables pass through; text inside `<think>` comes back as `reasoning_content`.
#[test]
fn thinking_output_is_split_into_reasoning_content() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let tpl = dir.path().join("thinking.jinja");
    std::fs::write(&tpl, THINKING_TEMPLATE).unwrap();
    let server = Server::start(&["--chat-template-file", tpl.to_str().unwrap()]);
    let json = |body: &str| -> serde_json::Value { serde_json::from_str(body).expect(body) };

    let (status, body) = server.post(
        "/apply-template",
        br#"{"messages":[{"role":"user","content":"2+2?"},{"role":"assistant","content":"4","reasoning":"add them"},{"role":"user","content":"3+3?"}],"chat_template_kwargs":{"enable_thinking":true}}"#,
    );
    assert_eq!(status, 200, "{body}");
    let prompt = json(&body)["prompt"].as_str().unwrap().to_string();
    assert!(prompt.contains("<think>add them</think>\n4"), "{prompt:?}");
    assert!(
        prompt.ends_with("<|im_start|>assistant\n<think>\n"),
        "{prompt:?}"
    );

    let ask = |thinking: bool, stream: bool| {
        let body = format!(
            r#"{{"messages":[{{"role":"user","content":"What is 2+2?"}}],"temperature":0,"max_tokens":6,"stream":{stream},"chat_template_kwargs":{{"enable_thinking":{thinking}}}}}"#
        );
        server.post("/v1/chat/completions", body.as_bytes())
    };
    let (status, body) = ask(true, false);
    assert_eq!(status, 200, "{body}");
    let msg = &json(&body)["choices"][0]["message"];
    assert!(
        msg["reasoning_content"]
            .as_str()
            .is_some_and(|r| !r.is_empty()),
        "{body}"
    );
    assert_eq!(msg["content"], "", "{body}");

    let (status, body) = ask(false, false);
    assert_eq!(status, 200, "{body}");
    let msg = &json(&body)["choices"][0]["message"];
    assert!(msg.get("reasoning_content").is_none(), "{body}");
    assert!(
        msg["content"].as_str().is_some_and(|c| !c.is_empty()),
        "{body}"
    );

    let (status, body) = ask(true, true);
    assert_eq!(status, 200, "{body}");
    let deltas: Vec<serde_json::Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| json(d)["choices"][0]["delta"].clone())
        .collect();
    let reasoning: String = deltas
        .iter()
        .filter_map(|d| d["reasoning_content"].as_str())
        .collect();
    assert_eq!(
        reasoning,
        msg_text(&server, true),
        "streamed reasoning equals the non-streamed"
    );
    assert!(
        deltas
            .iter()
            .all(|d| d["content"].as_str().unwrap_or("").is_empty()),
        "{body}"
    );
}

/// The non-streamed reasoning of the greedy thinking request above.
fn msg_text(server: &Server, thinking: bool) -> String {
    let body = format!(
        r#"{{"messages":[{{"role":"user","content":"What is 2+2?"}}],"temperature":0,"max_tokens":6,"chat_template_kwargs":{{"enable_thinking":{thinking}}}}}"#
    );
    let (_, resp) = server.post("/v1/chat/completions", body.as_bytes());
    let v: serde_json::Value = serde_json::from_str(&resp).expect("JSON");
    v["choices"][0]["message"]["reasoning_content"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// `zinc chat` serves, then opens the UI's address with the desktop's opener.
#[cfg(target_os = "linux")]
#[test]
fn zinc_chat_opens_the_browser() {
    use std::os::unix::fs::PermissionsExt;
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let opened = dir.path().join("opened.txt");
    let opener = dir.path().join("xdg-open");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let server = Server::start_with("chat", &[], &[("PATH", path)]);
    let mut url = String::new();
    for _ in 0..100 {
        url = std::fs::read_to_string(&opened).unwrap_or_default();
        if !url.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let port = server.addr.rsplit(':').next().unwrap();
    assert_eq!(url.trim(), format!("http://127.0.0.1:{port}/"));
    let (status, body) = server.raw(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 200);
    assert!(body.contains("<html"), "{body}");
}
