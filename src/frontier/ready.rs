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
    /// among hosts with a URL in RAM and fewer than `max_in_flight_per_host` fetches
    /// running. Refills RAM from disk when nothing in RAM is ready. Returns the host key
    /// and the URL; the caller must call [`Frontier::complete`] for that host when the
    /// fetch ends.
    ///
    /// # Errors
    /// A segment read or write failure during a refill.
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
    /// A segment read or write failure during a refill.
    pub fn take_ready_with<T>(
        &mut self,
        now: Instant,
        mut gate: impl FnMut(&str, &QueuedUrl) -> Gate<T>,
    ) -> Result<Option<(String, QueuedUrl, T)>, FrontierError> {
        // A refill reads (and mostly rewrites) a whole segment, so it must be worth
        // it: it runs when RAM is empty (the crawl would stall), or once enough URLs
        // left RAM since the last one ([`Frontier::refill_gate`]) and nothing in RAM
        // is servable or RAM is less than half full. Without the gate, a crawl whose
        // hosts are all in flight refilled on every call, rewriting 64 MiB to load a
        // handful of URLs (the wide memory test stalled so, and its peers' link
        // batches piled up in RAM).
        if self.disk_urls > 0 {
            let starving = self.ram_urls == 0;
            let worth = self.taken_since_refill >= self.refill_gate();
            if starving || (worth && self.heap.is_empty()) {
                // Make room for whatever the oldest segment holds, regardless of the
                // forget throttle.
                self.forget_idle_hosts(now);
                self.attempts_since_forget = 0;
                self.refill(now)?;
            } else if worth && self.ram_bytes < self.config.ram_budget_bytes / 2 {
                self.refill(now)?;
            }
        }
        // Deferred hosts go back on the heap once this call ends, so a deferral to an
        // instant already past cannot make the loop serve the same host forever.
        let mut deferred: Vec<(HostId, Instant)> = Vec::new();
        let mut taken = None;
        while let Some(&Reverse((at, generation, id))) = self.heap.peek() {
            let live = matches!(self.hosts.get(id), Some(Some(h)) if h.on_heap && h.heap_gen == generation);
            if !live {
                self.heap.pop();
                continue;
            }
            if at > now {
                break;
            }
            self.heap.pop();
            let max_in_flight = self.config.max_in_flight_per_host;
            let h = self.host_mut(id);
            h.on_heap = false;
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
                    break;
                }
            };
            let Some(item) = h.ram.pop_front() else {
                continue;
            };
            h.in_flight += 1;
            let still_servable = !h.ram.is_empty() && h.in_flight < max_in_flight;
            let name = h.name.to_string();
            self.taken_since_refill += 1;
            self.ram_bytes = self.ram_bytes.saturating_sub(item.ram_bytes());
            self.ram_urls -= 1;
            if still_servable {
                self.push_heap(id, at);
            }
            taken = Some((name, item, verdict));
            break;
        }
        for (id, at) in deferred {
            // Strictly later than `now`, or a caller looping on `take_ready_with` until
            // `None` would meet the host again at once.
            self.push_heap(id, at.max(now + Duration::from_nanos(1)));
        }
        Ok(taken)
    }

    /// Ends a [`Gate::Hold`]: the host is scheduled again, not before `at` (its
    /// politeness after the robots.txt fetch). Does nothing to a host not held.
    pub fn release(&mut self, host: &str, at: Instant) {
        let Some(&id) = self.by_name.get(host) else {
            return;
        };
        let h = self.host_mut(id);
        if !h.held {
            return;
        }
        h.held = false;
        if at > h.eligible_at {
            h.eligible_at = at;
        }
        self.schedule_if_idle(id);
    }

    /// Hosts on the schedule whose politeness instant is not after `now`: ready,
    /// and not taken yet. A scan of the heap (O(hosts)); the driver calls it a few
    /// times a second.
    pub fn hosts_ready_at(&self, now: Instant) -> u64 {
        self.heap
            .iter()
            .filter(|Reverse((at, generation, id))| {
                *at <= now
                    && matches!(self.hosts.get(*id), Some(Some(h)) if h.on_heap && h.heap_gen == *generation)
            })
            .count() as u64
    }

    /// Whether `host`'s queue is held (see [`Gate::Hold`]).
    pub fn is_held(&self, host: &str) -> bool {
        self.by_name.get(host).is_some_and(|&id| self.host(id).held)
    }
}
