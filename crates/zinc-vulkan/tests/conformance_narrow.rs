//! The conformance suite on lavapipe with 128-bit vectors (subgroups of 4 invocations), at the
//! GPU-style kernel shapes of conformance.rs's second run: the paths taken where subgroups are
//! narrower than the kernels' shuffles assume — quant8.glsl's shared-memory tree, matvec_dec's
//! group sums through shared memory — against the same reference. (Elsewhere, on a device
//! lavapipe is not, the run is that of its own subgroups.)

mod common;

#[test]
fn vulkan_backend_conforms_with_narrow_subgroups() {
    // Set before the first Vulkan call of this process, whose only test this is (no other
    // thread reads the environment meanwhile).
    std::env::set_var("LP_NATIVE_VECTOR_WIDTH", "128");
    let (tpr, int_dot, cpu_attention, decode, kquant, pieces) = common::GPU_STYLE;
    let (name, subgroup) = common::conforms(tpr, int_dot, cpu_attention, decode, kquant, pieces);
    eprintln!("{name}: subgroups of {subgroup}");
    // On lavapipe the run took the narrow paths it is for.
    if name.contains("llvmpipe") {
        assert!(subgroup < 8, "{name} kept subgroups of {subgroup}");
    }
}
