#version 450
#define MOE 1
#include "matmul_cm.glsl"
