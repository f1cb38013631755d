//! The clocked kernels' records (`VulkanOptions::clock`, shaders/clock.glsl) placed in the
//! step's stages.
//!
//! Each workgroup of a clocked kernel writes a record: its kernel (a kind), its start and end on
//! the device's clock and its SM cycles. Records carry no dispatch, but a barrier lets no
//! workgroup of a stage start before every workgroup of the stage before has ended: sorted by
//! their start, the first `n₀` records are stage 0's (`n₀` the workgroups its commands
//! dispatched), the next `n₁` stage 1's, and so on. A record whose kind is none of its stage's
//! commands' says that two stages' workgroups fell within one tick of the clock; such
//! records are counted (`ClockStep::misplaced`).

use zinc_backend::{ClockStage, ClockStep};

use super::recorder::ClockDispatch;

/// Words before the first record (word 0 counts the workgroups).
pub(super) const HEADER_WORDS: usize = 4;
/// Words a record: kind, SM cycles, start (low, high), end (low, high), two unused, the marks'
/// SM cycles from the start (`MARKS`; 0: not reached).
pub(super) const RECORD_WORDS: usize = 16;
/// Marks a record holds (common.glsl's CLK_MARK).
pub(super) const MARKS: usize = zinc_backend::CLOCK_MARKS;
/// Records the buffer holds: a Qwen3-8B decode step writes ~120,000.
pub(super) const RECORDS: u32 = 1 << 20;

/// One workgroup's record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Record {
    pub(super) kind: u32,
    pub(super) cycles: u32,
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) marks: [u32; MARKS],
}

/// The records in `words` (the buffer's first words, header included): as many as were counted,
/// at most as many as `words` holds.
pub(super) fn records(words: &[u32]) -> (u64, Vec<Record>) {
    let counted = words.first().copied().unwrap_or(0) as u64;
    let body = words.get(HEADER_WORDS..).unwrap_or(&[]);
    let n = (counted as usize).min(body.len() / RECORD_WORDS);
    let recs = (body.chunks_exact(RECORD_WORDS).take(n))
        .map(|r| Record {
            kind: r[0],
            cycles: r[1],
            start: r[2] as u64 | (r[3] as u64) << 32,
            end: r[4] as u64 | (r[5] as u64) << 32,
            marks: std::array::from_fn(|i| r[8 + i]),
        })
        .collect();
    (counted, recs)
}

