//! The Vulkan loader (opened at run time), instance, device discovery and selection, and the
//! features ZINC cares about.

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};

use ash::vk;

use crate::VulkanError;

/// What `zinc check` reports about a device, and what selection looks at.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Position in the driver's enumeration (`--device N`).
    pub index: usize,
    pub name: String,
    pub kind: DeviceKind,
    pub vendor_id: u32,
    pub driver_name: String,
    pub driver_info: String,
    /// `major.minor.patch` of the Vulkan API the device supports.
    pub api_version: (u32, u32, u32),
    pub subgroup_size: u32,
    pub subgroup_arithmetic: bool,
    /// Subgroup shuffles in compute shaders (mat-vec row reductions use them).
    pub subgroup_shuffle: bool,
    pub shader_fp16: bool,
    pub shader_int8: bool,
    pub storage_8bit: bool,
    pub storage_16bit: bool,
    pub integer_dot_product: bool,
    /// VK_KHR_cooperative_matrix with 16×16×16 f16 × f16 → f32 at subgroup scope, shaderFloat16
    /// and the Vulkan memory model: what the prompt mat-mul `matmul_cm.comp` needs.
    pub cooperative_matrix: bool,
    /// VK_KHR_pipeline_executable_properties with pipelineExecutableInfo: the driver reports
    /// each pipeline's compiled statistics (registers, shared memory, …; `zinc bench
    /// --vk-pipeline-stats`).
    pub pipeline_stats: bool,
    /// VK_KHR_shader_clock with both the SM's and the device's clock: what the clocked
    /// kernels (`VulkanOptions::clock`, `zinc bench --vk-clock`) read.
    pub shader_clock: bool,
    pub buffer_device_address: bool,
    /// Bytes of device-local memory (the largest device-local heap).
    pub vram: u64,
    pub max_storage_buffer_range: u64,
    pub max_allocation: u64,
    pub max_push_constants: u32,
    /// Shared memory one workgroup may declare (bytes).
    pub max_shared_memory: u32,
    /// Invocations one workgroup may have along x, where every ZINC workgroup lies: the smaller
    /// of `maxComputeWorkGroupInvocations` and `maxComputeWorkGroupSize[0]` (both at least 128).
    pub max_workgroup: u32,
    /// Nanoseconds per GPU timestamp tick.
    pub timestamp_period: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeviceKind {
    Discrete,
    Integrated,
    Virtual,
    Cpu,
    Other,
}

impl DeviceKind {
    fn from_vk(t: vk::PhysicalDeviceType) -> Self {
        match t {
            vk::PhysicalDeviceType::DISCRETE_GPU => DeviceKind::Discrete,
            vk::PhysicalDeviceType::INTEGRATED_GPU => DeviceKind::Integrated,
            vk::PhysicalDeviceType::VIRTUAL_GPU => DeviceKind::Virtual,
            vk::PhysicalDeviceType::CPU => DeviceKind::Cpu,
            _ => DeviceKind::Other,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            DeviceKind::Discrete => "discrete GPU",
            DeviceKind::Integrated => "integrated GPU",
            DeviceKind::Virtual => "virtual GPU",
            DeviceKind::Cpu => "CPU (software)",
            DeviceKind::Other => "other",
        }
    }
}

impl DeviceInfo {
    /// Why this device cannot run ZINC, if it cannot.
    pub fn unusable(&self) -> Option<String> {
        if self.api_version < (1, 2, 0) {
            return Some(format!(
                "Vulkan {}.{} (1.2 is needed)",
                self.api_version.0, self.api_version.1
            ));
        }
        if !self.buffer_device_address {
            return Some("no bufferDeviceAddress".into());
        }
        if self.max_push_constants < 128 {
            return Some(format!(
                "{} bytes of push constants (128 needed)",
                self.max_push_constants
            ));
        }
        None
    }
}

/// Validation messages of severity error seen since start (tests assert none).
pub static VALIDATION_ERRORS: AtomicU64 = AtomicU64::new(0);

unsafe extern "system" fn on_validation_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _ty: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        VALIDATION_ERRORS.fetch_add(1, Ordering::SeqCst);
    }
    if severity.intersects(
        vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
            | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
    ) && !data.is_null()
    {
        let msg = (*data).message_as_c_str().unwrap_or_default();
        eprintln!("vulkan validation: {}", msg.to_string_lossy());
    }
    vk::FALSE
}

