//! The plan of a sweep: what it measures, decided before any copy is
//! timed, and how a budget maps to repetitions (see the parent module).

use std::time::Duration;

/// What a sweep is asked to measure.
#[derive(Debug, Clone)]
pub struct Settings {
    pub sizes: Vec<usize>,
    /// Untimed copies of each size before the timed ones.
    pub warmup: u32,
    /// Timed repetitions of each size, before any budget.
    pub repeats: u32,
    /// Copies queued back to back in each timed window (each repetition);
    /// the time per copy is the window's time divided by them.
    pub copies_per_window: u32,
    /// Wall-clock budget of one runtime's sweeps together (fills and
    /// checks included), for the plan's estimate; `None` (or zero): no
    /// budget, the plan runs the repetitions asked for.
    pub budget: Option<Duration>,
}

/// Sizes from 4 KiB to 256 MiB by factors of four.
pub fn default_sizes() -> Vec<usize> {
    (0..=8).map(|i| 4096usize << (2 * i)).collect()
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            sizes: default_sizes(),
            warmup: 2,
            repeats: 7,
            copies_per_window: COPIES_PER_WINDOW,
            budget: None,
        }
    }
}

/// The fewest timed repetitions a budget may leave (fewer when fewer are
/// asked for): three give a median and a spread.
pub const MIN_REPEATS: u32 = 3;

/// Copies per timed window of the device sweeps, as nvbandwidth's default
/// loop count (16): a few microseconds of submit and event time are then
/// a small part of the window even at the largest size.
pub const COPIES_PER_WINDOW: u32 = 16;

/// What a plan's estimate assumes the copies of a window run at.
pub const ASSUMED_COPY_BYTES_PER_S: f64 = 1e10;

/// What a plan's estimate assumes a repetition costs, per byte of its
/// size, besides its copies: the source filled with the pattern, the
/// destination brought back and checked. A deliberately plain figure, the same on every machine, so
/// a budget maps to the same plan everywhere.
pub const ASSUMED_BYTES_PER_S: f64 = 1e9;

/// And per copy, whatever its size (calls, synchronisation).
pub const ASSUMED_SECONDS_PER_COPY: f64 = 100e-6;

/// What a sweep will measure, decided before any copy is timed; every path
/// of a runtime runs the same plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// How many paths run this plan, one after the other.
    pub paths: usize,
    /// Ascending, distinct, none zero.
    pub sizes: Vec<usize>,
    pub warmup: u32,
    /// Timed repetitions of every size on every path.
    pub repeats: u32,
    /// Copies back to back in each timed window.
    pub copies_per_window: u32,
    /// The repetitions asked for, before the budget.
    pub asked_repeats: u32,
    pub budget: Option<Duration>,
}

impl Plan {
    /// The plan for `paths` paths: the sizes asked for (sorted, duplicates
    /// and zeros removed); the repetitions asked for, lowered evenly when
    /// the estimate exceeds the budget, never below [`MIN_REPEATS`].
    pub fn new(settings: &Settings, paths: usize) -> Plan {
        let mut sizes = settings.sizes.clone();
        sizes.sort_unstable();
        sizes.dedup();
        sizes.retain(|s| *s > 0);
        let asked = settings.repeats.max(1);
        let mut plan = Plan {
            paths,
            sizes,
            warmup: settings.warmup,
            repeats: asked,
            copies_per_window: settings.copies_per_window.max(1),
            asked_repeats: asked,
            budget: settings.budget.filter(|b| !b.is_zero()),
        };
        let pass = plan.pass_s();
        if let Some(budget) = plan.budget
            && pass > 0.0
        {
            let passes = (budget.as_secs_f64() / pass).floor() - f64::from(plan.warmup);
            let afford = passes.clamp(0.0, f64::from(asked)) as u32;
            plan.repeats = afford.max(MIN_REPEATS.min(asked));
        }
        plan
    }

    /// Estimated seconds of one pass: one window of every size on every path.
    fn pass_s(&self) -> f64 {
        let one: f64 = self
            .sizes
            .iter()
            .map(|&s| {
                let k = f64::from(self.copies_per_window);
                k * ASSUMED_SECONDS_PER_COPY
                    + s as f64 / ASSUMED_BYTES_PER_S
                    + k * s as f64 / ASSUMED_COPY_BYTES_PER_S
            })
            .sum();
        one * self.paths as f64
    }

    /// Estimated seconds of the whole plan, warm-up included (see
    /// [`ASSUMED_BYTES_PER_S`]).
    pub fn estimate_s(&self) -> f64 {
        self.pass_s() * f64::from(self.warmup + self.repeats)
    }

