#version 450
// moe_matmul_cm.comp — the experts of a mixture of experts on cooperative matrices, a tile of
// one expert's slots a workgroup: matmul_cm.glsl with MOE defined (its header says how).
#define MOE 1
#include "matmul_cm.glsl"
