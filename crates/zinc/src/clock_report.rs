//! `zinc bench --vk-clock`: where a generated token's time goes by the kernels' own clock
//! (`Backend::clock_step`), stage by stage — the time between stages (a barrier: the last
//! workgroup's end to the next stage's first start), the time a stage's workgroups take to
//! start (its first start to its last), and the stage's whole span (first start to last end),
//! with its workgroups' own durations.

use std::collections::HashMap;
use std::fmt::Write as _;

use zinc_backend::ClockStep;

/// One stage label's totals over the steps.
#[derive(Default)]
struct Totals {
    calls: u64,
    gap: f64,
    launch: f64,
    span: f64,
    end90: f64,
    wg_median: f64,
    wg_max: f64,
    /// The marks' sums (ns from a workgroup's start) and the stages that had each.
    marks: [(f64, u64); zinc_backend::CLOCK_MARKS],
    /// Order of first appearance (ties in the table keep the step's order).
    first: usize,
}

/// The markdown report of `steps` (each a generated token's) for test `name`: a summary line
/// and a table of each stage label, costliest first. Times in µs a token.
pub fn table(steps: &[ClockStep], name: &str) -> String {
    let n = steps.len().max(1) as f64;
    let mut by: HashMap<&str, Totals> = HashMap::new();
    let (mut wall, mut gaps, mut spans) = (0.0, 0.0, 0.0);
    let (mut stages, mut unclocked, mut records, mut misplaced, mut lost) = (0, 0, 0, 0, 0);
    let mut unclocked_labels: Vec<&str> = Vec::new();
    for step in steps {
        records += step.counted;
        misplaced += step.misplaced;
        lost += step.expected.saturating_sub(step.counted);
        let mut prev_end: Option<f64> = None;
        for st in &step.stages {
            if st.expected == 0 {
                unclocked += 1;
                if !unclocked_labels.contains(&st.label.as_str()) {
                    unclocked_labels.push(&st.label);
                }
                continue; // its time falls in the gap before the next clocked stage
            }
            if st.groups == 0 {
                continue; // clocked, but its records were lost (counted below)
            }
            stages += 1;
            let gap = prev_end.map_or(0.0, |e| (st.first_start - e).max(0.0));
            let span = st.last_end - st.first_start;
            let next = by.len();
            let t = by.entry(st.label.as_str()).or_insert_with(|| Totals {
                first: next,
                ..Default::default()
            });
            t.calls += 1;
            t.gap += gap;
            t.launch += st.last_start - st.first_start;
            t.span += span;
            t.end90 += st.end90;
            t.wg_median += st.wg_median;
            t.wg_max += st.wg_max;
            for (m, &v) in t.marks.iter_mut().zip(&st.marks) {
                if v > 0.0 {
                    *m = (m.0 + v, m.1 + 1);
                }
            }
            gaps += gap;
            spans += span;
            prev_end = Some(st.last_end.max(prev_end.unwrap_or(0.0)));
        }
        wall += prev_end.unwrap_or(0.0);
    }
    let us = |ns: f64| ns / 1e3 / n;
    let share = |ns: f64| 100.0 * ns / wall.max(1e-9);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Where a {name} token's time goes, by the kernels' clock ({} tokens; the clocked kernels \
         run slower than plain ones): step {:.1} µs from its first workgroup's start to its last \
         one's end — inside its {:.0} stages {:.1} µs ({:.1}%), between them {:.1} µs ({:.1}%, \
         {:.2} µs a barrier); {:.0} workgroups a token{}{}{}",
        steps.len(),
        us(wall),
        stages as f64 / n,
        us(spans),
        share(spans),
        us(gaps),
        share(gaps),
        gaps / 1e3 / (stages as f64 - n).max(1.0),
        records as f64 / n,
        if unclocked > 0 {
            format!(
                "; {:.0} stages a token unclocked, their time in the gap after them ({})",
                unclocked as f64 / n,
                unclocked_labels.join(", ")
            )
        } else {
            String::new()
        },
        if misplaced > 0 {
            format!("; {misplaced} records placed in a stage not their kernel's")
        } else {
            String::new()
        },
        if lost > 0 {
            format!("; {lost} records lost (the buffer full)")
        } else {
            String::new()
        },
    );
    let _ = writeln!(
        out,
        "| stage | a token | gap before, µs | workgroups starting, µs | span, µs | 90% ended, \
         µs | workgroup median, µs | workgroup max, µs | share of the step | marks, µs into a \
         workgroup |"
    );
    let _ = writeln!(
        out,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    );
    let mut rows: Vec<(&str, Totals)> = by.into_iter().collect();
    rows.sort_by(|a, b| {
        (b.1.gap + b.1.span)
            .total_cmp(&(a.1.gap + a.1.span))
            .then(a.1.first.cmp(&b.1.first))
    });
    for (label, t) in rows {
        let c = t.calls as f64;
        let _ = writeln!(
            out,
            "| {label} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1}% | {} |",
            c / n,
            t.gap / 1e3 / c,
            t.launch / 1e3 / c,
            t.span / 1e3 / c,
            t.end90 / 1e3 / c,
            t.wg_median / 1e3 / c,
            t.wg_max / 1e3 / c,
            share(t.gap + t.span),
            (t.marks.iter().enumerate())
                .filter(|(_, m)| m.1 > 0)
                .map(|(i, m)| format!("{i}: {:.2}", m.0 / 1e3 / m.1 as f64))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use zinc_backend::ClockStage;

    fn stage(label: &str, groups: u64, t: [f64; 3], wg: f64) -> ClockStage {
        ClockStage {
            label: label.into(),
            groups,
            first_start: t[0],
            last_start: t[1],
            last_end: t[2],
            wg_median: wg,
            wg_max: wg,
            expected: groups,
            cycles_median: 0.0,
            end90: (t[2] - t[0]) / 2.0,
            marks: [wg / 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        }
    }

    #[test]
    fn the_table_splits_the_step_into_gaps_and_spans() {
        // norm 0–2 µs; q 3–10 µs (a 1 µs gap); an unclocked copy; o 12–20 µs (2 µs gap); the
        // second token the same but q 4 µs longer.
        let step = |extra: f64| ClockStep {
            stages: vec![
                stage("norm", 4, [0.0, 100.0, 2000.0], 1500.0),
                stage("q", 64, [3000.0, 4000.0, 10000.0 + extra], 5000.0),
                stage("copy", 0, [0.0; 3], 0.0),
                stage(
                    "o",
                    64,
                    [12000.0 + extra, 12500.0 + extra, 20000.0 + extra],
                    6000.0,
                ),
            ],
            counted: 132,
            expected: 132,
            misplaced: 0,
        };
        let t = table(&[step(0.0), step(4000.0)], "tg2");
        let lines: Vec<&str> = t.lines().collect();
        // Steps of 20 and 24 µs: 22 on average; gaps 1 + 2 µs, spans 2 + 7/9 + 8.
        assert!(lines[0].contains("step 22.0 µs"), "{}", lines[0]);
        assert!(
            lines[0].contains("inside its 3 stages 19.0 µs (86.4%)"),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("between them 3.0 µs (13.6%, 1.50 µs a barrier)"));
        assert!(lines[0].contains("132 workgroups a token"));
        assert!(lines[0]
            .contains("1 stages a token unclocked, their time in the gap after them (copy)"));
        // Costliest first: q (1 + 9 µs on average) and o (2 + 8) tie, and keep the step's
        // order; then the norm. (Each stage's nine tenths ended halfway through its span here.)
        assert_eq!(
            lines[3],
            "| q | 1.0 | 1.00 | 1.00 | 9.00 | 4.50 | 5.00 | 5.00 | 45.5% | 0: 2.50 |"
        );
        assert_eq!(
            lines[4],
            "| o | 1.0 | 2.00 | 0.50 | 8.00 | 4.00 | 6.00 | 6.00 | 45.5% | 0: 3.00 |"
        );
        assert_eq!(
            lines[5],
            "| norm | 1.0 | 0.00 | 0.10 | 2.00 | 1.00 | 1.50 | 1.50 | 9.1% | 0: 0.75 |"
        );
    }
}
