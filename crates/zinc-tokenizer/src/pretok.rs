//! Pre-tokenizers of byte-level BPE: text is cut into words by the published regular
//! expression(s) of each `tokenizer.ggml.pre`, then each word's bytes are mapped to printable
//! characters (GPT-2's byte ↔ unicode table) before merging.
//!
//! The patterns are the ones in each model's `tokenizer.json` (not llama.cpp's rewrites for
//! std::regex), run by `fancy-regex`, which has the backtracking and look-ahead (`\s+(?!\S)`) the
//! `regex` crate lacks. `tests/pretok_python.rs` checks the splits against Python's `regex`.

use fancy_regex::Regex;

use crate::TokenizerError;

const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN35: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const O200K: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// llama.cpp's `default` BPE pre-tokenizer: four expressions applied one after another.
const DEFAULT: &[&str] = &[
    r"[\p{P}\$\+<=>\^~\|]+",
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)",
    r"\p{N}+",
    r"[0-9][0-9][0-9]",
];

/// A pre-tokenizer: its name and the expressions applied in turn.
pub struct Pre {
    pub name: &'static str,
    regexes: Vec<Regex>,
}

/// (`tokenizer.ggml.pre` values, our name, expressions, adds BOS by default).
const TABLE: &[(&[&str], &str, &[&str], bool)] = &[
    (&["default"], "default", DEFAULT, false),
    (
        &[
            "gpt-2",
            "gpt2",
            "phi-2",
            "jina-es",
            "jina-de",
            "gigachat",
            "jina-v2-es",
            "jina-v2-de",
            "a.x-4.0",
            "mellum",
            "modern-bert",
            "mpt",
            "olmo",
            "jais",
            "trillion",
            "granite-docling",
        ],
        "gpt2",
        &[GPT2],
        false,
    ),
    (
        &[
            "llama3",
            "llama-v3",
            "llama-bpe",
            "falcon3",
            "falcon-h1",
            "pixtral",
            "midm-2.0",
            "lfm2",
            "jina-v5-nano",
            "dbrx",
            "smaug-bpe",
        ],
        "llama3",
        &[LLAMA3],
        true,
    ),
    (
        &[
            "qwen2",
            "deepseek-r1-qwen",
            "kormo",
            "f2llmv2",
            "megrez",
            "stablelm2",
            "hunyuan",
            "solar-open",
            "grok-2",
        ],
        "qwen2",
        &[QWEN2],
        false,
    ),
    (&["qwen35"], "qwen35", &[QWEN35], false),
    (
        &["gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"],
        "gpt-4o",
        &[O200K],
        false,
    ),
];

impl Pre {
    /// The pre-tokenizer for a `tokenizer.ggml.pre` value (an empty value means `default`, as in
    /// llama.cpp).
    pub fn for_name(pre: &str) -> Result<Pre, TokenizerError> {
        let pre = if pre.is_empty() { "default" } else { pre };
        let (_, name, exprs, _) = TABLE
            .iter()
            .find(|(names, ..)| names.contains(&pre))
            .ok_or_else(|| TokenizerError::UnsupportedPre(pre.to_string()))?;
        let regexes = exprs
            .iter()
            .map(|e| {
                Regex::new(e)
                    .map_err(|err| TokenizerError::BadVocab(format!("pre-tokenizer {name}: {err}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Pre { name, regexes })
    }

    pub fn adds_bos_by_default(pre: &str) -> bool {
        TABLE
            .iter()
            .any(|(names, _, _, bos)| *bos && names.contains(&pre))
    }

    /// The published expression(s) of a pre-tokenizer, by our name (for tests).
    pub fn expressions(name: &str) -> Option<&'static [&'static str]> {
        TABLE
            .iter()
            .find(|(_, n, ..)| *n == name)
            .map(|(_, _, e, _)| *e)
    }

    /// Cuts `text` into words (byte ranges). Each expression splits every piece left by the
    /// previous one into its matches and the gaps between them.
    pub fn split<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut pieces = vec![text];
        for re in &self.regexes {
            let mut next = Vec::with_capacity(pieces.len() * 2);
            for piece in pieces {
                let mut last = 0;
                let mut at = 0;
                while at <= piece.len() {
                    // A pathological input that exhausts the backtracking limit ends matching for
                    // this piece; the rest is kept as one word (never dropped).
                    let m = match re.find_from_pos(piece, at) {
                        Ok(Some(m)) => m,
                        _ => break,
                    };
                    if m.start() > last {
                        next.push(&piece[last..m.start()]);
                    }
                    if m.end() > m.start() {
                        next.push(&piece[m.start()..m.end()]);
                        last = m.end();
                        at = m.end();
                    } else {
                        // An empty match: step over one character.
                        at = m.end() + piece[m.end()..].chars().next().map_or(1, char::len_utf8);
                    }
                }
                if last < piece.len() {
                    next.push(&piece[last..]);
                }
            }
            pieces = next;
        }
        pieces
    }
}

/// GPT-2's map from bytes to printable characters: printable Latin-1 bytes map to themselves,
/// the other 68 to U+0100 onwards in byte order.
pub fn byte_to_char_table() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut next = 256u32;
    for b in 0..256u32 {
        let printable =
            (33..=126).contains(&b) || (161..=172).contains(&b) || (174..=255).contains(&b);
        let c = if printable {
            b
        } else {
            let c = next;
            next += 1;
            c
        };
        table[b as usize] = char::from_u32(c).unwrap_or('\u{fffd}');
    }
    table
}