    /// `27 paths x 3 sizes (4 KiB to 1 MiB) x 7 repetitions (+2 warm-up),
    /// about 0.1 s`, and what the budget did.
    pub fn describe(&self) -> String {
        let sizes = match (self.sizes.first(), self.sizes.last()) {
            (Some(a), Some(b)) if a != b => format!(" ({} to {})", short_size(*a), short_size(*b)),
            (Some(a), _) => format!(" ({})", short_size(*a)),
            _ => String::new(),
        };
        let mut s = format!(
            "{} x {}{sizes} x {} (+{} warm-up){}, about {}",
            count(self.paths, "path"),
            count(self.sizes.len(), "size"),
            count(self.repeats as usize, "repetition"),
            self.warmup,
            match self.copies_per_window {
                1 => String::new(),
                k => format!(", {k} copies per window"),
            },
            seconds(self.estimate_s())
        );
        if let Some(budget) = self.budget {
            let b = seconds(budget.as_secs_f64());
            let over = self.estimate_s() > budget.as_secs_f64();
            let note = match (over, self.repeats < self.asked_repeats) {
                (false, false) => format!("within the {b} budget"),
                (false, true) => format!(
                    "the {b} budget lowered the repetitions from {}",
                    self.asked_repeats
                ),
                (true, _) => format!(
                    "over the {b} budget even at the floor of {} repetitions (asked {}); no size is dropped",
                    self.repeats, self.asked_repeats
                ),
            };
            s.push_str(&format!("; {note}"));
        }
        s
    }
}

/// `1 path`, `27 paths`.
pub(super) fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// `4 KiB`, `256 MiB`, `1000 bytes`.
pub(super) fn short_size(bytes: usize) -> String {
    let units = [(1usize << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (m, u) in units {
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{} {u}", bytes / m);
        }
    }
    format!("{bytes} bytes")
}

/// `0.4 ms`, `120 ms`, `3.2 s`, `98 s`.
pub(super) fn seconds(s: f64) -> String {
    if s >= 10.0 {
        format!("{s:.0} s")
    } else if s >= 1.0 {
        format!("{s:.1} s")
    } else if s >= 0.01 {
        format!("{:.0} ms", s * 1e3)
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::collect::sweep) fn settings(
        sizes: &[usize],
        warmup: u32,
        repeats: u32,
        budget_s: Option<f64>,
    ) -> Settings {
        Settings {
            sizes: sizes.to_vec(),
            warmup,
            repeats,
            copies_per_window: 1,
            budget: budget_s.map(Duration::from_secs_f64),
        }
    }

    #[test]
    fn without_a_budget_the_plan_is_what_was_asked() {
        let p = Plan::new(&Settings::default(), 152);
        assert_eq!((p.sizes, p.warmup, p.repeats), (default_sizes(), 2, 7));
        let p = Plan::new(&settings(&[4096], 2, 7, Some(0.0)), 152);
        assert_eq!(
            (p.budget, p.repeats),
            (None, 7),
            "a zero budget is no budget"
        );
    }

    #[test]
    fn sizes_are_sorted_once_and_zero_is_dropped() {
        let p = Plan::new(&settings(&[1 << 20, 0, 4096, 1 << 20], 0, 1, None), 1);
        assert_eq!(p.sizes, vec![4096, 1 << 20]);
    }

    #[test]
    fn the_budget_lowers_repetitions_evenly_and_keeps_every_size() {
        let asked = settings(&default_sizes(), 2, 7, None);
        let one_pass = Plan::new(&asked, 27).estimate_s() / 9.0;
        // Room for the warm-up and 4.5 repetitions: 4 of every size.
        let p = Plan::new(
            &Settings {
                budget: Some(Duration::from_secs_f64(one_pass * 6.5)),
                ..asked.clone()
            },
            27,
        );
        assert_eq!(
            (p.sizes.clone(), p.repeats, p.asked_repeats),
            (default_sizes(), 4, 7)
        );
        assert!(p.estimate_s() <= one_pass * 6.5);
        assert!(p.describe().starts_with(
            "27 paths x 9 sizes (4 KiB to 256 MiB) x 4 repetitions (+2 warm-up), about"
        ));
        assert!(
            p.describe()
                .contains("budget lowered the repetitions from 7")
        );
        // A budget with room to spare changes nothing.
        let roomy = Plan::new(
            &Settings {
                budget: Some(Duration::from_secs_f64(one_pass * 100.0)),
                ..asked
            },
            27,
        );
        assert_eq!(roomy.repeats, 7);
        assert!(roomy.describe().contains("within the"));
    }

    #[test]
    fn a_budget_below_the_floor_keeps_every_size_at_the_floor() {
        // Eight GPUs: 8 x 5 paths + 56 pairs x 2, and a 3 s budget.
        let p = Plan::new(&settings(&default_sizes(), 2, 7, Some(3.0)), 152);
        assert_eq!((p.sizes.len(), p.repeats), (9, MIN_REPEATS));
        assert!(p.estimate_s() > 3.0);
        assert!(
            p.describe()
                .contains("over the 3.0 s budget even at the floor of 3 repetitions")
        );
        // Fewer asked than the floor: as asked.
        let p = Plan::new(&settings(&default_sizes(), 0, 1, Some(0.001)), 152);
        assert_eq!(p.repeats, 1);
    }

    #[test]
    fn sizes_and_durations_read_naturally() {
        let as_text = |n: usize| short_size(n);
        assert_eq!(
            [4096, 256 << 20, 1 << 30, 1000].map(as_text),
            ["4 KiB", "256 MiB", "1 GiB", "1000 bytes"]
        );
        assert_eq!(
            [0.0004, 0.12, 3.21, 98.4].map(seconds),
            ["0.4 ms", "120 ms", "3.2 s", "98 s"]
        );
        assert_eq!(
            (count(1, "path"), count(2, "path")),
            ("1 path".into(), "2 paths".into())
        );
    }
}
