//! The progress bar of the lab's long commands: it appears on standard error only once the
//! work has taken a second, and never when turned off or when standard error is not a
//! terminal (indicatif's terminal target draws nothing then).

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar counting `unit`s (frames, rounds) that shows up after a second.
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    shown: bool,
    enabled: bool,
}

impl Progress {
    /// A bar of `total` steps, named `unit` in its text, drawn only if `enabled`.
    pub fn new(total: u64, enabled: bool, unit: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let template = format!("{{prefix:>12}} [{{bar:30}}] {{pos}}/{{len}} {unit} ({{eta}})");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Self {
            bar,
            start: Instant::now(),
            shown: false,
            enabled,
        }
    }

    /// Names the stage in progress (shown before the bar).
    pub fn stage(&self, name: &str) {
        self.bar.set_prefix(name.to_string());
    }

    /// Counts one step done.
    pub fn tick(&mut self) {
        self.inc(1);
    }

    /// Counts `steps` steps done.
    pub fn inc(&mut self, steps: u64) {
        self.bar.inc(steps);
        if self.enabled && !self.shown && self.start.elapsed() > Duration::from_secs(1) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
