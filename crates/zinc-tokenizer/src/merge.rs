//! The two merge algorithms, over a linked list of symbols (byte ranges of one word).
//!
//! - SentencePiece (SPM): repeatedly merge the adjacent pair whose concatenation is the
//!   highest-scoring token (ties: leftmost); symbols that end up not being tokens fall back to
//!   `<0xNN>` byte tokens.
//! - BPE: repeatedly merge the adjacent pair with the lowest merge rank (ties: leftmost); symbols
//!   that end up not being tokens fall back to their single-byte tokens.
//!
//! Both use a priority queue of candidate pairs; a popped pair is stale (skipped) when either side
//! has since been merged into something else, which the size / text check detects.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy)]
struct Symbol {
    start: usize,
    len: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

/// A candidate merge. `key` is the score (SPM, higher first) or the negated rank (BPE, lower rank
/// first); ties go to the leftmost pair.
struct Pair {
    key: f32,
    left: usize,
    right: usize,
    len: usize,
}

impl PartialEq for Pair {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Pair {}
impl PartialOrd for Pair {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pair {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key
            .total_cmp(&o.key)
            .then_with(|| o.left.cmp(&self.left))
    }
}

/// Splits `word` into UTF-8 characters and merges them; `pair_key(text)` gives the priority of a
/// candidate merge whose joined text is `text` (or `None` when it may not be merged). Returns the
/// final pieces in order.
pub fn merge(word: &str, mut pair_key: impl FnMut(&str, &str) -> Option<f32>) -> Vec<&str> {
    let mut symbols: Vec<Symbol> = Vec::with_capacity(word.len());
    for (i, (start, c)) in word.char_indices().enumerate() {
        symbols.push(Symbol {
            start,
            len: c.len_utf8(),
            prev: i.checked_sub(1),
            next: None,
        });
        if i > 0 {
            symbols[i - 1].next = Some(i);
        }
    }
    let text = |s: &Symbol| &word[s.start..s.start + s.len];
    let mut queue = BinaryHeap::new();
    let mut try_add = |symbols: &[Symbol],
                       queue: &mut BinaryHeap<Pair>,
                       left: Option<usize>,
                       right: Option<usize>| {
        let (Some(l), Some(r)) = (left, right) else {
            return;
        };
        let (ls, rs) = (&symbols[l], &symbols[r]);
        if let Some(key) = pair_key(text(ls), text(rs)) {
            queue.push(Pair {
                key,
                left: l,
                right: r,
                len: ls.len + rs.len,
            });
        }
    };
    for i in 1..symbols.len() {
        try_add(&symbols, &mut queue, Some(i - 1), Some(i));
    }
    while let Some(p) = queue.pop() {
        let (l, r) = (symbols[p.left], symbols[p.right]);
        // Stale: one side was merged away, or grew since this pair was queued.
        if l.len == 0 || r.len == 0 || l.len + r.len != p.len || l.next != Some(p.right) {
            continue;
        }
        symbols[p.left].len += r.len;
        symbols[p.left].next = r.next;
        symbols[p.right].len = 0;
        if let Some(n) = r.next {
            symbols[n].prev = Some(p.left);
        }
        let left = symbols[p.left];
        try_add(&symbols, &mut queue, left.prev, Some(p.left));
        try_add(&symbols, &mut queue, Some(p.left), left.next);
    }
    let mut out = Vec::new();
    let mut at = if symbols.is_empty() { None } else { Some(0) };
    while let Some(i) = at {
        out.push(text(&symbols[i]));
        at = symbols[i].next;
    }
    out
}
