//! Watching a crawl (the seeds' "human monitoring"): a live progress display on a
//! terminal (indicatif), plain periodic lines when stderr is not a terminal (logs,
//! CI), the snapshot the metrics endpoint serves, and the per-host error alarm.
//!
//! The coordinator asks [`Monitor::due`] on every turn of its loop and, when it is,
//! hands a fresh [`Stats`] to [`Monitor::update`]; computing stats is not free (it
//! locks the frontier statistics), so the monitor decides how often: once a second
//! for a terminal or a metrics endpoint, every `progress_interval` otherwise.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::metrics::{Console, MetricsServer};
use super::stats::Stats;
use crate::bytesize::human_bytes;
use crate::engine::{CrawlConfig, CrawlError};

/// Refresh period of the terminal display and of the metrics snapshot.
const REFRESH: Duration = Duration::from_secs(1);

/// How progress is shown.
enum Display {
    /// `progress_interval` is zero: nothing.
    Off,
    /// Plain lines on stderr every `interval`.
    Plain { interval: Duration, next: Instant },
    /// A live spinner with a two-line message.
    Live(ProgressBar),
}

/// Pages and bytes at the previous update, for the recent (not whole-crawl) rates.
#[derive(Clone, Copy)]
struct Mark {
    at: Instant,
    pages: u64,
    bytes: u64,
    activations: u64,
}

/// Rates since the previous line.
#[derive(Clone, Copy, Debug)]
struct Rates {
    pages: f64,
    mb: f64,
    /// Hosts entering the active set a second.
    activations: f64,
}

pub(crate) struct Monitor {
    display: Display,
    metrics: Option<MetricsServer>,
    next: Instant,
    last: Option<Mark>,
}

impl Monitor {
    /// Chooses the display from the configuration and stderr, and starts the metrics
    /// endpoint if `metrics_addr` is set.
    ///
    /// # Errors
    /// The metrics address is not loopback (and not allowed) or cannot be bound.
    pub fn new(
        config: &CrawlConfig,
        operator: std::sync::Arc<crate::engine::control::Operator>,
        board: std::sync::Arc<super::board::Board>,
        now: Instant,
    ) -> Result<Self, CrawlError> {
        let display = if config.progress_interval.is_zero() {
            Display::Off
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner:.green} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(200));
            bar.set_message("starting");
            Display::Live(bar)
        } else {
            Display::Plain {
                interval: config.progress_interval,
                next: now + config.progress_interval,
            }
        };
        let metrics = match config.metrics_addr {
            Some(addr) => {
                let console = Console {
                    operator: std::sync::Arc::clone(&operator),
                    board,
                };
                let m = MetricsServer::start_with_console(
                    addr,
                    config.metrics_allow_remote,
                    Some(console),
                )?;
                tracing::info!(addr = %m.local_addr(), "serving Prometheus metrics on /metrics");
                // The page and `trawl ctl` find the listener and its token here
                // (`docs/control.md`); the link's fragment is never sent to a server.
                match operator.publish_listener(m.local_addr()) {
                    Ok(link) => eprintln!("trawl: status page and controls: {link}"),
                    Err(e) => tracing::warn!(error = %e, "cannot write the control token"),
                }
                Some(m)
            }
            None => None,
        };
        Ok(Self {
            display,
            metrics,
            next: now,
            last: None,
        })
    }

    /// Whether the coordinator should compute stats and call [`Monitor::update`].
    pub fn due(&self, now: Instant) -> bool {
        match &self.display {
            Display::Off if self.metrics.is_none() => false,
            Display::Plain { next, .. } if self.metrics.is_none() => now >= *next,
            _ => now >= self.next,
        }
    }

    /// Shows and publishes `s`.
    pub fn update(&mut self, s: &Stats, now: Instant) {
        self.next = now + REFRESH;
        if let Some(m) = &self.metrics {
            m.publish(s);
        }
        let mark = Mark {
            at: now,
            pages: s.pages,
            bytes: s.bytes,
            activations: s.host_activations,
        };
        let rates = match self.last {
            Some(l) if now > l.at => {
                let dt = now.duration_since(l.at).as_secs_f64();
                Rates {
                    pages: s.pages.saturating_sub(l.pages) as f64 / dt,
                    mb: s.bytes.saturating_sub(l.bytes) as f64 / dt / 1e6,
                    activations: s.host_activations.saturating_sub(l.activations) as f64 / dt,
                }
            }
            _ => {
                let secs = s.elapsed_secs.max(1e-3);
                Rates {
                    pages: s.pages_per_sec,
                    mb: s.mb_per_sec,
                    activations: s.host_activations as f64 / secs,
                }
            }
        };
        match &mut self.display {
            Display::Off => {}
            Display::Plain { interval, next } => {
                if now >= *next {
                    eprintln!("trawl: {}", line(s, rates));
                    *next = now + *interval;
                    self.last = Some(mark);
                }
                return;
            }
            Display::Live(bar) => bar.set_message(line(s, rates).replacen(" | ", "\n  ", 1)),
        }
        self.last = Some(mark);
    }

    /// Publishes the final stats and takes the live display down.
    pub fn finish(self, s: &Stats) {
        if let Some(m) = &self.metrics {
            m.publish(s);
        }
        if let Display::Live(bar) = &self.display {
            bar.finish_and_clear();
        }
        if let Some(m) = self.metrics {
            m.stop();
        }
    }
}

