//! `zinc matvec-cost` (hidden, timing only): what each decode mat-vec shape of a model costs on
//! a Vulkan device as a dependent stage, beside what a dispatch of as many workgroups that only
//! reads the same bytes costs (`VulkanBackend::matvec_costs`) — how far each mat-vec is from
//! the floor its bytes set, shape by shape, with the `--vk-*` tuning options as given.

use anyhow::{bail, Result};
use zinc_backend::Backend;
use zinc_gguf::GgmlType;

use crate::load::{self, BackendChoice, ModelArgs};

/// Bytes of copies of each weight the stages cycle through: several times the H200's 50 MB L2.
const COPIES_BYTES: u64 = 256 << 20;

#[derive(clap::Args)]
pub struct MatvecCostArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Stages per measurement (each figure is this many against one, per stage).
    #[arg(long, default_value_t = 400)]
    pub rounds: u32,
    /// 16-byte loads each invocation of the stream read has in flight (1, 2, 4 or 8).
    #[arg(long, default_value_t = 4)]
    pub loads: u32,
}

/// The model's 2-D Q4_K and Q6_K weights that decode steps multiply (not the embedding table),
/// one of each (format, rows, columns), in file order.
fn shapes(file: &zinc_gguf::GgufModel) -> Vec<(String, GgmlType, u64, u64)> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for t in file.tensors() {
        let i = &t.info;
        let table = i.name.starts_with("token_embd");
        if table || i.dims.len() != 2 || !matches!(i.ty, GgmlType::Q4_K | GgmlType::Q6_K) {
            continue;
        }
        let key = (i.ty, i.dims[1], i.dims[0]);
        if !seen.contains(&key) {
            seen.push(key);
            out.push((i.name.clone(), i.ty, i.dims[1], i.dims[0]));
        }
    }
    out
}

pub fn matvec_cost(args: &MatvecCostArgs) -> Result<()> {
    load::no_clock(&args.model, "matvec-cost")?;
    let BackendChoice::Vulkan(o) = load::choose(&args.model)? else {
        bail!("matvec-cost measures Vulkan devices: pass --backend vulkan");
    };
    if args.rounds < 2 || args.rounds > 100_000 {
        bail!("--rounds must be 2 to 100,000");
    }
    if o.profile || !o.skip_kernels.is_empty() {
        bail!("matvec-cost takes its own timestamps: drop --profile and --vk-skip");
    }
    let file = load::open_file(&args.model.model)?;
    let b = load::vulkan_backend(&o)?;
    let list = shapes(&file);
    if list.is_empty() {
        bail!(
            "{}: no 2-D Q4_K or Q6_K weights to time",
            args.model.model.display()
        );
    }
    eprintln!(
        "zinc matvec-cost: {} shapes on {}, {} rounds each",
        list.len(),
        b.device().name,
        args.rounds
    );
    println!(
        "| weight | format | rows × cols | MB | copies | workgroups | mat-vec µs | GB/s | read-only µs | GB/s | mat-vec ÷ read |"
    );
    println!("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (name, ty, rows, cols) in list {
        // Copies enough for `COPIES_BYTES` (a decode step reads each weight once: from memory,
        // not from the cache its previous run left).
        let size = file.tensor(&name)?.data.len() as u64;
        let n = (COPIES_BYTES / size.max(1)).clamp(1, 64) as usize;
        let mut copies = Vec::with_capacity(n);
        for _ in 0..n {
            copies.push(b.weight(&file, &name)?);
        }
        let c = b.matvec_costs(&copies, args.rounds, args.loads)?;
        let mb = c.bytes as f64 / 1e6;
        println!(
            "| {name} | {} | {rows} × {cols} | {mb:.1} | {} | {} | {:.2} | {:.0} | {:.2} | {:.0} | {:.2} |",
            ty.name(),
            copies.len(),
            c.groups,
            c.matvec_us,
            mb * 1e3 / c.matvec_us,
            c.read_us,
            mb * 1e3 / c.read_us,
            c.matvec_us / c.read_us
        );
    }
    Ok(())
}
