//! The engine: a model, its backend and tokenizer; sessions that own a KV cache; prompt
//! evaluation in batches; generation with sampling, end-of-generation tokens, stop strings and a
//! token budget.
//!
//! One sequence at a time for now (a contiguous KV cache per session); the paged cache and the
//! scheduler arrive behind the same `Session` interface.

pub mod sampler;

use std::time::{Duration, Instant};

use zinc_backend::Backend;
use zinc_models::{LanguageModel, ModelError};
use zinc_tokenizer::Tokenizer;

pub use sampler::{Sampler, SamplerConfig};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("the prompt has {prompt} tokens but the context holds {n_ctx}; use a larger --ctx or a shorter prompt")]
    ContextOverflow { prompt: usize, n_ctx: usize },
    #[error("the prompt is empty")]
    EmptyPrompt,
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Tokenizer(#[from] zinc_tokenizer::TokenizerError),
    /// The model or backend stopped mid-step (reported by callers that contain panics).
    #[error("{0}")]
    Failed(String),
}

/// A loaded model ready to serve sessions.
pub struct Engine<B: Backend> {
    pub backend: B,
    pub model: Box<dyn LanguageModel<B>>,
    pub tokenizer: Tokenizer,
    /// Tokens evaluated per forward call during prompt processing.
    pub batch: usize,
}

/// Which logits an evaluation returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logits {
    /// Only the last token's (what generation needs; the LM head is the costliest matmul).
    Last,
    /// Every token's (perplexity, `zinc logits`).
    All,
}

/// One sequence: its KV cache and the tokens already in it.
pub struct Session<'e, B: Backend> {
    engine: &'e Engine<B>,
    cache: B::KvCache,
    n_ctx: usize,
    tokens: Vec<u32>,
    /// The next decode step, recorded while the device ran the last one (`Backend::ahead_begin`).
    ahead: Option<Ahead<B::Tensor>>,
}

/// A decode step recorded ahead for position `pos`, under the backend's `ticket`: the tensors
/// it will write, its logits and (where it was recorded with one) their argmax.
struct Ahead<T> {
    pos: usize,
    ticket: u64,
    logits: T,
    argmax: Option<T>,
}

impl<B: Backend> Drop for Session<'_, B> {
    fn drop(&mut self) {
        self.drop_ahead();
    }
}

/// Why generation ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finish {
    /// An end-of-generation token or a stop string.
    Stop,
    /// The token budget or the context ran out.
    Length,
    /// The caller asked to stop.
    Cancelled,
}

#[derive(Clone, Debug)]
pub struct GenerateParams {
    pub max_tokens: usize,
    pub sampler: SamplerConfig,
    /// Text that ends generation; it is not part of the output.
    pub stop: Vec<String>,
    /// Keep going past end-of-generation tokens (benchmarks).
    pub ignore_eos: bool,
    /// Added to a token's logit before sampling (OpenAI's `logit_bias`).
    pub logit_bias: Vec<(u32, f32)>,
    /// Report each token's log-probability and this many most likely alternatives.
    pub logprobs: Option<usize>,
}

impl Default for GenerateParams {
    fn default() -> Self {
        GenerateParams {
            max_tokens: 256,
            sampler: SamplerConfig::default(),
            stop: Vec::new(),
            ignore_eos: false,
            logit_bias: Vec::new(),
            logprobs: None,
        }
    }
}

/// A token's log-probability under the model (the raw logits, before penalties and sampling)
/// and the most likely alternatives at its position, best first.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenLogprobs {
    pub logprob: f32,
    pub top: Vec<(u32, f32)>,
}

/// What generation reports as it goes: a sampled token, or (at the end) held-back text.
#[derive(Clone, Debug)]
pub struct TokenEvent<'a> {
    /// The sampled token; `None` for the final event that flushes held-back text.
    pub token: Option<u32>,
    /// Text that became final with this event (may be empty: half a character, or text that
    /// could still turn into a stop string, is held back).
    pub text: &'a str,
    pub logprobs: Option<TokenLogprobs>,
}

#[derive(Clone, Debug)]
pub struct Generation {
    pub text: String,
    pub tokens: Vec<u32>,
    pub finish: Finish,
    /// Prompt tokens evaluated by this call (those already in the cache are not counted).
    pub prompt_tokens: usize,
    pub prompt_time: Duration,
    pub gen_time: Duration,
}

