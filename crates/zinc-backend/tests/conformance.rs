//! The conformance suite on the CPU backend (the Vulkan backend runs the same bodies in
//! `crates/zinc-vulkan/tests/conformance.rs`).

use zinc_backend::conformance::{run, Tolerance};
use zinc_backend::cpu::CpuBackend;

#[test]
fn cpu_backend_conforms() {
    let results = run(&CpuBackend::new(), &Tolerance::q8_activations(), None).expect("suite");
    let failed: Vec<_> = results.iter().filter(|r| !r.ok).collect();
    for r in &results {
        eprintln!(
            "{:>6.3} {} {}",
            r.worst,
            if r.ok { "ok  " } else { "FAIL" },
            r.name
        );
    }
    assert!(
        failed.is_empty(),
        "{} of {} cases failed: {failed:#?}",
        failed.len(),
        results.len()
    );
    assert!(results.len() > 60, "only {} cases ran", results.len());
}
