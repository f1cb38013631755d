//! Counters and gauges, shared by the HTTP handlers and the engine thread, rendered as
//! Prometheus text by `GET /metrics`.

use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

#[derive(Default, Debug)]
pub struct Metrics {
    pub requests_chat: AtomicU64,
    pub requests_completions: AtomicU64,
    pub requests_tokenize: AtomicU64,
    pub requests_detokenize: AtomicU64,
    pub requests_models: AtomicU64,
    pub requests_rejected: AtomicU64,
    pub prompt_tokens: AtomicU64,
    pub cached_prompt_tokens: AtomicU64,
    pub generated_tokens: AtomicU64,
    pub cancelled: AtomicU64,
    pub completed: AtomicU64,
    /// Jobs that ended in a panic of the model or backend.
    pub engine_failures: AtomicU64,
    pub queue_depth: AtomicI64,
    pub running: AtomicI64,
    pub kv_used: AtomicU64,
    pub kv_capacity: AtomicU64,
    /// f64 bits: the last request's rates.
    pub decode_tps: AtomicU64,
    pub prompt_tps: AtomicU64,
}

pub fn set_f64(a: &AtomicU64, v: f64) {
    a.store(v.to_bits(), Relaxed);
}

fn get_f64(a: &AtomicU64) -> f64 {
    f64::from_bits(a.load(Relaxed))
}

impl Metrics {
    pub fn render(&self) -> String {
        let mut s = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, samples: &[(&str, String)]| {
            let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (labels, v) in samples {
                let _ = writeln!(s, "{name}{labels} {v}");
            }
        };
        let u = |a: &AtomicU64| a.load(Relaxed).to_string();
        let i = |a: &AtomicI64| a.load(Relaxed).to_string();
        metric(
            "zinc_requests_total",
            "counter",
            "Requests accepted, by endpoint.",
            &[
                ("{endpoint=\"chat\"}", u(&self.requests_chat)),
                ("{endpoint=\"completions\"}", u(&self.requests_completions)),
                ("{endpoint=\"tokenize\"}", u(&self.requests_tokenize)),
                ("{endpoint=\"detokenize\"}", u(&self.requests_detokenize)),
                ("{endpoint=\"models\"}", u(&self.requests_models)),
            ],
        );
        metric(
            "zinc_requests_rejected_total",
            "counter",
            "Requests answered with an error status.",
            &[("", u(&self.requests_rejected))],
        );
        metric(
            "zinc_prompt_tokens_total",
            "counter",
            "Prompt tokens received (cached ones included).",
            &[("", u(&self.prompt_tokens))],
        );
        metric(
            "zinc_prompt_tokens_cached_total",
            "counter",
            "Prompt tokens served from the KV cache (prefix reuse).",
            &[("", u(&self.cached_prompt_tokens))],
        );
        metric(
            "zinc_generated_tokens_total",
            "counter",
            "Tokens generated.",
            &[("", u(&self.generated_tokens))],
        );
        metric(
            "zinc_generations_completed_total",
            "counter",
            "Generations that ran to a stop or a length limit.",
            &[("", u(&self.completed))],
        );
        metric(
            "zinc_engine_failures_total",
            "counter",
            "Generations that failed inside the model or backend.",
            &[("", u(&self.engine_failures))],
        );
        metric(
            "zinc_cancelled_total",
            "counter",
            "Generations stopped because the client went away.",
            &[("", u(&self.cancelled))],
        );
        metric(
            "zinc_queue_depth",
            "gauge",
            "Requests waiting for the engine.",
            &[("", i(&self.queue_depth))],
        );
        metric(
            "zinc_requests_running",
            "gauge",
            "Requests the engine is working on.",
            &[("", i(&self.running))],
        );
        metric(
            "zinc_kv_cache_used_tokens",
            "gauge",
            "Tokens held in the KV cache.",
            &[("", u(&self.kv_used))],
        );
        metric(
            "zinc_kv_cache_capacity_tokens",
            "gauge",
            "Tokens the KV cache can hold.",
            &[("", u(&self.kv_capacity))],
        );
        metric(
            "zinc_decode_tokens_per_second",
            "gauge",
            "Generation speed of the last request.",
            &[("", format!("{:.3}", get_f64(&self.decode_tps)))],
        );
        metric(
            "zinc_prompt_tokens_per_second",
            "gauge",
            "Prompt processing speed of the last request.",
            &[("", format!("{:.3}", get_f64(&self.prompt_tps)))],
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_prometheus_text() {
        let m = Metrics::default();
        m.generated_tokens.store(42, Relaxed);
        set_f64(&m.decode_tps, 17.5);
        let text = m.render();
        assert!(text.contains(
            "# TYPE zinc_generated_tokens_total counter\nzinc_generated_tokens_total 42\n"
        ));
        assert!(text.contains("zinc_requests_total{endpoint=\"chat\"} 0\n"));
        assert!(text.contains("zinc_decode_tokens_per_second 17.500\n"));
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (_, v) = line.rsplit_once(' ').unwrap();
            v.parse::<f64>().unwrap();
        }
    }
}