/// The loader and an instance.
pub struct Instance {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
}

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

impl Instance {
    /// Opens the Vulkan loader and creates an instance; `validation` turns on the Khronos
    /// validation layer (an error when it is not installed).
    pub fn new(validation: bool) -> Result<Instance, VulkanError> {
        // SAFETY: loading the system's Vulkan loader library; its entry points are trusted.
        let entry =
            unsafe { ash::Entry::load() }.map_err(|e| VulkanError::NoLoader(e.to_string()))?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"zinc")
            .engine_name(c"zinc")
            .api_version(vk::API_VERSION_1_3);
        let mut layers = Vec::new();
        let mut exts = Vec::new();
        if validation {
            // SAFETY: plain enumeration.
            let available = unsafe { entry.enumerate_instance_layer_properties() }?;
            if !available
                .iter()
                .any(|l| l.layer_name_as_c_str().ok() == Some(VALIDATION_LAYER))
            {
                return Err(VulkanError::NoValidationLayer);
            }
            layers.push(VALIDATION_LAYER.as_ptr());
            exts.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        let info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&exts);
        // SAFETY: the create info and the strings it points to outlive the call.
        let instance = match unsafe { entry.create_instance(&info, None) } {
            Ok(i) => i,
            // The loader found no driver that can make an instance.
            Err(vk::Result::ERROR_INCOMPATIBLE_DRIVER) => return Err(VulkanError::NoDevice),
            Err(e) => return Err(e.into()),
        };
        let debug = if validation {
            let du = ash::ext::debug_utils::Instance::new(&entry, &instance);
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                        | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                        | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                        | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
                )
                .pfn_user_callback(Some(on_validation_message));
            // SAFETY: the callback is a plain function with the required signature.
            let m = unsafe { du.create_debug_utils_messenger(&info, None) }?;
            Some((du, m))
        } else {
            None
        };
        Ok(Instance {
            entry,
            instance,
            debug,
        })
    }

    /// Every physical device with what ZINC needs to know about it.
    pub fn devices(&self) -> Result<Vec<(vk::PhysicalDevice, DeviceInfo)>, VulkanError> {
        // SAFETY: plain enumeration on a live instance.
        let pdevs = unsafe { self.instance.enumerate_physical_devices() }?;
        pdevs
            .into_iter()
            .enumerate()
            .map(|(i, p)| Ok((p, self.describe(i, p)?)))
            .collect()
    }

    fn describe(&self, index: usize, p: vk::PhysicalDevice) -> Result<DeviceInfo, VulkanError> {
        let inst = &self.instance;
        // SAFETY: queries on a physical device of this instance; the pNext chains point at locals
        // that outlive the calls.
        unsafe {
            let props = inst.get_physical_device_properties(p);
            let exts = inst.enumerate_device_extension_properties(p)?;
            let has_ext = |name: &CStr| {
                exts.iter()
                    .any(|e| e.extension_name_as_c_str().ok() == Some(name))
            };
            let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
            let mut driver = vk::PhysicalDeviceDriverProperties::default();
            let api = props.api_version;
            let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut subgroup);
            if api >= vk::API_VERSION_1_2 {
                props2 = props2.push_next(&mut driver);
            }
            inst.get_physical_device_properties2(p, &mut props2);
            let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
            let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
            let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
            let mut feats = vk::PhysicalDeviceFeatures2::default();
            if api >= vk::API_VERSION_1_2 {
                feats = feats.push_next(&mut f11).push_next(&mut f12);
            }
            if api >= vk::API_VERSION_1_3 {
                feats = feats.push_next(&mut f13);
            }
            let coop_ext = has_ext(c"VK_KHR_cooperative_matrix");
            let mut fcm = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
            if coop_ext {
                feats = feats.push_next(&mut fcm);
            }
            let stats_ext = has_ext(c"VK_KHR_pipeline_executable_properties");
            let mut fpe = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
            if stats_ext {
                feats = feats.push_next(&mut fpe);
            }
            let clock_ext = has_ext(c"VK_KHR_shader_clock");
            let mut fclk = vk::PhysicalDeviceShaderClockFeaturesKHR::default();
            if clock_ext {
                feats = feats.push_next(&mut fclk);
            }
            inst.get_physical_device_features2(p, &mut feats);
            let coop_16 = coop_ext
                && fcm.cooperative_matrix == vk::TRUE
                && ash::khr::cooperative_matrix::Instance::new(&self.entry, inst)
                    .get_physical_device_cooperative_matrix_properties(p)
                    .unwrap_or_default()
                    .iter()
                    .any(|c| {
                        (c.m_size, c.n_size, c.k_size) == (16, 16, 16)
                            && c.a_type == vk::ComponentTypeKHR::FLOAT16
                            && c.b_type == vk::ComponentTypeKHR::FLOAT16
                            && c.c_type == vk::ComponentTypeKHR::FLOAT32
                            && c.result_type == vk::ComponentTypeKHR::FLOAT32
                            && c.scope == vk::ScopeKHR::SUBGROUP
                    });
            let mem = inst.get_physical_device_memory_properties(p);
            let vram = mem.memory_heaps[..mem.memory_heap_count as usize]
                .iter()
                .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
                .map(|h| h.size)
                .max()
                .unwrap_or(0);
            let mut maint3 = vk::PhysicalDeviceMaintenance3Properties::default();
            let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut maint3);
            inst.get_physical_device_properties2(p, &mut p2);
            let cstr = |r: Result<&CStr, _>| {
                r.map(|s: &CStr| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            Ok(DeviceInfo {
                index,
                name: cstr(props.device_name_as_c_str()),
                kind: DeviceKind::from_vk(props.device_type),
                vendor_id: props.vendor_id,
                driver_name: cstr(driver.driver_name_as_c_str()),
                driver_info: cstr(driver.driver_info_as_c_str()),
                api_version: (
                    vk::api_version_major(api),
                    vk::api_version_minor(api),
                    vk::api_version_patch(api),
                ),
                subgroup_size: subgroup.subgroup_size,
                subgroup_arithmetic: subgroup
                    .supported_operations
                    .contains(vk::SubgroupFeatureFlags::ARITHMETIC),
                subgroup_shuffle: subgroup
                    .supported_operations
                    .contains(vk::SubgroupFeatureFlags::SHUFFLE)
                    && subgroup
                        .supported_stages
                        .contains(vk::ShaderStageFlags::COMPUTE),
                shader_fp16: f12.shader_float16 == vk::TRUE,
                shader_int8: f12.shader_int8 == vk::TRUE,
                storage_8bit: f12.storage_buffer8_bit_access == vk::TRUE,
                storage_16bit: f11.storage_buffer16_bit_access == vk::TRUE,
                integer_dot_product: f13.shader_integer_dot_product == vk::TRUE,
                cooperative_matrix: coop_16
                    && f12.shader_float16 == vk::TRUE
                    && f12.vulkan_memory_model == vk::TRUE,
                pipeline_stats: stats_ext && fpe.pipeline_executable_info == vk::TRUE,
                shader_clock: clock_ext
                    && fclk.shader_subgroup_clock == vk::TRUE
                    && fclk.shader_device_clock == vk::TRUE,
                buffer_device_address: f12.buffer_device_address == vk::TRUE,
                vram,
                max_storage_buffer_range: props.limits.max_storage_buffer_range as u64,
                max_allocation: maint3.max_memory_allocation_size,
                max_push_constants: props.limits.max_push_constants_size,
                max_shared_memory: props.limits.max_compute_shared_memory_size,
                max_workgroup: props
                    .limits
                    .max_compute_work_group_invocations
                    .min(props.limits.max_compute_work_group_size[0]),
                timestamp_period: props.limits.timestamp_period,
            })
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: every device made from this instance is dropped first (Context owns both and
        // drops the device before the instance).
        unsafe {
            if let Some((du, m)) = self.debug.take() {
                du.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

/// The device `run` would pick: the requested index, else the best usable kind
/// (discrete > integrated > virtual > CPU), first in enumeration order among equals.
pub fn pick(devices: &[DeviceInfo], requested: Option<usize>) -> Result<usize, VulkanError> {
    if let Some(i) = requested {
        let d = devices.get(i).ok_or(VulkanError::NoSuchDevice {
            index: i,
            count: devices.len(),
        })?;
        if let Some(why) = d.unusable() {
            return Err(VulkanError::Unusable {
                name: d.name.clone(),
                why,
            });
        }
        return Ok(i);
    }
    devices
        .iter()
        .filter(|d| d.unusable().is_none())
        .min_by_key(|d| (d.kind, d.index))
        .map(|d| d.index)
        .ok_or(VulkanError::NoDevice)
}
