//! The Vulkan backend's command recording: command buffers (recorded, in flight, spare) and
//! their fences, barriers owed between commands, the mapped upload arena, the profiler's
//! timestamps, and the pool of device buffers tensors come from.

use super::*;

/// Commands before the first piece of a recording goes to the device, and the most in a later
/// one, each GROWTH times the one before (`VulkanOptions::submit_chunks`, `submit_growth`); at
/// most MAX_FLYING pieces in flight (then the oldest is waited for).
pub(super) const FIRST_CHUNK: u32 = 8;
pub(super) const CHUNK: u32 = 512;
pub(super) const GROWTH: u32 = 4;
/// Adaptive pieces read the last piece's fence at most once in this many µs.
pub(super) const ADAPTIVE_POLL_US: u32 = 4;
pub(super) const MAX_FLYING: usize = 64;
/// Uploads (positions, ids, small tensors) go through a mapped arena of this size.
pub(super) const ARENA_BYTES: u64 = 8 << 20;
/// Large uploads are staged in chunks of this size.
pub(super) const STAGING_BYTES: u64 = 64 << 20;

/// A piece of a recording submitted without waiting (`Recorder::flush`): its command buffer
/// and fence, and whether the fence went with it (`VulkanOptions::piece_fences`).
pub(super) struct Piece {
    cb: vk::CommandBuffer,
    fence: vk::Fence,
    fenced: bool,
}

/// A dispatch as the clock's report needs it (`VulkanOptions::clock`).
pub(super) struct ClockDispatch {
    pub(super) label: &'static str,
    /// Workgroups dispatched.
    pub(super) groups: u64,
    /// The kind its records carry (`Context::clock_kind`); `None`: unclocked, none written.
    pub(super) kind: Option<u32>,
    /// Barriers recorded before it (`Recorder::barriers`): dispatches with the same count run
    /// in one stage.
    pub(super) stage: u64,
}

/// A dispatch recorded later than asked (`Recorder::hold`): a decode norm that an MoE router
/// reading the norm's input may go before (`Recorder::dispatch_before_held`), or a decode
/// mat-vec that the next may join (`Recorder::replace_held`).
pub(super) struct Held {
    name: &'static str,
    pipe: vk::Pipeline,
    push: Push,
    groups: [u32; 3],
    /// `dispatch`'s `writes` and `concurrent`, and a second buffer it writes (a joined one).
    writes: Option<u64>,
    concurrent: bool,
    also: Option<u64>,
}

/// A decode step recorded ahead (`Recorder::ahead_begin` … `ahead_end`): one command buffer,
/// complete but not submitted, with the uploads it reads, until `ahead_launch` writes its
/// token and submits it (or anything else recorded first spoils it).
pub(super) struct Ahead {
    pub(super) ticket: u64,
    cb: vk::CommandBuffer,
    fence: vk::Fence,
    /// Its own upload arena and the buffers it reads that must outlive it.
    arena: Buffer,
    keep: Vec<Buffer>,
    /// Where its one token id lies in `arena` (bytes), and the largest id it may take.
    token: (u64, u32),
    /// Its last command copies the tensor at `reads` (an address) into `readback`.
    readback: vk::Buffer,
    reads: u64,
    /// It writes the step clock's two timestamps (`StepClock`).
    clocked: bool,
}

/// The recording ahead under way: the normal recording's arena, its use and its kept buffers
/// (put back at the end), and the token uploads seen.
struct AheadRecording {
    ticket: u64,
    arena: Buffer,
    arena_used: u64,
    keep: Vec<Buffer>,
    token: Option<(u64, u32)>,
    /// More than one token upload, or an arena retired: the step cannot be launched.
    unfit: bool,
}

pub(super) struct Recorder {
    pub(super) ctx: Arc<Context>,
    /// The dispatch `hold` kept back, recorded before any other command (`release`).
    held: Option<Held>,
    pub(super) pool: vk::CommandPool,
    /// The command buffer being recorded, and the fence its submit signals.
    pub(super) cb: vk::CommandBuffer,
    pub(super) fence: vk::Fence,
    pub(super) open: bool,
    /// Commands in the open command buffer.
    pub(super) cb_ops: u32,
    /// Command buffers submitted without waiting (`flush`), oldest first, and free ones.
    pub(super) flying: Vec<Piece>,
    pub(super) spare: Vec<(vk::CommandBuffer, vk::Fence)>,
    pub(super) arena: Buffer,
    pub(super) arena_used: u64,
    /// Buffers the open command buffer reads from that must outlive it.
    pub(super) keep: Vec<Buffer>,
    pub(super) readback: Option<Buffer>,
    pub(super) prof: Option<Profiler>,
    pub(super) steps: Option<StepClock>,
    /// Commands recorded so far (dispatches, copies, fills): a value that has not moved means
    /// no buffer was written in between (see `QuantCache`).
    pub(super) ops: u64,
    /// See `new`.
    chunks: [u32; 3],
    /// Commands in the open piece before it goes to the device: `chunks[0]` for a recording's
    /// first, `chunks[2]` times the one before for each later one, up to `chunks[1]`.
    limit: u32,
    /// A recording has begun and not yet been submitted and waited for (`submit`).
    recording: bool,
    /// Since the last barrier: every command declared the one buffer it writes (these), or not
    /// (`None`: anything may have been written).
    pub(super) written: Option<Vec<u64>>,
    /// The pipeline stages of the commands since the last barrier (none: no barrier is owed).
    pub(super) since: vk::PipelineStageFlags,
    /// Host time blocked on fences, in all (`Backend::host_waited`).
    pub(super) waited: std::time::Duration,
    /// When the last `submit` saw everything sent finished (the device idle since), until the
    /// next submit, with `gaps.reading` then; and those gaps in all (`Backend::host_gaps`).
    pub(super) landed: Option<(std::time::Instant, std::time::Duration)>,
    pub(super) gaps: zinc_backend::HostGaps,
    /// Barriers recorded between dependent commands, in all (`Backend::dependent_stages`).
    pub(super) barriers: u64,
    /// With the clock on (`VulkanOptions::clock`): every dispatch since the last report.
    pub(super) clock_log: Option<Vec<ClockDispatch>>,
    /// The pipeline bound in the open command buffer (null: none yet): binding it again is
    /// skipped.
    bound: vk::Pipeline,
    /// Timing only (the ablation's `barrier` names, `BarrierAblation`): compute-to-compute
    /// barriers left out (except after a command whose output indexes other data,
    /// `NEVER_SKIPPED`) or reduced; results may be wrong.
    pub(super) loose: BarrierAblation,
    /// The next compute command keeps its barrier even when `loose`.
    keep_next: bool,
    /// Timing only (`VulkanOptions::pad_stages`): empty dependent stages recorded before each
    /// barrier, and the pipeline of their one workgroup (`nop.comp`).
    pub(super) pad: (u32, vk::Pipeline),
    /// Fences are polled, not slept on (`VulkanOptions::spin_wait`).
    pub(super) spin: bool,
    /// Each piece `flush` submits signals a fence of its own (`VulkanOptions::piece_fences`).
    pub(super) piece_fences: bool,
    /// A piece also goes when the device has finished every piece before it (`starved`;
    /// `VulkanOptions::submit_adaptive`).
    pub(super) adaptive: bool,
    /// Adaptive pieces read the last piece's fence at most this often
    /// (`VulkanOptions::adaptive_poll_us`), and when they last did.
    pub(super) poll_every: std::time::Duration,
    polled: Option<std::time::Instant>,
    /// When the open recording began, and `waited` then (`HostGaps::recording`).
    recording_since: Option<(std::time::Instant, std::time::Duration)>,
    /// Timing only (`--vk-skip record`): commands are counted, ordered and uploaded as ever,
    /// but none reaches the driver (command buffers are begun, ended and submitted empty), so
    /// a step's recording time is ZINC's own part of it; results are wrong. Pieces keep their
    /// limits (never adaptive: the idle device would end one at every first-piece count).
    pub(super) dry: bool,
    /// Decode steps recorded ahead (`ahead_begin`): the one recording ahead now, the one
    /// recorded and waiting for its token, the arenas and kept buffers of launched ones
    /// (freed when they land), spare arenas, and the last ticket handed out.
    ahead_rec: Option<AheadRecording>,
    ahead: Option<Ahead>,
    launched: Vec<(Buffer, Vec<Buffer>)>,
    ahead_arenas: Vec<Buffer>,
    tickets: u64,
    /// The tensor (its address) whose copy into the readback buffer (the handle) is recorded
    /// last, with nothing but a step ahead recorded since: reading it needs no copy.
    pub(super) read_ready: Option<(u64, vk::Buffer)>,
}

