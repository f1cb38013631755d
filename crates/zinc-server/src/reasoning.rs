//! Splits a thinking model's output into reasoning (between `<think>` and `</think>`) and the
//! answer, as text streams in. A marker may arrive in pieces, so a possible start of one is
//! held back until the next piece decides.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Where the output is: before anything but whitespace (a `<think>` may still open), inside the
/// thought, or in the answer (where markers are plain text: an answer may talk about tags).
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
enum State {
    #[default]
    Start,
    Thinking,
    Answer,
}

#[derive(Debug, Default)]
pub struct ReasoningSplitter {
    state: State,
    pending: String,
    /// Whitespace right after a marker is dropped (templates put "\n" there).
    trim_next: bool,
}

/// Text released by one push.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Split {
    pub reasoning: String,
    pub content: String,
}

impl ReasoningSplitter {
    /// `thinking`: the prompt already opened a `<think>` block (the template ends with it).
    pub fn new(thinking: bool) -> Self {
        ReasoningSplitter {
            state: if thinking {
                State::Thinking
            } else {
                State::Start
            },
            pending: String::new(),
            trim_next: thinking,
        }
    }

    pub fn push(&mut self, text: &str) -> Split {
        self.pending.push_str(text);
        let mut out = Split::default();
        loop {
            if self.trim_next {
                let trimmed = self.pending.trim_start();
                if trimmed.is_empty() {
                    self.pending.clear();
                    return out;
                }
                self.pending = trimmed.to_string();
                self.trim_next = false;
            }
            match self.state {
                State::Start => {
                    let t = self.pending.trim_start();
                    if let Some(rest) = t.strip_prefix(OPEN) {
                        self.pending = rest.to_string();
                        self.state = State::Thinking;
                        self.trim_next = true;
                    } else if OPEN.starts_with(t) {
                        return out; // still possibly the opening marker
                    } else {
                        self.state = State::Answer;
                    }
                }
                State::Thinking => {
                    if let Some(at) = self.pending.find(CLOSE) {
                        out.reasoning.push_str(&self.pending[..at]);
                        self.pending.drain(..at + CLOSE.len());
                        self.state = State::Answer;
                        self.trim_next = true;
                        continue;
                    }
                    // Hold back a suffix that could begin the closing marker.
                    let keep = (1..CLOSE.len())
                        .rev()
                        .find(|&n| self.pending.ends_with(&CLOSE[..n]))
                        .unwrap_or(0);
                    let cut = self.pending.len() - keep;
                    out.reasoning.extend(self.pending.drain(..cut));
                    return out;
                }
                State::Answer => {
                    out.content.push_str(&self.pending);
                    self.pending.clear();
                    return out;
                }
            }
        }
    }

    /// Releases whatever is held back (the generation ended).
    pub fn finish(&mut self) -> Split {
        let rest = std::mem::take(&mut self.pending);
        let mut out = Split::default();
        if self.state == State::Thinking {
            out.reasoning = rest;
        } else {
            out.content = rest;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(start: bool, pieces: &[&str]) -> (String, String) {
        let mut s = ReasoningSplitter::new(start);
        let (mut r, mut c) = (String::new(), String::new());
        for p in pieces {
            let o = s.push(p);
            r += &o.reasoning;
            c += &o.content;
        }
        let o = s.finish();
        (r + &o.reasoning, c + &o.content)
    }

    #[test]
    fn markers_split_in_any_piece_boundary() {
        let text = "<think>\nLet me see.\n</think>\n\nThe answer is 4.";
        for cut1 in 0..text.len() {
            for cut2 in cut1..text.len() {
                let (r, c) = run(false, &[&text[..cut1], &text[cut1..cut2], &text[cut2..]]);
                assert_eq!(r, "Let me see.\n", "{cut1} {cut2}");
                assert_eq!(c, "The answer is 4.", "{cut1} {cut2}");
            }
        }
    }

    #[test]
    fn prompt_opened_thinking_and_plain_text() {
        assert_eq!(
            run(true, &["hmm", "</th", "ink>ok"]),
            ("hmm".into(), "ok".into())
        );
        assert_eq!(
            run(false, &["a < b", " <thin"]),
            (String::new(), "a < b <thin".into())
        );
        // An unterminated thought is still reasoning.
        assert_eq!(
            run(false, &["<think>still going"]),
            ("still going".into(), String::new())
        );
    }

    #[test]
    fn markers_inside_the_answer_are_text() {
        assert_eq!(
            run(false, &["Use <think> tags", " like </think> this"]),
            (String::new(), "Use <think> tags like </think> this".into())
        );
        assert_eq!(
            run(false, &["<think>a</think>b <think>c"]),
            ("a".into(), "b <think>c".into())
        );
        assert_eq!(
            run(false, &["  <th", "ink>x</th", "ink>y"]),
            ("x".into(), "y".into())
        );
    }
}