impl<B: Backend> Engine<B> {
    pub fn new(backend: B, model: Box<dyn LanguageModel<B>>, tokenizer: Tokenizer) -> Self {
        Engine {
            backend,
            model,
            tokenizer,
            batch: 512,
        }
    }

    pub fn session(&self, n_ctx: usize) -> Session<'_, B> {
        Session {
            engine: self,
            cache: self.model.new_cache(&self.backend, n_ctx),
            n_ctx,
            tokens: Vec::new(),
            ahead: None,
        }
    }
}

impl<'e, B: Backend> Session<'e, B> {
    pub fn n_past(&self) -> usize {
        self.tokens.len()
    }

    pub fn n_ctx(&self) -> usize {
        self.n_ctx
    }

    /// Forgets every token (the cache is overwritten from position 0).
    pub fn reset(&mut self) {
        self.drop_ahead();
        self.tokens.clear();
    }

    /// The tokens whose keys and values are in the cache.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// Keeps the first `n` tokens and forgets the rest: attention is causal over positions, so
    /// what follows position `n` is simply overwritten by the next evaluation.
    pub fn truncate(&mut self, n: usize) {
        if n < self.tokens.len() {
            self.drop_ahead();
        }
        self.tokens.truncate(n);
    }

    /// Room in the context for `n` more tokens, or the error that says there is none.
    fn check_room(&self, n: usize) -> Result<(), EngineError> {
        if self.tokens.len() + n > self.n_ctx {
            return Err(EngineError::ContextOverflow {
                prompt: self.tokens.len() + n,
                n_ctx: self.n_ctx,
            });
        }
        Ok(())
    }

    /// The step recorded ahead, dropped (the sequence went elsewhere).
    fn drop_ahead(&mut self) {
        if let Some(a) = self.ahead.take() {
            self.engine.backend.ahead_cancel(a.ticket);
        }
    }

    /// One decode step: `token` appended, its logits left on the device — from the step
    /// recorded ahead for this position, launched with the token, or from a forward of its own
    /// (no step ahead, or the backend dropped it). With the argmax where the step ahead had it.
    fn decode_step(&mut self, token: u32) -> Result<(B::Tensor, Option<B::Tensor>), EngineError> {
        let e = self.engine;
        let pos = self.tokens.len();
        if let Some(a) = self.ahead.take() {
            if a.pos == pos && e.backend.ahead_launch(a.ticket, token) {
                self.tokens.push(token);
                return Ok((a.logits, a.argmax));
            }
            e.backend.ahead_cancel(a.ticket);
        }
        let logits = e
            .model
            .forward(&e.backend, &mut self.cache, &[token], &[pos as u32], &[0])?;
        self.tokens.push(token);
        Ok((logits, None))
    }

