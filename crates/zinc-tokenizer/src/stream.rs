//! Streaming detokenization: generated tokens arrive one at a time and a token may hold only part
//! of a UTF-8 character (byte-fallback tokens, byte-level BPE pieces). The decoder emits only
//! whole characters and keeps an unfinished one until the bytes that complete it arrive.

use crate::{Tokenizer, TokenizerError};

pub struct StreamDecoder<'t> {
    tokenizer: &'t Tokenizer,
    special: bool,
    pending: Vec<u8>,
}

impl<'t> StreamDecoder<'t> {
    pub(crate) fn new(tokenizer: &'t Tokenizer, special: bool) -> Self {
        StreamDecoder {
            tokenizer,
            special,
            pending: Vec::new(),
        }
    }

    /// Adds one token; returns the text that is now complete (possibly empty).
    pub fn push(&mut self, id: u32) -> Result<String, TokenizerError> {
        let piece = self.tokenizer.piece(id, self.special)?;
        self.pending.extend_from_slice(piece);
        Ok(self.take_complete())
    }

    /// Adds raw bytes (for tests and for callers with their own pieces).
    pub fn push_bytes(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        self.take_complete()
    }

    /// Bytes held back waiting for the rest of a character.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Ends the stream: whatever is held back is emitted, an unfinished character as U+FFFD.
    pub fn finish(&mut self) -> String {
        let out = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        out
    }

    fn take_complete(&mut self) -> String {
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    out.push_str(s);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // SAFETY-free: the prefix up to valid_up_to is valid UTF-8 by definition.
                    out.push_str(std::str::from_utf8(&self.pending[..valid]).unwrap_or_default());
                    match e.error_len() {
                        // An incomplete character at the end: wait for more bytes.
                        None => {
                            self.pending.drain(..valid);
                            return out;
                        }
                        // Bytes that can never become valid: replace them and go on.
                        Some(n) => {
                            out.push('\u{fffd}');
                            self.pending.drain(..valid + n);
                        }
                    }
                }
            }
        }
    }
}