/// The median of `v` (sorted here; 0 for none).
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The stages of `log` (dispatches in recording order) with `recs` placed in them by time.
pub(super) fn place(log: &[ClockDispatch], mut recs: Vec<Record>, counted: u64) -> ClockStep {
    recs.sort_by_key(|r| (r.start, r.end));
    let t0 = recs.first().map_or(0, |r| r.start);
    let expected = (log.iter().filter(|d| d.kind.is_some()))
        .map(|d| d.groups)
        .sum();
    let mut step = ClockStep {
        counted,
        expected,
        ..Default::default()
    };
    let mut next = 0usize;
    let mut i = 0usize;
    while i < log.len() {
        let stage = log[i].stage;
        let end = (i..log.len())
            .find(|&j| log[j].stage != stage)
            .unwrap_or(log.len());
        let cmds = &log[i..end];
        i = end;
        let mut labels: Vec<&str> = Vec::new();
        for d in cmds {
            if !labels.contains(&d.label) {
                labels.push(d.label);
            }
        }
        let kinds: Vec<u32> = cmds.iter().filter_map(|d| d.kind).collect();
        let n: u64 = (cmds.iter().filter(|d| d.kind.is_some()))
            .map(|d| d.groups)
            .sum();
        let take = (n as usize).min(recs.len() - next);
        let mine = &recs[next..next + take];
        next += take;
        let mut st = ClockStage {
            label: labels.join(" + "),
            groups: take as u64,
            expected: n,
            ..Default::default()
        };
        if !mine.is_empty() {
            let ns = |t: u64| t.saturating_sub(t0) as f64;
            st.first_start = ns(mine[0].start);
            st.last_start = ns(mine[take - 1].start);
            // The ends in order: the last one's, and the one by which nine in ten had ended.
            let mut ends: Vec<f64> = mine.iter().map(|r| ns(r.end)).collect();
            ends.sort_by(f64::total_cmp);
            st.last_end = ends[take - 1];
            st.end90 = ends[(take * 9).div_ceil(10) - 1] - st.first_start;
            let mut dur: Vec<f64> = (mine.iter())
                .map(|r| r.end.saturating_sub(r.start) as f64)
                .collect();
            st.wg_max = dur.iter().copied().fold(0.0, f64::max);
            st.wg_median = median(&mut dur);
            let mut cyc: Vec<f64> = mine.iter().map(|r| r.cycles as f64).collect();
            st.cycles_median = median(&mut cyc);
            // Each mark in ns from the workgroup's start, by the record's own ratio of its
            // duration to its cycles; the median over the workgroups that reached it.
            for (k, m) in st.marks.iter_mut().enumerate() {
                let mut at: Vec<f64> = (mine.iter())
                    .filter(|r| r.marks[k] > 0 && r.cycles > 0)
                    .map(|r| {
                        r.marks[k] as f64 * r.end.saturating_sub(r.start) as f64 / r.cycles as f64
                    })
                    .collect();
                *m = median(&mut at);
            }
            step.misplaced += mine.iter().filter(|r| !kinds.contains(&r.kind)).count() as u64;
        }
        step.stages.push(st);
    }
    step
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(label: &'static str, groups: u64, kind: Option<u32>, stage: u64) -> ClockDispatch {
        ClockDispatch {
            label,
            groups,
            kind,
            stage,
        }
    }

    fn rec(kind: u32, start: u64, end: u64) -> Record {
        Record {
            kind,
            cycles: (2 * (end - start)) as u32,
            start,
            end,
            marks: [2 * (end - start) as u32 / 4, 0, 0, 0, 0, 0, 0, 0],
        }
    }

    #[test]
    fn records_are_read_as_the_shader_writes_them() {
        let mut w = vec![0u32; HEADER_WORDS + 3 * RECORD_WORDS];
        w[0] = 5; // counted past what the buffer holds: three records only
        for i in 0..3 {
            let r = &mut w[HEADER_WORDS + i * RECORD_WORDS..][..RECORD_WORDS];
            let head = [7 + i as u32, 100, 10, 1, 20, 1, 0, 0];
            r[..8].copy_from_slice(&head);
            r[8..8 + MARKS].copy_from_slice(&[50, 0, 0, 0, 0, 90, 0, 70]);
        }
        let (counted, recs) = records(&w);
        assert_eq!(counted, 5);
        assert_eq!(recs.len(), 3);
        assert_eq!(
            recs[2],
            Record {
                kind: 9,
                cycles: 100,
                start: (1 << 32) | 10,
                end: (1 << 32) | 20,
                marks: [50, 0, 0, 0, 0, 90, 0, 70],
            }
        );
    }

    #[test]
    fn records_fall_in_their_stages_by_time() {
        // Stage 0: two commands beside each other (kinds 1 and 2, 2 + 1 workgroups); stage 1
        // an unclocked command; stage 2 kind 1 again, 2 workgroups.
        let log = [
            cmd("q", 2, Some(1), 0),
            cmd("k", 1, Some(2), 0),
            cmd("copy", 4, None, 1),
            cmd("o", 2, Some(1), 2),
        ];
        let recs = vec![
            rec(1, 5000, 6000),
            rec(1, 1000, 3000),
            rec(2, 1200, 2000),
            rec(1, 1100, 2500),
            rec(1, 5200, 6500),
        ];
        let s = place(&log, recs, 5);
        assert_eq!((s.counted, s.expected, s.misplaced), (5, 5, 0));
        assert_eq!(s.stages.len(), 3);
        let a = &s.stages[0];
        assert_eq!(a.label, "q + k");
        assert_eq!(a.groups, 3);
        assert_eq!(
            (a.first_start, a.last_start, a.last_end),
            (0.0, 200.0, 2000.0)
        );
        assert_eq!(
            (a.wg_median, a.wg_max, a.cycles_median),
            (1400.0, 2000.0, 2800.0)
        );
        // Mark 0 a quarter of each workgroup's cycles in: 350 ns of the median's 1,400.
        assert_eq!(a.marks, [350.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(s.stages[1].groups, 0);
        let c = &s.stages[2];
        assert_eq!((c.label.as_str(), c.groups), ("o", 2));
        assert_eq!((c.first_start, c.last_end), (4000.0, 5500.0));
        // Nine in ten of stage a's three workgroups: all three (ends 2,000, 1,500, 1,000 ns
        // after its first start).
        assert_eq!(a.end90, 2000.0);
        // A record of another kernel in a stage counts as misplaced.
        let s = place(&log, vec![rec(3, 0, 1); 5], 5);
        assert_eq!(s.misplaced, 5);
        // Ten workgroups ending 1 to 10 µs after the first start, the last a straggler at 30:
        // nine in ten ended by the ninth's end.
        let one = [cmd("down", 10, Some(1), 0)];
        let mut recs: Vec<Record> = (1..10).map(|i| rec(1, 0, i * 1000)).collect();
        recs.push(rec(1, 0, 30_000));
        let d = &place(&one, recs, 10).stages[0];
        assert_eq!((d.end90, d.last_end), (9000.0, 30_000.0));
        // Fewer records than dispatched: the stages take what there is.
        let s = place(&log, vec![rec(1, 0, 1)], 9);
        assert_eq!(
            (s.stages[0].groups, s.stages[2].groups, s.counted),
            (1, 0, 9)
        );
    }
}
