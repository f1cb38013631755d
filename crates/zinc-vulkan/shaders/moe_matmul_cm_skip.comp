#version 450
// moe_matmul_cm_skip.comp — moe_matmul_cm.comp with SKIP_EMPTY (`VulkanOptions::moe_skip`): a
// subgroup makes no products for its 16-slot tiles past the workgroup's slots (matmul_cm.glsl
// says how); the same outputs.
#define MOE 1
#define SKIP_EMPTY 1
#include "matmul_cm.glsl"
