//! The `zinc` binary: argument parsing and turning library errors into one clear line.

mod bench;
mod check;
mod clock_report;
mod inspect;
mod load;
mod matvec_cost;
mod perplexity;
mod run;
mod selftest;
mod serve;
mod sync_cost;
mod synth;
mod tokenize;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "zinc",
    version,
    about = "Local LLM inference on the GPU you already own"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Describe a GGUF model: architecture, hyper-parameters, tokenizer, tensor table.
    Inspect(inspect::InspectArgs),
    /// Generate text from a prompt, streamed to stdout.
    Run(run::RunArgs),
    /// Print the logits at every position for given token ids (JSON).
    Logits(run::LogitsArgs),
    /// Perplexity of a model on a text file (llama.cpp's method).
    Perplexity(perplexity::PerplexityArgs),
    /// Prompt and generation speed, like llama-bench.
    Bench(bench::BenchArgs),
    /// GPUs, drivers and features; which backend `run` would pick; whether a model fits.
    Check(check::CheckArgs),
    /// Run the backend conformance suite (every op and format against reference math).
    Selftest(selftest::SelftestArgs),
    /// Write a full-size GGUF with random weights in a real model's shape (for benchmarks).
    Synth(synth::SynthArgs),
    /// Timing: what one dependent stage costs on a Vulkan device, between dispatches and
    /// inside one.
    #[command(hide = true)]
    SyncCost(sync_cost::SyncCostArgs),
    /// Timing: each decode mat-vec shape of a model on a Vulkan device, against a dispatch
    /// that only reads its bytes.
    #[command(hide = true)]
    MatvecCost(matvec_cost::MatvecCostArgs),
    /// Serve an OpenAI-compatible API and the chat UI over HTTP.
    Serve(serve::ServeArgs),
    /// `serve`, then open the chat UI in the browser.
    Chat(serve::ChatArgs),
    /// Turn text into token ids with a model's tokenizer.
    Tokenize(tokenize::TokenizeArgs),
    /// Render a conversation with a model's chat template.
    Template(tokenize::TemplateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Logits(args) => run::logits(&args),
        Command::Perplexity(args) => perplexity::perplexity(&args),
        Command::Bench(args) => bench::bench(&args),
        Command::Check(args) => check::check(&args),
        Command::Selftest(args) => selftest::selftest(&args),
        Command::Synth(args) => synth::synth(&args),
        Command::SyncCost(args) => sync_cost::sync_cost(&args),
        Command::MatvecCost(args) => matvec_cost::matvec_cost(&args),
        Command::Serve(args) => serve::serve(&args),
        Command::Chat(args) => serve::chat(&args),
        Command::Tokenize(args) => tokenize::tokenize(&args),
        Command::Template(args) => tokenize::template(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that closed the pipe early (`zinc inspect … | head`) is not a failure.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
