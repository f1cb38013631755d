//! The session's side of decode steps recorded ahead (`Backend::ahead_begin` … `ahead_end`,
//! `ahead_launch`, `ahead_cancel`), against a spy: the CPU backend, which runs every command at
//! once, claiming to record steps ahead. It can launch none (the step ran with the stand-in
//! token as it was "recorded"), so the session must run each step again in the ordinary way,
//! and the results must not move; every step begun ahead is ended once, every ticket handed
//! out is cancelled once it is of no use, and a panic inside the forward ahead still ends it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

use zinc_backend::cpu::CpuBackend;
use zinc_backend::{AttnParams, Backend, BackendError, GatedAct, MoeWeights, RopeParams};
use zinc_engine::{Engine, GenerateParams, Logits, SamplerConfig};
use zinc_gguf::{GgmlType, GgufModel};
use zinc_testdata::repo_root;
use zinc_tokenizer::Tokenizer;

type Cpu = CpuBackend;
type W = <Cpu as Backend>::Weight;
type T = <Cpu as Backend>::Tensor;
type C = <Cpu as Backend>::KvCache;

#[derive(Default)]
struct Spy {
    cpu: Cpu,
    /// Claims to record steps ahead.
    ahead: bool,
    /// Inside a step begun ahead.
    inside: AtomicBool,
    /// `embed` panics inside a step begun ahead.
    panic_inside: AtomicBool,
    begun: AtomicU64,
    ended: AtomicU64,
    aborted: AtomicU64,
    cancelled: AtomicU64,
    launch_asked: AtomicU64,
}

impl Backend for Spy {
    type Weight = W;
    type Tensor = T;
    type KvCache = C;
    fn name(&self) -> String {
        "spy".into()
    }
    fn supports(&self, ty: GgmlType) -> bool {
        self.cpu.supports(ty)
    }
    fn weight(&self, model: &Arc<GgufModel>, name: &str) -> Result<W, BackendError> {
        self.cpu.weight(model, name)
    }
    fn weight_dims<'w>(&self, w: &'w W) -> &'w [u64] {
        self.cpu.weight_dims(w)
    }
    fn weight_values(&self, w: &W) -> Vec<f32> {
        self.cpu.weight_values(w)
    }
    fn tensor(&self, rows: usize, cols: usize) -> T {
        self.cpu.tensor(rows, cols)
    }
    fn copy(&self, t: &T) -> T {
        self.cpu.copy(t)
    }
    fn split_cols(&self, t: &T, widths: &[usize]) -> Vec<T> {
        self.cpu.split_cols(t, widths)
    }
    fn tensor_from(&self, data: &[f32], rows: usize, cols: usize) -> T {
        self.cpu.tensor_from(data, rows, cols)
    }
    fn read(&self, t: &T) -> Vec<f32> {
        self.cpu.read(t)
    }
    fn shape(&self, t: &T) -> (usize, usize) {
        self.cpu.shape(t)
    }
    fn embed(&self, table: &W, ids: &[u32], scale: f32) -> T {
        if self.inside.load(SeqCst) && self.panic_inside.load(SeqCst) {
            panic!("a failure inside the step ahead");
        }
        self.cpu.embed(table, ids, scale)
    }
    fn matmul(&self, w: &W, x: &T) -> T {
        self.cpu.matmul(w, x)
    }
    fn add_bias(&self, x: &mut T, b: &W) {
        self.cpu.add_bias(x, b)
    }
    fn rms_norm(&self, x: &mut T, w: &W, eps: f32) {
        self.cpu.rms_norm(x, w, eps)
    }
    fn rope(&self, x: &mut T, head_dim: usize, positions: &[u32], p: &RopeParams) {
        self.cpu.rope(x, head_dim, positions, p)
    }
    fn scale(&self, x: &mut T, s: f32) {
        self.cpu.scale(x, s)
    }
    fn add(&self, x: &mut T, y: &T) {
        self.cpu.add(x, y)
    }
    fn gated(&self, gate: &T, up: &T, act: GatedAct) -> T {
        self.cpu.gated(gate, up, act)
    }
    fn kv_cache(&self, n_ctx: usize, kv_dims: &[usize]) -> C {
        self.cpu.kv_cache(n_ctx, kv_dims)
    }
    fn kv_store(
        &self,
        cache: &mut C,
        layer: usize,
        k: &T,
        v: &T,
        positions: &[u32],
    ) -> Result<(), BackendError> {
        self.cpu.kv_store(cache, layer, k, v, positions)
    }
    fn attention(&self, q: &T, cache: &C, layer: usize, positions: &[u32], p: &AttnParams) -> T {
        self.cpu.attention(q, cache, layer, positions, p)
    }
    fn moe_ffn(&self, x: &T, w: &MoeWeights<'_, W>) -> T {
        self.cpu.moe_ffn(x, w)
    }
    fn select_rows(&self, x: &T, rows: &[usize]) -> T {
        self.cpu.select_rows(x, rows)
    }
    fn softcap(&self, x: &mut T, cap: f32) {
        self.cpu.softcap(x, cap)
    }
    fn argmax(&self, x: &T) -> Vec<u32> {
        self.cpu.argmax(x)
    }
    fn ahead_begin(&self, _prev: &T) -> bool {
        assert!(
            !self.inside.load(SeqCst),
            "a step begun ahead inside another"
        );
        if self.ahead {
            self.begun.fetch_add(1, SeqCst);
            self.inside.store(true, SeqCst);
        }
        self.ahead
    }
    fn ahead_end(&self, out: Option<&T>) -> Option<u64> {
        assert!(
            self.inside.swap(false, SeqCst),
            "a step ended ahead that was not begun"
        );
        match out {
            Some(_) => Some(self.ended.fetch_add(1, SeqCst) + 1),
            None => {
                self.aborted.fetch_add(1, SeqCst);
                None
            }
        }
    }
    fn ahead_launch(&self, ticket: u64, _id: u32) -> bool {
        assert!(
            ticket >= 1 && ticket <= self.ended.load(SeqCst),
            "ticket {ticket}"
        );
        self.launch_asked.fetch_add(1, SeqCst);
        false
    }
    fn ahead_cancel(&self, _ticket: u64) {
        self.cancelled.fetch_add(1, SeqCst);
    }
}

