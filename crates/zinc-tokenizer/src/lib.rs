//! Tokenizers built from GGUF metadata, matching llama.cpp id for id: SentencePiece-style
//! (`tokenizer.ggml.model = llama`) and byte-level BPE (`gpt2`), plus streaming decoding and chat
//! templates (`ARCHITECTURES.md §10`).
//!
//! Encoding runs in three stages, as in llama.cpp:
//! 1. **Special-token partition** (`partition`): control, user-defined and unknown tokens are cut
//!    out of the text, longest first. Control and unknown tokens only when `parse_special` is
//!    set; user-defined tokens (Gemma's runs of spaces, HTML tags…) always.
//! 2. **Per fragment**: SPM escapes spaces to `▁` and merges by score; BPE pre-tokenizes with its
//!    regular expressions, maps bytes to GPT-2 characters and merges by rank.
//! 3. BOS / EOS added when asked and the vocabulary wants them.

mod chat;
mod merge;
mod pretok;
mod stream;
mod vocab;

use zinc_gguf::Metadata;

pub use chat::{ChatMessage, ChatTemplate, RenderOptions, TemplateSource};
pub use pretok::Pre;
pub use stream::StreamDecoder;
pub use vocab::{attr, SpecialIds, VocabKind};

use vocab::{Vocab, MERGE_SEP};

#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("the model has no tokenizer (no tokenizer.ggml.model key)")]
    NoTokenizer,
    #[error("tokenizer model {0:?} is not supported (supported: llama, gpt2)")]
    UnsupportedModel(String),
    #[error("pre-tokenizer {0:?} is not supported (supported: default, gpt2, llama3, qwen2, qwen35, gpt-4o and their aliases)")]
    UnsupportedPre(String),
    #[error("malformed vocabulary: {0}")]
    BadVocab(String),
    #[error(transparent)]
    Metadata(#[from] zinc_gguf::GgufError),
    #[error("chat template: {0}")]
    Template(String),
    #[error("token id {id} is outside the vocabulary of {n_vocab}")]
    BadTokenId { id: u32, n_vocab: usize },
}

enum Algorithm {
    Spm,
    Bpe {
        pre: Pre,
        /// Take a whole pre-tokenized word when it is already a token (llama3's `ignore_merges`).
        ignore_merges: bool,
        byte_chars: Box<[char; 256]>,
        /// Inverse of `byte_chars`, for decoding.
        char_bytes: std::collections::HashMap<char, u8>,
    },
}

/// A tokenizer for one model's vocabulary.
pub struct Tokenizer {
    vocab: Vocab,
    algorithm: Algorithm,
    /// Byte → its byte-fallback token (`<0xNN>` for SPM, the byte's GPT-2 character for BPE).
    byte_tokens: [Option<u32>; 256],
    /// Each token's text as output bytes (special tokens included), precomputed.
    pieces: Vec<Vec<u8>>,
    /// Finds every special token in text; pattern i is `vocab.special_cache[i]`.
    special_matcher: Option<aho_corasick::AhoCorasick>,
}

/// A piece of input after the special-token partition.
enum Fragment<'a> {
    Text(&'a str),
    Token(u32),
}