/// One progress line: rates since the previous line, then frontier, hosts, outcomes
/// and presence bits. The live display breaks it at the first ` | `.
fn line(s: &Stats, rates: Rates) -> String {
    let mut out = format!(
        "{:.0}s pages {} ({:.0}/s, {:.1} MB/s; avg {:.0}/s) | queued {} (ram {} / {}, disk {} / {}) \
         hosts {} active / {} known ({} inactive, {:.0} activations/s), line {}, retired {} parked {} seen-fill {:.4} fp {:.2e} rss {} (bits {}, rest {})",
        s.elapsed_secs,
        s.pages,
        rates.pages,
        rates.mb,
        s.pages_per_sec,
        s.queued,
        s.frontier_ram_urls,
        human_bytes(s.frontier_ram_bytes as f64, 1),
        s.frontier_disk_urls,
        human_bytes(s.frontier_disk_bytes as f64, 1),
        s.hosts_active,
        s.hosts_known,
        s.hosts_known.saturating_sub(s.hosts_active),
        rates.activations,
        s.line_records,
        s.hosts_retired,
        s.hosts_parked,
        s.seen_fill_ratio,
        s.seen_expected_fp,
        human_bytes(s.rss_bytes as f64, 1),
        human_bytes(s.presence_bits_resident_bytes as f64, 1),
        human_bytes(s.rss_less_presence_bits_bytes as f64, 1),
    );
    let w = &s.width;
    let _ = write!(
        out,
        " in-flight {} (peak {}) ready-idle {}",
        w.requests_in_flight, w.requests_in_flight_peak, w.hosts_ready_idle
    );
    let _ = write!(
        out,
        " dns {} in flight {} failed",
        w.dns.in_flight + w.dns.queued,
        w.dns.failed()
    );
    if w.requests_waiting_for_dns > 0 {
        let _ = write!(out, " wait-dns {}", w.requests_waiting_for_dns);
    }
    if w.requests_waiting_for_address > 0 {
        let _ = write!(out, " wait-addr {}", w.requests_waiting_for_address);
    }
    if w.urls_refused_budget > 0 {
        let _ = write!(out, " budget-refused {}", w.urls_refused_budget);
    }
    let _ = write!(
        out,
        " robots.txt {} (max {} a host, {} fresh refetched, {} rules on disk)",
        s.robots_fetches,
        s.robots_fetches_max_per_host,
        s.robots_hosts_refetched_while_fresh,
        s.robots_cache_hosts_spilled
    );
    if s.paused.is_some() || s.disk_pauses > 0 {
        if let Some(why) = &s.paused {
            let _ = write!(out, " paused: {why}");
        }
        let _ = write!(
            out,
            " (disk free {} reserve {}; {} pause(s), {:.0}s)",
            human_bytes(s.disk_free_bytes as f64, 1),
            human_bytes(s.disk_reserve_bytes as f64, 1),
            s.disk_pauses,
            s.disk_paused_secs
        );
    }
    // Pages and robots.txt files a cap cut, so that no limit is silent: shown only when
    // it happened.
    let truncated = [
        ("links", s.pages_links_truncated),
        ("scan", s.pages_scan_truncated),
        ("attr", s.pages_long_attributes),
        ("robots-size", s.robots_truncated),
        ("robots-lines", s.robots_long_lines),
        ("sitemaps", s.sitemaps_cut),
        ("sitemap-refused", s.sitemap_urls_refused),
    ];
    if truncated.iter().any(|(_, n)| *n > 0) {
        out.push_str(" truncated");
        for (name, n) in truncated.iter().filter(|(_, n)| *n > 0) {
            let _ = write!(out, " {name}={n}");
        }
    }
    if let Some(farm) = &s.farm {
        out.push_str(&crate::farm::report::progress(farm));
    }
    if !s.outcomes.is_empty() {
        out.push_str(" outcomes");
        for (k, v) in &s.outcomes {
            let _ = write!(out, " {k}={v}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_line_names_every_figure() {
        let mut s = Stats {
            pages: 1234,
            frontier_disk_bytes: 3 << 20,
            rss_bytes: 7 << 20,
            presence_bits_resident_bytes: 2 << 20,
            rss_less_presence_bits_bytes: 5 << 20,
            ..Stats::default()
        };
        s.outcomes.insert("fetched".to_owned(), 1200);
        s.outcomes.insert("robots".to_owned(), 34);
        let l = line(
            &s,
            Rates {
                pages: 100.0,
                mb: 2.0,
                activations: 3.0,
            },
        );
        for needle in [
            "pages 1234",
            "100/s",
            "2.0 MB/s",
            "3.0 MiB",
            "hosts",
            "parked",
            "seen-fill",
            "fp",
            "rss 7.0 MiB (bits 2.0 MiB, rest 5.0 MiB)",
            "fetched=1200",
            "robots=34",
        ] {
            assert!(l.contains(needle), "{needle} missing from {l}");
        }
        assert_eq!(human_bytes(512.0, 1), "512 B");
        assert!(!l.contains("paused"), "{l}");
        s.paused = Some("disk".to_owned());
        s.disk_pauses = 2;
        s.disk_free_bytes = 5 << 20;
        s.disk_reserve_bytes = 8 << 20;
        let l = line(
            &s,
            Rates {
                pages: 100.0,
                mb: 2.0,
                activations: 3.0,
            },
        );
        assert!(
            l.contains("paused: disk (disk free 5.0 MiB reserve 8.0 MiB; 2 pause(s)"),
            "{l}"
        );
        assert!(
            !l.contains("truncated"),
            "no truncation shown while there is none"
        );
        s.pages_links_truncated = 3;
        let l = line(
            &s,
            Rates {
                pages: 100.0,
                mb: 2.0,
                activations: 3.0,
            },
        );
        assert!(l.contains("truncated links=3"), "{l}");
        assert!(!l.contains("scan="), "{l}");
        assert!(!l.contains("robots-"), "{l}");
        s.robots_long_lines = 2;
        let l = line(
            &s,
            Rates {
                pages: 100.0,
                mb: 2.0,
                activations: 3.0,
            },
        );
        assert!(l.contains("truncated links=3 robots-lines=2"), "{l}");
        assert!(!l.contains("robots-size"), "{l}");
    }
}
