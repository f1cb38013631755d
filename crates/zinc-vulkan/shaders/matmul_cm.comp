#version 450
#include "matmul_cm.glsl"
