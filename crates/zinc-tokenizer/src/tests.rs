use super::*;

#[test]
fn gpt2_byte_table_is_a_bijection_onto_printable_chars() {
    let t = pretok::byte_to_char_table();
    let mut seen = std::collections::HashSet::new();
    for (b, &c) in t.iter().enumerate() {
        assert!(seen.insert(c), "byte {b} maps to a duplicate");
        assert!(
            !c.is_whitespace() && !c.is_control(),
            "byte {b} maps to {c:?}"
        );
    }
    assert_eq!(t[b'A' as usize], 'A');
    assert_eq!(t[b' ' as usize], 'Ġ');
    assert_eq!(t[b'\n' as usize], 'Ċ');
    assert_eq!(t[0], 'Ā');
}

#[test]
fn byte_tokens_parse() {
    assert_eq!(parse_byte_token("<0x0A>"), Some(10));
    assert_eq!(parse_byte_token("<0xff>"), Some(255));
    assert_eq!(parse_byte_token("<0x100>"), None);
    assert_eq!(parse_byte_token("0x0A"), None);
}

#[test]
fn strftime_formats_known_dates() {
    // 2024-02-29 13:05:09 UTC was a Thursday, day 60 of a leap year.
    let t = 1_709_211_909;
    assert_eq!(
        chat::strftime(t, "%Y-%m-%d %H:%M:%S"),
        "2024-02-29 13:05:09"
    );
    assert_eq!(
        chat::strftime(t, "%d %B %Y, %A %a %b %j %I%p %%"),
        "29 February 2024, Thursday Thu Feb 060 01PM %"
    );
    assert_eq!(chat::strftime(0, "%Y-%m-%d %A"), "1970-01-01 Thursday");
}

#[test]
fn merge_prefers_priority_then_the_leftmost_pair() {
    // Pairs "ab" (priority 2) and "bc" (priority 1) compete for the b in "abc".
    let pieces = merge::merge("abc", |l, r| match (l, r) {
        ("a", "b") => Some(2.0),
        ("b", "c") => Some(1.0),
        _ => None,
    });
    assert_eq!(pieces, ["ab", "c"]);
    // Equal priority: the leftmost pair wins.
    let pieces = merge::merge("aaa", |l, r| (l == "a" && r == "a").then_some(1.0));
    assert_eq!(pieces, ["aa", "a"]);
    assert!(merge::merge("", |_, _| Some(1.0)).is_empty());
}

#[test]
fn tojson_writes_python_style_json() {
    let t = ChatTemplate::new(
        "{{ x | tojson }}|{{ x | tojson(indent=2) }}",
        TemplateSource::Gguf,
        String::new(),
        String::new(),
    )
    .unwrap();
    let mut opts = chat::RenderOptions::default();
    opts.extra.insert(
        "x".into(),
        serde_json::json!({"b": 1, "a": [true, null, 1.5, "<é>"], "c": 2.0}),
    );
    let out = t.render(&[], &opts).unwrap();
    assert_eq!(
        out,
        "{\"b\": 1, \"a\": [true, null, 1.5, \"<é>\"], \"c\": 2.0}|{\n  \"b\": 1,\n  \"a\": [\n    true,\n    null,\n    1.5,\n    \"<é>\"\n  ],\n  \"c\": 2.0\n}"
    );
}

#[test]
fn raise_exception_is_an_error() {
    let t = ChatTemplate::new(
        "{{ raise_exception('no system role') }}",
        TemplateSource::Gguf,
        String::new(),
        String::new(),
    )
    .unwrap();
    let err = t.render(&[], &Default::default()).unwrap_err().to_string();
    assert!(err.contains("no system role"), "{err}");
}
