//! The logical device: queue, buffers (each with its device address), shader pipelines created
//! lazily and cached, and the command recorder that batches a whole step into one submit.
//!
//! Shaders take no descriptor sets: every buffer reaches a shader as a 64-bit device address in
//! the push constants (`GL_EXT_buffer_reference`). That keeps recording cheap and lifts the
//! `maxStorageBufferRange` limit on a binding (lavapipe's is 128 MiB; Gemma 3's embedding is
//! 170 MiB): a buffer is limited only by `maxMemoryAllocationSize`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ash::vk;

use crate::device::{DeviceInfo, Instance};
use crate::VulkanError;

/// A pipeline's specialization constants 0..5 (0: the workgroup size; the others shape
/// parameters some shaders declare and the rest ignore).
pub type Spec = [u32; 6];

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));

/// Bytes of push constants every pipeline layout declares (the guaranteed minimum).
pub const PUSH_BYTES: u32 = 128;

/// A hasher for the maps a decode step reads at every command (pipelines, the buffer pool):
/// keys are the program's own (shader names, shapes, sizes), so no defence against chosen keys
/// is needed, and the standard SipHash was ~10% of a step's host recording (perf, lavapipe,
/// `--vk-skip record`). Multiply-rotate over 8-byte words (the Fx scheme).
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl FastHasher {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    #[inline(always)]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(Self::K);
    }
}

impl std::hash::Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.add(v as u64);
    }

    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.add(v as u64);
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }

    /// The state mixed once more (splitmix64's finalizer): a product's low bits depend only on
    /// the low bits of what went in, and the table picks buckets by the low bits.
    #[inline]
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }
}

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

pub struct Context {
    pub info: DeviceInfo,
    pub device: ash::Device,
    queue: vk::Queue,
    pub queue_family: u32,
    /// Valid bits of the queue's timestamps (0: it writes none).
    pub timestamp_bits: u32,
    mem_props: vk::PhysicalDeviceMemoryProperties,
    pipeline_layout: vk::PipelineLayout,
    pipelines: Mutex<FastMap<(&'static str, Spec), vk::Pipeline>>,
    /// `pipelines` by where the name lies (its pointer and length) rather than what it reads:
    /// the lookup at every command hashes and compares integers only. A name met at another
    /// address finds the same pipeline through `pipelines`.
    by_site: Mutex<FastMap<(usize, usize, Spec), vk::Pipeline>>,
    /// Pipelines are created with their statistics captured, read through this
    /// (`pipeline_statistics`).
    stats: Option<ash::khr::pipeline_executable_properties::Device>,
    /// Bytes of the buffers alive on this device (all memory kinds).
    allocated: std::sync::atomic::AtomicU64,
    /// Clocked pipelines (`VulkanOptions::clock`): the record buffer's address and records, set
    /// once (`set_clock`) before the first pipeline; then every shader with a `_clk` variant
    /// is created from it (shaders/clock.glsl).
    clock: std::sync::OnceLock<(u64, u32)>,
    /// Each clocked pipeline's kind (the number its records carry: the pipelines clocked
    /// before it).
    clocked: Mutex<FastMap<vk::Pipeline, u32>>,
    // Dropped last: the device must go before the instance.
    _instance: Instance,
}

/// A buffer with its own memory and device address; host-visible ones stay mapped.
pub struct Buffer {
    ctx: Arc<Context>,
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    pub size: u64,
    pub address: u64,
    mapped: *mut u8,
}

// SAFETY: the mapped pointer is written only by the recorder (under its lock) or before the
// buffer is shared; Vulkan handles are plain integers.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Memory {
    /// Device-local (weights, activations, caches); mapped too when the type allows it.
    Device,
    /// Host-visible and coherent (staging, readback).
    Host,
    /// What kernels read straight from the host's writes (positions, token ids: the upload
    /// arena): device-local and host-visible where the device has such memory, so a kernel's
    /// read stays on the device instead of crossing the bus (a dependent read of host memory
    /// costs a PCIe round trip); else as `Host`. The host only writes it.
    Upload,
}