/// Compute-to-compute barriers as recorded, or reduced for timing (the ablation names them).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum BarrierAblation {
    /// As correctness needs: execution and memory (writes made visible to reads and writes).
    Full,
    /// `barrier`: none.
    None,
    /// `barrier-exec`: an execution dependency only, no memory barrier.
    Exec,
    /// `barrier-read`: writes made visible to later reads only.
    Read,
}

impl BarrierAblation {
    /// The names of the modes (`--vk-skip`), each with its mode.
    const NAMES: [(&'static str, BarrierAblation); 3] = [
        ("barrier", Self::None),
        ("barrier-exec", Self::Exec),
        ("barrier-read", Self::Read),
    ];

    /// Whether an ablation name asks for a barrier mode (rather than a kernel to leave out).
    pub(super) fn names_one(name: &str) -> bool {
        name.starts_with("barrier")
    }

    /// The mode an ablation's names ask for: at most one, and one of `NAMES`.
    pub(super) fn of(names: &[String]) -> Result<Self, VulkanError> {
        let mut modes = names.iter().filter(|n| Self::names_one(n));
        let Some(name) = modes.next() else {
            return Ok(Self::Full);
        };
        let bad = || {
            let known: Vec<&str> = Self::NAMES.iter().map(|(n, _)| *n).collect();
            VulkanError::BadOption(format!(
                "barrier ablation {names:?}: one of {}",
                known.join(", ")
            ))
        };
        if modes.next().is_some() {
            return Err(bad());
        }
        Self::NAMES
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, m)| m)
            .ok_or_else(bad)
    }
}

/// Two GPU timestamps a recording (a step): before its first command and after its last piece,
/// the span summed (`Backend::device_busy`). Against the wall time it tells how long the device
/// sat idle between steps, waiting for the host (waits for a later piece within a step fall
/// inside the span). Off until something asks for the sum (`on`), so that steps nobody times
/// pay nothing; not kept while profiling (the profiler's own spans say as much).
pub(super) struct StepClock {
    pool: vk::QueryPool,
    /// Nanoseconds per tick, and the ticks' valid bits as a mask.
    period: f64,
    mask: u64,
    /// Recordings are timed (from the first `Backend::device_busy` on).
    pub(super) on: bool,
    /// The open recording wrote its first timestamp.
    armed: bool,
    /// A submitted command buffer wrote both: they are read once it has landed.
    sent: bool,
    pub(super) busy: std::time::Duration,
}

/// GPU timestamps around every dispatch, summed per shader when a submit completes.
pub(super) struct Profiler {
    pub(super) pool: vk::QueryPool,
    /// Nanoseconds per timestamp tick.
    pub(super) period: f64,
    /// The shader of each pair of queries in the open command buffer.
    pub(super) names: Vec<&'static str>,
    pub(super) totals: HashMap<&'static str, (f64, u64)>,
    /// When the open command buffer's first command was recorded.
    pub(super) opened: Option<std::time::Instant>,
}

/// Profile entries of the host's side of each submit: recording its commands (first to last),
/// and waiting for the device to run them.
pub(super) const HOST_RECORD: &str = "(host recording)";
pub(super) const HOST_WAIT: &str = "(host waiting)";
/// The profile's entry of buffer copies (a decode step's logits into host memory).
pub(super) const COPY: &str = "(copy)";

/// Timestamp pairs per command buffer; dispatches past this are not timed.
pub(super) const PROFILE_PAIRS: u32 = 4096;
/// The profile entry of whole command buffers, first command to last (with the gaps between
/// kernels); names in parentheses are not kernels.
pub const SPAN: &str = "(command buffers)";

/// An upload arena of `bytes`: in device-local, host-visible memory where the device has it
/// and it has room (`Memory::Upload`), else in host memory.
fn upload_arena(ctx: &Arc<Context>, bytes: u64) -> Result<Buffer, VulkanError> {
    match ctx.buffer(bytes, Memory::Upload) {
        Err(VulkanError::OutOfMemory { .. }) => ctx.buffer(bytes, Memory::Host),
        r => r,
    }
}

/// How long a wait polls its fence (`Recorder::spin`) before it sleeps on it: a decode step's
/// last piece, but not a long prompt.
const SPIN_LIMIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Before a submit: the host's gap since `landed` (if open) closed into `gaps`.
fn close_gap(
    landed: &mut Option<(std::time::Instant, std::time::Duration)>,
    gaps: &mut zinc_backend::HostGaps,
) {
    if let Some((t, _)) = landed.take() {
        gaps.between += t.elapsed();
    }
}

/// Blocks until `fence` signals, adding the time to `waited`; `spin`: polls it first (for up
/// to `SPIN_LIMIT`), so the host sees the signal without the driver's wake-up latency.
///
/// # Safety
/// `fence` belongs to `d` and was submitted.
unsafe fn wait(
    d: &ash::Device,
    fence: vk::Fence,
    waited: &mut std::time::Duration,
    spin: bool,
) -> Result<(), VulkanError> {
    let t = std::time::Instant::now();
    let mut done = false;
    if spin {
        while t.elapsed() < SPIN_LIMIT {
            if d.get_fence_status(fence)? {
                done = true;
                break;
            }
            std::hint::spin_loop();
        }
    }
    if !done {
        d.wait_for_fences(&[fence], true, u64::MAX)?;
    }
    *waited += t.elapsed();
    Ok(())
}

