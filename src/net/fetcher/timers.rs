//! Deadlines: firing the timer heap's due entries (connection deadlines, DNS lookups,
//! the connection-slot queue, per-IP waits) and keeping the heap compact.

use std::time::{Duration, Instant};

use super::{Fetcher, TimerKey};
use crate::fetch::{FailReason, TimeoutPhase};
use crate::net::conn::{after, Deadline, Phase, ReadingBody, ReadingHead};
use crate::net::slab::SlotKey;

/// How soon the deadline of a connection whose readiness a poll deferred is looked at
/// again (deferred readiness is handled first by the next poll).
const DEFERRED_RECHECK: Duration = Duration::from_millis(10);

impl Fetcher {
    pub(super) fn fire_timers(&mut self, now: Instant) {
        while let Some((at, key)) = self.timers.pop_due(now) {
            match key {
                TimerKey::Conn(slot) => {
                    let Some(conn) = self.conns.get_mut(slot) else {
                        continue;
                    };
                    if conn.timer_at != Some(at) {
                        continue; // stale: a later entry replaced it
                    }
                    if self.deferred.iter().any(|(t, _)| *t == slot.token()) {
                        // Its readiness waits for our next poll (`max_done_bytes`),
                        // not for the server: the deadline is looked at again once
                        // that readiness has been handled.
                        let again = now + DEFERRED_RECHECK;
                        conn.timer_at = Some(again);
                        self.timers.schedule(again, TimerKey::Conn(slot));
                        continue;
                    }
                    conn.timer_at = None;
                    match conn.deadline(&self.cfg.deadlines, self.cfg.pool.idle_timeout) {
                        Some((due, what)) if due <= now => self.on_deadline(slot, what, now),
                        _ => self.refresh(slot, now),
                    }
                }
                TimerKey::IpWait => {
                    let (fails, next) = self.admission.expire(at, now);
                    if let Some(next) = next {
                        self.timers.schedule(next, TimerKey::IpWait);
                    }
                    for d in fails {
                        self.decide(d, now);
                    }
                }
                TimerKey::ProxyWait => {
                    if self.proxy_timer_at != Some(at) {
                        continue;
                    }
                    self.proxy_timer_at = None;
                    // A wait for the proxy's slot counts against the total deadline.
                    let total = self.cfg.deadlines.total_timeout;
                    let (late, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.proxy_waiting)
                        .into_iter()
                        .partition(|j| after(j.submitted, total) <= now);
                    self.proxy_waiting = waiting.into();
                    for job in late {
                        self.fail_job(job, None, FailReason::Timeout(TimeoutPhase::Queue), now);
                    }
                    self.pump_proxy(now);
                    if !self.proxy_waiting.is_empty() && self.proxy_timer_at.is_none() {
                        let again = now + super::route::PROXY_WAIT_RETRY;
                        self.timers.schedule(again, TimerKey::ProxyWait);
                        self.proxy_timer_at = Some(again);
                    }
                }
                TimerKey::Queue => {
                    if self.queue_timer_at != Some(at) {
                        continue;
                    }
                    self.queue_timer_at = None;
                    let total = self.cfg.deadlines.total_timeout;
                    while self
                        .queue
                        .front()
                        .is_some_and(|j| after(j.submitted, total) <= now)
                    {
                        if let Some(job) = self.queue.pop_front() {
                            self.fail_job(job, None, FailReason::Timeout(TimeoutPhase::Queue), now);
                        }
                    }
                    if let Some(front) = self.queue.front() {
                        let at = after(front.submitted, total);
                        self.timers.schedule(at, TimerKey::Queue);
                        self.queue_timer_at = Some(at);
                    }
                }
            }
        }
    }

    pub(super) fn on_deadline(&mut self, key: SlotKey, what: Deadline, now: Instant) {
        match what {
            Deadline::Fail(phase) => self.fail_conn(key, FailReason::Timeout(phase), now),
            Deadline::IdleExpired => {
                if let Some(conn) = self.conns.get(key) {
                    let pool_key = conn.key.clone();
                    self.pool.remove(&pool_key, key);
                }
                self.close(key);
            }
            Deadline::RateCheck => {
                let d = self.cfg.deadlines;
                let Some(conn) = self.conns.get_mut(key) else {
                    return;
                };
                let r = match &mut conn.phase {
                    Phase::ReadingHead(ReadingHead { r })
                    | Phase::ReadingBody(ReadingBody { r, .. }) => &mut r.rx,
                    _ => return self.refresh(key, now),
                };
                if !r.rate_window_passed(d.min_rate_bytes_per_sec, now) {
                    return self.fail_conn(
                        key,
                        FailReason::Timeout(TimeoutPhase::SlowTransfer),
                        now,
                    );
                }
                self.refresh(key, now);
            }
        }
    }

    /// Drops stale timer entries when they outnumber live ones (keeps the heap O(live)).
    pub(super) fn compact_timers(&mut self) {
        let live = self.conns.len() + 1;
        if self.timers.len() <= 4 * live + 1024 {
            return;
        }
        let conns = &self.conns;
        let queue_at = self.queue_timer_at;
        let proxy_at = self.proxy_timer_at;
        let ip_at = self.admission.timer_at();
        self.timers.retain(|at, k| match k {
            TimerKey::IpWait => ip_at == Some(at),
            TimerKey::Conn(s) => conns.get(s).is_some_and(|c| c.timer_at == Some(at)),
            TimerKey::Queue => queue_at == Some(at),
            TimerKey::ProxyWait => proxy_at == Some(at),
        });
    }
}
