//! The Vulkan backend: every op of `zinc_backend::Backend` as a GLSL compute shader (compiled to
//! SPIR-V at build time), on any Vulkan 1.2 device with buffer device addresses — AMD, Intel,
//! NVIDIA, or Mesa's lavapipe on the CPU, which CI uses.
//!
//! The loader (`libvulkan.so.1`, `vulkan-1.dll`) is opened at run time: a machine without it
//! still runs the CPU backend, and [`VulkanBackend::new`] says what is missing.
//!
//! Execution: ops record dispatches; long recordings go to the queue in pieces as they grow, and
//! the host waits only when a value is read (`read`, `argmax`), so a decode step is one round
//! trip. Shaders never assume a subgroup size: where they reduce through subgroup operations,
//! the host checks the device's size or the shader checks it at run time.

mod backend;
mod context;
pub mod device;

pub use backend::{
    kernel_plan, KernelPlan, MatvecCost, Stats, SyncCosts, VkKvCache, VkTensor, VkWeight,
    VulkanBackend, VulkanOptions, SPAN as PROFILE_SPAN,
};
pub use device::{DeviceInfo, DeviceKind};

use ash::vk;

#[derive(Debug, thiserror::Error)]
pub enum VulkanError {
    #[error("no Vulkan loader: {0} (install your GPU driver's Vulkan support, e.g. Debian's libvulkan1 and mesa-vulkan-drivers)")]
    NoLoader(String),
    #[error("no usable Vulkan device (a Vulkan 1.2 device with bufferDeviceAddress is needed); `zinc check` lists what the driver reports")]
    NoDevice,
    #[error("there is no Vulkan device {index}: the driver reports {count} (see `zinc check`)")]
    NoSuchDevice { index: usize, count: usize },
    #[error("Vulkan device {name:?} cannot run ZINC: {why}")]
    Unusable { name: String, why: String },
    #[error("the Vulkan validation layer VK_LAYER_KHRONOS_validation is not installed (Debian: vulkan-validationlayers)")]
    NoValidationLayer,
    #[error(
        "a buffer of {bytes} bytes is larger than the device allows in one allocation ({limit})"
    )]
    TooLarge { bytes: u64, limit: u64 },
    #[error("out of device memory allocating {bytes} bytes ({source})")]
    OutOfMemory { bytes: u64, source: vk::Result },
    #[error("no suitable memory type on the device")]
    NoMemoryType,
    #[error("no compiled shader named {0}")]
    NoShader(&'static str),
    #[error("bad shader: {0}")]
    Shader(String),
    #[error("invalid Vulkan tuning option: {0}")]
    BadOption(String),
    #[error("Vulkan call failed: {0}")]
    Vk(#[from] vk::Result),
}

/// Every Vulkan device the driver reports (for `zinc check`), and the one `run` would pick.
pub fn list_devices() -> Result<(Vec<DeviceInfo>, Option<usize>), VulkanError> {
    let inst = device::Instance::new(false)?;
    let devices: Vec<DeviceInfo> = inst.devices()?.into_iter().map(|(_, d)| d).collect();
    let pick = device::pick(&devices, None).ok();
    Ok((devices, pick))
}

/// Validation-layer errors seen so far in this process.
pub fn validation_errors() -> u64 {
    device::VALIDATION_ERRORS.load(std::sync::atomic::Ordering::SeqCst)
}
