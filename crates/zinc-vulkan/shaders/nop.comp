#version 450
// nop.comp — one workgroup that does nothing: the padding stages of a timing run
// (`VulkanOptions::pad_stages`), each a barrier and a launch with no work of its own.
//
// Specialization constants: 0 = the workgroup size.
layout(local_size_x_id = 0) in;

void main() {
}
