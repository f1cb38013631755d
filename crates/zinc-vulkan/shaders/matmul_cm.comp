#version 450
// matmul_cm.comp — prompt mat-muls on cooperative matrices: matmul_cm.glsl (its header says how).
#include "matmul_cm.glsl"
