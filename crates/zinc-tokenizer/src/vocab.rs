//! The vocabulary as GGUF stores it (`tokenizer.ggml.*`, `ARCHITECTURES.md §10`), with the token
//! attributes and special ids llama.cpp derives from it.
//!
//! llama.cpp corrects some conversions by token text (an `<|im_end|>` stored as a normal token is
//! treated as a control token, end-of-generation tokens are recognised by name). Those rules
//! decide how text is split and when generation stops, so they are reproduced here.

use std::collections::HashMap;

use zinc_gguf::{Array, Metadata};

use crate::TokenizerError;

/// Token attributes (llama.cpp's `llama_token_attr` bits).
pub mod attr {
    pub const UNDEFINED: u32 = 0;
    pub const UNKNOWN: u32 = 1 << 0;
    pub const UNUSED: u32 = 1 << 1;
    pub const NORMAL: u32 = 1 << 2;
    pub const CONTROL: u32 = 1 << 3;
    pub const USER_DEFINED: u32 = 1 << 4;
    pub const BYTE: u32 = 1 << 5;
}

/// Which algorithm turns text into ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VocabKind {
    /// `tokenizer.ggml.model = llama`: SentencePiece-style score-driven merges with byte fallback.
    Spm,
    /// `tokenizer.ggml.model = gpt2`: byte-level BPE with ranked merges.
    Bpe,
}

#[derive(Clone, Debug, Default)]
pub struct SpecialIds {
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub eot: Option<u32>,
    pub eom: Option<u32>,
    pub unk: Option<u32>,
    pub sep: Option<u32>,
    pub pad: Option<u32>,
    pub mask: Option<u32>,
    pub fim_pre: Option<u32>,
    pub fim_suf: Option<u32>,
    pub fim_mid: Option<u32>,
    pub fim_pad: Option<u32>,
    pub fim_rep: Option<u32>,
    pub fim_sep: Option<u32>,
}

pub struct Vocab {
    pub kind: VocabKind,
    pub model: String,
    pub pre: String,
    pub texts: Vec<String>,
    pub scores: Vec<f32>,
    pub attrs: Vec<u32>,
    pub token_to_id: HashMap<String, u32>,
    /// `"left\u{1}right"` → rank, for BPE.
    pub merges: HashMap<String, u32>,
    pub special: SpecialIds,
    /// Every id that ends generation.
    pub eog: Vec<u32>,
    pub add_bos: bool,
    pub add_eos: bool,
    pub add_space_prefix: bool,
    /// Control, user-defined and unknown tokens, longest text first: the order text is split by.
    pub special_cache: Vec<u32>,
}

/// GGUF `tokenizer.ggml.token_type` values.
fn attr_from_type(t: i32) -> u32 {
    match t {
        1 => attr::NORMAL,
        2 => attr::UNKNOWN,
        3 => attr::CONTROL,
        4 => attr::USER_DEFINED,
        5 => attr::UNUSED,
        6 => attr::BYTE,
        _ => attr::UNDEFINED,
    }
}

/// Separator between the halves of a merge key; byte-level BPE never emits U+0001.
pub const MERGE_SEP: char = '\u{1}';

