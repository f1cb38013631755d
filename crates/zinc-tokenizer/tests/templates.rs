//! Chat prompts equal what llama.cpp's server renders (`POST /apply-template`, commit 0c1e570):
//! Qwen2.5's own Jinja template, and for Gemma 3 270M (no template in the file) our fallback
//! against llama.cpp's built-in gemma format. Fixtures: `scripts/gen_template_fixtures.py`.

use serde_json::Value as Json;
use zinc_gguf::GgufModel;
use zinc_testdata::{model, repo_root, TestModel};
use zinc_tokenizer::{ChatTemplate, RenderOptions, TemplateSource, Tokenizer};

fn template(m: TestModel) -> ChatTemplate {
    let model = GgufModel::open(model(m)).unwrap();
    let tok = Tokenizer::from_metadata(model.metadata()).unwrap();
    ChatTemplate::from_metadata(model.metadata(), &tok).unwrap()
}

fn check(m: TestModel, fixture: &str) {
    let t = template(m);
    let path = repo_root()
        .join("tests/fixtures/tokenizer")
        .join(format!("{fixture}.json"));
    let fx: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let opts = RenderOptions {
        add_generation_prompt: true,
        ..Default::default()
    };
    for case in fx["cases"].as_array().unwrap() {
        let messages = case["messages"].as_array().unwrap();
        let got = t.render_json(messages, &opts).unwrap();
        assert_eq!(
            got,
            case["prompt"].as_str().unwrap(),
            "{fixture}: {}",
            case["name"]
        );
    }
}

#[test]
fn qwen2_template_renders_like_llama_server() {
    assert_eq!(template(TestModel::Qwen2).source(), &TemplateSource::Gguf);
    check(TestModel::Qwen2, "qwen2-templates");
}

#[test]
fn gemma3_falls_back_to_the_gemma_format_and_says_so() {
    assert_eq!(
        template(TestModel::Gemma3).source(),
        &TemplateSource::Fallback("gemma")
    );
    check(TestModel::Gemma3, "gemma3-fallback-templates");
}

#[test]
fn generation_prompt_is_optional() {
    let t = template(TestModel::Qwen2);
    let msgs = [serde_json::json!({"role": "user", "content": "Hi"})];
    let with = t
        .render_json(
            &msgs,
            &RenderOptions {
                add_generation_prompt: true,
                ..Default::default()
            },
        )
        .unwrap();
    let without = t.render_json(&msgs, &RenderOptions::default()).unwrap();
    assert_eq!(with, format!("{without}<|im_start|>assistant\n"));
}

/// A Qwen3-style template: thinking toggled by `enable_thinking`, Python string methods,
/// `namespace`, `loop` and `tojson` all in use.
#[test]
fn qwen3_style_template_features_work() {
    let src = r#"{%- set ns = namespace(last_user=0) -%}
{%- for m in messages -%}{%- if m.role == 'user' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}{%- endfor -%}
{%- for m in messages -%}
<|im_start|>{{ m.role }}
{% if m.role == 'assistant' and '</think>' in m.content %}{{ m.content.split('</think>')[-1].lstrip('\n') }}{% else %}{{ m.content }}{% endif %}<|im_end|>
{% endfor -%}
{%- if tools %}{{ tools | tojson }}
{% endif -%}
{%- if add_generation_prompt -%}<|im_start|>assistant
{% if enable_thinking is defined and enable_thinking is false %}<think>

</think>

{% endif %}{%- endif -%}"#;
    let t = ChatTemplate::new(src, TemplateSource::Gguf, String::new(), String::new()).unwrap();
    let msgs = [
        serde_json::json!({"role": "user", "content": "2+2?"}),
        serde_json::json!({"role": "assistant", "content": "<think>\nadd\n</think>\n\n4"}),
    ];
    let opts = RenderOptions {
        add_generation_prompt: true,
        enable_thinking: Some(false),
        tools: Some(serde_json::json!([{"name": "calc", "description": "<math>"}])),
        ..Default::default()
    };
    let out = t.render_json(&msgs, &opts).unwrap();
    assert_eq!(
        out,
        "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n[{\"name\": \"calc\", \"description\": \"<math>\"}]\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    );
    let thinking = t
        .render_json(
            &msgs,
            &RenderOptions {
                add_generation_prompt: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(
        thinking.ends_with("<|im_start|>assistant\n"),
        "{thinking:?}"
    );
}