fn engine(ahead: bool) -> Engine<Spy> {
    let file =
        Arc::new(GgufModel::open(repo_root().join("tests/fixtures/tiny/qwen3-tiny.gguf")).unwrap());
    let b = Spy {
        ahead,
        ..Default::default()
    };
    let tok = Tokenizer::from_metadata(file.metadata()).unwrap();
    let model = zinc_models::load(&b, file).unwrap();
    Engine::new(b, model, tok)
}

fn count(c: &AtomicU64) -> u64 {
    c.load(SeqCst)
}

#[test]
fn steps_begun_ahead_are_ended_and_cancelled_and_change_nothing() {
    let (plain, spy) = (engine(false), engine(true));
    let prompt: Vec<u32> = (0..6).map(|i| (i * 37 % 500) as u32).collect();
    let cont: Vec<u32> = (0..5).map(|i| (i * 11 % 500) as u32).collect();

    // Teacher-forced steps (`eval`, and `eval_last_with`): the same logits.
    let steps = |e: &Engine<Spy>| {
        let mut s = e.session(32);
        let mut out = s.eval(&prompt, Logits::Last).unwrap();
        for &t in &cont[..2] {
            out.extend(s.eval(&[t], Logits::Last).unwrap());
        }
        for &t in &cont[2..] {
            out.push(s.eval_last_with(&[t], |l| l.to_vec()).unwrap());
        }
        out
    };
    assert_eq!(steps(&spy), steps(&plain));
    let b = &spy.backend;
    // A step begun after each single-token step; each ended with a ticket; each ticket asked
    // to launch at the next step or cancelled when the session went (never launched here).
    assert_eq!(count(&b.begun), cont.len() as u64);
    assert_eq!(count(&b.ended), cont.len() as u64);
    assert_eq!(count(&b.launch_asked), cont.len() as u64 - 1);
    assert_eq!(count(&b.cancelled), cont.len() as u64);
    assert_eq!(count(&plain.backend.begun), 0);

    // Greedy generation (argmax on the device path's fallback): the same tokens.
    let greedy = |e: &Engine<Spy>| {
        let params = GenerateParams {
            max_tokens: 6,
            sampler: SamplerConfig::greedy(),
            ignore_eos: true,
            ..Default::default()
        };
        e.session(32)
            .generate(&prompt, &params, |_| true)
            .unwrap()
            .tokens
    };
    assert_eq!(greedy(&spy), greedy(&plain));
    assert_eq!(count(&b.begun), count(&b.ended) + count(&b.aborted));

    // A truncated session cancels its step ahead at once; a step at the last position of the
    // context records none.
    let mut s = spy.session(8);
    s.eval(&prompt, Logits::Last).unwrap();
    s.eval(&cont[..1], Logits::Last).unwrap();
    let c0 = count(&b.cancelled);
    s.truncate(3);
    assert_eq!(count(&b.cancelled), c0 + 1);
    let begun = count(&b.begun);
    s.eval(&cont[..4], Logits::Last).unwrap();
    s.eval(&cont[4..5], Logits::Last).unwrap(); // position 7 of 8: the context is full after
    assert_eq!(count(&b.begun), begun, "a step begun past the context");
}

#[test]
fn a_panic_inside_the_step_ahead_ends_it() {
    let spy = engine(true);
    let prompt: Vec<u32> = (0..6).map(|i| (i * 37 % 500) as u32).collect();
    let mut s = spy.session(32);
    s.eval(&prompt, Logits::Last).unwrap();
    spy.backend.panic_inside.store(true, SeqCst);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.eval(&[5], Logits::Last).unwrap();
    }));
    assert!(r.is_err(), "the step ahead's forward panicked");
    assert_eq!(count(&spy.backend.aborted), 1);
    assert!(
        !spy.backend.inside.load(SeqCst),
        "still inside the step ahead"
    );
    // The session goes on: the next step runs (and begins another ahead) as ever.
    spy.backend.panic_inside.store(false, SeqCst);
    let again = s.eval(&[6], Logits::Last).unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(count(&spy.backend.ended), 1);
}