impl Vocab {
    pub fn from_metadata(md: &Metadata) -> Result<Vocab, TokenizerError> {
        let model = md
            .opt_str("tokenizer.ggml.model")?
            .ok_or(TokenizerError::NoTokenizer)?
            .to_string();
        let pre = md.opt_str("tokenizer.ggml.pre")?.unwrap_or("").to_string();
        let kind = match model.as_str() {
            "llama" => VocabKind::Spm,
            "gpt2" => VocabKind::Bpe,
            other => return Err(TokenizerError::UnsupportedModel(other.to_string())),
        };
        let tokens = md.get_str_array("tokenizer.ggml.tokens")?;
        let n = tokens.len();
        if n == 0 || n > u32::MAX as usize / 2 {
            return Err(TokenizerError::BadVocab(format!("{n} tokens")));
        }
        let scores: Vec<f32> = match md.opt_array("tokenizer.ggml.scores")? {
            None => vec![0.0; n],
            Some(Array::F32(v)) if v.len() >= n => v[..n].to_vec(),
            Some(Array::I32(v)) if v.len() >= n => v[..n].iter().map(|&s| s as f32).collect(),
            Some(a) => {
                return Err(TokenizerError::BadVocab(format!(
                    "tokenizer.ggml.scores: {} {} values for {n} tokens",
                    a.len(),
                    a.elem_type().name()
                )))
            }
        };
        let mut attrs: Vec<u32> = match md.opt_array("tokenizer.ggml.token_type")? {
            None => vec![attr::NORMAL; n],
            Some(Array::I32(v)) if v.len() >= n => {
                v[..n].iter().map(|&t| attr_from_type(t)).collect()
            }
            Some(a) => {
                return Err(TokenizerError::BadVocab(format!(
                    "tokenizer.ggml.token_type: {} {} values for {n} tokens",
                    a.len(),
                    a.elem_type().name()
                )))
            }
        };
        let mut texts = Vec::with_capacity(n);
        let mut token_to_id = HashMap::with_capacity(n);
        for (i, t) in tokens.iter().enumerate() {
            let t = if t.is_empty() {
                format!("[EMPTY_{i}]")
            } else {
                t.clone()
            };
            // A later duplicate wins, as in llama.cpp.
            token_to_id.insert(t.clone(), i as u32);
            texts.push(t);
        }

        let mut merges = HashMap::new();
        let mut add_bos = false;
        let mut add_space_prefix = false;
        let mut special = SpecialIds::default();
        match kind {
            VocabKind::Spm => {
                special.bos = Some(1);
                special.eos = Some(2);
                special.unk = Some(0);
                add_bos = true;
                add_space_prefix = true;
            }
            VocabKind::Bpe => {
                let list = md.get_str_array("tokenizer.ggml.merges").map_err(|_| {
                    TokenizerError::BadVocab("byte-level BPE needs tokenizer.ggml.merges".into())
                })?;
                merges.reserve(list.len());
                for (rank, m) in list.iter().enumerate() {
                    // Split at the first space after position 0, as llama.cpp does.
                    let (l, r) = match m.char_indices().skip(1).find(|&(_, c)| c == ' ') {
                        Some((p, _)) => (&m[..p], &m[p + 1..]),
                        None => ("", ""),
                    };
                    let key = format!("{l}{MERGE_SEP}{r}");
                    merges.entry(key).or_insert(rank as u32);
                }
                special.bos = Some(11);
                special.eos = Some(11);
                if crate::pretok::Pre::adds_bos_by_default(&pre) {
                    add_bos = true;
                }
            }
        }
        if let Some(v) = md.opt_bool("tokenizer.ggml.add_space_prefix")? {
            add_space_prefix = v;
        }
        let in_range = |id: Option<u32>| id.filter(|&i| (i as usize) < n);
        special.bos = in_range(special.bos);
        special.eos = in_range(special.eos);
        special.unk = in_range(special.unk);
        for (key, slot) in [
            ("tokenizer.ggml.bos_token_id", &mut special.bos),
            ("tokenizer.ggml.eos_token_id", &mut special.eos),
            ("tokenizer.ggml.eot_token_id", &mut special.eot),
            ("tokenizer.ggml.eom_token_id", &mut special.eom),
            ("tokenizer.ggml.unknown_token_id", &mut special.unk),
            ("tokenizer.ggml.seperator_token_id", &mut special.sep),
            ("tokenizer.ggml.padding_token_id", &mut special.pad),
            ("tokenizer.ggml.mask_token_id", &mut special.mask),
            ("tokenizer.ggml.fim_pre_token_id", &mut special.fim_pre),
            ("tokenizer.ggml.fim_suf_token_id", &mut special.fim_suf),
            ("tokenizer.ggml.fim_mid_token_id", &mut special.fim_mid),
            ("tokenizer.ggml.fim_pad_token_id", &mut special.fim_pad),
            ("tokenizer.ggml.fim_rep_token_id", &mut special.fim_rep),
            ("tokenizer.ggml.fim_sep_token_id", &mut special.fim_sep),
        ] {
            // An out-of-range id in the file keeps the default (llama.cpp warns and does the same).
            if let Some(id) = md.opt_u32(key)?.filter(|&i| (i as usize) < n) {
                *slot = Some(id);
            }
        }
        if let Some(v) = md.opt_bool("tokenizer.ggml.add_bos_token")? {
            add_bos = v;
        }
        let add_eos = md
            .opt_bool("tokenizer.ggml.add_eos_token")?
            .unwrap_or(false);

        let eog = detect_by_text(&texts, &token_to_id, &mut attrs, &mut special);

        let mut special_cache: Vec<u32> = (0..n as u32)
            .filter(|&i| {
                attrs[i as usize] & (attr::CONTROL | attr::USER_DEFINED | attr::UNKNOWN) != 0
            })
            .collect();
        // Longest first; equal lengths by id (llama.cpp's sort is unstable there, which only
        // matters for two equally long special tokens overlapping in the text).
        special_cache.sort_by_key(|&i| (std::cmp::Reverse(texts[i as usize].len()), i));

        Ok(Vocab {
            kind,
            model,
            pre,
            texts,
            scores,
            attrs,
            token_to_id,
            merges,
            special,
            eog,
            add_bos,
            add_eos,
            add_space_prefix,
            special_cache,
        })
    }

    pub fn n_tokens(&self) -> usize {
        self.texts.len()
    }

    pub fn id(&self, text: &str) -> Option<u32> {
        self.token_to_id.get(text).copied()
    }
}

