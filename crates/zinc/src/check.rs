//! `zinc check`: what this machine can run — each Vulkan device as its driver reports it, the
//! features ZINC uses, which backend `run` would pick and why, and whether a model fits.

use std::path::PathBuf;

use anyhow::Result;
use zinc_vulkan::{DeviceInfo, DeviceKind};

use crate::run::default_ctx;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// A model to check: weights plus the KV cache of `--ctx` tokens against device memory.
    #[arg(short, long)]
    pub model: Option<PathBuf>,
    /// Context for the fit check (default: the model's training context, at most 4096).
    #[arg(short = 'c', long)]
    pub ctx: Option<usize>,
}

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn describe(d: &DeviceInfo) {
    println!(
        "  [{}] {} — {}, vendor 0x{:04x}",
        d.index,
        d.name,
        d.kind.label(),
        d.vendor_id
    );
    println!(
        "      driver: {} {} · Vulkan {}.{}.{}",
        d.driver_name, d.driver_info, d.api_version.0, d.api_version.1, d.api_version.2
    );
    println!(
        "      subgroup {} (arithmetic {}) · fp16 {} · int8 {} · 8/16-bit storage {}/{} · integer dot product {} · cooperative matrix {}",
        d.subgroup_size,
        yes(d.subgroup_arithmetic),
        yes(d.shader_fp16),
        yes(d.shader_int8),
        yes(d.storage_8bit),
        yes(d.storage_16bit),
        yes(d.integer_dot_product),
        yes(d.cooperative_matrix)
    );
    println!(
        "      memory {} device-local · largest allocation {} · storage binding {} · push constants {} B",
        gib(d.vram),
        gib(d.max_allocation),
        gib(d.max_storage_buffer_range),
        d.max_push_constants
    );
    if let Some(why) = d.unusable() {
        println!("      ✗ cannot run ZINC: {why}");
    }
    let plan = zinc_vulkan::kernel_plan(d);
    println!(
        "      kernels: quantized products on {} · prompts on {}",
        if plan.int_dot {
            "integer dot products"
        } else {
            "f32 (dequantized)"
        },
        match (plan.coopmat, plan.int_dot) {
            (true, _) => "cooperative matrices",
            (false, true) => "integer dot products",
            (false, false) => "the portable f32 mat-mul",
        }
    );
    if !plan.coopmat && d.kind != DeviceKind::Cpu {
        println!(
            "      ! no cooperative matrices (16×16×16 f16, subgroups of 32): prompts are slower"
        );
    }
    if !plan.int_dot && d.kind != DeviceKind::Cpu {
        println!(
            "      ! no integer dot product with subgroup shuffles: quantized products stay in f32"
        );
    }
}

pub fn check(args: &CheckArgs) -> Result<()> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    #[cfg(target_arch = "x86_64")]
    let simd = if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        "AVX2+FMA kernels"
    } else {
        "portable kernels (no AVX2)"
    };
    #[cfg(not(target_arch = "x86_64"))]
    let simd = "portable kernels";
    println!("CPU backend: {cpus} threads, {simd}");
    let (devices, pick) = match zinc_vulkan::list_devices() {
        Ok(r) => r,
        Err(e) => {
            println!("Vulkan: not available — {e}");
            println!("run would use: cpu (no Vulkan)");
            return fit(args, None);
        }
    };
    println!("Vulkan: {} device(s)", devices.len());
    for d in &devices {
        describe(d);
    }
    let gpu = pick.filter(|&i| devices[i].kind != DeviceKind::Cpu);
    match (gpu, pick) {
        (Some(i), _) => println!(
            "run would use: vulkan device {i} ({}), the best usable {} (--backend auto)",
            devices[i].name,
            devices[i].kind.label()
        ),
        (None, Some(i)) => println!(
            "run would use: cpu — the only Vulkan device is {} ({}), slower than the CPU backend; --backend vulkan --device {i} forces it",
            devices[i].name,
            devices[i].kind.label()
        ),
        (None, None) => println!("run would use: cpu — no usable Vulkan device"),
    }
    fit(args, gpu.map(|i| &devices[i]))
}

/// Weights + KV cache (f16) + a working margin, against the chosen device (or RAM).
fn fit(args: &CheckArgs, device: Option<&DeviceInfo>) -> Result<()> {
    let Some(path) = &args.model else {
        return Ok(());
    };
    let file = zinc_gguf::GgufModel::open(path)?;
    let hp = zinc_models::HParams::from_metadata(file.metadata())?;
    let weights: u64 = file.tensors().map(|t| t.info.n_bytes).sum();
    let n_ctx = args.ctx.unwrap_or_else(|| default_ctx(hp.n_ctx_train));
    let kv = (hp.n_layer * 2 * n_ctx * hp.n_head_kv * hp.head_dim * 2) as u64;
    // Activations and logits of a 512-token batch, with room for the pool's rounding.
    let work = (512 * (hp.n_vocab + 8 * hp.n_embd.max(hp.n_ff)) * 4) as u64;
    let need = weights + kv + work;
    println!(
        "model {}: {} ({}, {} layers) — weights {}, KV cache for {n_ctx} tokens {}, working memory ~{}: {} in all",
        path.display(),
        hp.arch,
        if zinc_models::supported_architectures::<zinc_backend::cpu::CpuBackend>()
            .contains(&hp.arch.as_str())
        {
            "supported"
        } else {
            "not supported"
        },
        hp.n_layer,
        gib(weights),
        gib(kv),
        gib(work),
        gib(need)
    );
    match device {
        Some(d) if need <= d.vram => println!(
            "  fits on {}: {} of {} ({:.0}%)",
            d.name,
            gib(need),
            gib(d.vram),
            100.0 * need as f64 / d.vram as f64
        ),
        Some(d) => println!(
            "  does NOT fit on {}: needs {}, has {}; try a smaller --ctx or a smaller quantization",
            d.name,
            gib(need),
            gib(d.vram)
        ),
        None => println!(
            "  runs on the CPU from the mapped file (needs ~{} of RAM beyond the file)",
            gib(kv + work)
        ),
    }
    Ok(())
}
