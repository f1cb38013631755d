//! The L2 prefetcher (`VulkanOptions::prefetch_mb`): during a decode step, a second queue of
//! the device runs one dispatch of `prefetch.comp` beside the step's commands. The step's big
//! mat-vecs stream their weights from memory; the stages between them (norms, the attention,
//! the barriers' waits) leave memory idle. The prefetcher reads the next mat-vec's weights in
//! those stages so that the mat-vec finds them in the L2 cache. Barriers of the main queue do
//! not wait for it (another queue), which is what a prefetch beside the small stages on the
//! same queue could not avoid (sessions 11 and 22 measured those slower).
//!
//! It knows where the step is from a progress word the main queue updates after every barrier
//! (`mark`), and what to read from the step before it: the mat-vecs a decode step records are
//! the same every step, each noted with the stage it ran in (`note`). Reading only changes what
//! the cache holds: results are the same bits with it or without.

use super::*;

/// The weights alive on the device: address → bytes. A plan reads only inside them (a step's
/// notes may name a weight dropped since, a model unloaded between two steps).
pub(super) type Live = Arc<Mutex<std::collections::BTreeMap<u64, u64>>>;

pub(super) fn remember(live: &Live, addr: u64, bytes: u64) {
    live.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(addr, bytes);
}

pub(super) fn forget(live: &Live, addr: u64) {
    live.lock().unwrap_or_else(|e| e.into_inner()).remove(&addr);
}

/// Whether `bytes` from `addr` lie inside one live weight.
fn is_live(live: &std::collections::BTreeMap<u64, u64>, addr: u64, bytes: u64) -> bool {
    match live.range(..=addr).next_back() {
        Some((&at, &size)) => addr.checked_add(bytes).is_some_and(|end| end <= at + size),
        None => false,
    }
}

/// The most entries a step's plan holds (a mat-vec weight each; Qwen3-8B has 253).
const MAX_ENTRIES: usize = 4096;
/// The stage a mark says when the step is over.
const DONE: u32 = 0xFFFF;

/// The prefetcher's settings (`VulkanOptions::prefetch_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PrefetchTune {
    /// The most bytes read ahead for one mat-vec stage (its weights' rows each read from their
    /// start by the same share); 0: marks only (the progress word kept, nothing read: what the
    /// marks cost).
    pub(super) bytes: u64,
    /// Workgroups of 256 invocations, and 16-byte loads each invocation has in flight.
    pub(super) groups: u32,
    pub(super) loads: u32,
    /// Dependent multiply-adds between two polls of the progress word.
    pub(super) delay: u32,
    /// How many stages before its mat-vec a weight's reading may start (never before the stage
    /// after the mat-vec before it).
    pub(super) lookback: u32,
}

/// A mat-vec weight a step read: rows of `row_bytes` from `addr`, in barrier stage `stage` of
/// the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Note {
    pub(super) stage: u32,
    pub(super) addr: u64,
    pub(super) row_bytes: u64,
    pub(super) rows: u64,
}

pub(super) struct Prefetcher {
    ctx: Arc<Context>,
    queue: vk::Queue,
    tune: PrefetchTune,
    live: Live,
    pipe: vk::Pipeline,
    progress: Buffer,
    sink: Buffer,
    pool: vk::CommandPool,
    cb: vk::CommandBuffer,
    fence: vk::Fence,
    /// The step's number (its marks carry the low 16 bits), and the barriers counted when it
    /// began.
    epoch: u32,
    base: u64,
    /// This step's mat-vecs, and those noted for the next command (given its stage once it
    /// is recorded).
    notes: Vec<Note>,
    pub(super) pending: Vec<(u64, u64, u64)>,
    /// The plan for this step (from the last one's notes), as prefetch.comp reads it.
    plan: Vec<[u32; 8]>,
    /// This step's dispatch was submitted and not yet waited for.
    flying: bool,
}