const EOT_NAMES: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "<｜end▁of▁sentence｜>",
    "<end_of_utterance>",
];
const FIM_PRE: &[&str] = &[
    "<|fim_prefix|>",
    "<fim-prefix>",
    "<fim_prefix>",
    "<｜fim▁begin｜>",
    "<PRE>",
    "▁<PRE>",
    "<|code_prefix|>",
    "<|prefix|>",
];
const FIM_SUF: &[&str] = &[
    "<|fim_suffix|>",
    "<fim-suffix>",
    "<fim_suffix>",
    "<｜fim▁hole｜>",
    "<SUF>",
    "▁<SUF>",
    "<|code_suffix|>",
    "<|suffix|>",
];
const FIM_MID: &[&str] = &[
    "<|fim_middle|>",
    "<fim-middle>",
    "<fim_middle>",
    "<｜fim▁end｜>",
    "<MID>",
    "▁<MID>",
    "<|code_middle|>",
    "<|middle|>",
];
const FIM_PAD: &[&str] = &["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"];
const FIM_REP: &[&str] = &[
    "<|fim_repo|>",
    "<|repo_name|>",
    "<fim-repo>",
    "<REPO>",
    "<reponame>",
];
const FIM_SEP: &[&str] = &["<|file_sep|>"];
const EOG_NAMES: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<｜end▁of▁sentence｜>",
    "[e~[",
];

/// Finds EOT/EOM/FIM/EOG tokens by their text where the file does not name them, marks them as
/// control tokens, and returns the end-of-generation set (llama.cpp's `llama_vocab::load`).
fn detect_by_text(
    texts: &[String],
    token_to_id: &HashMap<String, u32>,
    attrs: &mut [u32],
    special: &mut SpecialIds,
) -> Vec<u32> {
    // llama.cpp walks its text → id map; where a slot could match several names, the first found
    // wins. Walking ids in order makes that choice deterministic (real vocabularies hold at most
    // one of each).
    let ids_in_order = || {
        let mut v: Vec<(&str, u32)> = token_to_id.iter().map(|(t, &i)| (t.as_str(), i)).collect();
        v.sort_by_key(|&(_, i)| i);
        v
    };
    let entries = ids_in_order();
    let mut mark_control = |id: u32| attrs[id as usize] |= attr::CONTROL;
    let slots: [(&mut Option<u32>, &[&str]); 8] = [
        (&mut special.eot, EOT_NAMES),
        (&mut special.eom, &["<|eom_id|>"]),
        (&mut special.fim_pre, FIM_PRE),
        (&mut special.fim_suf, FIM_SUF),
        (&mut special.fim_mid, FIM_MID),
        (&mut special.fim_pad, FIM_PAD),
        (&mut special.fim_rep, FIM_REP),
        (&mut special.fim_sep, FIM_SEP),
    ];
    for (slot, names) in slots {
        if slot.is_some() {
            continue;
        }
        if let Some(&(_, id)) = entries.iter().find(|(t, _)| names.contains(t)) {
            *slot = Some(id);
            mark_control(id);
        }
    }
    // Control tokens named "unused" are unused.
    for &(t, id) in &entries {
        let a = &mut attrs[id as usize];
        if *a & attr::CONTROL != 0 && t.contains("unused") {
            *a |= attr::UNUSED;
        }
    }
    let mut eog: Vec<u32> = Vec::new();
    let add = |id: Option<u32>, eog: &mut Vec<u32>| {
        if let Some(id) = id {
            if !eog.contains(&id) {
                eog.push(id);
            }
        }
    };
    add(special.fim_pad, &mut eog);
    add(special.fim_rep, &mut eog);
    add(special.fim_sep, &mut eog);
    for &(t, id) in &entries {
        if EOG_NAMES.contains(&t) {
            add(Some(id), &mut eog);
            attrs[id as usize] |= attr::CONTROL;
        }
    }
    // gpt-oss: these always render and are always split out of text.
    for &(t, id) in &entries {
        if matches!(
            t,
            "<|channel|>" | "<|message|>" | "<|start|>" | "<|constrain|>"
        ) {
            attrs[id as usize] = attr::USER_DEFINED;
        }
    }
    add(special.eos, &mut eog);
    add(special.eot, &mut eog);
    add(special.eom, &mut eog);
    // o200k_harmony / solar-open: with <|return|> and <|call|> present, <|end|> is not an end.
    let has = |name: &str, eog: &[u32]| eog.iter().any(|&i| texts[i as usize] == name);
    if let Some(&end) = eog.iter().find(|&&i| texts[i as usize] == "<|end|>") {
        if (has("<|return|>", &eog) && (has("<|call|>", &eog) || has("<|calls|>", &eog)))
            || ((has("<|call|>", &eog) || has("<|calls|>", &eog)) && has("<|flush|>", &eog))
        {
            eog.retain(|&i| i != end);
            attrs[end as usize] = attr::USER_DEFINED;
        }
    }
    // gemma4 / plamo: </s> is a normal token there.
    if let Some(&s) = eog.iter().find(|&&i| texts[i as usize] == "</s>") {
        if has("<|tool_response>", &eog) || has("<|plamo:eos|>", &eog) {
            eog.retain(|&i| i != s);
            attrs[s as usize] = attr::NORMAL;
        }
    }
    eog.sort_unstable();
    eog
}