    /// While the device runs the step whose result `read` the caller reads next: the next
    /// decode step recorded ahead (where the backend does that and the context has room), its
    /// token written when it comes (`decode_step`); `argmax`: ending in its logits' argmax.
    fn record_ahead(&mut self, read: &B::Tensor, argmax: bool) {
        let e = self.engine;
        let pos = self.tokens.len();
        if pos >= self.n_ctx || !e.backend.ahead_begin(read) {
            return;
        }
        // Until `ahead_end`, the backend records a step ahead: a panic on the way (a caller
        // may catch it) must end that too.
        struct Abort<'a, B: Backend>(Option<&'a B>);
        impl<B: Backend> Drop for Abort<'_, B> {
            fn drop(&mut self) {
                if let Some(b) = self.0 {
                    b.ahead_end(None);
                }
            }
        }
        let mut abort = Abort(Some(&e.backend));
        // Token 0 stands for the one to come: the step's commands do not depend on it. (A
        // forward that fails will fail again, in the ordinary way, when the step comes.)
        let Ok(logits) = e
            .model
            .forward(&e.backend, &mut self.cache, &[0], &[pos as u32], &[0])
        else {
            return;
        };
        let ids = argmax.then(|| e.backend.argmax_tensor(&logits)).flatten();
        if argmax && ids.is_none() {
            return;
        }
        abort.0 = None;
        if let Some(ticket) = e.backend.ahead_end(Some(ids.as_ref().unwrap_or(&logits))) {
            self.ahead = Some(Ahead {
                pos,
                ticket,
                logits,
                argmax: ids,
            });
        }
    }

    /// Reuses the cached prefix `tokens` shares with this session and returns how many tokens
    /// were kept; at least the last token of `tokens` is left to evaluate (its logits are needed).
    pub fn reuse_prefix(&mut self, tokens: &[u32]) -> usize {
        let common = self
            .tokens
            .iter()
            .zip(tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len().saturating_sub(1));
        self.truncate(common);
        common
    }

    /// Appends `tokens` to the sequence, in batches, and returns their logits (`n_vocab` each).
    pub fn eval(&mut self, tokens: &[u32], which: Logits) -> Result<Vec<Vec<f32>>, EngineError> {
        self.eval_until(tokens, which, &|| false)
            .map(|r| r.unwrap_or_default())
    }

    /// `eval`, asking `cancelled` between batches; `Ok(None)` when it said stop (the batches
    /// already evaluated stay in the cache).
    pub fn eval_until(
        &mut self,
        tokens: &[u32],
        which: Logits,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Option<Vec<Vec<f32>>>, EngineError> {
        let e = self.engine;
        self.check_room(tokens.len())?;
        let n_vocab = e.model.hparams().n_vocab;
        if tokens.len() == 1 {
            let logits = self.eval_last_on_device(tokens, cancelled)?;
            return Ok(logits.map(|l| vec![e.backend.read(&l)]));
        }
        self.drop_ahead();
        let mut out = Vec::new();
        for (ci, chunk) in tokens.chunks(e.batch.max(1)).enumerate() {
            if cancelled() {
                return Ok(None);
            }
            let start = self.tokens.len() as u32;
            let positions: Vec<u32> = (start..start + chunk.len() as u32).collect();
            let last_chunk = (ci + 1) * e.batch.max(1) >= tokens.len();
            let rows: Vec<usize> = match which {
                Logits::All => (0..chunk.len()).collect(),
                Logits::Last if last_chunk => vec![chunk.len() - 1],
                Logits::Last => vec![],
            };
            let logits = if rows.is_empty() {
                // Still run the layers (the cache needs this chunk); ask for one row and drop it.
                e.model.forward(
                    &e.backend,
                    &mut self.cache,
                    chunk,
                    &positions,
                    &[chunk.len() - 1],
                )?;
                None
            } else {
                Some(
                    e.model
                        .forward(&e.backend, &mut self.cache, chunk, &positions, &rows)?,
                )
            };
            self.tokens.extend_from_slice(chunk);
            if let Some(l) = logits {
                let v = e.backend.read(&l);
                if v.len() == n_vocab {
                    // One row (a decode step): the vector itself, not a copy of it.
                    out.push(v);
                } else {
                    out.extend(v.chunks_exact(n_vocab).map(<[f32]>::to_vec));
                }
            }
        }
        Ok(Some(out))
    }

    /// Appends `tokens` and returns the last token's logits left on the device (for argmax there:
    /// greedy decoding then reads back one id, not `n_vocab` floats). `None` when cancelled.
    fn eval_last_on_device(
        &mut self,
        tokens: &[u32],
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Option<B::Tensor>, EngineError> {
        let e = self.engine;
        self.check_room(tokens.len())?;
        if let [token] = tokens[..] {
            if cancelled() {
                return Ok(None);
            }
            let (logits, _) = self.decode_step(token)?;
            self.record_ahead(&logits, false);
            return Ok(Some(logits));
        }
        self.drop_ahead();
        let mut last = None;
        for chunk in tokens.chunks(e.batch.max(1)) {
            if cancelled() {
                return Ok(None);
            }
            let start = self.tokens.len() as u32;
            let positions: Vec<u32> = (start..start + chunk.len() as u32).collect();
            last = Some(e.model.forward(
                &e.backend,
                &mut self.cache,
                chunk,
                &positions,
                &[chunk.len() - 1],
            )?);
            self.tokens.extend_from_slice(chunk);
        }
        Ok(last)
    }

    /// Appends `tokens` and lends the last one's logits (`n_vocab` of them) to `f`, read
    /// where the backend left them rather than copied into a new vector (`Backend::read_with`).
    pub fn eval_last_with<R>(
        &mut self,
        tokens: &[u32],
        f: impl FnOnce(&[f32]) -> R,
    ) -> Result<R, EngineError> {
        // Not cancellable: no logits only for an empty input.
        let Some(t) = self.eval_last_on_device(tokens, &|| false)? else {
            return Err(EngineError::EmptyPrompt);
        };
        let mut f = Some(f);
        let mut out = None;
        self.engine.backend.read_with(&t, &mut |v| {
            out = f.take().map(|f| f(v));
        });
        out.ok_or_else(|| EngineError::Failed("the backend lent no logits".into()))
    }

    /// The greedy choice after `tokens`, computed where the logits are.
    fn eval_argmax(
        &mut self,
        tokens: &[u32],
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Option<u32>, EngineError> {
        let e = self.engine;
        if let [token] = tokens[..] {
            self.check_room(1)?;
            if cancelled() {
                return Ok(None);
            }
            // The argmax recorded with the step, and the next step ahead after it.
            let (logits, ids) = self.decode_step(token)?;
            let Some(ids) = ids.or_else(|| e.backend.argmax_tensor(&logits)) else {
                return Ok(e.backend.argmax(&logits).first().copied());
            };
            drop(logits);
            self.record_ahead(&ids, true);
            return Ok(e.backend.read(&ids).first().map(|v| v.to_bits()));
        }
        Ok(self
            .eval_last_on_device(tokens, cancelled)?
            .and_then(|t| e.backend.argmax(&t).first().copied()))
    }

    /// Generates after `prompt`; `on_text` receives text as soon as it is final (never half a
    /// character, never a possible start of a stop string) and returns `false` to stop.
    pub fn generate(
        &mut self,
        prompt: &[u32],
        params: &GenerateParams,
        mut on_text: impl FnMut(&str) -> bool,
    ) -> Result<Generation, EngineError> {
        self.generate_events(prompt, params, &|| false, |ev| {
            ev.text.is_empty() || on_text(ev.text)
        })
    }

    /// Generates after `prompt`, reporting every sampled token (with its final text, if any,
    /// and its log-probabilities when asked). `on_event` returning `false`, or `cancelled`
    /// returning `true` (asked between prompt batches and before each token), stops generation
    /// with [`Finish::Cancelled`].
    pub fn generate_events(
        &mut self,
        prompt: &[u32],
        params: &GenerateParams,
        cancelled: &dyn Fn() -> bool,
        mut on_event: impl FnMut(&TokenEvent) -> bool,
    ) -> Result<Generation, EngineError> {
        if prompt.is_empty() {
            return Err(EngineError::EmptyPrompt);
        }
        self.check_room(prompt.len())?;
        let e = self.engine;
        let t0 = Instant::now();
        let cancelled_gen = |prompt_time| Generation {
            text: String::new(),
            tokens: Vec::new(),
            finish: Finish::Cancelled,
            prompt_tokens: prompt.len(),
            prompt_time,
            gen_time: Duration::ZERO,
        };
        // Plain greedy decoding needs only the best id: the backend finds it and one u32 comes
        // back per token. Anything that looks at the distribution reads the logits.
        let c = &params.sampler;
        let on_device = c.is_greedy()
            && c.repeat_penalty == 1.0
            && c.presence_penalty == 0.0
            && c.frequency_penalty == 0.0
            && params.logit_bias.is_empty()
            && params.logprobs.is_none();
        let mut logits = Vec::new();
        let mut next = 0u32;
        if on_device {
            let Some(id) = self.eval_argmax(prompt, cancelled)? else {
                return Ok(cancelled_gen(t0.elapsed()));
            };
            next = id;
        } else {
            let Some(mut last) = self.eval_until(prompt, Logits::Last, cancelled)? else {
                return Ok(cancelled_gen(t0.elapsed()));
            };
            logits = last.pop().unwrap_or_default();
        }
        let prompt_time = t0.elapsed();
        let t1 = Instant::now();
        let mut sampler = Sampler::new(params.sampler.clone());
        let mut decoder = e.tokenizer.stream_decoder(false);
        let mut stops = StopScanner::new(&params.stop);
        let mut generated = Vec::new();
        let mut text = String::new();
        let mut finish = Finish::Length;
        let mut history: Vec<u32> = self.tokens.clone();
        while generated.len() < params.max_tokens {
            if cancelled() {
                finish = Finish::Cancelled;
                break;
            }
            let logprobs = params.logprobs.map(|_| log_softmax(&logits));
            let id = if on_device {
                next
            } else {
                for &(id, bias) in &params.logit_bias {
                    if let Some(l) = logits.get_mut(id as usize) {
                        *l += bias;
                    }
                }
                sampler.sample(&mut logits, &history)
            };
            if !params.ignore_eos && e.tokenizer.is_eog(id) {
                finish = Finish::Stop;
                break;
            }
            generated.push(id);
            history.push(id);
            let piece = decoder.push(id)?;
            let (ready, hit) = stops.push(&piece);
            text.push_str(&ready);
            let event = TokenEvent {
                token: Some(id),
                text: &ready,
                logprobs: logprobs.map(|lp| TokenLogprobs {
                    logprob: lp[id as usize],
                    top: top_n(&lp, params.logprobs.unwrap_or(0)),
                }),
            };
            if !on_event(&event) {
                finish = Finish::Cancelled;
                break;
            }
            if hit {
                finish = Finish::Stop;
                break;
            }
            if generated.len() >= params.max_tokens || self.tokens.len() >= self.n_ctx {
                finish = Finish::Length;
                break;
            }
            if on_device {
                next = self.eval_argmax(&[id], &|| false)?.unwrap_or_default();
            } else {
                // Into the vector the sampler had (no new allocation a token).
                self.eval_last_with(&[id], |l| {
                    logits.clear();
                    logits.extend_from_slice(l);
                })?;
            }
        }
        if finish != Finish::Cancelled && !stops.hit {
            let tail = stops.finish(&decoder.finish());
            if !tail.is_empty() {
                text.push_str(&tail);
                on_event(&TokenEvent {
                    token: None,
                    text: &tail,
                    logprobs: None,
                });
            }
        }
        Ok(Generation {
            text,
            tokens: generated,
            finish,
            prompt_tokens: prompt.len(),
            prompt_time,
            gen_time: t1.elapsed(),
        })
    }
}

/// Natural-log probabilities of every token.
fn log_softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let z: f64 = logits.iter().map(|&l| ((l - max) as f64).exp()).sum();
    let lz = max + z.ln() as f32;
    logits.iter().map(|&l| l - lz).collect()
}

/// The `n` largest entries, largest first (ties by lower id).
fn top_n(lp: &[f32], n: usize) -> Vec<(u32, f32)> {
    let mut best: Vec<(u32, f32)> = Vec::with_capacity(n + 1);
    if n == 0 {
        return best;
    }
    for (i, &v) in lp.iter().enumerate() {
        if best.len() == n && v <= best[n - 1].1 {
            continue;
        }
        let at = best.partition_point(|&(_, b)| b >= v);
        best.insert(at, (i as u32, v));
        best.truncate(n);
    }
    best
}

/// Holds back text that could be the start of a stop string, and reports a hit.
struct StopScanner<'s> {
    stops: &'s [String],
    pending: String,
    hit: bool,
}