impl Prefetcher {
    pub(super) fn new(
        ctx: &Arc<Context>,
        tune: PrefetchTune,
        live: Live,
    ) -> Result<Prefetcher, VulkanError> {
        // Marks only (`bytes` 0) submit nothing to it.
        let queue = match ctx.queue2() {
            Some(q) => q,
            None if tune.bytes == 0 => vk::Queue::null(),
            None => {
                return Err(VulkanError::Unusable {
                    name: ctx.info.name.clone(),
                    why: "the L2 prefetcher asked for, but the device's compute queue family \
                          has one queue (it runs on a second)"
                        .into(),
                })
            }
        };
        let pipe = ctx.pipeline("prefetch", [256, tune.loads, 0, 0, 0, 0])?;
        let progress = ctx.buffer(256, Memory::Device)?;
        let sink = ctx.buffer(256, Memory::Device)?;
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
            Ok(Prefetcher {
                ctx: ctx.clone(),
                queue,
                tune,
                live,
                pipe,
                progress,
                sink,
                pool,
                cb,
                fence,
                epoch: 0,
                base: 0,
                notes: Vec::new(),
                pending: Vec::new(),
                plan: Vec::new(),
                flying: false,
            })
        }
    }

    /// The progress buffer (zeroed once before the first step).
    pub(super) fn progress(&self) -> &Buffer {
        &self.progress
    }

    /// A recording begins, `barriers` counted so far: the last step's notes become this one's
    /// plan.
    pub(super) fn step_begins(&mut self, barriers: u64) {
        self.epoch = self.epoch.wrapping_add(1);
        self.base = barriers;
        self.pending.clear();
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        self.notes
            .retain(|n| is_live(&live, n.addr, n.rows.saturating_mul(n.row_bytes)));
        drop(live);
        self.plan = plan(&self.notes, &self.tune);
        self.notes.clear();
    }

    /// The notes made for the next command (`Recorder::note_weight`), taken by it.
    pub(super) fn take_pending(&mut self) -> Vec<(u64, u64, u64)> {
        std::mem::take(&mut self.pending)
    }

    /// A command's notes, given the stage it was recorded in (`barriers` counted so far).
    pub(super) fn resolve(&mut self, notes: Vec<(u64, u64, u64)>, barriers: u64) {
        let stage = self.stage(barriers);
        for (addr, row_bytes, rows) in notes {
            if self.notes.len() < MAX_ENTRIES {
                self.notes.push(Note {
                    stage,
                    addr,
                    row_bytes,
                    rows,
                });
            }
        }
    }

    fn stage(&self, barriers: u64) -> u32 {
        (barriers.saturating_sub(self.base)).min(DONE as u64 - 1) as u32
    }

    fn word(&self, stage: u32) -> u32 {
        ((self.epoch & 0xFFFF) << 16) | stage
    }

    /// Records into `cb` (after a barrier, `barriers` counted so far) the update of the
    /// progress word.
    pub(super) fn mark(&self, cb: vk::CommandBuffer, barriers: u64) {
        self.write(cb, self.word(self.stage(barriers)));
    }

    /// Records into `cb` the mark that the step is over.
    pub(super) fn mark_done(&self, cb: vk::CommandBuffer) {
        self.write(cb, self.word(DONE));
    }

    fn write(&self, cb: vk::CommandBuffer, word: u32) {
        // SAFETY: recording an update of a live buffer into an open command buffer.
        unsafe {
            self.ctx
                .device
                .cmd_update_buffer(cb, self.progress.buffer, 0, &word.to_le_bytes());
        }
    }

    /// Whether this step has a plan and its dispatch is not yet submitted.
    pub(super) fn due(&self) -> bool {
        !self.flying && !self.plan.is_empty() && self.tune.bytes > 0
    }

    /// Submits this step's dispatch on the second queue, its plan at `plan_addr` (uploaded by
    /// the caller: `plan_bytes`).
    pub(super) fn plan_bytes(&self) -> Vec<u8> {
        self.plan
            .iter()
            .flatten()
            .flat_map(|w| w.to_le_bytes())
            .collect()
    }

    pub(super) fn launch(&mut self, plan_addr: u64) -> Result<(), VulkanError> {
        let d = &self.ctx.device;
        let push = Push::new()
            .addr(plan_addr)
            .addr(self.progress.address)
            .addr(self.sink.address)
            .u32(self.plan.len() as u32)
            .u32(self.epoch & 0xFFFF)
            .u32(self.tune.delay)
            .u32(MAX_POLLS);
        // SAFETY: the command buffer is free (its last submit was waited for in `land`); the
        // pipeline, buffers and plan outlive the dispatch (the plan's arena is kept until the
        // recording's submit, which waits for this fence first).
        unsafe {
            d.begin_command_buffer(
                self.cb,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )?;
            d.cmd_bind_pipeline(self.cb, vk::PipelineBindPoint::COMPUTE, self.pipe);
            d.cmd_push_constants(
                self.cb,
                self.ctx.pipeline_layout(),
                vk::ShaderStageFlags::COMPUTE,
                0,
                push.as_bytes(),
            );
            d.cmd_dispatch(self.cb, self.tune.groups, 1, 1);
            d.end_command_buffer(self.cb)?;
            let cbs = [self.cb];
            d.queue_submit(
                self.queue,
                &[vk::SubmitInfo::default().command_buffers(&cbs)],
                self.fence,
            )?;
        }
        self.flying = true;
        Ok(())
    }

    /// Waits for this step's dispatch, if one was submitted (it stops at the step's last mark,
    /// or after `MAX_POLLS` polls).
    pub(super) fn land(&mut self) -> Result<(), VulkanError> {
        if !self.flying {
            return Ok(());
        }
        let d = &self.ctx.device;
        // SAFETY: waits on the fence this step's submit signals, then resets it and the buffer.
        unsafe {
            d.wait_for_fences(&[self.fence], true, u64::MAX)?;
            d.reset_fences(&[self.fence])?;
            d.reset_command_buffer(self.cb, vk::CommandBufferResetFlags::empty())?;
        }
        self.flying = false;
        Ok(())
    }

    /// Whether its dispatch is in flight.
    pub(super) fn flying(&self) -> bool {
        self.flying
    }

    /// This step's plan (`VulkanBackend::prefetch_plan`).
    pub(super) fn plan_entries(&self) -> &[[u32; 8]] {
        &self.plan
    }
}

