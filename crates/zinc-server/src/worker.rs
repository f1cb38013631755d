//! The engine thread: the only place model code runs. HTTP handlers send it jobs through a FIFO
//! queue (first come, first served) and read its events from a per-job channel. A job whose
//! receiver is gone — the client disconnected — stops at the next prompt batch or token.
//!
//! One session lives across jobs, so a request that repeats the previous conversation (the
//! next turn of a chat) reuses the cached prefix instead of evaluating it again.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use zinc_backend::Backend;
use zinc_engine::{Engine, Finish, GenerateParams, TokenLogprobs};

use crate::metrics::{set_f64, Metrics};

/// A generation request, already tokenized and checked against the context.
pub struct Job {
    pub prompt: Vec<u32>,
    pub params: GenerateParams,
    pub events: UnboundedSender<Event>,
}

#[derive(Debug)]
pub enum Event {
    /// A sampled token (or, with `token: None`, the final held-back text).
    Token {
        token: Option<u32>,
        text: String,
        logprobs: Option<TokenLogprobs>,
    },
    Done(Summary),
    Failed(String),
}

#[derive(Debug, Clone)]
pub struct Summary {
    pub finish: Finish,
    pub prompt_tokens: usize,
    pub cached_tokens: usize,
    pub completion_tokens: usize,
    pub prompt_time: Duration,
    pub gen_time: Duration,
}

/// What the engine thread reports once loaded.
#[derive(Debug, Clone)]
pub struct EngineInfo {
    pub n_ctx: usize,
    pub n_vocab: usize,
    pub arch: String,
    pub backend: String,
}

/// The sending end of the job queue.
#[derive(Clone)]
pub struct Worker {
    jobs: std_mpsc::Sender<Job>,
    metrics: Arc<Metrics>,
}

impl Worker {
    /// Starts the engine thread; `load` builds the engine there (engines need not be `Send`)
    /// and says how many tokens of context a session gets. Returns once the model is loaded,
    /// or with the load error.
    pub fn spawn<B, F>(load: F, metrics: Arc<Metrics>) -> Result<(Worker, EngineInfo), String>
    where
        B: Backend + 'static,
        F: FnOnce() -> Result<(Engine<B>, usize), String> + Send + 'static,
    {
        let (job_tx, job_rx) = std_mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = std_mpsc::channel();
        let m = metrics.clone();
        std::thread::Builder::new()
            .name("zinc-engine".into())
            .spawn(move || {
                let (engine, n_ctx) = match load() {
                    Ok(e) => e,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let info = EngineInfo {
                    n_ctx,
                    n_vocab: engine.model.hparams().n_vocab,
                    arch: engine.model.hparams().arch.clone(),
                    backend: engine.backend.name().to_string(),
                };
                m.kv_capacity.store(n_ctx as u64, Relaxed);
                let _ = ready_tx.send(Ok(info));
                run(&engine, n_ctx, job_rx, &m);
            })
            .map_err(|e| format!("cannot start the engine thread: {e}"))?;
        let info = ready_rx
            .recv()
            .map_err(|_| "the engine thread stopped while loading".to_string())??;
        Ok((
            Worker {
                jobs: job_tx,
                metrics,
            },
            info,
        ))
    }

    /// Queues a job; false when the engine thread is gone.
    pub fn submit(&self, job: Job) -> bool {
        self.metrics.queue_depth.fetch_add(1, Relaxed);
        if self.jobs.send(job).is_err() {
            self.metrics.queue_depth.fetch_sub(1, Relaxed);
            return false;
        }
        true
    }
}

fn run<B: Backend>(engine: &Engine<B>, n_ctx: usize, jobs: std_mpsc::Receiver<Job>, m: &Metrics) {
    let mut session = engine.session(n_ctx);
    while let Ok(job) = jobs.recv() {
        m.queue_depth.fetch_sub(1, Relaxed);
        if job.events.is_closed() {
            m.cancelled.fetch_add(1, Relaxed);
            continue;
        }
        m.running.fetch_add(1, Relaxed);
        let cached = session.reuse_prefix(&job.prompt);
        let events = &job.events;
        // A panic inside the model or backend (a device that failed mid-step) fails this job and
        // leaves the thread serving the next one, rather than taking the server down silently.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            session.generate_events(
                &job.prompt[cached..],
                &job.params,
                &|| events.is_closed(),
                |ev| {
                    if ev.token.is_some() {
                        m.generated_tokens.fetch_add(1, Relaxed);
                    }
                    events
                        .send(Event::Token {
                            token: ev.token,
                            text: ev.text.to_string(),
                            logprobs: ev.logprobs.clone(),
                        })
                        .is_ok()
                },
            )
        }))
        .unwrap_or_else(|panic| {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            m.engine_failures.fetch_add(1, Relaxed);
            Err(zinc_engine::EngineError::Failed(format!(
                "the engine failed: {why}"
            )))
        });
        m.running.fetch_sub(1, Relaxed);
        m.kv_used.store(session.n_past() as u64, Relaxed);
        match result {
            Ok(g) => {
                m.prompt_tokens.fetch_add(job.prompt.len() as u64, Relaxed);
                m.cached_prompt_tokens.fetch_add(cached as u64, Relaxed);
                if g.finish == Finish::Cancelled {
                    m.cancelled.fetch_add(1, Relaxed);
                } else {
                    m.completed.fetch_add(1, Relaxed);
                }
                let pt = g.prompt_time.as_secs_f64();
                if g.prompt_tokens > 0 && pt > 0.0 {
                    set_f64(&m.prompt_tps, g.prompt_tokens as f64 / pt);
                }
                let gt = g.gen_time.as_secs_f64();
                if g.tokens.len() > 1 && gt > 0.0 {
                    set_f64(&m.decode_tps, g.tokens.len() as f64 / gt);
                }
                let _ = job.events.send(Event::Done(Summary {
                    finish: g.finish,
                    prompt_tokens: job.prompt.len(),
                    cached_tokens: cached,
                    completion_tokens: g.tokens.len(),
                    prompt_time: g.prompt_time,
                    gen_time: g.gen_time,
                }));
            }
            Err(e) => {
                // The cache may hold a half-evaluated batch: start the next job afresh.
                session.reset();
                let _ = job.events.send(Event::Failed(e.to_string()));
            }
        }
    }
}