impl<'s> StopScanner<'s> {
    fn new(stops: &'s [String]) -> Self {
        StopScanner {
            stops,
            pending: String::new(),
            hit: false,
        }
    }

    /// Adds text; returns what can be emitted and whether a stop string was found (the text
    /// before it is emitted, the stop string and anything after it are not).
    fn push(&mut self, s: &str) -> (String, bool) {
        self.pending.push_str(s);
        let first_hit = self
            .stops
            .iter()
            .filter(|st| !st.is_empty())
            .filter_map(|st| self.pending.find(st.as_str()))
            .min();
        if let Some(at) = first_hit {
            self.hit = true;
            let out = self.pending[..at].to_string();
            self.pending.clear();
            return (out, true);
        }
        // Keep the longest suffix that is a proper prefix of some stop string.
        let mut keep = 0;
        for st in self.stops {
            for (i, _) in st.char_indices().skip(1) {
                if self.pending.ends_with(&st[..i]) {
                    keep = keep.max(i);
                }
            }
        }
        let cut = self.pending.len() - keep;
        let out = self.pending[..cut].to_string();
        self.pending.drain(..cut);
        (out, false)
    }

    fn finish(&mut self, tail: &str) -> String {
        let (mut out, hit) = self.push(tail);
        if !hit {
            out.push_str(&self.pending);
            self.pending.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::StopScanner;

    #[test]
    fn stop_strings_are_cut_and_held_back() {
        let stops = vec!["</s>".to_string(), "\n\nUser:".to_string()];
        let mut s = StopScanner::new(&stops);
        assert_eq!(s.push("Hello <"), ("Hello ".to_string(), false));
        assert_eq!(s.push("/"), (String::new(), false));
        assert_eq!(s.push("x> ok\n"), ("</x> ok".to_string(), false));
        assert_eq!(s.push("\nUs"), (String::new(), false));
        assert_eq!(s.push("er: hi"), (String::new(), true));
        let mut s = StopScanner::new(&stops);
        assert_eq!(s.push("a</s>b"), ("a".to_string(), true));
        let mut s = StopScanner::new(&stops);
        assert_eq!(s.push("end <"), ("end ".to_string(), false));
        assert_eq!(s.finish(""), "<");
    }
}
