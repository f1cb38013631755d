//! The conformance suite on the Vulkan backend (lavapipe in CI), under the Khronos validation
//! layer: every op and format agrees with the reference math, and the layer reports no error.

mod common;

use common::{conforms, GPU_STYLE};

/// Threads per mat-vec row: 1 is lavapipe's own choice; 16 runs the integer-dot mat-vec and the
/// split-key decode attention a GPU gets (row reductions through subgroup shuffles where the
/// subgroup holds a row, else shared memory); 64 with integer dots off runs the float mat-vec
/// of devices without them. The second and last run K-quant decode steps on matvec_dec.comp
/// (GPUs' default shape with 2 passes' loads at once, then 3 rows per group of 16 lanes with 4,
/// rows of fewer blocks than that leaving passes past their end, Q4_K lanes taking sub-block
/// pairs; its MoE form is held to the CPU
/// and to the generic kernels in end_to_end.rs, the suite's experts being Q8_0/Q4_0); of the two
/// on GPU-style attention, the second merges attn_dec.comp's slices in place (`attn_merge`,
/// two query heads a workgroup), the last writes the output of up to 1,024 keys from one
/// slice per workgroup (`attn_direct`) and merges longer contexts' in attn_combine.comp (their
/// slices four query heads a workgroup), its keys and values in one pass (`attn_one_pass`).
/// The last runs the generic decode mat-vec with 4 rows per group of 8 lanes (rows past a matrix's end
/// inside a group). The GPU-style run also takes a prompt's q/k prep a subgroup a head
/// (`prep_rows`, qk_prep_rows.comp); a second float run, with the GPUs' attention, rounds the
/// activations with act_quant.comp's block maxima by subgroup shuffles (`act_quant_sg`) and
/// reads each key of split slices once for all of its KV head's query heads (`attn_rows`).
#[test]
fn vulkan_backend_conforms_without_validation_errors() {
    for (tpr, int_dot, cpu_attention, decode, kquant, pieces) in [
        (1, true, true, None, None, None),
        GPU_STYLE,
        (64, false, true, None, None, None),
        (64, false, false, None, None, None),
        (
            8,
            true,
            false,
            Some((8, 4, 64)),
            Some((16, 3, 64)),
            Some((2, 4, true)),
        ),
    ] {
        conforms(tpr, int_dot, cpu_attention, decode, kquant, pieces);
    }
}
