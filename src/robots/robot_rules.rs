//! `RobotRules`: the rules of many sites for one robot, in the spirit of Perl's
//! `WWW::RobotRules` — parse each site's robots.txt once, then ask about any URL.
//!
//! This is the simple interface for tools and tests. The engine uses
//! [`RobotsCache`](crate::robots::RobotsCache), which adds the fetch state machine.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use url::Url;

use super::cache::HostKey;
use super::parse::Mode;
use super::rules::{Decision, Rules};

/// What [`RobotRules::parse`] rejects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotsError {
    /// The robots.txt URL did not parse as a URL.
    InvalidUrl,
    /// The URL has no host (robots.txt is per host).
    NoHost,
}

impl std::fmt::Display for RobotsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RobotsError::InvalidUrl => "invalid robots.txt url",
            RobotsError::NoHost => "robots.txt url has no host",
        })
    }
}

impl std::error::Error for RobotsError {}

/// The answer of [`RobotRules::allowed`].
#[derive(Clone, Copy, Debug)]
pub enum Answer<'r> {
    /// A verdict from the site's rules.
    Decided(Decision<'r>),
    /// No robots.txt was parsed for this site (`WWW::RobotRules` returns -1).
    Unknown,
    /// The site's rules are past their `fresh_until` (only from
    /// [`RobotRules::allowed_at`]).
    Expired,
}

impl Answer<'_> {
    /// `Some(allowed)` when decided.
    pub fn is_allowed(&self) -> Option<bool> {
        match self {
            Answer::Decided(d) => Some(d.allowed),
            _ => None,
        }
    }
}

#[derive(Debug)]
struct Site {
    rules: Rules,
    fresh_until: Option<Instant>,
}

/// The robots.txt rules of many sites for one robot.
#[derive(Debug)]
pub struct RobotRules {
    agent: String,
    mode: Mode,
    max_sites: usize,
    sites: HashMap<HostKey, (u64, Site)>,
    /// Parse order, oldest first, for dropping sites past `max_sites`.
    order: BTreeMap<u64, HostKey>,
    clock: u64,
}

impl RobotRules {
    /// Rules for the robot named by `agent` (a product token or a whole
    /// `User-Agent`), RFC 9309 conventions, at most 100,000 sites.
    pub fn new(agent: &str) -> RobotRules {
        RobotRules::with_mode(agent, Mode::Rfc9309)
    }

    /// Like [`RobotRules::new`] with the given conventions.
    pub fn with_mode(agent: &str, mode: Mode) -> RobotRules {
        RobotRules {
            agent: agent.to_owned(),
            mode,
            max_sites: 100_000,
            sites: HashMap::new(),
            order: BTreeMap::new(),
            clock: 0,
        }
    }

    /// Caps the number of sites held; past it the least recently parsed is dropped.
    pub fn with_max_sites(mut self, max_sites: usize) -> RobotRules {
        self.max_sites = max_sites.max(1);
        self
    }

    /// The robot's agent string.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// Records the robots.txt fetched from `robots_url`; it then governs every URL
    /// with the same scheme, host and port. `fresh_until` is when it expires.
    ///
    /// # Errors
    /// [`RobotsError`] if `robots_url` is not a URL with a host.
    pub fn parse(
        &mut self,
        robots_url: &str,
        bytes: &[u8],
        fresh_until: Option<Instant>,
    ) -> Result<(), RobotsError> {
        let url = Url::parse(robots_url).map_err(|_| RobotsError::InvalidUrl)?;
        let key = HostKey::of(&url).ok_or(RobotsError::NoHost)?;
        let rules = Rules::parse(bytes, &self.agent, self.mode);
        self.clock += 1;
        self.order.insert(self.clock, key.clone());
        if let Some((old, _)) = self
            .sites
            .insert(key, (self.clock, Site { rules, fresh_until }))
        {
            self.order.remove(&old);
        }
        while self.sites.len() > self.max_sites {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.sites.remove(&oldest);
        }
        Ok(())
    }

