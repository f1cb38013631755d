#version 450
// matmul_cm_split.comp — prompt mat-muls on cooperative matrices with split-K: matmul_cm.glsl
// with SPLIT_K defined (its header says how), a run of the columns a workgroup into a slab of
// its own, for split_sum.comp to add up.
#define SPLIT_K 1
#include "matmul_cm.glsl"
