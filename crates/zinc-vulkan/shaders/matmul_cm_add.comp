#version 450
// matmul_cm_add.comp — prompt mat-muls on cooperative matrices onto a residual in place:
// matmul_cm.glsl with ADD_Y defined (its header says how), y += W·X in the store, the same f32
// add as elementwise.comp's op 1 after a plain matmul_cm, so the same bits, one dispatch fewer.
#define ADD_Y 1
#include "matmul_cm.glsl"
