//! Random Unicode never panics the tokenizers and always comes back from decode; streaming decode
//! emits whole characters only and adds up to the full decode.
//!
//! One loss is inherent to SentencePiece and shared with llama.cpp: text spaces are encoded as
//! U+2581 `▁`, so a literal `▁` in the input decodes as a space.

use std::sync::OnceLock;

use proptest::prelude::*;
use zinc_gguf::GgufModel;
use zinc_testdata::{model, TestModel};
use zinc_tokenizer::{Tokenizer, VocabKind};

fn tokenizers() -> &'static [Tokenizer; 2] {
    static T: OnceLock<[Tokenizer; 2]> = OnceLock::new();
    T.get_or_init(|| {
        let load =
            |m| Tokenizer::from_metadata(GgufModel::open(model(m)).unwrap().metadata()).unwrap();
        [load(TestModel::Gemma3), load(TestModel::Qwen2)]
    })
}

fn check_round_trip(input: &str) -> Result<(), TestCaseError> {
    for tok in tokenizers() {
        let expected = if tok.kind() == VocabKind::Spm {
            input.replace('▁', " ")
        } else {
            input.to_string()
        };
        let text = expected.as_str();
        for parse_special in [false, true] {
            let ids = tok.encode(input, false, parse_special);
            prop_assert!(ids.iter().all(|&i| (i as usize) < tok.n_vocab()));
            let back = tok.decode(&ids, true).unwrap();
            prop_assert_eq!(
                &back,
                text,
                "{} parse_special={}",
                tok.model(),
                parse_special
            );
            let mut stream = tok.stream_decoder(true);
            let mut streamed = String::new();
            for &id in &ids {
                streamed.push_str(&stream.push(id).unwrap());
            }
            prop_assert_eq!(stream.pending(), 0);
            streamed.push_str(&stream.finish());
            prop_assert_eq!(&streamed, text);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_unicode_round_trips(text in any::<String>()) {
        check_round_trip(&text)?;
    }

    #[test]
    fn mixed_scripts_and_specials_round_trip(parts in prop::collection::vec(prop::sample::select(vec![
        " ", "  ", "\n", "\t", "a", "Hello", "世界", "👍🏽", "é", "'s", "123", "<|im_start|>", "<start_of_turn>",
        "<eos>", "<0x41>", "▁", "Ġ", "\u{0}", "\u{fffd}", "<div>", "</s>",
    ]), 0..30)) {
        check_round_trip(&parts.concat())?;
    }
}

#[test]
fn streaming_never_splits_a_character() {
    // Byte-fallback pieces of a 4-byte emoji arrive one byte at a time.
    let gemma = &tokenizers()[0];
    let ids = gemma.encode("x🫠y", false, false);
    let mut stream = gemma.stream_decoder(false);
    let mut chunks = Vec::new();
    for &id in &ids {
        chunks.push(stream.push(id).unwrap());
    }
    chunks.push(stream.finish());
    assert_eq!(chunks.concat(), "x🫠y");
    for c in &chunks {
        assert!(!c.contains('\u{fffd}'), "{chunks:?}");
    }
    // Invalid bytes become U+FFFD; an unfinished character is held, then flushed at the end.
    let mut s = gemma.stream_decoder(false);
    assert_eq!(s.push_bytes(&[0xf0, 0x9f]), "");
    assert_eq!(s.pending(), 2);
    assert_eq!(s.push_bytes(&[0x98, 0x80, b'!']), "😀!");
    assert_eq!(s.push_bytes(&[0xff, b'a']), "\u{fffd}a");
    assert_eq!(s.push_bytes(&[0xe2, 0x82]), "");
    assert_eq!(s.finish(), "\u{fffd}");
}