impl Tokenizer {
    /// Builds the tokenizer described by a model's `tokenizer.ggml.*` metadata.
    pub fn from_metadata(md: &Metadata) -> Result<Tokenizer, TokenizerError> {
        let vocab = Vocab::from_metadata(md)?;
        let algorithm = match vocab.kind {
            VocabKind::Spm => Algorithm::Spm,
            VocabKind::Bpe => {
                let pre = Pre::for_name(&vocab.pre)?;
                let byte_chars = pretok::byte_to_char_table();
                let char_bytes = byte_chars
                    .iter()
                    .enumerate()
                    .map(|(b, &c)| (c, b as u8))
                    .collect();
                Algorithm::Bpe {
                    ignore_merges: pre.name == "llama3",
                    pre,
                    byte_chars: Box::new(byte_chars),
                    char_bytes,
                }
            }
        };
        let mut byte_tokens = [None; 256];
        for (b, slot) in byte_tokens.iter_mut().enumerate() {
            *slot = match &algorithm {
                Algorithm::Spm => vocab.id(&format!("<0x{b:02X}>")),
                Algorithm::Bpe { byte_chars, .. } => {
                    vocab.id(byte_chars[b].encode_utf8(&mut [0; 4]))
                }
            };
        }
        let special_matcher = if vocab.special_cache.is_empty() {
            None
        } else {
            let patterns = vocab
                .special_cache
                .iter()
                .map(|&id| vocab.texts[id as usize].as_str());
            Some(
                aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::Standard)
                    .build(patterns)
                    .map_err(|e| TokenizerError::BadVocab(format!("special tokens: {e}")))?,
            )
        };
        let mut t = Tokenizer {
            vocab,
            algorithm,
            byte_tokens,
            pieces: Vec::new(),
            special_matcher,
        };
        t.pieces = (0..t.vocab.n_tokens() as u32)
            .map(|id| t.render_piece(id))
            .collect();
        Ok(t)
    }

    pub fn n_vocab(&self) -> usize {
        self.vocab.n_tokens()
    }

    pub fn kind(&self) -> VocabKind {
        self.vocab.kind
    }

    /// `tokenizer.ggml.model` as stored (`llama`, `gpt2`).
    pub fn model(&self) -> &str {
        &self.vocab.model
    }

    /// `tokenizer.ggml.pre` as stored.
    pub fn pre(&self) -> &str {
        &self.vocab.pre
    }

    pub fn special(&self) -> &SpecialIds {
        &self.vocab.special
    }

    pub fn bos(&self) -> Option<u32> {
        self.vocab.special.bos
    }

    pub fn eos(&self) -> Option<u32> {
        self.vocab.special.eos
    }

    /// Whether the model wants BOS before a prompt (`tokenizer.ggml.add_bos_token`).
    pub fn add_bos(&self) -> bool {
        self.vocab.add_bos
    }

    pub fn add_eos(&self) -> bool {
        self.vocab.add_eos
    }

    /// Tokens that end generation (EOS, EOT, `<|im_end|>`, `<end_of_turn>`, …).
    pub fn eog_tokens(&self) -> &[u32] {
        &self.vocab.eog
    }

    pub fn is_eog(&self, id: u32) -> bool {
        self.vocab.eog.binary_search(&id).is_ok()
    }

    pub fn token_text(&self, id: u32) -> Option<&str> {
        self.vocab.texts.get(id as usize).map(String::as_str)
    }

    pub fn token_attr(&self, id: u32) -> u32 {
        self.vocab
            .attrs
            .get(id as usize)
            .copied()
            .unwrap_or(attr::UNDEFINED)
    }

    pub fn token_id(&self, text: &str) -> Option<u32> {
        self.vocab.id(text)
    }

    /// A rendered chat prompt → ids: special-token text is parsed and BOS added where the
    /// vocabulary asks for it, once, even when the template already wrote the BOS text.
    pub fn encode_chat(&self, rendered: &str) -> Vec<u32> {
        let mut ids = self.encode(rendered, true, true);
        if let Some(bos) = self.bos() {
            if ids.len() >= 2 && ids[0] == bos && ids[1] == bos {
                ids.remove(0);
            }
        }
        ids
    }

    /// Text → ids. `add_special` adds BOS/EOS where the vocabulary asks for them;
    /// `parse_special` lets control tokens written in the text (`<|im_start|>`) become tokens.
    pub fn encode(&self, text: &str, add_special: bool, parse_special: bool) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 2);
        if add_special && self.vocab.add_bos {
            if let Some(bos) = self.vocab.special.bos {
                out.push(bos);
            }
        }
        let fragments = if text.is_empty() {
            Vec::new()
        } else {
            self.partition(text, parse_special)
        };
        let mut prev_special = true;
        let mut buf = String::new();
        for f in fragments {
            match f {
                Fragment::Token(id) => {
                    out.push(id);
                    prev_special = true;
                }
                Fragment::Text(t) => {
                    match &self.algorithm {
                        Algorithm::Spm => {
                            buf.clear();
                            if self.vocab.add_space_prefix && prev_special {
                                buf.push('▁');
                            }
                            for c in t.chars() {
                                buf.push(if c == ' ' { '▁' } else { c });
                            }
                            self.encode_spm(&buf, &mut out);
                        }
                        Algorithm::Bpe { .. } => self.encode_bpe(t, &mut out),
                    }
                    prev_special = false;
                }
            }
        }
        if add_special && self.vocab.add_eos {
            if let Some(eos) = self.vocab.special.eos {
                out.push(eos);
            }
        }
        out
    }

    /// Cuts special tokens out of the text with llama.cpp's semantics (`tokenizer_st_partition`):
    /// special tokens are taken longest first, and each takes its occurrences left to right that
    /// lie wholly in text no earlier (longer) token has claimed.
    ///
    /// llama.cpp rescans the text once per special token, which is quadratic with Gemma's ~6k
    /// control tokens; here one Aho-Corasick pass finds every occurrence of every special token
    /// (overlaps included) and the claims are replayed in the same priority order.
    fn partition<'a>(&self, text: &'a str, parse_special: bool) -> Vec<Fragment<'a>> {
        let Some(ac) = &self.special_matcher else {
            return vec![Fragment::Text(text)];
        };
        // (priority, start, end, id) for every occurrence of an allowed special token.
        let mut occurrences: Vec<(u32, usize, usize, u32)> = Vec::new();
        for m in ac.find_overlapping_iter(text) {
            let rank = m.pattern().as_u32();
            let id = self.vocab.special_cache[rank as usize];
            if !parse_special
                && self.vocab.attrs[id as usize] & (attr::CONTROL | attr::UNKNOWN) != 0
            {
                continue;
            }
            occurrences.push((rank, m.start(), m.end(), id));
        }
        if occurrences.is_empty() {
            return vec![Fragment::Text(text)];
        }
        occurrences.sort_unstable();
        // Claimed ranges, keyed by start.
        let mut claimed: std::collections::BTreeMap<usize, (usize, u32)> =
            std::collections::BTreeMap::new();
        let mut prev: Option<(u32, usize)> = None; // (rank, end of its last claim)
        for (rank, s, e, id) in occurrences {
            if let Some((r, end)) = prev {
                if r == rank && s < end {
                    continue; // overlaps this token's previous claim
                }
            }
            let before = claimed
                .range(..=s)
                .next_back()
                .is_some_and(|(_, &(end, _))| end > s);
            let after = claimed
                .range(s..)
                .next()
                .is_some_and(|(&start, _)| start < e);
            if before || after {
                continue;
            }
            claimed.insert(s, (e, id));
            prev = Some((rank, e));
        }
        let mut frags = Vec::with_capacity(claimed.len() * 2 + 1);
        let mut at = 0;
        for (s, (e, id)) in claimed {
            if s > at {
                frags.push(Fragment::Text(&text[at..s]));
            }
            frags.push(Fragment::Token(id));
            at = e;
        }
        if at < text.len() {
            frags.push(Fragment::Text(&text[at..]));
        }
        frags
    }

    fn encode_spm(&self, text: &str, out: &mut Vec<u32>) {
        let v = &self.vocab;
        let mut joined = String::new();
        let pieces = merge::merge(text, |l, r| {
            joined.clear();
            joined.push_str(l);
            joined.push_str(r);
            v.id(&joined).map(|id| v.scores[id as usize])
        });
        for p in pieces {
            match v.id(p) {
                Some(id) => out.push(id),
                None => self.push_bytes(p.as_bytes(), out),
            }
        }
    }

    fn encode_bpe(&self, text: &str, out: &mut Vec<u32>) {
        let Algorithm::Bpe {
            pre,
            ignore_merges,
            byte_chars,
            ..
        } = &self.algorithm
        else {
            return;
        };
        let v = &self.vocab;
        let mut word = String::new();
        let mut key = String::new();
        for w in pre.split(text) {
            word.clear();
            word.extend(w.bytes().map(|b| byte_chars[b as usize]));
            if *ignore_merges {
                if let Some(id) = v.id(&word) {
                    out.push(id);
                    continue;
                }
            }
            let pieces = merge::merge(&word, |l, r| {
                key.clear();
                key.push_str(l);
                key.push(MERGE_SEP);
                key.push_str(r);
                v.merges.get(&key).map(|&rank| -(rank as f32))
            });
            for p in pieces {
                match v.id(p) {
                    Some(id) => out.push(id),
                    // Each character of the piece is one byte's GPT-2 character.
                    None => {
                        for c in p.chars() {
                            if let Some(id) = v.id(c.encode_utf8(&mut [0; 4])) {
                                out.push(id);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Byte fallback: one `<0xNN>` token per byte, or UNK where the vocabulary lacks one.
    fn push_bytes(&self, bytes: &[u8], out: &mut Vec<u32>) {
        for &b in bytes {
            if let Some(id) = self.byte_tokens[b as usize].or(self.vocab.special.unk) {
                out.push(id);
            }
        }
    }

    /// The bytes a token stands for (llama.cpp's `token_to_piece` with `special = true`).
    fn render_piece(&self, id: u32) -> Vec<u8> {
        let i = id as usize;
        let a = self.vocab.attrs[i];
        let text = &self.vocab.texts[i];
        if a & (attr::CONTROL | attr::UNKNOWN | attr::USER_DEFINED) != 0 {
            return text.as_bytes().to_vec();
        }
        if a & attr::NORMAL != 0 {
            return match &self.algorithm {
                Algorithm::Spm => text.replace('▁', " ").into_bytes(),
                Algorithm::Bpe { char_bytes, .. } => {
                    let mut out = Vec::with_capacity(text.len());
                    for c in text.chars() {
                        match char_bytes.get(&c) {
                            Some(&b) => out.push(b),
                            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
                        }
                    }
                    out
                }
            };
        }
        if a & attr::BYTE != 0 {
            return parse_byte_token(text).map(|b| vec![b]).unwrap_or_default();
        }
        Vec::new()
    }

    /// The bytes of one token. With `special = false`, control and unknown tokens are empty (what
    /// a user sees in generated text).
    pub fn piece(&self, id: u32, special: bool) -> Result<&[u8], TokenizerError> {
        let p = self
            .pieces
            .get(id as usize)
            .ok_or(TokenizerError::BadTokenId {
                id,
                n_vocab: self.n_vocab(),
            })?;
        if !special && self.token_attr(id) & (attr::CONTROL | attr::UNKNOWN) != 0 {
            return Ok(&[]);
        }
        Ok(p)
    }

    /// Ids → text. Invalid UTF-8 (a sequence cut by the ids given) becomes U+FFFD. With
    /// `special = false`, control tokens are left out. The leading space SentencePiece adds is
    /// removed again when the vocabulary adds one.
    pub fn decode(&self, ids: &[u32], special: bool) -> Result<String, TokenizerError> {
        let mut bytes = Vec::new();
        for &id in ids {
            bytes.extend_from_slice(self.piece(id, special)?);
        }
        if self.vocab.kind == VocabKind::Spm
            && self.vocab.add_space_prefix
            && bytes.first() == Some(&b' ')
        {
            bytes.remove(0);
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A decoder for generated tokens that never splits a UTF-8 character across two outputs.
    pub fn stream_decoder(&self, special: bool) -> StreamDecoder<'_> {
        StreamDecoder::new(self, special)
    }
}

/// `<0xNN>` → NN.
fn parse_byte_token(t: &str) -> Option<u8> {
    let hex = t.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests;
