//! A host's recent error rate, kept in its tally (`HostTally`), so that the core can
//! say when it rises before the host is parked.

/// A host's recent error rate, to warn when it rises suddenly (a site going down, a
/// trap or a hostile host starting to misbehave) before the host is parked.
///
/// The last [`ErrorWindow::WIDTH`] answers are kept as bits; the alarm fires once when
/// at least half of a full window are errors after the host had answered cleanly, and
/// re-arms when the window falls back under a quarter. Copy and 16 bytes, so it sits in
/// the shard's per-host tally.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ErrorWindow {
    bits: u32,
    seen: u32,
    raised: bool,
    had_success: bool,
}

impl ErrorWindow {
    pub const WIDTH: u32 = 16;

    /// Records one answer; returns the number of errors in the window when the alarm
    /// fires (once per rise).
    pub fn record(&mut self, error: bool) -> Option<u32> {
        let mask = (1u32 << Self::WIDTH) - 1;
        self.bits = ((self.bits << 1) | u32::from(error)) & mask;
        self.seen = (self.seen + 1).min(Self::WIDTH);
        self.had_success |= !error;
        let errors = self.bits.count_ones();
        if self.raised {
            if errors * 4 < Self::WIDTH {
                self.raised = false;
            }
            None
        } else if self.seen == Self::WIDTH && self.had_success && errors * 2 >= Self::WIDTH {
            self.raised = true;
            Some(errors)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_window_fires_once_per_rise() {
        let mut w = ErrorWindow::default();
        for _ in 0..20 {
            assert_eq!(w.record(false), None);
        }
        let mut fired = Vec::new();
        for i in 0..40 {
            if let Some(n) = w.record(true) {
                fired.push((i, n));
            }
        }
        assert_eq!(fired, vec![(7, 8)]);
        // Recovery re-arms it.
        for _ in 0..16 {
            assert_eq!(w.record(false), None);
        }
        let again = (0..16).filter_map(|_| w.record(true)).count();
        assert_eq!(again, 1);
    }

    #[test]
    fn a_host_that_never_worked_does_not_alarm() {
        // That case is the parking logic's, not a "sudden rise".
        let mut w = ErrorWindow::default();
        assert!((0..64).all(|_| w.record(true).is_none()));
    }
}
