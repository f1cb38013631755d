//! The conformance suite on the Vulkan backend (lavapipe in CI), under the Khronos validation
//! layer: every op and format agrees with the reference math, and the layer reports no error.

use zinc_backend::conformance::{run, Tolerance};
use zinc_vulkan::{validation_errors, VulkanBackend, VulkanOptions};

/// Threads per mat-vec row: 1 is lavapipe's own choice; 16 runs the integer-dot mat-vec and the
/// split-key decode attention a GPU gets (row reductions through subgroup shuffles where the
/// subgroup holds a row, else shared memory); 64 with integer dots off runs the float mat-vec
/// of devices without them.
#[test]
fn vulkan_backend_conforms_without_validation_errors() {
    for (tpr, int_dot, cpu_attention) in [(1, true, true), (16, true, false), (64, false, true)] {
        conforms(tpr, int_dot, cpu_attention);
    }
}

fn conforms(tpr: u32, int_dot: bool, cpu_attention: bool) {
    let b = VulkanBackend::new(&VulkanOptions {
        device: None,
        validation: true,
        threads_per_row: Some(tpr),
        prompt_threads_per_row: Some(tpr),
        int_dot: Some(int_dot),
        cpu_attention: Some(cpu_attention),
        ..Default::default()
    })
    .expect("a Vulkan device with the validation layer (CI installs lavapipe and vulkan-validationlayers)");
    eprintln!(
        "device: {} ({}), {tpr} threads per row, integer dots {int_dot} (device: {}), CPU-style attention {cpu_attention}",
        b.device().name,
        b.device().driver_info,
        b.device().integer_dot_product
    );
    // ZINC_CONFORMANCE_FILTER=text runs only the cases whose name contains it (debugging).
    let filter = std::env::var("ZINC_CONFORMANCE_FILTER").ok();
    let results = run(&b, &Tolerance::exact_f32(), filter.as_deref()).expect("suite");
    for r in &results {
        eprintln!(
            "{:>6.3} {} {} {}",
            r.worst,
            if r.ok { "ok  " } else { "FAIL" },
            r.name,
            if r.ok { "" } else { &r.detail }
        );
    }
    let failed: Vec<_> = results.iter().filter(|r| !r.ok).collect();
    assert!(
        failed.is_empty(),
        "{} of {} cases failed: {failed:#?}",
        failed.len(),
        results.len()
    );
    if filter.is_none() {
        assert!(results.len() > 60, "only {} cases ran", results.len());
    }
    drop(b);
    assert_eq!(
        validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
}