impl Recorder {
    /// `chunks`: commands in the first piece of a recording sent to the device and the most in
    /// a later one ([FIRST_CHUNK, CHUNK] unless the options say otherwise).
    pub(super) fn new(
        ctx: &Arc<Context>,
        profile: bool,
        chunks: [u32; 3],
    ) -> Result<Recorder, VulkanError> {
        let d = &ctx.device;
        // SAFETY: plain object creation on a live device.
        unsafe {
            let pool = d.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(ctx.queue_family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )?;
            let cb = d.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )?[0];
            let fence = d.create_fence(&vk::FenceCreateInfo::default(), None)?;
            let timestamps = |count: u32| {
                d.create_query_pool(
                    &vk::QueryPoolCreateInfo::default()
                        .query_type(vk::QueryType::TIMESTAMP)
                        .query_count(count),
                    None,
                )
            };
            let prof = if profile {
                Some(Profiler {
                    pool: timestamps(2 * PROFILE_PAIRS)?,
                    period: ctx.info.timestamp_period as f64,
                    names: Vec::new(),
                    totals: HashMap::new(),
                    opened: None,
                })
            } else {
                None
            };
            let bits = ctx.timestamp_bits;
            let steps = if !profile && bits > 0 && ctx.info.timestamp_period > 0.0 {
                Some(StepClock {
                    pool: timestamps(2)?,
                    period: ctx.info.timestamp_period as f64,
                    mask: ctx.timestamp_mask(),
                    on: false,
                    armed: false,
                    sent: false,
                    busy: std::time::Duration::ZERO,
                })
            } else {
                None
            };
            Ok(Recorder {
                held: None,
                prof,
                steps,
                ctx: ctx.clone(),
                pool,
                cb,
                fence,
                open: false,
                cb_ops: 0,
                flying: Vec::new(),
                spare: Vec::new(),
                arena: upload_arena(ctx, ARENA_BYTES)?,
                arena_used: 0,
                keep: Vec::new(),
                readback: None,
                ops: 0,
                chunks,
                limit: chunks[0],
                recording: false,
                written: Some(Vec::new()),
                since: vk::PipelineStageFlags::empty(),
                waited: std::time::Duration::ZERO,
                landed: None,
                gaps: zinc_backend::HostGaps::default(),
                barriers: 0,
                clock_log: None,
                bound: vk::Pipeline::null(),
                loose: BarrierAblation::Full,
                keep_next: false,
                pad: (0, vk::Pipeline::null()),
                spin: false,
                piece_fences: true,
                adaptive: false,
                poll_every: std::time::Duration::ZERO,
                polled: None,
                recording_since: None,
                dry: false,
                ahead_rec: None,
                ahead: None,
                launched: Vec::new(),
                ahead_arenas: Vec::new(),
                tickets: 0,
                read_ready: None,
            })
        }
    }

    /// Timing tools: sets the commands a piece of a recording holds (`new`'s `chunks`) and
    /// returns the setting before.
    pub(super) fn set_chunks(&mut self, chunks: [u32; 3]) -> [u32; 3] {
        self.limit = chunks[0];
        std::mem::replace(&mut self.chunks, chunks)
    }

    /// Nothing recorded and not yet waited for: no open command buffer, no piece in flight, no
    /// recording begun.
    #[cfg(test)]
    pub(super) fn settled(&self) -> bool {
        !self.open && !self.recording && self.flying.is_empty()
    }

    /// With adaptive pieces (`VulkanOptions::submit_adaptive`): the open piece holds at least a
    /// first piece's commands and every piece sent before it has finished — the device is
    /// idle, so the piece goes now rather than at its limit. (Only the last piece's fence is
    /// read: a fence's signal follows every command submitted before it; and at most once
    /// each `poll_every`, so a driver whose fence reads cost does not slow the recording.)
    fn starved(&mut self) -> bool {
        if !self.adaptive || self.dry || self.cb_ops < self.chunks[0] {
            return false;
        }
        let Some(last) = self.flying.last() else {
            return false;
        };
        if !last.fenced {
            return false;
        }
        if !self.poll_every.is_zero() {
            let now = std::time::Instant::now();
            if self
                .polled
                .is_some_and(|t| now.duration_since(t) < self.poll_every)
            {
                return false;
            }
            self.polled = Some(now);
        }
        // SAFETY: the fence belongs to this device and was submitted with its piece. (An error
        // reads as "not yet": the piece goes at its limit, and the next wait reports it.)
        unsafe { self.ctx.device.get_fence_status(last.fence) }.unwrap_or(false)
    }

    pub(super) fn begin(&mut self) -> Result<(), VulkanError> {
        // A long recording goes to the device in pieces, so it runs while the host records the
        // rest (a decode step's ~330 commands took ~1.5 ms to record on the H200's host, with
        // the GPU idle): the first after FIRST_CHUNK commands, each later one `chunks[2]`
        // (GROWTH) times the one before up to CHUNK (the device starts soon, and the host stays
        // ahead of it; each boundary costs the device ~13 µs, so few pieces). With adaptive
        // pieces a piece also goes early once the device is idle (`starved`); the limit grows
        // all the same, so the next piece may be larger. Profiles keep one command buffer per
        // submit (their timestamps are read per command buffer).
        if self.ahead_rec.is_none() {
            // Anything recorded between a step ahead and its launch would run before it, in a
            // state its recording did not see: the step is dropped (its caller records it again).
            if let Some(a) = self.ahead.take() {
                self.spoil(a);
            }
            self.read_ready = None;
        }
        let first = !self.recording;
        if first {
            self.recording = true;
            self.recording_since = Some((std::time::Instant::now(), self.waited));
            self.limit = self.chunks[0];
            if let Some((t, read0)) = self.landed {
                let reading = self.gaps.reading.saturating_sub(read0);
                self.gaps.before_recording += t.elapsed().saturating_sub(reading);
            }
        }
        if self.open
            && self.prof.is_none()
            && self.ahead_rec.is_none()
            && (self.cb_ops >= self.limit || self.starved())
        {
            self.flush()?;
            self.limit = (self.chunks[2].saturating_mul(self.limit)).min(self.chunks[1]);
        }
        self.cb_ops += 1;
        if !self.open {
            // SAFETY: the command buffer is not in use: a fresh or spare one, or one whose fence
            // was waited for and reset.
            unsafe {
                self.ctx.device.begin_command_buffer(
                    self.cb,
                    &vk::CommandBufferBeginInfo::default()
                        .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                )?;
                match &mut self.steps {
                    Some(c) if first && c.on => {
                        let d = &self.ctx.device;
                        d.cmd_reset_query_pool(self.cb, c.pool, 0, 2);
                        d.cmd_write_timestamp(
                            self.cb,
                            vk::PipelineStageFlags::TOP_OF_PIPE,
                            c.pool,
                            0,
                        );
                        c.armed = true;
                    }
                    _ => {}
                }
                if let Some(p) = &mut self.prof {
                    let d = &self.ctx.device;
                    d.cmd_reset_query_pool(self.cb, p.pool, 0, 2 * PROFILE_PAIRS);
                    p.names.clear();
                    // Pair 0 spans the whole command buffer (its end is written at submit).
                    d.cmd_write_timestamp(self.cb, vk::PipelineStageFlags::TOP_OF_PIPE, p.pool, 0);
                    p.names.push(SPAN);
                    p.opened = Some(std::time::Instant::now());
                }
            }
            self.open = true;
            self.bound = vk::Pipeline::null();
        }
        Ok(())
    }

    /// A dispatch of `pipe` (with `push` where it reads push constants) recorded into the open
    /// command buffer as it is: no ordering, no profile entry, no count (timing tools' empty
    /// stages and `VulkanBackend::sync_costs`).
    pub(super) fn dispatch_raw(
        &mut self,
        pipe: vk::Pipeline,
        groups: [u32; 3],
        push: Option<&Push>,
    ) {
        debug_assert!(self.held.is_none(), "a dispatch held past a raw one");
        if self.dry {
            return;
        }
        let d = &self.ctx.device;
        // SAFETY: recording into the open command buffer with a pipeline of this device.
        unsafe {
            if pipe != self.bound {
                d.cmd_bind_pipeline(self.cb, vk::PipelineBindPoint::COMPUTE, pipe);
                self.bound = pipe;
            }
            if let Some(p) = push {
                d.cmd_push_constants(
                    self.cb,
                    self.ctx.pipeline_layout(),
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    p.as_bytes(),
                );
            }
            d.cmd_dispatch(self.cb, groups[0], groups[1], groups[2]);
        }
    }

    /// Before a command: the barrier owed to the commands recorded before it, unless it runs
    /// `concurrent`ly with them (it reads nothing they write and writes nothing they touch).
    /// `writes` names the one buffer (by address) the command writes, where it says; a
    /// `concurrent` command then skips the barrier if every command since the last one named
    /// its own, other buffer.
    pub(super) fn order(
        &mut self,
        writes: Option<u64>,
        concurrent: bool,
        stage: vk::PipelineStageFlags,
    ) {
        let free = match (&self.written, writes) {
            (Some(w), Some(out)) => concurrent && !w.contains(&out),
            _ => false,
        };
        if !self.since.is_empty() && !free {
            let (pads, nop) = self.pad;
            for _ in 0..pads {
                self.barrier(self.since, vk::PipelineStageFlags::COMPUTE_SHADER);
                self.dispatch_raw(nop, [1, 1, 1], None);
                self.since = vk::PipelineStageFlags::COMPUTE_SHADER;
                self.barriers += 1;
            }
            self.barrier(self.since, stage);
            self.barriers += 1;
            self.written = Some(Vec::new());
            self.since = vk::PipelineStageFlags::empty();
        }
        self.since |= stage;
        match (&mut self.written, writes) {
            (Some(w), Some(out)) => w.push(out),
            (w, _) => *w = None,
        }
    }

    /// The writes of the commands since the last barrier (in stages `src`) are visible to the
    /// next command (in stage `dst`) and every later one: a compute-to-compute barrier names
    /// only the compute stage. (Timing ablations, `loose`, reduce compute-to-compute ones.)
    pub(super) fn barrier(&self, src: vk::PipelineStageFlags, dst: vk::PipelineStageFlags) {
        if self.dry {
            return;
        }
        let access = |st: vk::PipelineStageFlags, shader, transfer| {
            let mut a = vk::AccessFlags::empty();
            if st.contains(vk::PipelineStageFlags::COMPUTE_SHADER) {
                a |= shader;
            }
            if st.contains(vk::PipelineStageFlags::TRANSFER) {
                a |= transfer;
            }
            a
        };
        let compute_only = src == vk::PipelineStageFlags::COMPUTE_SHADER
            && dst == vk::PipelineStageFlags::COMPUTE_SHADER;
        let shader_dst = match self.loose {
            BarrierAblation::Read if compute_only => vk::AccessFlags::SHADER_READ,
            _ => vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
        };
        let mb = vk::MemoryBarrier::default()
            .src_access_mask(access(
                src,
                vk::AccessFlags::SHADER_WRITE,
                vk::AccessFlags::TRANSFER_WRITE,
            ))
            .dst_access_mask(access(
                dst,
                shader_dst,
                vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE,
            ));
        let mbs: &[vk::MemoryBarrier] = if compute_only && self.loose == BarrierAblation::Exec {
            &[]
        } else {
            std::slice::from_ref(&mb)
        };
        // SAFETY: recording into the open command buffer.
        unsafe {
            self.ctx.device.cmd_pipeline_barrier(
                self.cb,
                src,
                dst,
                vk::DependencyFlags::empty(),
                mbs,
                &[],
                &[],
            );
        }
    }

    pub(super) fn dispatch(
        &mut self,
        name: &'static str,
        pipe: vk::Pipeline,
        push: &Push,
        groups: [u32; 3],
        writes: Option<u64>,
        concurrent: bool,
    ) -> Result<(), VulkanError> {
        self.release()?;
        if groups.contains(&0) {
            return Ok(());
        }
        self.ops += 1;
        self.record(name, pipe, push, groups, writes, concurrent)
    }

    /// A dispatch (as `dispatch`, which reads nothing that commands since the last barrier
    /// write) kept back until the next command is recorded, so that `dispatch_before_held`
    /// can put a command that reads its input before it. It counts as recorded (`ops`) now.
    pub(super) fn hold(
        &mut self,
        name: &'static str,
        pipe: vk::Pipeline,
        push: &Push,
        groups: [u32; 3],
        writes: Option<u64>,
        concurrent: bool,
    ) -> Result<(), VulkanError> {
        self.release()?;
        if groups.contains(&0) {
            return Ok(());
        }
        self.ops += 1;
        self.held = Some(Held {
            name,
            pipe,
            push: push.clone(),
            groups,
            writes,
            concurrent,
            also: None,
        });
        Ok(())
    }

    /// Whether a dispatch is held (`hold`) and nothing recorded since.
    pub(super) fn holds(&self) -> bool {
        self.held.is_some()
    }

    /// The held dispatch replaced by one that does its work and a second command's (which
    /// writes `also` besides the held one's output), counted as that second command; false
    /// (nothing changed) where none is held.
    pub(super) fn replace_held(
        &mut self,
        name: &'static str,
        pipe: vk::Pipeline,
        push: &Push,
        groups: [u32; 3],
        also: u64,
    ) -> bool {
        let Some(h) = &mut self.held else {
            return false;
        };
        h.name = name;
        h.pipe = pipe;
        h.push = push.clone();
        h.groups = groups;
        h.also = Some(also);
        self.ops += 1;
        true
    }

    /// Records the held dispatch, if any, where it would have gone: before anything else.
    pub(super) fn release(&mut self) -> Result<(), VulkanError> {
        let Some(h) = self.held.take() else {
            return Ok(());
        };
        // A joined second output written since the last barrier: not beside that command.
        let clash = matches!((&self.written, h.also), (Some(w), Some(a)) if w.contains(&a));
        let concurrent = h.concurrent && !clash;
        self.record(h.name, h.pipe, &h.push, h.groups, h.writes, concurrent)?;
        if let (Some(w), Some(a)) = (&mut self.written, h.also) {
            w.push(a);
        }
        Ok(())
    }

    /// `dispatch_beside` the held dispatch, but recorded before it: the barrier it owed is
    /// recorded first, then this command, then the held one beside it (they start in that
    /// order; an MoE router that normalizes the held norm's input itself starts first, the
    /// norm, far shorter, after it). Without a held dispatch, `dispatch_beside`.
    pub(super) fn dispatch_before_held(
        &mut self,
        name: &'static str,
        pipe: vk::Pipeline,
        push: &Push,
        groups: [u32; 3],
    ) -> Result<(), VulkanError> {
        let Some(h) = self.held.take() else {
            return self.dispatch_beside(name, pipe, push, groups);
        };
        if groups.contains(&0) {
            return self.record(h.name, h.pipe, &h.push, h.groups, None, false);
        }
        self.ops += 1;
        self.record(name, pipe, push, groups, None, false)?;
        let keep = self.keep_next;
        self.written = Some(Vec::new());
        let done = self.record(h.name, h.pipe, &h.push, h.groups, Some(0), true);
        self.written = None;
        self.keep_next |= keep;
        done
    }

    /// Records a dispatch counted already (`ops`).
    fn record(
        &mut self,
        name: &'static str,
        pipe: vk::Pipeline,
        push: &Push,
        groups: [u32; 3],
        writes: Option<u64>,
        concurrent: bool,
    ) -> Result<(), VulkanError> {
        self.begin()?;
        let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
        let none = self.loose == BarrierAblation::None;
        if none && !self.keep_next && (self.since.is_empty() || self.since == compute) {
            self.since = compute;
            self.written = None;
        } else {
            // After a router (`keep_next`) the barrier is recorded even for a command that
            // could run beside it.
            self.order(writes, concurrent && !self.keep_next, compute);
        }
        self.keep_next = none && super::NEVER_SKIPPED.contains(&name);
        if let Some(log) = &mut self.clock_log {
            log.push(ClockDispatch {
                label: name,
                groups: groups.iter().map(|&g| g as u64).product(),
                kind: self.ctx.clock_kind(pipe),
                stage: self.barriers,
            });
        }
        if self.dry {
            return Ok(());
        }
        let timed = self.time_next(name);
        let d = &self.ctx.device;
        // SAFETY: recording into the open command buffer with a pipeline of this device; the
        // timestamp queries were reset when the buffer began.
        unsafe {
            if let Some((pool, q)) = timed {
                d.cmd_write_timestamp(self.cb, vk::PipelineStageFlags::TOP_OF_PIPE, pool, q);
            }
            if pipe != self.bound {
                d.cmd_bind_pipeline(self.cb, vk::PipelineBindPoint::COMPUTE, pipe);
                self.bound = pipe;
            }
            d.cmd_push_constants(
                self.cb,
                self.ctx.pipeline_layout(),
                vk::ShaderStageFlags::COMPUTE,
                0,
                push.as_bytes(),
            );
            d.cmd_dispatch(self.cb, groups[0], groups[1], groups[2]);
            if let Some((pool, q)) = timed {
                d.cmd_write_timestamp(self.cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, q + 1);
            }
        }
        Ok(())
    }

    /// `dispatch` of a command that runs beside those since the last barrier, whatever they
    /// declared (the caller knows it reads nothing they write and writes nothing they touch,
    /// or waits in the shader for their signal before it does),
    /// with a barrier owed after it to whatever follows (it declares none of its writes).
    pub(super) fn dispatch_beside(
        &mut self,
        name: &'static str,
        pipe: vk::Pipeline,
        push: &Push,
        groups: [u32; 3],
    ) -> Result<(), VulkanError> {
        self.release()?;
        self.written = Some(Vec::new());
        let done = self.dispatch(name, pipe, push, groups, Some(0), true);
        self.written = None;
        done
    }

    /// After a copy into a mapped buffer the host reads once the submit's fence signals: the
    /// copy's writes made visible to the host (a fence makes them available, not visible).
    pub(super) fn before_host_read(&mut self) {
        debug_assert!(self.held.is_none(), "a dispatch held past a copy");
        if !self.open || self.dry {
            return;
        }
        let mb = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ);
        // SAFETY: recording into the open command buffer.
        unsafe {
            self.ctx.device.cmd_pipeline_barrier(
                self.cb,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[mb],
                &[],
                &[],
            );
        }
    }

    pub(super) fn copy(
        &mut self,
        src: vk::Buffer,
        src_off: u64,
        dst: vk::Buffer,
        dst_off: u64,
        size: u64,
    ) -> Result<(), VulkanError> {
        self.release()?;
        if size == 0 {
            return Ok(());
        }
        self.ops += 1;
        self.begin()?;
        self.order(None, false, vk::PipelineStageFlags::TRANSFER);
        if self.dry {
            return Ok(());
        }
        let timed = self.time_next(COPY);
        // SAFETY: recording a copy between live buffers, in bounds (callers check); the
        // timestamp queries were reset when the buffer began.
        unsafe {
            let d = &self.ctx.device;
            if let Some((pool, q)) = timed {
                d.cmd_write_timestamp(self.cb, vk::PipelineStageFlags::TOP_OF_PIPE, pool, q);
            }
            d.cmd_copy_buffer(
                self.cb,
                src,
                dst,
                &[vk::BufferCopy {
                    src_offset: src_off,
                    dst_offset: dst_off,
                    size,
                }],
            );
            if let Some((pool, q)) = timed {
                d.cmd_write_timestamp(self.cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, q + 1);
            }
        }
        Ok(())
    }

    /// While profiling: the query pool and first of the two timestamps around the next command,
    /// entered under `name` (`None` past the pool's pairs, or not profiling).
    fn time_next(&mut self, name: &'static str) -> Option<(vk::QueryPool, u32)> {
        match &mut self.prof {
            Some(p) if (p.names.len() as u32) < PROFILE_PAIRS => {
                let q = 2 * p.names.len() as u32;
                p.names.push(name);
                Some((p.pool, q))
            }
            _ => None,
        }
    }

    pub(super) fn fill_zero(&mut self, buf: vk::Buffer, size: u64) -> Result<(), VulkanError> {
        self.release()?;
        self.ops += 1;
        self.begin()?;
        self.order(None, false, vk::PipelineStageFlags::TRANSFER);
        if self.dry {
            return Ok(());
        }
        // SAFETY: recording a fill of a live buffer; size is a multiple of 4.
        unsafe {
            self.ctx
                .device
                .cmd_fill_buffer(self.cb, buf, 0, size.div_ceil(4) * 4, 0);
        }
        Ok(())
    }

    /// Copies `bytes` into the arena and returns their device address (16-byte aligned). A
    /// full arena is retired (kept alive until the next submit completes) and a fresh one taken:
    /// addresses handed out earlier stay valid until the work that reads them has run.
    pub(super) fn upload(&mut self, bytes: &[u8]) -> Result<u64, VulkanError> {
        let len = (bytes.len() as u64).max(4);
        if self.arena_used + len > self.arena.size {
            if let Some(r) = &mut self.ahead_rec {
                r.unfit = true;
            }
            let size = ARENA_BYTES.max(len.next_power_of_two());
            let fresh = upload_arena(&self.ctx, size)?;
            let old = std::mem::replace(&mut self.arena, fresh);
            self.keep.push(old);
            self.arena_used = 0;
        }
        let at = self.arena_used;
        self.arena.write(at, bytes);
        self.arena_used = (at + len).div_ceil(16) * 16;
        Ok(self.arena.address + at)
    }

    /// `upload` of one token id (an embedding's input), at most `max`: in a step recorded
    /// ahead, where `ahead_launch` writes the real one.
    pub(super) fn upload_token(&mut self, id: u32, max: u32) -> Result<u64, VulkanError> {
        let addr = self.upload(&id.min(max).to_le_bytes())?;
        if let Some(r) = &mut self.ahead_rec {
            r.unfit |= r.token.is_some();
            r.token = Some((addr - self.arena.address, max));
        }
        Ok(addr)
    }

    /// Submits the open command buffer without waiting for it and opens another at the next
    /// command. Barriers order commands across command buffers of the queue as within one, and
    /// what they read (arena, kept buffers) lives until `submit` has waited for all of them.
    pub(super) fn flush(&mut self) -> Result<(), VulkanError> {
        self.release()?;
        let d = &self.ctx.device;
        // SAFETY: ends and submits the open command buffer; the next pair is free (a fresh one,
        // or the oldest in flight once its fence has signalled).
        unsafe {
            d.end_command_buffer(self.cb)?;
            let cbs = [self.cb];
            close_gap(&mut self.landed, &mut self.gaps);
            // Without piece fences the last piece that fits the flying list takes one, so a
            // full list always ends in a fenced piece.
            let fenced = self.piece_fences || self.adaptive || self.flying.len() + 1 >= MAX_FLYING;
            d.queue_submit(
                self.ctx.queue(),
                &[vk::SubmitInfo::default().command_buffers(&cbs)],
                if fenced {
                    self.fence
                } else {
                    vk::Fence::null()
                },
            )?;
            self.gaps.pieces += 1;
            self.flying.push(Piece {
                cb: self.cb,
                fence: self.fence,
                fenced,
            });
            let next = match self.spare.pop() {
                Some(pair) => pair,
                None if self.flying.len() >= MAX_FLYING => {
                    // The oldest is done once its fence, or any later piece's, has signalled
                    // (a fence's signal follows every command submitted before it).
                    let p = self.flying.remove(0);
                    let by = match p.fenced {
                        true => Some(p.fence),
                        false => self.flying.iter().find(|q| q.fenced).map(|q| q.fence),
                    };
                    // (A full list ends in a fenced piece, so `by` is always found; the idle
                    // wait is a safe fallback, counted as a wait too.)
                    match by {
                        Some(f) => wait(d, f, &mut self.waited, self.spin)?,
                        None => {
                            let t = std::time::Instant::now();
                            d.queue_wait_idle(self.ctx.queue())?;
                            self.waited += t.elapsed();
                        }
                    }
                    if p.fenced {
                        d.reset_fences(&[p.fence])?;
                    }
                    d.reset_command_buffer(p.cb, vk::CommandBufferResetFlags::empty())?;
                    (p.cb, p.fence)
                }
                None => self.new_pair()?,
            };
            (self.cb, self.fence) = next;
        }
        self.open = false;
        self.cb_ops = 0;
        Ok(())
    }

    /// Waits for the command buffers `flush` submitted and frees them.
    pub(super) fn land(&mut self) -> Result<(), VulkanError> {
        self.land_after(false)
    }

    /// `land`; `covered`: a fence submitted after every piece has signalled already (the
    /// pieces without fences are done).
    fn land_after(&mut self, covered: bool) -> Result<(), VulkanError> {
        let d = &self.ctx.device;
        // SAFETY: every piece is done before its command buffer is reset: a fence submitted
        // after all of them (the last piece's, given one by an empty batch where it had none,
        // or the caller's) has signalled, and a fence's signal follows every command submitted
        // before it. A piece's own fence is still waited for (at once, being signalled) before
        // it is reset: its signal operation is not a command, so the later fence need not
        // cover it, and a fence may be reset only once no signal of it is pending.
        unsafe {
            if !covered {
                if let Some(last) = self.flying.last_mut() {
                    if !last.fenced {
                        d.queue_submit(self.ctx.queue(), &[], last.fence)?;
                        last.fenced = true;
                    }
                    wait(d, last.fence, &mut self.waited, self.spin)?;
                }
            }
            for p in self.flying.drain(..) {
                if p.fenced {
                    wait(d, p.fence, &mut self.waited, self.spin)?;
                    d.reset_fences(&[p.fence])?;
                }
                d.reset_command_buffer(p.cb, vk::CommandBufferResetFlags::empty())?;
                self.spare.push((p.cb, p.fence));
            }
        }
        for (arena, _keep) in self.launched.drain(..) {
            self.ahead_arenas.push(arena);
        }
        Ok(())
    }

    /// The step clock's last timestamp written into the open command buffer, if its first
    /// was (`StepClock::armed`): whether it was.
    fn end_step_clock(&mut self) -> bool {
        let Some(c) = self.steps.as_mut().filter(|c| c.armed) else {
            return false;
        };
        // SAFETY: recording into the open command buffer; the query was reset at its start.
        unsafe {
            self.ctx.device.cmd_write_timestamp(
                self.cb,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                c.pool,
                1,
            );
        }
        c.armed = false;
        true
    }

    /// `end_step_clock` for a buffer about to be submitted: its span is read once it has landed.
    fn close_step_clock(&mut self) {
        if self.end_step_clock() {
            if let Some(c) = &mut self.steps {
                c.sent = true;
            }
        }
    }

    /// The recording under way ends here: its time (waits left out) into `HostGaps::recording`.
    fn end_recording(&mut self) {
        if let Some((t, w0)) = self.recording_since.take() {
            let waits = self.waited.saturating_sub(w0);
            self.gaps.recording += t.elapsed().saturating_sub(waits);
        }
        self.recording = false;
    }

    /// After a land: the step clock's span of the command buffer that wrote both timestamps.
    fn read_step_clock(&mut self) -> Result<(), VulkanError> {
        if let Some(c) = self.steps.as_mut().filter(|c| c.sent) {
            let mut ticks = [0u64; 2];
            // SAFETY: the queries belong to this device; the buffer that wrote them landed.
            unsafe {
                self.ctx.device.get_query_pool_results(
                    c.pool,
                    0,
                    &mut ticks,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                )?;
            }
            let dt = ticks[1].wrapping_sub(ticks[0]) & c.mask;
            c.busy += std::time::Duration::from_nanos((dt as f64 * c.period) as u64);
            c.sent = false;
        }
        Ok(())
    }

    /// A free command buffer and fence: a spare pair or new ones.
    fn free_pair(&mut self) -> Result<(vk::CommandBuffer, vk::Fence), VulkanError> {
        match self.spare.pop() {
            Some(pair) => Ok(pair),
            None => self.new_pair(),
        }
    }

    /// A new command buffer of the pool and an unsignalled fence.
    fn new_pair(&self) -> Result<(vk::CommandBuffer, vk::Fence), VulkanError> {
        let d = &self.ctx.device;
        // SAFETY: plain object creation on a live device.
        unsafe {
            let cb = d.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(self.pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )?[0];
            Ok((cb, d.create_fence(&vk::FenceCreateInfo::default(), None)?))
        }
    }

    /// Starts recording a decode step ahead, to go to the device whole at `ahead_launch` (one
    /// submit a step, no pieces, and the host's recording off the device's critical path):
    /// what is recorded so far goes to the device now (without a wait), and the step gets an
    /// arena of its own. The caller has recorded the copy of the last step's result it will
    /// read (`read_ready`). Returns the step's ticket.
    pub(super) fn ahead_begin(&mut self) -> Result<u64, VulkanError> {
        self.demote_ahead()?;
        if let Some(a) = self.ahead.take() {
            self.spoil(a);
        }
        if self.open {
            self.close_step_clock();
            self.flush()?;
        }
        self.end_recording();
        let fresh = match self.ahead_arenas.pop() {
            Some(a) => a,
            None => upload_arena(&self.ctx, ARENA_BYTES)?,
        };
        self.tickets += 1;
        self.ahead_rec = Some(AheadRecording {
            ticket: self.tickets,
            arena: std::mem::replace(&mut self.arena, fresh),
            arena_used: std::mem::replace(&mut self.arena_used, 0),
            keep: std::mem::take(&mut self.keep),
            token: None,
            unfit: false,
        });
        Ok(self.tickets)
    }

    /// Ends the step recorded ahead, whose last command copied the tensor at `reads` into the
    /// readback buffer `readback`: kept for `ahead_launch`, under its ticket. `None` where it
    /// cannot be launched (it went to the device already, `demote_ahead`; it uploaded no token
    /// or two) — its caller records the step again when it comes.
    pub(super) fn ahead_end(
        &mut self,
        reads: u64,
        readback: vk::Buffer,
    ) -> Result<Option<u64>, VulkanError> {
        self.release()?;
        let Some(r) = self.ahead_rec.take() else {
            return Ok(None);
        };
        let (ticket, token, unfit) = (r.ticket, r.token, r.unfit);
        let (arena, keep) = self.leave_ahead(r);
        self.end_recording();
        // (Its span is read once it is launched and has landed.)
        let clocked = self.end_step_clock();
        let (cb, fence) = (self.cb, self.fence);
        (self.cb, self.fence) = self.free_pair()?;
        let was_open = std::mem::replace(&mut self.open, false);
        self.cb_ops = 0;
        // SAFETY: ends the step's command buffer (open since its first command).
        if was_open {
            unsafe { self.ctx.device.end_command_buffer(cb)? };
        }
        let a = Ahead {
            ticket,
            cb,
            fence,
            arena,
            keep,
            token: token.unwrap_or((0, 0)),
            readback,
            reads,
            clocked,
        };
        if !was_open || unfit || token.is_none() {
            self.spoil(a);
            return Ok(None);
        }
        self.ahead = Some(a);
        Ok(Some(ticket))
    }

    /// The ordinary recording's arena, its use and its kept buffers back from `r`; the step
    /// ahead's arena and kept buffers returned.
    fn leave_ahead(&mut self, r: AheadRecording) -> (Buffer, Vec<Buffer>) {
        self.arena_used = r.arena_used;
        (
            std::mem::replace(&mut self.arena, r.arena),
            std::mem::replace(&mut self.keep, r.keep),
        )
    }

    /// A step ahead is being recorded.
    pub(super) fn recording_ahead(&self) -> bool {
        self.ahead_rec.is_some()
    }

    /// A recording ahead abandoned before its end (its forward failed): nothing of it runs.
    pub(super) fn ahead_abort(&mut self) {
        self.held = None;
        let Some(r) = self.ahead_rec.take() else {
            return;
        };
        let (arena, _keep) = self.leave_ahead(r);
        self.ahead_arenas.push(arena);
        self.recording = false;
        self.recording_since = None;
        if let Some(c) = &mut self.steps {
            c.armed = false;
        }
        if std::mem::replace(&mut self.open, false) {
            // SAFETY: the open command buffer is the step's, never submitted: ended and reset.
            unsafe {
                let d = &self.ctx.device;
                let _ = d.end_command_buffer(self.cb);
                let _ = d.reset_command_buffer(self.cb, vk::CommandBufferResetFlags::empty());
            }
        }
        self.cb_ops = 0;
        // Caches keyed by the command count (a quantization "just made") see a new count.
        self.ops += 1;
    }

    /// Submits the step recorded ahead under `ticket` with its token `id`: true, or false
    /// where it is gone (spoiled, or another's).
    pub(super) fn ahead_launch(&mut self, ticket: u64, id: u32) -> Result<bool, VulkanError> {
        let Some(a) = self.ahead.take_if(|a| a.ticket == ticket) else {
            return Ok(false);
        };
        let readback = self.readback.as_ref().map(|b| b.buffer);
        if readback != Some(a.readback) || self.open || self.ahead_rec.is_some() {
            self.spoil(a);
            return Ok(false);
        }
        if self.flying.len() >= MAX_FLYING {
            // (A caller that never reads between steps: the steps before land first.)
            self.land()?;
        }
        let (at, max) = a.token;
        a.arena.write(at, &id.min(max).to_le_bytes());
        close_gap(&mut self.landed, &mut self.gaps);
        // SAFETY: the step's command buffer was ended and never submitted; its fence is
        // unsignalled; what it reads lives until it lands (`launched`).
        unsafe {
            self.ctx.device.queue_submit(
                self.ctx.queue(),
                &[vk::SubmitInfo::default().command_buffers(&[a.cb])],
                a.fence,
            )?;
        }
        self.gaps.ahead += 1;
        self.flying.push(Piece {
            cb: a.cb,
            fence: a.fence,
            fenced: true,
        });
        self.launched.push((a.arena, a.keep));
        self.read_ready = Some((a.reads, a.readback));
        if let Some(c) = &mut self.steps {
            c.sent |= a.clocked;
        }
        Ok(true)
    }

    /// Drops the step recorded ahead under `ticket`, if it is still there.
    pub(super) fn ahead_cancel(&mut self, ticket: u64) {
        if let Some(a) = self.ahead.take_if(|a| a.ticket == ticket) {
            self.spoil(a);
        }
    }

    /// A step recorded ahead that will not run: its command buffer and arena back to spare.
    fn spoil(&mut self, a: Ahead) {
        // SAFETY: the command buffer was never submitted (executable or not yet ended).
        unsafe {
            let _ =
                (self.ctx.device).reset_command_buffer(a.cb, vk::CommandBufferResetFlags::empty());
        }
        self.spare.push((a.cb, a.fence));
        self.ahead_arenas.push(a.arena);
    }

    /// A recording ahead turned into a plain one (something waits for the device inside it):
    /// its commands go with the open recording, its arena and kept buffers kept until it lands,
    /// and `ahead_end` later finds nothing to keep.
    pub(super) fn demote_ahead(&mut self) -> Result<(), VulkanError> {
        let Some(r) = self.ahead_rec.take() else {
            return Ok(());
        };
        if self.steps.as_ref().is_some_and(|c| c.sent) {
            // The step before wrote the step clock's queries, which this recording resets
            // when it runs: they are read first.
            self.land()?;
            self.read_step_clock()?;
        }
        let (arena, mut keep) = self.leave_ahead(r);
        self.keep.append(&mut keep);
        self.keep.push(arena);
        self.read_ready = None;
        Ok(())
    }

    /// Submits what is recorded and waits for it (and for what `flush` submitted).
    pub(super) fn submit(&mut self, stats: &Stats) -> Result<(), VulkanError> {
        // A wait inside a recording ahead: what it recorded runs now, as a plain recording.
        self.demote_ahead()?;
        self.release()?;
        // The recording ends here: what is left is its last submit.
        self.end_recording();
        if !self.open {
            let waited_for = !self.flying.is_empty();
            if waited_for {
                stats.submits.fetch_add(1, Relaxed);
            }
            self.land()?;
            if waited_for {
                // (A step ahead's result: the device is idle from here to the next submit.)
                self.landed = Some((std::time::Instant::now(), self.gaps.reading));
            }
            self.read_step_clock()?;
            self.arena_used = 0;
            self.keep.clear();
            return Ok(());
        }
        self.cb_ops = 0;
        let ctx = self.ctx.clone();
        let d = &ctx.device;
        // SAFETY: ends and submits the open command buffer, waits on its fence, then resets both;
        // nothing else uses the queue (the recorder is behind a lock).
        unsafe {
            if let Some(p) = &self.prof {
                d.cmd_write_timestamp(self.cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, p.pool, 1);
            }
            self.close_step_clock();
            d.end_command_buffer(self.cb)?;
            self.open = false;
            let cbs = [self.cb];
            let submitted = std::time::Instant::now();
            if let Some(p) = &mut self.prof {
                if let Some(t) = p.opened.take() {
                    let e = p.totals.entry(HOST_RECORD).or_insert((0.0, 0));
                    e.0 += (submitted - t).as_nanos() as f64;
                    e.1 += 1;
                }
            }
            close_gap(&mut self.landed, &mut self.gaps);
            d.queue_submit(
                self.ctx.queue(),
                &[vk::SubmitInfo::default().command_buffers(&cbs)],
                self.fence,
            )?;
            stats.submits.fetch_add(1, Relaxed);
            // This fence's signal follows every piece flushed before it.
            wait(d, self.fence, &mut self.waited, self.spin)?;
            self.land_after(true)?;
            self.landed = Some((std::time::Instant::now(), self.gaps.reading));
            if let Some(p) = &mut self.prof {
                let e = p.totals.entry(HOST_WAIT).or_insert((0.0, 0));
                e.0 += submitted.elapsed().as_nanos() as f64;
                e.1 += 1;
            }
            d.reset_fences(&[self.fence])?;
            d.reset_command_buffer(self.cb, vk::CommandBufferResetFlags::empty())?;
            self.read_step_clock()?;
            if let Some(p) = &mut self.prof {
                let n = p.names.len();
                if n > 0 {
                    let mut ticks = vec![0u64; 2 * n];
                    d.get_query_pool_results(
                        p.pool,
                        0,
                        &mut ticks,
                        vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                    )?;
                    for (i, name) in p.names.iter().enumerate() {
                        let dt = ticks[2 * i + 1].saturating_sub(ticks[2 * i]) as f64 * p.period;
                        let e = p.totals.entry(name).or_insert((0.0, 0));
                        e.0 += dt;
                        e.1 += 1;
                    }
                }
                p.names.clear();
            }
        }
        self.arena_used = 0;
        self.keep.clear();
        Ok(())
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // SAFETY: waits for the device before destroying the objects it may still use.
        unsafe {
            let d = &self.ctx.device;
            let _ = d.device_wait_idle();
            if let Some(p) = &self.prof {
                d.destroy_query_pool(p.pool, None);
            }
            if let Some(c) = &self.steps {
                d.destroy_query_pool(c.pool, None);
            }
            d.destroy_fence(self.fence, None);
            if let Some(a) = self.ahead.take() {
                d.destroy_fence(a.fence, None);
            }
            let flying = self.flying.drain(..).map(|p| (p.cb, p.fence));
            for (_, fence) in flying.chain(self.spare.drain(..)) {
                d.destroy_fence(fence, None);
            }
            d.destroy_command_pool(self.pool, None);
        }
    }
}

/// Free device buffers by size class, reused by later tensors.
pub(super) struct Pool {
    pub(super) ctx: Arc<Context>,
    pub(super) free: Mutex<FastMap<u64, Vec<Buffer>>>,
}

impl Pool {
    /// Sizes round up to an eighth of their power of two (≤ 12.5% waste), at least 256 bytes.
    pub(super) fn class(bytes: u64) -> u64 {
        let b = bytes.max(256);
        let step = (b.next_power_of_two() / 8).max(256);
        b.div_ceil(step) * step
    }

    pub(super) fn take(&self, bytes: u64) -> Result<Buffer, VulkanError> {
        let c = Pool::class(bytes);
        if let Some(b) = self
            .free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(&c)
            .and_then(Vec::pop)
        {
            return Ok(b);
        }
        self.ctx.buffer(c, Memory::Device)
    }

    pub(super) fn put(&self, b: Buffer) {
        let c = b.size;
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(c)
            .or_default()
            .push(b);
    }
}
