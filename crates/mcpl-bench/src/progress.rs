//! A progress bar on stderr: one line redrawn in place on a terminal, one line per step
//! otherwise (CI logs).

use std::io::{IsTerminal, Write};

/// Progress through a fixed number of steps.
#[derive(Debug)]
pub struct Progress {
    total: usize,
    done: usize,
    tty: bool,
    enabled: bool,
}

/// Width of the bar in characters.
const WIDTH: usize = 24;

impl Progress {
    /// A bar of `total` steps drawn on stderr.
    pub fn new(total: usize) -> Self {
        Progress {
            total: total.max(1),
            done: 0,
            tty: std::io::stderr().is_terminal(),
            enabled: true,
        }
    }

    /// A bar that draws nothing (for tests and embedders).
    pub fn hidden(total: usize) -> Self {
        Progress {
            enabled: false,
            ..Progress::new(total)
        }
    }

    /// Steps finished so far.
    pub fn done(&self) -> usize {
        self.done
    }

    /// Shows what is running now, without advancing.
    pub fn status(&self, what: &str) {
        self.draw(what);
    }

    /// Marks one step finished and shows what comes next.
    pub fn advance(&mut self, next: &str) {
        self.done = (self.done + 1).min(self.total);
        self.draw(next);
    }

    /// Ends the bar (a newline after an in-place bar).
    pub fn finish(&mut self) {
        self.done = self.total;
        self.draw("done");
        if self.enabled && self.tty {
            eprintln!();
        }
    }

    /// The bar's text for the current state.
    pub fn line(&self, what: &str) -> String {
        let filled = WIDTH * self.done / self.total;
        format!(
            "[{}{}] {}/{} {what}",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled),
            self.done,
            self.total
        )
    }

    fn draw(&self, what: &str) {
        if !self.enabled {
            return;
        }
        let line = self.line(what);
        let mut err = std::io::stderr().lock();
        let _ = if self.tty {
            write!(err, "\r\x1b[2K{line}")
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_with_the_steps() {
        let mut p = Progress::hidden(4);
        assert_eq!(p.line("a"), format!("[{}] 0/4 a", "-".repeat(WIDTH)));
        p.advance("b");
        p.advance("c");
        assert_eq!(
            p.line("c"),
            format!("[{}{}] 2/4 c", "#".repeat(WIDTH / 2), "-".repeat(WIDTH / 2))
        );
        p.finish();
        assert_eq!(p.done(), 4);
    }
}
