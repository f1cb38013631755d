//! `zinc sync-cost` (hidden, timing only): what one dependent stage costs on the GPU, as a
//! pipeline barrier between empty dispatches and as a barrier inside one dispatch whose
//! workgroups wait for each other — whether a decode step could run as fewer dispatches that
//! synchronize inside — and what recording a command costs the host, by its parts
//! (`VulkanBackend::sync_costs`).

use anyhow::{bail, Result};

use crate::load::{self, BackendChoice, ModelArgsLite};

/// Polls of the counter a wait may take before the workgroups are reported not to have met.
const SPIN_LIMIT: u32 = 1 << 20;

#[derive(clap::Args)]
pub struct SyncCostArgs {
    #[command(flatten)]
    pub backend: ModelArgsLite,
    /// Stages per measurement (each figure is this many against one, per stage).
    #[arg(long, default_value_t = 2000)]
    pub rounds: u32,
    /// Workgroup counts of the single dispatch, comma-separated (default: 1 on CPU devices,
    /// whose workgroups need not run at once; 1 to 1,056 on GPUs).
    #[arg(long, value_delimiter = ',')]
    pub groups: Vec<u32>,
}

pub fn sync_cost(args: &SyncCostArgs) -> Result<()> {
    let BackendChoice::Vulkan(o) = load::choose_backend(&args.backend)? else {
        bail!("sync-cost measures Vulkan devices: pass --backend vulkan");
    };
    if args.rounds < 2 || args.rounds > 1_000_000 {
        bail!("--rounds must be 2 to 1,000,000");
    }
    if args.groups.iter().any(|&g| g == 0 || g > 65_535) {
        bail!("--groups: each count 1 to 65,535");
    }
    if !o.skip_kernels.is_empty() {
        bail!("sync-cost times the barriers and kernels --vk-skip would leave out: drop --vk-skip");
    }
    let b = load::vulkan_backend(&o)?;
    let groups = match (args.groups.is_empty(), b.device().kind) {
        (false, _) => args.groups.clone(),
        (true, zinc_vulkan::DeviceKind::Cpu) => vec![1],
        (true, _) => vec![1, 66, 132, 264, 528, 1056],
    };
    eprintln!(
        "zinc sync-cost: {} rounds on {} ({} of each)",
        args.rounds,
        b.device().name,
        groups.len() + 1
    );
    let c = b.sync_costs(args.rounds, &groups, SPIN_LIMIT)?;
    println!("| synchronization | µs a stage |\n| --- | ---: |");
    println!(
        "| pipeline barrier between one-workgroup dispatches | {:.3} |",
        c.barrier_us
    );
    for (g, us) in &c.grid_us {
        match us {
            Some(us) => println!("| {g} workgroups meeting inside one dispatch | {us:.3} |"),
            None => println!("| {g} workgroups meeting inside one dispatch | did not all meet |"),
        }
    }
    println!("\n| the host recording | µs a command |\n| --- | ---: |");
    for (what, us) in &c.record_us {
        println!("| {what} | {us:.3} |");
    }
    println!("\n| the host's round trip (medians) | µs |\n| --- | ---: |");
    println!(
        "| submitting a command buffer of one empty dispatch | {:.3} |",
        c.submit_us
    );
    println!(
        "| from that submit to seeing its fence signal | {:.3} |",
        c.fence_us
    );
    Ok(())
}
