//! Which host is served next: [`Frontier::take_ready`], and its gated form
//! [`Frontier::take_ready_with`], through which the engine keeps a host's queue whole
//! while the host is not ready (its robots.txt is being fetched) instead of taking its
//! URLs out to wait elsewhere.

use std::cmp::Reverse;
use std::time::{Duration, Instant};

use super::{Frontier, FrontierError, HostId, QueuedUrl};

/// What [`Frontier::take_ready_with`] does with the host whose turn it is, as the
/// caller decides from the host's front URL (without taking it).
#[derive(Debug)]
pub enum Gate<T> {
    /// Take the front URL; `T` is the caller's verdict on it, returned with it.
    Take(T),
    /// The host is not ready (e.g. its robots.txt is not known yet): its queue stays
    /// whole and off the schedule until [`Frontier::release`]. Its URLs leave the
    /// frontier once, when the host is ready, instead of waiting somewhere else.
    Hold,
    /// Not before this instant (e.g. a robots.txt retry time): the queue stays, the
    /// host is scheduled again at that instant.
    Defer(Instant),
    /// The caller has no room for what the host needs now (e.g. every fetch slot is
    /// busy): the host keeps its turn and the call returns `None`.
    Stop,
}

impl Frontier {
    /// The next URL to fetch: from the host whose politeness delay ended longest ago,
    /// among hosts with something queued and fewer than `max_in_flight_per_host`
    /// fetches running. A host whose RAM head is short reads its next block first.
    /// Returns the host key and the URL; the caller must call [`Frontier::complete`]
    /// for that host when the fetch ends.
    ///
    /// # Errors
    /// A block could not be read (or the write batch holding it appended); the host
    /// is scheduled again a second later.
    pub fn take_ready(
        &mut self,
        now: Instant,
    ) -> Result<Option<(String, QueuedUrl)>, FrontierError> {
        Ok(self
            .take_ready_with(now, |_, _| Gate::Take(()))?
            .map(|(host, item, ())| (host, item)))
    }

    /// [`Frontier::take_ready`] with a gate: before the front URL of the host whose
    /// turn it is leaves, `gate` decides whether the host is ready ([`Gate::Take`]),
    /// held until [`Frontier::release`] ([`Gate::Hold`]) or deferred
    /// ([`Gate::Defer`]). Held and deferred hosts keep their queue, so a URL waiting
    /// for its host's robots.txt leaves the frontier exactly once.
    ///
    /// # Errors
    /// As [`Frontier::take_ready`].
    pub fn take_ready_with<T>(
        &mut self,
        now: Instant,
        mut gate: impl FnMut(&str, &QueuedUrl) -> Gate<T>,
    ) -> Result<Option<(String, QueuedUrl, T)>, FrontierError> {
        self.settle();
        // Deferred hosts go back on the heap once this call ends, so a deferral to an
        // instant already past cannot make the loop serve the same host forever.
        let mut deferred: Vec<(HostId, Instant)> = Vec::new();
        let mut taken = None;
        let mut failure = None;
        let mut stopped = false;
        loop {
            while let Some(&Reverse((at, generation, id))) = self.heap.peek() {
                if !self.is_live(generation, id) {
                    self.heap.pop();
                    continue;
                }
                if at > now {
                    break;
                }
                self.heap.pop();
                self.off_heap(id);
                // Its turn: a short head reads the host's next block now, whatever other
                // hosts spilled.
                if let Err(e) = self.top_up(id) {
                    deferred.push((id, now + Duration::from_secs(1)));
                    failure = Some(e);
                    break;
                }
                let max_in_flight = self.config.max_in_flight_per_host;
                let Some(h) = self.table.get_mut(id) else {
                    continue;
                };
                let Some(front) = h.ram.front() else {
                    continue;
                };
                let verdict = match gate(&h.name, front) {
                    Gate::Take(verdict) => verdict,
                    Gate::Hold => {
                        h.held = true;
                        continue;
                    }
                    Gate::Defer(until) => {
                        h.eligible_at = h.eligible_at.max(until);
                        deferred.push((id, h.eligible_at));
                        continue;
                    }
                    Gate::Stop => {
                        self.push_heap(id, at);
                        stopped = true;
                        break;
                    }
                };
                let Some(item) = h.ram.pop_front() else {
                    continue;
                };
                h.in_flight += 1;
                h.takes = h.takes.saturating_add(1);
                let first_fetch = h.in_flight == 1;
                if h.ram.is_empty() {
                    // An emptied head gives its buffer back: a host served to the end
                    // keeps no capacity.
                    h.ram = std::collections::VecDeque::new();
                }
                let still_servable = h.is_servable(max_in_flight);
                let name = h.name.to_string();
                self.in_flight += 1;
                self.hosts_in_flight += u64::from(first_fetch);
                self.ram_bytes = self.ram_bytes.saturating_sub(item.ram_bytes());
                self.ram_urls = self.ram_urls.saturating_sub(1);
                if still_servable {
                    self.push_heap(id, at);
                }
                taken = Some((name, item, verdict));
                break;
            }
            // No active host is ready: a slot would wait, so the active set grows by a
            // host of the line, if it has room.
            if taken.is_some() || failure.is_some() || stopped || !self.can_activate() {
                break;
            }
            // Hosts already started, waiting for room on their address, come first.
            if self.activate_waiting_for_address() {
                continue;
            }
            match self.activate_next(now) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        for (id, at) in deferred {
            // Strictly later than `now`, or a caller looping on `take_ready_with` until
            // `None` would meet the host again at once.
            self.push_heap(id, at.max(now + Duration::from_nanos(1)));
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(taken),
        }
    }

    /// Ends a [`Gate::Hold`]: the host is scheduled again, not before `at` (its
    /// politeness after the robots.txt fetch). Does nothing to a host not held.
    pub fn release(&mut self, host: &str, at: Instant) {
        let Some(id) = self.table.find(host) else {
            return;
        };
        let Some(h) = self.host_mut(id) else {
            return;
        };
        if !h.held {
            return;
        }
        h.held = false;
        if at > h.eligible_at {
            h.eligible_at = at;
        }
        self.schedule_if_idle(id);
    }

    /// Whether `host`'s queue is held (see [`Gate::Hold`]).
    pub fn is_held(&self, host: &str) -> bool {
        self.table
            .find(host)
            .and_then(|id| self.host(id))
            .is_some_and(|h| h.held)
    }
}
