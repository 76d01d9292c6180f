//! The operator's rules as the crawl reads them while it runs ([`OperatorRules`]):
//! shared by the control API, which changes them, and every shard's crawl core, which
//! asks them once per URL it takes (a block) and once per host turn (a raised delay).
//! No I/O; the engine saves and restores them with checkpoints.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use super::{ApiError, Block, Rules};

/// Most hosts whose robots.txt `Crawl-delay` is remembered for the delay floor.
const MAX_CRAWL_DELAYS: usize = 100_000;

/// See the module docs.
#[derive(Debug, Default)]
pub struct OperatorRules {
    /// Whether `rules` holds anything: the core's fast path reads only this.
    has_rules: AtomicBool,
    rules: RwLock<Rules>,
    /// URLs refused by a block so far.
    blocked_urls: AtomicU64,
    /// Robots.txt `Crawl-delay`s met so far, in ms, by host key (the delay floor).
    crawl_delays: Mutex<HashMap<String, u64>>,
}

impl OperatorRules {
    /// Whether the operator blocked `url` of `host_key`; counts it when so (the core
    /// asks once per URL it takes).
    pub fn is_blocked(&self, host_key: &str, url: &str) -> bool {
        if !self.has_rules.load(Ordering::Acquire) {
            return false;
        }
        let blocked = self.rules.read().is_ok_and(|r| r.is_blocked(host_key, url));
        if blocked {
            self.blocked_urls.fetch_add(1, Ordering::Relaxed);
        }
        blocked
    }

    /// The operator's least delay for `host_key`, if set.
    pub fn delay_of(&self, host_key: &str) -> Option<Duration> {
        if !self.has_rules.load(Ordering::Acquire) {
            return None;
        }
        self.rules.read().ok().and_then(|r| r.delay_of(host_key))
    }

    /// Remembers `host_key`'s robots.txt `Crawl-delay`, the floor of its delay.
    pub fn note_crawl_delay(&self, host_key: &str, delay: Duration) {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        if let Ok(mut m) = self.crawl_delays.lock() {
            if m.get(host_key) != Some(&ms)
                && (m.len() < MAX_CRAWL_DELAYS || m.contains_key(host_key))
            {
                m.insert(host_key.to_owned(), ms);
            }
        }
    }

    /// The robots.txt `Crawl-delay`s met so far, in ms, by host key.
    pub fn crawl_delays(&self) -> HashMap<String, u64> {
        self.crawl_delays
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    /// The longest robots.txt `Crawl-delay` met on a host key `host` names (a host
    /// name, or an origin).
    pub fn robots_delay_ms(&self, host: &str) -> Option<u64> {
        let probe = format!("http://{host}");
        self.crawl_delays.lock().ok().and_then(|m| {
            m.iter()
                .filter(|(k, _)| {
                    let mut one = Rules::default();
                    one.delays_ms.insert(host.to_owned(), 0);
                    one.delay_of(k).is_some() || k.as_str() == probe
                })
                .map(|(_, ms)| *ms)
                .max()
        })
    }

    /// Adds a block; whether it is new.
    ///
    /// # Errors
    /// The rule set is full, or the rules cannot be read.
    pub fn block(&self, b: Block) -> Result<bool, ApiError> {
        let mut rules = self
            .rules
            .write()
            .map_err(|_| ApiError::new(503, "unavailable", "rules unavailable"))?;
        let new = rules.block(b)?;
        self.has_rules.store(true, Ordering::Release);
        Ok(new)
    }

    /// Raises `host`'s delay to `delay_ms`, never under `floor_ms` (`--delay-ms`) nor
    /// under `robots_ms` (its robots.txt `Crawl-delay`).
    ///
    /// # Errors
    /// The delay is under a floor, the rule set is full, or the rules cannot be read.
    pub fn set_delay(
        &self,
        host: &str,
        delay_ms: u64,
        floor_ms: u64,
        robots_ms: Option<u64>,
    ) -> Result<(), ApiError> {
        let mut rules = self
            .rules
            .write()
            .map_err(|_| ApiError::new(503, "unavailable", "rules unavailable"))?;
        rules.set_delay(host, delay_ms, floor_ms, robots_ms)?;
        self.has_rules.store(true, Ordering::Release);
        Ok(())
    }

    /// The rules now, and the URLs they refused so far.
    pub fn snapshot(&self) -> (Rules, u64) {
        (
            self.rules.read().map(|r| r.clone()).unwrap_or_default(),
            self.blocked_urls.load(Ordering::Acquire),
        )
    }

    /// Puts back rules a checkpoint kept (a resume).
    pub fn restore(&self, rules: Rules, blocked_urls: u64) {
        let any = !rules.is_empty();
        self.blocked_urls.store(blocked_urls, Ordering::Release);
        if let Ok(mut r) = self.rules.write() {
            *r = rules;
        }
        self.has_rules.store(any, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_delays_answer_once_set_and_count_refusals() {
        let live = OperatorRules::default();
        assert!(!live.is_blocked("http://a.test:80", "http://a.test/x"));
        assert!(live.block(Block::Host("a.test".to_owned())).unwrap());
        assert!(live.is_blocked("http://a.test:80", "http://a.test/x"));
        assert!(!live.is_blocked("http://b.test:80", "http://b.test/x"));
        live.note_crawl_delay("http://b.test:80", Duration::from_secs(3));
        assert_eq!(live.robots_delay_ms("b.test"), Some(3000));
        assert!(live.set_delay("b.test", 1000, 0, Some(3000)).is_err());
        live.set_delay("b.test", 5000, 0, Some(3000)).unwrap();
        assert_eq!(
            live.delay_of("http://b.test:80"),
            Some(Duration::from_secs(5))
        );
        let (rules, blocked) = live.snapshot();
        assert_eq!(blocked, 1);
        let resumed = OperatorRules::default();
        resumed.restore(rules, blocked);
        assert!(resumed.is_blocked("http://a.test:443", "https://a.test/"));
        assert_eq!(resumed.snapshot().1, 2);
    }
}