impl Drop for Prefetcher {
    fn drop(&mut self) {
        // SAFETY: waits for the device before destroying what its dispatch may still use.
        unsafe {
            let d = &self.ctx.device;
            let _ = d.device_wait_idle();
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
        }
    }
}

/// Polls before the prefetcher gives up on a step (each ~0.1–0.5 µs with its delay: tens of
/// milliseconds, far beyond a decode step; it never hangs the device).
const MAX_POLLS: u32 = 1 << 18;

/// A step's plan from the last step's notes: for each stage with mat-vecs, its weights' rows
/// read from their start, in all at most `tune.bytes` (0, marks only: all of them, the plan
/// that is never run), from `lookback` stages before it (but
/// not before the stage after the mat-vecs before it) until it begins. Weights whose rows or
/// address are not 16-byte aligned are left out.
pub(super) fn plan(notes: &[Note], tune: &PrefetchTune) -> Vec<[u32; 8]> {
    let mut notes = notes.to_vec();
    notes.sort_by_key(|n| n.stage);
    let mut out = Vec::new();
    let mut prev: Option<u32> = None;
    let mut i = 0;
    while i < notes.len() {
        let stage = notes[i].stage;
        let j = i + notes[i..].iter().take_while(|n| n.stage == stage).count();
        let group = &notes[i..j];
        i = j;
        let earliest = prev.map_or(0, |p| p + 1);
        prev = Some(stage);
        let trigger = stage.saturating_sub(tune.lookback).max(earliest);
        if trigger >= stage {
            continue;
        }
        let total: u64 = group.iter().map(|n| n.rows * n.row_bytes).sum();
        if total == 0 {
            continue;
        }
        for n in group {
            if n.row_bytes % 16 != 0 || n.addr % 16 != 0 || n.rows > u32::MAX as u64 {
                continue;
            }
            let units = n.row_bytes / 16;
            // The same share of every row: the mat-vec's workgroups read their rows from the
            // start, all at once, so each finds its first bytes in the cache.
            let per_row = if total <= tune.bytes || tune.bytes == 0 {
                units
            } else {
                (units as u128 * tune.bytes as u128 / total as u128) as u64
            };
            if per_row == 0 || n.rows * per_row > u32::MAX as u64 {
                continue;
            }
            out.push([
                n.addr as u32,
                (n.addr >> 32) as u32,
                n.row_bytes as u32,
                n.rows as u32,
                per_row as u32,
                trigger,
                stage,
                0,
            ]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(stage: u32, addr: u64, row_bytes: u64, rows: u64) -> Note {
        Note {
            stage,
            addr,
            row_bytes,
            rows,
        }
    }

    fn tune(bytes: u64, lookback: u32) -> PrefetchTune {
        PrefetchTune {
            bytes,
            groups: 1,
            loads: 1,
            delay: 0,
            lookback,
        }
    }

    #[test]
    fn plan_reads_between_mat_vecs_only() {
        // A layer as Qwen3-8B records it: q, k, v in stage 3, o in 5, gate/up in 7, down in 8.
        let notes = [
            note(3, 0x1000, 2304, 4096),
            note(3, 0x9000_0000, 2304, 1024),
            note(3, 0xA000_0000, 3360, 1024),
            note(5, 0xB000_0000, 2304, 4096),
            note(7, 0xC000_0000, 2304, 24576),
            note(8, 0xD000_0000, 10080, 4096),
        ];
        let p = plan(&notes, &tune(u64::MAX, 1));
        // Down follows gate/up with no stage between: nothing to read ahead of it.
        assert_eq!(p.len(), 5);
        assert_eq!(&p[0][..2], &[0x1000, 0]);
        assert_eq!(p[0][2..], [2304, 4096, 144, 2, 3, 0]);
        assert_eq!(p[2][2..], [3360, 1024, 210, 2, 3, 0]);
        assert_eq!(p[3][5..7], [4, 5]);
        assert_eq!(p[4][5..7], [6, 7]);
        // A lookback of 3 never reaches back into the mat-vec before.
        let p = plan(&notes, &tune(u64::MAX, 3));
        assert_eq!([p[0][5], p[3][5], p[4][5]], [0, 4, 6]);
    }

    #[test]
    fn only_live_weights_are_read() {
        let mut live = std::collections::BTreeMap::new();
        live.insert(0x1000, 0x1000);
        live.insert(0x4000, 0x100);
        assert!(is_live(&live, 0x1000, 0x1000));
        assert!(is_live(&live, 0x1800, 0x800));
        assert!(!is_live(&live, 0x1800, 0x801));
        assert!(!is_live(&live, 0x800, 0x10));
        assert!(!is_live(&live, 0x3000, 0x10));
        assert!(is_live(&live, 0x4000, 0x100));
        assert!(!is_live(&live, u64::MAX - 4, 0x100));
    }

    #[test]
    fn plan_shares_the_cap_over_every_row() {
        // 24,576 rows of 2,304 bytes (56.6 MB) against 8 MiB: each row's first 8 MiB / 56.6 MB
        // of its 144 units.
        let notes = [note(2, 0x2000, 2304, 24576)];
        let p = plan(&notes, &tune(8 << 20, 1));
        let want = (144u128 * (8 << 20) / (2304 * 24576)) as u32;
        assert_eq!(p[0][4], want);
        assert!(want > 0 && want < 144);
        // Rows or addresses off 16 bytes are left out.
        let p = plan(
            &[note(2, 0x2008, 2304, 4), note(2, 0x3000, 2300, 4)],
            &tune(1 << 30, 1),
        );
        assert!(p.is_empty());
    }
}