    fn site(&self, url: &str) -> Option<(&Site, Url)> {
        let url = Url::parse(url).ok()?;
        let key = HostKey::of(&url)?;
        Some((&self.sites.get(&key)?.1, url))
    }

    /// Whether the robot may fetch `url`, ignoring expiry.
    pub fn allowed(&self, url: &str) -> Answer<'_> {
        match self.site(url) {
            Some((site, parsed)) => Answer::Decided(site.rules.decide(parsed.as_str())),
            None => Answer::Unknown,
        }
    }

    /// Whether the robot may fetch `url` at `now`: [`Answer::Expired`] once the
    /// site's `fresh_until` has passed.
    pub fn allowed_at(&self, url: &str, now: Instant) -> Answer<'_> {
        match self.site(url) {
            Some((site, _)) if site.fresh_until.is_some_and(|t| now >= t) => Answer::Expired,
            Some((site, parsed)) => Answer::Decided(site.rules.decide(parsed.as_str())),
            None => Answer::Unknown,
        }
    }

    /// When the rules of `url`'s site expire.
    pub fn fresh_until(&self, url: &str) -> Option<Instant> {
        self.site(url)?.0.fresh_until
    }

    /// The crawl-delay of `url`'s site (uncapped).
    pub fn crawl_delay(&self, url: &str) -> Option<Duration> {
        self.site(url)?.0.rules.crawl_delay()
    }

    /// The compiled rules of `url`'s site.
    pub fn rules(&self, url: &str) -> Option<&Rules> {
        Some(&self.site(url)?.0.rules)
    }

    /// Sites held.
    pub fn len(&self) -> usize {
        self.sites.len()
    }

    /// Whether no site is held.
    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_sites() {
        let mut rr = RobotRules::new("Trawl/0.1");
        rr.parse(
            "http://a.example/robots.txt",
            b"User-agent: *\nDisallow: /private\n",
            None,
        )
        .unwrap();
        rr.parse(
            "https://b.example:8443/robots.txt",
            b"User-agent: trawl\nDisallow: /\n",
            None,
        )
        .unwrap();
        assert_eq!(
            rr.allowed("http://a.example/private/x").is_allowed(),
            Some(false)
        );
        assert_eq!(
            rr.allowed("http://a.example/public").is_allowed(),
            Some(true)
        );
        assert_eq!(
            rr.allowed("https://b.example:8443/anything").is_allowed(),
            Some(false)
        );
        assert!(
            matches!(rr.allowed("https://b.example/anything"), Answer::Unknown),
            "other port"
        );
        assert!(matches!(rr.allowed("http://c.example/"), Answer::Unknown));
        assert_eq!(
            rr.allowed("http://a.example/robots.txt").is_allowed(),
            Some(true)
        );
        assert_eq!(
            rr.parse("not a url", b"", None),
            Err(RobotsError::InvalidUrl)
        );
        assert_eq!(
            rr.parse("data:text/plain,x", b"", None),
            Err(RobotsError::NoHost)
        );
    }

    #[test]
    fn expiry() {
        let now = Instant::now();
        let mut rr = RobotRules::new("trawl");
        rr.parse(
            "http://a.example/robots.txt",
            b"",
            Some(now + Duration::from_secs(10)),
        )
        .unwrap();
        assert_eq!(
            rr.allowed_at("http://a.example/x", now).is_allowed(),
            Some(true)
        );
        assert!(matches!(
            rr.allowed_at("http://a.example/x", now + Duration::from_secs(10)),
            Answer::Expired
        ));
    }

    #[test]
    fn bounded_sites() {
        let mut rr = RobotRules::new("trawl").with_max_sites(3);
        for i in 0..10 {
            rr.parse(&format!("http://h{i}.example/robots.txt"), b"", None)
                .unwrap();
        }
        assert_eq!(rr.len(), 3);
        assert!(matches!(
            rr.allowed("http://h9.example/"),
            Answer::Decided(_)
        ));
        assert!(matches!(rr.allowed("http://h0.example/"), Answer::Unknown));
    }
}
