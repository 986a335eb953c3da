//! The y axis of the line charts: how values read ([`Unit`]) and the ticks ([`Axis`]), from 0
//! to a tick at or above the highest value; count axes tick whole numbers only.

/// At most this many intervals between ticks (so at most six ticks, 0 included).
const MAX_INTERVALS: u32 = 5;

/// How values read on the axis and in hover text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Whole counts (requests in a second, in flight, queued, pods): the axis ticks whole
    /// numbers only.
    Count(&'static str),
    /// Rates and other quantities that may be fractional: whole numbers from 10 up in hover
    /// text; the axis may tick fractions.
    Number(&'static str),
    /// Fractions shown as percentages.
    Percent,
}

impl Unit {
    pub(super) fn format(self, v: f64) -> String {
        match self {
            Unit::Count(_) | Unit::Number(_) if v.abs() >= 10.0 || v.fract() == 0.0 => {
                format!("{v:.0}")
            }
            Unit::Count(_) | Unit::Number(_) => trimmed(v, 2),
            Unit::Percent => format!("{:.1}%", v * 100.0),
        }
    }

    /// A tick's label: as many decimals as the tick has (12.5 stays 12.5), at most 3.
    pub(super) fn tick_label(self, v: f64) -> String {
        match self {
            Unit::Count(_) | Unit::Number(_) => trimmed(v, 3),
            Unit::Percent => format!("{}%", trimmed(v * 100.0, 3)),
        }
    }

    pub(super) fn axis_label(self) -> &'static str {
        match self {
            Unit::Count(label) | Unit::Number(label) => label,
            Unit::Percent => "%",
        }
    }

    pub(super) fn whole(self) -> bool {
        matches!(self, Unit::Count(_))
    }
}

/// `v` with at most `decimals` decimals, trailing zeros dropped.
pub(super) fn trimmed(v: f64, decimals: usize) -> String {
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// A y axis from 0: ticks `0, step, 2·step, …, top`, `top` at or above the highest value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    pub step: f64,
    pub intervals: u32,
}

impl Axis {
    /// The axis for values up to `max`: the smallest step of 1, 2, 2.5 or 5 × 10^k that
    /// reaches `max` in at most five intervals. With `whole`, steps are whole numbers (1, 2, 5,
    /// 10, 20, 25, 50, …) and there are at least two intervals, so a maximum of 0, 1 or 2 reads
    /// 0, 1, 2. Nothing to show (0, negative or not finite) gives 0…1.
    pub fn new(max: f64, whole: bool) -> Axis {
        let max = if max.is_finite() && max > 0.0 {
            max
        } else {
            0.0
        };
        if max == 0.0 && !whole {
            return Axis {
                step: 0.2,
                intervals: 5,
            };
        }
        let mut exponent = if max > 0.0 {
            (max / f64::from(MAX_INTERVALS)).log10().floor() as i32 - 1
        } else {
            0
        };
        if whole {
            exponent = exponent.max(0);
        }
        loop {
            let magnitude = 10f64.powi(exponent);
            for m in [1.0, 2.0, 2.5, 5.0] {
                let step = m * magnitude;
                if whole && step.fract() != 0.0 {
                    continue;
                }
                let intervals = if whole {
                    // Exact for counts, however large.
                    (max.ceil() as u64).div_ceil(step as u64)
                } else {
                    // The tolerance keeps 1.1 / 0.1 = 11.000000000000002 at 11 intervals.
                    (max / step - 1e-9).ceil().max(0.0) as u64
                };
                if intervals <= u64::from(MAX_INTERVALS) {
                    let intervals = intervals as u32;
                    let intervals = if whole {
                        intervals.max(2)
                    } else {
                        intervals.max(1)
                    };
                    return Axis { step, intervals };
                }
            }
            exponent += 1;
        }
    }

    /// The top tick.
    pub fn top(&self) -> f64 {
        self.step * f64::from(self.intervals)
    }

    /// Every tick from 0 to the top.
    pub fn ticks(&self) -> Vec<f64> {
        (0..=self.intervals)
            .map(|k| self.step * f64::from(k))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn axes_with_worked_numbers() {
        let ticks = |max: f64, whole: bool| Axis::new(max, whole).ticks();
        assert_eq!(ticks(0.0, true), [0.0, 1.0, 2.0]);
        assert_eq!(ticks(1.0, true), [0.0, 1.0, 2.0]);
        assert_eq!(ticks(2.0, true), [0.0, 1.0, 2.0]);
        assert_eq!(ticks(3.0, true), [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(ticks(7.0, true), [0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(ticks(11.0, true), [0.0, 5.0, 10.0, 15.0]);
        assert_eq!(ticks(20.0, true), [0.0, 5.0, 10.0, 15.0, 20.0]);
        // 2.5 is no step for counts, 25 is.
        assert_eq!(ticks(12.0, true), [0.0, 5.0, 10.0, 15.0]);
        assert_eq!(ticks(12.0, false), [0.0, 2.5, 5.0, 7.5, 10.0, 12.5]);
        assert_eq!(Axis::new(1650.0, true).top(), 2000.0);
        // One more than four steps of 5·10^9 takes a fifth, though the quotient is within
        // 10^-9 of 4.
        assert_eq!(Axis::new(20_000_000_001.0, true).top(), 25_000_000_000.0);
        assert_eq!(Axis::new(0.48, false).top(), 0.5);
        assert_eq!(Axis::new(0.0, false).top(), 1.0);
        assert_eq!(Axis::new(f64::NAN, true).top(), 2.0);
        assert_eq!(Unit::Number("req/s").tick_label(12.5), "12.5");
        assert_eq!(Unit::Percent.tick_label(Axis::new(0.3, false).top()), "30%");
    }

    proptest! {
        /// Count axes: whole-number ticks from 0, evenly spaced, the top at or above the
        /// maximum — the first tick that is, unless the two-interval minimum — and 3 to 6
        /// ticks.
        #[test]
        fn count_axes_tick_whole_numbers_up_to_the_maximum(max in 0u64..20_000_000_000) {
            let axis = Axis::new(max as f64, true);
            let ticks = axis.ticks();
            prop_assert!((3..=6).contains(&ticks.len()), "{ticks:?}");
            prop_assert_eq!(ticks[0], 0.0);
            prop_assert!(ticks.iter().all(|t| t.fract() == 0.0), "{:?}", ticks);
            prop_assert!(axis.step >= 1.0);
            prop_assert!(axis.top() >= max as f64);
            prop_assert!(
                axis.intervals == 2 || ticks[ticks.len() - 2] < max as f64,
                "{ticks:?} for {max}"
            );
            for label in ticks.iter().map(|t| Unit::Count("").tick_label(*t)) {
                prop_assert!(label.chars().all(|c| c.is_ascii_digit()), "{}", label);
            }
        }

        /// Other axes: at most 6 ticks, the top at or above the maximum, the tick below it
        /// under the maximum.
        #[test]
        fn rate_axes_cover_the_maximum_with_few_ticks(max in 1e-6f64..1e9) {
            let axis = Axis::new(max, false);
            let ticks = axis.ticks();
            prop_assert!((2..=6).contains(&ticks.len()), "{ticks:?}");
            prop_assert!(axis.top() >= max * (1.0 - 1e-9), "{ticks:?} for {max}");
            prop_assert!(ticks[ticks.len() - 2] < max, "{ticks:?} for {max}");
        }
    }
}
