//! A host's robots.txt rules as the manifest's crawler obeys them.

use std::collections::HashMap;

use crate::robots::{self, Group, RobotsFetch, RuleKind};

use super::ManifestPolicy;

/// One host's robots.txt for the agent, indexed so a URL is judged in time linear in
/// its length: literal patterns (no `*`, no final `$`) in a map probed with each prefix
/// of the URL, wildcard patterns matched one by one. Same semantics as
/// [`robots::evaluate`] (RFC 9309: longest match wins, `allow` wins a tie), which the
/// catalogue's `Large` entry (12,000 rules) makes too slow to call per URL.
#[derive(Debug)]
pub(super) enum HostRules {
    AllowAll,
    DisallowAll,
    Rules {
        literal: HashMap<String, RuleKind>,
        wildcard: Vec<(RuleKind, String)>,
    },
}

impl HostRules {
    pub(super) fn new(fetch: &RobotsFetch, policy: &ManifestPolicy) -> Self {
        match fetch {
            RobotsFetch::Rules(groups) | RobotsFetch::Redirect { target: groups, .. } => {
                Self::from_groups(groups, &policy.agent)
            }
            RobotsFetch::NotFound(_) => Self::AllowAll,
            RobotsFetch::Unauthorized(_) if policy.robots_4xx_disallow => Self::DisallowAll,
            RobotsFetch::Unauthorized(_) => Self::AllowAll,
            RobotsFetch::ServerError(_) => Self::DisallowAll,
        }
    }

    fn from_groups(groups: &[Group], agent: &str) -> Self {
        let token = robots::product_token(agent);
        let named = groups.iter().any(|g| g.agents.contains(&token));
        let mut literal: HashMap<String, RuleKind> = HashMap::new();
        let mut wildcard = Vec::new();
        let chosen = groups.iter().filter(|g| {
            g.agents
                .iter()
                .any(|a| if named { *a == token } else { a == "*" })
        });
        for (kind, pattern) in chosen.flat_map(|g| g.rules.iter()) {
            if pattern.is_empty() {
                continue;
            }
            if pattern.contains('*') || pattern.ends_with('$') {
                wildcard.push((*kind, pattern.clone()));
            } else {
                let slot = literal.entry(pattern.clone()).or_insert(*kind);
                if *kind == RuleKind::Allow {
                    *slot = RuleKind::Allow;
                }
            }
        }
        Self::Rules { literal, wildcard }
    }

    pub(super) fn allows(&self, path_q: &str) -> bool {
        if path_q == "/robots.txt" {
            return true;
        }
        let (literal, wildcard) = match self {
            Self::AllowAll => return true,
            Self::DisallowAll => return false,
            Self::Rules { literal, wildcard } => (literal, wildcard),
        };
        let mut best: Option<(usize, RuleKind)> = None;
        let mut consider = |len: usize, kind: RuleKind| {
            best = match best {
                Some((l, k)) if l > len || (l == len && k == RuleKind::Allow) => Some((l, k)),
                _ => Some((len, kind)),
            };
        };
        if !literal.is_empty() {
            for (end, _) in path_q.char_indices().skip(1).chain([(path_q.len(), ' ')]) {
                if let Some(kind) = path_q.get(..end).and_then(|prefix| literal.get(prefix)) {
                    consider(end, *kind);
                }
            }
        }
        for (kind, pattern) in wildcard {
            if robots::pattern_matches(pattern.as_bytes(), path_q.as_bytes()) {
                consider(pattern.len(), *kind);
            }
        }
        best.is_none_or(|(_, kind)| kind == RuleKind::Allow)
    }
}
