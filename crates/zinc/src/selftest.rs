//! `zinc selftest`: the backend conformance suite from the release binary, so it runs on real
//! GPUs (paths CI's software Vulkan never takes) — every op and format against reference math.

use anyhow::{bail, Result};
use zinc_backend::conformance::{run, CaseResult, Tolerance};
use zinc_backend::cpu::CpuBackend;

use crate::load::{self, BackendChoice, ModelArgsLite};

#[derive(clap::Args)]
pub struct SelftestArgs {
    #[command(flatten)]
    pub backend: ModelArgsLite,
    /// Only the cases whose name contains this text.
    #[arg(long)]
    pub filter: Option<String>,
}

pub fn selftest(args: &SelftestArgs) -> Result<()> {
    let t0 = std::time::Instant::now();
    let (name, results) = match load::choose_backend(&args.backend)? {
        BackendChoice::Cpu => (
            "cpu".to_string(),
            run(
                &CpuBackend::new(),
                &Tolerance::q8_activations(),
                args.filter.as_deref(),
            ),
        ),
        BackendChoice::Vulkan(o) => {
            let b = load::vulkan_backend(&o)?;
            let name = format!("vulkan ({})", b.device().name);
            (
                name,
                run(&b, &Tolerance::exact_f32(), args.filter.as_deref()),
            )
        }
    };
    let results: Vec<CaseResult> = results.map_err(anyhow::Error::msg)?;
    println!("| case | error / bound | result |\n| --- | ---: | --- |");
    for r in &results {
        println!(
            "| {} | {:.3} | {}{} |",
            r.name,
            r.worst,
            if r.ok { "ok" } else { "FAIL " },
            if r.ok { "" } else { &r.detail }
        );
    }
    let failed = results.iter().filter(|r| !r.ok).count();
    eprintln!(
        "zinc selftest on {name}: {} cases, {failed} failed, {:.1} s",
        results.len(),
        t0.elapsed().as_secs_f64()
    );
    if args.backend.vulkan_validation && zinc_vulkan::validation_errors() > 0 {
        bail!(
            "the validation layer reported {} errors",
            zinc_vulkan::validation_errors()
        );
    }
    if failed > 0 {
        bail!("{failed} conformance cases failed");
    }
    Ok(())
}
