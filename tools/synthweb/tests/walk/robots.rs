//! The walker's own robots.txt parser and matcher (RFC 9309), for agent `trawl`.

/// Rules of one origin for agent `trawl`.
#[derive(Debug, Clone)]
pub enum Robots {
    AllowAll,
    DisallowAll,
    Rules(Vec<(bool, String)>),
}

impl Robots {
    pub fn allows(&self, path_and_query: &str) -> bool {
        match self {
            Robots::AllowAll => true,
            Robots::DisallowAll => path_and_query == "/robots.txt",
            Robots::Rules(rules) => {
                if path_and_query == "/robots.txt" {
                    return true;
                }
                let mut best: Option<(usize, bool)> = None;
                for (allow, pattern) in rules {
                    if pattern.is_empty() || !wildcard_match(pattern, path_and_query) {
                        continue;
                    }
                    let len = pattern.len();
                    best = match best {
                        Some((bl, ba)) if bl > len || (bl == len && ba) => Some((bl, ba)),
                        _ => Some((len, *allow)),
                    };
                }
                best.is_none_or(|(_, allow)| allow)
            }
        }
    }
}

/// A robots.txt group: its agents, and its rules as (is allow, pattern).
type RobotsGroup = (Vec<String>, Vec<(bool, String)>);

/// Parse a robots.txt body for agent `agent` (lower-case product token).
pub fn parse_robots(body: &[u8], agent: &str) -> Robots {
    let text =
        String::from_utf8_lossy(body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body)).into_owned();
    // Groups: (agents, rules).
    let mut groups: Vec<RobotsGroup> = Vec::new();
    let mut in_agents = false;
    for line in text.split(['\r', '\n']) {
        let line = line.split('#').next().unwrap_or("");
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim_matches([' ', '\t']).to_ascii_lowercase();
        let value = value.trim_matches([' ', '\t']).to_owned();
        match key.as_str() {
            "user-agent" => {
                let token: String = value
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic() || *c == '_' || *c == '-' || *c == '*')
                    .collect::<String>()
                    .to_ascii_lowercase();
                if !in_agents {
                    groups.push((Vec::new(), Vec::new()));
                    in_agents = true;
                }
                if let Some(g) = groups.last_mut() {
                    g.0.push(token);
                }
            }
            "allow" | "disallow" => {
                in_agents = false;
                if let Some(g) = groups.last_mut() {
                    g.1.push((key == "allow", value));
                }
            }
            _ => {}
        }
    }
    let named: Vec<_> = groups
        .iter()
        .filter(|g| g.0.iter().any(|a| a == agent))
        .collect();
    let chosen = if named.is_empty() {
        groups
            .iter()
            .filter(|g| g.0.iter().any(|a| a == "*"))
            .collect()
    } else {
        named
    };
    let rules: Vec<(bool, String)> = chosen
        .into_iter()
        .flat_map(|g| g.1.iter().cloned())
        .collect();
    Robots::Rules(rules)
}

/// RFC 9309 pattern match by dynamic programming (prefix match, `*`, final `$`).
pub fn wildcard_match(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let p = pattern.as_bytes();
    let s = path.as_bytes();
    // reach[j]: pattern prefix consumed so far can end at path position j.
    let mut reach = vec![false; s.len() + 1];
    reach[0] = true;
    for &pc in p {
        let mut next = vec![false; s.len() + 1];
        if pc == b'*' {
            let mut any = false;
            for j in 0..=s.len() {
                any |= reach[j];
                next[j] = any;
            }
        } else {
            for j in 0..s.len() {
                next[j + 1] = reach[j] && s[j] == pc;
            }
        }
        reach = next;
    }
    if anchored {
        reach[s.len()]
    } else {
        reach.iter().any(|&r| r)
    }
}