impl Context {
    /// `capture_stats`: create every pipeline with its statistics captured (the device must
    /// have `pipeline_stats`; the caller checks). `clock`: enable the shader clocks (the device
    /// must have `shader_clock`; the caller checks) for `set_clock`.
    pub fn new(
        instance: Instance,
        pdev: vk::PhysicalDevice,
        info: DeviceInfo,
        capture_stats: bool,
        clock: bool,
    ) -> Result<Arc<Context>, VulkanError> {
        let inst = &instance.instance;
        // SAFETY: queries and device creation on a live physical device; every pointer in the
        // create infos refers to locals that outlive the calls.
        unsafe {
            let families = inst.get_physical_device_queue_family_properties(pdev);
            let queue_family = families
                .iter()
                .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
                .ok_or_else(|| VulkanError::Unusable {
                    name: info.name.clone(),
                    why: "no compute queue".into(),
                })? as u32;
            let prio = [1.0f32];
            let queues = [vk::DeviceQueueCreateInfo::default()
                .queue_family_index(queue_family)
                .queue_priorities(&prio)];
            let coop = info.cooperative_matrix;
            let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
                .buffer_device_address(true)
                .shader_float16(coop)
                .vulkan_memory_model(coop);
            let mut fcm =
                vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default().cooperative_matrix(true);
            let mut fpe = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
                .pipeline_executable_info(true);
            let mut exts = Vec::new();
            if coop {
                exts.push(c"VK_KHR_cooperative_matrix".as_ptr());
            }
            if capture_stats {
                exts.push(c"VK_KHR_pipeline_executable_properties".as_ptr());
            }
            let mut fclk = vk::PhysicalDeviceShaderClockFeaturesKHR::default()
                .shader_subgroup_clock(true)
                .shader_device_clock(true);
            if clock {
                exts.push(c"VK_KHR_shader_clock".as_ptr());
            }
            // The integer-dot mat-vec (matvecq.comp) needs shaderIntegerDotProduct (Vulkan 1.3).
            let mut f13 = vk::PhysicalDeviceVulkan13Features::default()
                .shader_integer_dot_product(info.integer_dot_product);
            let mut create = vk::DeviceCreateInfo::default()
                .queue_create_infos(&queues)
                .push_next(&mut f12);
            if info.integer_dot_product {
                create = create.push_next(&mut f13);
            }
            if coop {
                create = create.push_next(&mut fcm);
            }
            if capture_stats {
                create = create.push_next(&mut fpe);
            }
            if clock {
                create = create.push_next(&mut fclk);
            }
            let create = create.enabled_extension_names(&exts);
            let device = inst.create_device(pdev, &create, None)?;
            let stats = capture_stats
                .then(|| ash::khr::pipeline_executable_properties::Device::new(inst, &device));
            let queue = device.get_device_queue(queue_family, 0);
            let mem_props = inst.get_physical_device_memory_properties(pdev);
            let ranges = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .size(PUSH_BYTES)];
            let layout = match device.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&ranges),
                None,
            ) {
                Ok(l) => l,
                Err(e) => {
                    // The device must go before the instance drops.
                    device.destroy_device(None);
                    return Err(e.into());
                }
            };
            Ok(Arc::new(Context {
                info,
                device,
                queue,
                queue_family,
                timestamp_bits: families[queue_family as usize].timestamp_valid_bits,
                mem_props,
                pipeline_layout: layout,
                pipelines: Mutex::new(FastMap::default()),
                by_site: Mutex::new(FastMap::default()),
                stats,
                allocated: Default::default(),
                clock: Default::default(),
                clocked: Default::default(),
                _instance: instance,
            }))
        }
    }

    pub fn pipeline_layout(&self) -> vk::PipelineLayout {
        self.pipeline_layout
    }

    fn memory_type(&self, bits: u32, kind: Memory) -> Option<u32> {
        let types = &self.mem_props.memory_types[..self.mem_props.memory_type_count as usize];
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let want = match kind {
            Memory::Device => vk::MemoryPropertyFlags::DEVICE_LOCAL,
            Memory::Host => host,
            Memory::Upload => host | vk::MemoryPropertyFlags::DEVICE_LOCAL,
        };
        let ok = |i: usize| bits & (1 << i) != 0 && types[i].property_flags.contains(want);
        match kind {
            Memory::Upload => (0..types.len())
                .find(|&i| ok(i))
                .map(|i| i as u32)
                .or_else(|| self.memory_type(bits, Memory::Host))
                .map(|i| i as usize),
            // Prefer cached host memory for readback; any coherent type will do.
            Memory::Host => (0..types.len())
                .find(|&i| {
                    ok(i)
                        && types[i]
                            .property_flags
                            .contains(vk::MemoryPropertyFlags::HOST_CACHED)
                })
                .or_else(|| (0..types.len()).find(|&i| ok(i))),
            Memory::Device => (0..types.len())
                .find(|&i| ok(i))
                .or_else(|| (0..types.len()).find(|&i| bits & (1 << i) != 0)),
        }
        .map(|i| i as u32)
    }

    /// The largest buffer `buffer` makes: the device's largest allocation, and 4 GiB (shaders
    /// address bytes within a buffer with 32-bit offsets).
    pub fn max_buffer_bytes(&self) -> u64 {
        match self.info.max_allocation {
            0 => u32::MAX as u64,
            m => m.min(u32::MAX as u64),
        }
    }

    /// Bytes of the buffers alive on this device.
    pub fn allocated_bytes(&self) -> u64 {
        self.allocated.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A buffer of `size` bytes (at least 16).
    pub fn buffer(self: &Arc<Self>, size: u64, kind: Memory) -> Result<Buffer, VulkanError> {
        let size = size.max(16);
        let limit = self.max_buffer_bytes();
        if size > limit {
            return Err(VulkanError::TooLarge { bytes: size, limit });
        }
        let d = &self.device;
        // SAFETY: creation, allocation and binding of a new buffer on this device; on error the
        // partial objects are destroyed before returning.
        unsafe {
            let buffer = d.create_buffer(
                &vk::BufferCreateInfo::default()
                    .size(size)
                    .usage(
                        vk::BufferUsageFlags::STORAGE_BUFFER
                            | vk::BufferUsageFlags::TRANSFER_SRC
                            | vk::BufferUsageFlags::TRANSFER_DST
                            | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
                    )
                    .sharing_mode(vk::SharingMode::EXCLUSIVE),
                None,
            )?;
            let req = d.get_buffer_memory_requirements(buffer);
            let Some(ty) = self.memory_type(req.memory_type_bits, kind) else {
                d.destroy_buffer(buffer, None);
                return Err(VulkanError::NoMemoryType);
            };
            let mut flags = vk::MemoryAllocateFlagsInfo::default()
                .flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
            let memory = match d.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(ty)
                    .push_next(&mut flags),
                None,
            ) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    return Err(VulkanError::OutOfMemory {
                        bytes: size,
                        source: e,
                    });
                }
            };
            if let Err(e) = d.bind_buffer_memory(buffer, memory, 0) {
                d.destroy_buffer(buffer, None);
                d.free_memory(memory, None);
                return Err(e.into());
            }
            let host_visible = self.mem_props.memory_types[ty as usize]
                .property_flags
                .contains(
                    vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
                );
            let mapped = if host_visible {
                match d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) {
                    Ok(p) => p as *mut u8,
                    Err(e) => {
                        d.destroy_buffer(buffer, None);
                        d.free_memory(memory, None);
                        return Err(e.into());
                    }
                }
            } else {
                std::ptr::null_mut()
            };
            let address =
                d.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer));
            self.allocated
                .fetch_add(size, std::sync::atomic::Ordering::Relaxed);
            Ok(Buffer {
                ctx: self.clone(),
                buffer,
                memory,
                size,
                address,
                mapped,
            })
        }
    }

    /// Clocked pipelines from now on: the record buffer at `address` holds `records`
    /// (shaders/clock.glsl). Before the first pipeline is created (the context must have been
    /// made with `clock`); false if too late or set already.
    pub fn set_clock(&self, address: u64, records: u32) -> bool {
        let empty = self
            .pipelines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty();
        empty && self.clock.set((address, records)).is_ok()
    }

    /// The kind a clocked pipeline's records carry; `None` for a pipeline that writes none.
    pub fn clock_kind(&self, pipe: vk::Pipeline) -> Option<u32> {
        let c = self.clocked.lock().unwrap_or_else(|e| e.into_inner());
        c.get(&pipe).copied()
    }

    /// The pipeline of shader `name` with specialization constants 0 (the workgroup size) to 5
    /// (shape parameters some shaders declare; ignored by the others), created on first use;
    /// with the clock set (`set_clock`), from the shader's `_clk` variant where it has one.
    pub fn pipeline(&self, name: &'static str, spec: Spec) -> Result<vk::Pipeline, VulkanError> {
        let site = (name.as_ptr() as usize, name.len(), spec);
        if let Some(&p) = (self.by_site.lock().unwrap_or_else(|e| e.into_inner())).get(&site) {
            return Ok(p);
        }
        let p = self.pipeline_by_name(name, spec)?;
        (self.by_site.lock().unwrap_or_else(|e| e.into_inner())).insert(site, p);
        Ok(p)
    }

    /// `pipeline`, looked up (or created) by the name's text.
    fn pipeline_by_name(
        &self,
        name: &'static str,
        spec: Spec,
    ) -> Result<vk::Pipeline, VulkanError> {
        let mut cache = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&p) = cache.get(&(name, spec)) {
            return Ok(p);
        }
        let find = |n: &str| SHADERS.iter().find(|(s, _)| *s == n).map(|(_, b)| *b);
        let clock = self.clock.get().copied();
        let clocked = clock.and_then(|c| Some((c, find(&format!("{name}_clk"))?)));
        let spv = match clocked {
            Some((_, spv)) => spv,
            None => find(name).ok_or(VulkanError::NoShader(name))?,
        };
        let words = ash::util::read_spv(&mut std::io::Cursor::new(spv))
            .map_err(|e| VulkanError::Shader(format!("{name}: {e}")))?;
        let d = &self.device;
        // SAFETY: the SPIR-V was produced by glslang at build time; the create infos point at
        // locals that outlive the calls.
        unsafe {
            let module =
                d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)?;
            // Constants 0–5, then for a clocked pipeline clock.glsl's 20–23.
            let mut clk = self.clocked.lock().unwrap_or_else(|e| e.into_inner());
            let kind = clk.len() as u32;
            let mut values: Vec<(u32, u32)> = (0..spec.len() as u32).zip(spec).collect();
            if let Some(((address, records), _)) = clocked {
                values.extend([
                    (20, address as u32),
                    (21, (address >> 32) as u32),
                    (22, kind),
                    (23, records),
                ]);
            }
            let entries: Vec<vk::SpecializationMapEntry> = (values.iter().enumerate())
                .map(|(i, &(id, _))| {
                    vk::SpecializationMapEntry::default()
                        .constant_id(id)
                        .offset(4 * i as u32)
                        .size(4)
                })
                .collect();
            let data: Vec<u8> = values.iter().flat_map(|v| v.1.to_le_bytes()).collect();
            let spec_info = vk::SpecializationInfo::default()
                .map_entries(&entries)
                .data(&data);
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main")
                .specialization_info(&spec_info);
            let flags = if self.stats.is_some() {
                vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR
            } else {
                vk::PipelineCreateFlags::empty()
            };
            let info = vk::ComputePipelineCreateInfo::default()
                .flags(flags)
                .stage(stage)
                .layout(self.pipeline_layout);
            let result = d.create_compute_pipelines(vk::PipelineCache::null(), &[info], None);
            d.destroy_shader_module(module, None);
            let p = result.map_err(|(_, e)| VulkanError::from(e))?[0];
            if clocked.is_some() {
                clk.insert(p, kind);
            }
            cache.insert((name, spec), p);
            Ok(p)
        }
    }

    /// Every pipeline created so far, by shader and specialization constants, with the
    /// statistics the driver compiled it to (name and value, in the driver's words and order,
    /// over all its executables); `None` unless the context captures them.
    #[allow(clippy::type_complexity)]
    pub fn pipeline_statistics(
        &self,
    ) -> Result<Option<Vec<((&'static str, Spec), Vec<(String, String)>)>>, VulkanError> {
        let Some(ext) = &self.stats else {
            return Ok(None);
        };
        let cache = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for (&key, &pipeline) in cache.iter() {
            let mut stats = Vec::new();
            // SAFETY: a pipeline of this device, created with CAPTURE_STATISTICS_KHR.
            unsafe {
                let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
                let n = ext.get_pipeline_executable_properties(&info)?.len() as u32;
                for index in 0..n {
                    let exe = vk::PipelineExecutableInfoKHR::default()
                        .pipeline(pipeline)
                        .executable_index(index);
                    for st in ext.get_pipeline_executable_statistics(&exe)? {
                        let name = st
                            .name_as_c_str()
                            .map(|c| c.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        use vk::PipelineExecutableStatisticFormatKHR as F;
                        let value = match st.format {
                            F::BOOL32 => (st.value.b32 != 0).to_string(),
                            F::INT64 => st.value.i64.to_string(),
                            F::UINT64 => st.value.u64.to_string(),
                            F::FLOAT64 => format!("{:.3}", st.value.f64),
                            other => format!("({other:?})"),
                        };
                        stats.push((name, value));
                    }
                }
            }
            out.push((key, stats));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Some(out))
    }

    /// The queue's timestamps' valid bits as a mask (tick differences are taken under it).
    pub fn timestamp_mask(&self) -> u64 {
        match self.timestamp_bits {
            b if b >= 64 => u64::MAX,
            b => (1u64 << b) - 1,
        }
    }

    pub fn queue(&self) -> vk::Queue {
        self.queue
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: the last reference is gone: no buffer, command pool or submission remains.
        unsafe {
            let _ = self.device.device_wait_idle();
            for (_, p) in self
                .pipelines
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .drain()
            {
                self.device.destroy_pipeline(p, None);
            }
            self.device
                .destroy_pipeline_layout(self.pipeline_layout, None);
            self.device.destroy_device(None);
        }
    }
}

/// `Buffer::write` copies this much a thread at a time.
const WRITE_PIECE: usize = 4 << 20;

impl Buffer {
    /// Whether the host can write and read it directly.
    pub fn is_mapped(&self) -> bool {
        !self.mapped.is_null()
    }

    /// Copies `data` into a mapped buffer at `offset`. Large copies (a model's weights, read
    /// from the file's map: page faults as much as copying) are split across the host's
    /// threads in pieces of `WRITE_PIECE` bytes.
    pub fn write(&self, offset: u64, data: &[u8]) {
        use rayon::prelude::*;
        assert!(self.is_mapped() && offset + data.len() as u64 <= self.size);
        let base = self.mapped as usize + offset as usize;
        // SAFETY: in bounds of a live mapping (asserted above); the GPU is not using this range
        // (callers write before submitting work that reads it, or after waiting for it); the
        // pieces are disjoint.
        let copy = |at: usize, piece: &[u8]| unsafe {
            std::ptr::copy_nonoverlapping(piece.as_ptr(), (base + at) as *mut u8, piece.len())
        };
        if data.len() < 2 * WRITE_PIECE {
            copy(0, data);
        } else {
            data.par_chunks(WRITE_PIECE)
                .enumerate()
                .for_each(|(i, piece)| copy(i * WRITE_PIECE, piece));
        }
    }

    /// `n` little-endian f32 values from a mapped buffer at `offset`, as a new vector: one copy
    /// of them in place (`f32_view`) on little-endian hosts (a decode step reads a vocabulary
    /// of logits, 600 KB for 151,936, while the GPU waits for the next step).
    pub fn read_f32_vec(&self, offset: u64, n: usize) -> Vec<f32> {
        let bytes = 4 * n as u64;
        assert!(self.is_mapped() && offset + bytes <= self.size);
        // SAFETY: as every read of a mapped buffer here, after the fence of the work that wrote
        // it, and nothing writes it while this copies.
        if let Some(v) = unsafe { self.f32_view(offset, n) } {
            return v.to_vec();
        }
        let mut raw = vec![0u8; bytes as usize];
        self.read_into(offset, &mut raw);
        let le = |c: &[u8]| f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        raw.chunks_exact(4).map(le).collect()
    }

    /// `n` f32 values of a mapped buffer at `offset` (a multiple of 4), in place: no copy.
    /// `None` on big-endian hosts (the buffer holds little-endian values) or out of bounds.
    ///
    /// # Safety
    /// The work that wrote the range has been waited for (the memory is host-coherent), and no
    /// work that writes it is submitted while the slice lives.
    pub unsafe fn f32_view(&self, offset: u64, n: usize) -> Option<&[f32]> {
        let end = offset.checked_add(4 * n as u64)?;
        if !cfg!(target_endian = "little") || !self.is_mapped() || end > self.size {
            return None;
        }
        if !offset.is_multiple_of(4) || !(self.mapped as usize).is_multiple_of(4) {
            return None;
        }
        // SAFETY: in bounds of a live mapping and 4-byte aligned (checked above); every bit
        // pattern is an f32; the borrow of `self` keeps the mapping alive, and the caller's
        // contract (this function's) keeps the device from writing the range meanwhile.
        Some(unsafe { std::slice::from_raw_parts(self.mapped.add(offset as usize).cast(), n) })
    }

    /// Copies `out.len()` bytes from a mapped buffer at `offset`.
    pub fn read_into(&self, offset: u64, out: &mut [u8]) {
        assert!(self.is_mapped() && offset + out.len() as u64 <= self.size);
        // SAFETY: in bounds of a live mapping, after the fence of the work that wrote it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.mapped.add(offset as usize),
                out.as_mut_ptr(),
                out.len(),
            )
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: no pending work uses a buffer once it is dropped: pooled tensors go back to the
        // pool instead, the KV cache submits pending work before it drops, retired arenas are
        // kept until the next fence, and weights outlive the backend's final submit.
        unsafe {
            if !self.mapped.is_null() {
                self.ctx.device.unmap_memory(self.memory);
            }
            self.ctx.device.destroy_buffer(self.buffer, None);
            self.ctx.device.free_memory(self.memory, None);
        }
        self.ctx
            .allocated
            .fetch_sub(self.size, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Push constants: buffer addresses first (8-byte aligned), then 4-byte scalars, little-endian
/// (an address low word first). Kept as 4-byte words, and built in place (`a`, `w`, `f`)
/// wherever a push is bound to a variable: a by-value chain (`addr`, `u32`, `f32`) copies the
/// whole struct at every link (~17% of a dry decode step's host recording on lavapipe).
#[derive(Clone)]
pub struct Push {
    words: [u32; PUSH_WORDS],
    len: usize,
}

const PUSH_WORDS: usize = PUSH_BYTES as usize / 4;

impl Push {
    #[inline(always)]
    pub fn new() -> Push {
        Push {
            words: [0; PUSH_WORDS],
            len: 0,
        }
    }

    #[inline(always)]
    pub fn addr(mut self, a: u64) -> Push {
        self.a(a);
        self
    }

    #[inline(always)]
    pub fn u32(mut self, v: u32) -> Push {
        self.w(v);
        self
    }

    #[inline(always)]
    pub fn f32(mut self, v: f32) -> Push {
        self.f(v);
        self
    }

    /// `addr`, `u32` and `f32` in place: a chain of the by-value forms copies the whole struct
    /// at every link (LLVM keeps the moves), so a push bound to a variable is built with these.
    #[inline(always)]
    pub fn a(&mut self, a: u64) -> &mut Push {
        assert!(
            self.len.is_multiple_of(2),
            "addresses come first in push constants"
        );
        self.w(a as u32).w((a >> 32) as u32)
    }

    #[inline(always)]
    pub fn w(&mut self, v: u32) -> &mut Push {
        self.words[self.len] = v.to_le();
        self.len += 1;
        self
    }

    #[inline(always)]
    pub fn f(&mut self, v: f32) -> &mut Push {
        self.w(v.to_bits())
    }

    #[inline(always)]
    pub fn as_bytes(&self) -> &[u8] {
        let words = &self.words[..self.len];
        // SAFETY: a `u32` slice viewed as its bytes: same memory, 4 times the length, and u8
        // has no alignment or validity requirements.
        unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), 4 * words.len()) }
    }
}

impl Default for Push {
    fn default() -> Self {
        Push::new()
    }
}
