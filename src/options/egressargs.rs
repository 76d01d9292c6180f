//! Proxy flags shared by `trawl fetch` and `trawl crawl` (issue 29): which proxy for
//! which URL (`--proxy`, `--proxy-rules`, `--noproxy`, the environment as curl reads
//! it), where credentials come from, and the per-proxy cap. docs/network.md gives each
//! with curl's and wget's names beside it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use crate::net::egress::book::{Egress, DEFAULT_PER_PROXY_CONNECTIONS};
use crate::net::egress::rules::{RouteSpec, Routes};
use crate::net::egress::secret::{CredSource, Credentials, Secret};
use crate::net::egress::url::ProxyUrl;
use crate::net::FetcherConfig;

/// Flags that route requests through HTTP or SOCKS5 proxies.
#[derive(Debug, Args)]
pub struct EgressArgs {
    /// Send every request through this proxy (curl `-x`): `http://host:port`,
    /// `socks5://` (trawl resolves names) or `socks5h://` (the proxy does). Credentials
    /// in the URL are used but never recorded; prefer --proxy-user-file.
    #[arg(long, value_name = "URL")]
    pub proxy: Option<String>,
    /// Per-host routes: lines of `PATTERN ROUTE` (host, `.suffix`, `*`, IP or CIDR; a
    /// proxy URL, a route name, or `direct`); the first match wins (docs/network.md).
    #[arg(long, value_name = "FILE")]
    pub proxy_rules: Option<PathBuf>,
    /// Hosts that bypass --proxy or the environment's proxies, comma separated (curl's
    /// `--noproxy`; replaces NO_PROXY).
    #[arg(long, value_name = "LIST")]
    pub noproxy: Option<String>,
    /// Ignore the proxy environment variables (http_proxy, https_proxy, all_proxy,
    /// no_proxy and their upper-case forms as curl reads them).
    #[arg(long)]
    pub no_proxy_env: bool,
    /// Proxy credentials as one `user:password` line in this file, for proxies whose URL
    /// carries none (kept out of argv, logs and records; the path is recorded).
    #[arg(long, value_name = "FILE", conflicts_with = "proxy_user_env")]
    pub proxy_user_file: Option<PathBuf>,
    /// Proxy credentials from this environment variable, holding `user:password`
    /// (the variable's name is recorded, never its value).
    #[arg(long, value_name = "NAME")]
    pub proxy_user_env: Option<String>,
    /// Connections open to one proxy at most, across the process (default 256).
    /// `--per-ip-connections` does not apply to a proxy's address.
    #[arg(long, value_name = "N")]
    pub per_proxy_connections: Option<u32>,
    /// Deadline for a proxy handshake (the connect to the proxy, CONNECT or SOCKS), in
    /// milliseconds.
    #[arg(long, value_name = "MS")]
    pub proxy_timeout_ms: Option<u64>,
    /// A proxy that stays down this long (seconds) stops pausing its hosts: their URLs
    /// are logged `proxy-unreachable` and the crawl can end (default 600).
    #[arg(long, value_name = "SECS")]
    pub proxy_down_secs: Option<u64>,
    /// Where the `--proxy` credentials came from when they are not recorded: start.json
    /// holds `url-not-recorded` for credentials given in the URL, so a resume without
    /// them stops with a clear message instead of meeting 407s.
    #[arg(long, value_name = "SOURCE", hide = true)]
    pub proxy_credentials: Option<String>,
}

impl EgressArgs {
    /// Builds the routes and applies them, with the cap and deadline, to `cfg`. With no
    /// proxy anywhere, `cfg.egress` stays `None`.
    ///
    /// # Errors
    /// An unreadable or malformed rules file or credentials source, a proxy URL or
    /// variable that does not parse, an `https://` proxy, a proxy name that does not
    /// resolve, or a value of 0.
    pub fn apply(&self, cfg: &mut FetcherConfig) -> anyhow::Result<()> {
        if self.per_proxy_connections == Some(0) {
            anyhow::bail!(
                "--per-proxy-connections 0: nothing could go through a proxy; give at least 1"
            );
        }
        if self.proxy_timeout_ms == Some(0) {
            anyhow::bail!(
                "--proxy-timeout-ms 0: a deadline of 0 ms fails every fetch; give at least 1"
            );
        }
        if let Some(ms) = self.proxy_timeout_ms {
            cfg.deadlines.proxy_timeout = Duration::from_millis(ms);
        }
        let rules = match &self.proxy_rules {
            Some(path) => {
                let text = fs::read_to_string(path)
                    .with_context(|| format!("--proxy-rules {}: cannot read", path.display()))?;
                Some((path.display().to_string(), text))
            }
            None => None,
        };
        let env_lookup = |name: &str| std::env::var(name).ok();
        let spec = RouteSpec {
            rules: rules.as_ref().map(|(f, t)| (f.as_str(), t.as_str())),
            proxy: self.proxy.as_deref(),
            noproxy: self.noproxy.as_deref(),
            env: (!self.no_proxy_env).then_some(&env_lookup as &dyn Fn(&str) -> Option<String>),
        };
        if self.proxy_credentials.as_deref() == Some(URL_NOT_RECORDED)
            && self.proxy_user_file.is_none()
            && self.proxy_user_env.is_none()
            && self
                .proxy
                .as_deref()
                .is_some_and(|p| ProxyUrl::parse(p, "--proxy").is_ok_and(|u| u.auth.is_none()))
        {
            anyhow::bail!(
                "the proxy credentials were given in the --proxy URL and are not recorded (start.json); \
                 give --proxy again with them, or use --proxy-user-file or --proxy-user-env"
            );
        }
        let mut routes = Routes::build(spec)?;
        if !routes.has_proxies() {
            if self.proxy_user_file.is_some() || self.proxy_user_env.is_some() {
                eprintln!(
                    "trawl: warning: proxy credentials given, but no route goes through a proxy"
                );
            }
            return Ok(());
        }
        if self.proxy.is_none() && self.proxy_rules.is_none() {
            // Routes from the environment alone: said once, so a proxy variable set for
            // something else is not followed silently.
            let labels: Vec<&str> = routes
                .routes()
                .iter()
                .filter(|r| r.proxy.is_some())
                .map(|r| r.label.as_str())
                .collect();
            eprintln!(
                "trawl: requests go through {} as the proxy environment variables say \
                 (http_proxy, https_proxy, all_proxy; no_proxy); --no-proxy-env ignores them",
                labels.join(", ")
            );
        }
        if let Some(creds) = self.credentials()? {
            routes.set_missing_credentials(&creds);
        }
        let per_proxy = self
            .per_proxy_connections
            .unwrap_or(DEFAULT_PER_PROXY_CONNECTIONS);
        let mut egress = Egress::new(routes, per_proxy)?;
        if let Some(secs) = self.proxy_down_secs {
            egress = egress.with_down_limit(Duration::from_secs(secs));
        }
        cfg.egress = Some(Arc::new(egress));
        Ok(())
    }

    /// The credentials of `--proxy-user-file` or `--proxy-user-env`, if given.
    fn credentials(&self) -> anyhow::Result<Option<Credentials>> {
        if let Some(path) = &self.proxy_user_file {
            let text = fs::read_to_string(path)
                .with_context(|| format!("--proxy-user-file {}: cannot read", path.display()))?;
            warn_if_readable_by_others(path);
            let abs = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            let line = text.lines().next().unwrap_or_default();
            return split_user_pass(line, CredSource::File(abs))
                .map(Some)
                .with_context(|| format!("--proxy-user-file {}", path.display()));
        }
        if let Some(name) = &self.proxy_user_env {
            let value = std::env::var(name)
                .with_context(|| format!("--proxy-user-env {name}: the variable is not set"))?;
            return split_user_pass(&value, CredSource::Env(name.clone()))
                .map(Some)
                .with_context(|| format!("--proxy-user-env {name}"));
        }
        Ok(None)
    }
}

/// `user:password` (the first colon splits; the user may not be empty).
fn split_user_pass(line: &str, source: CredSource) -> anyhow::Result<Credentials> {
    let line = line.trim_end_matches(['\r', '\n']);
    let Some((user, pass)) = line.split_once(':') else {
        anyhow::bail!("expected one `user:password` line");
    };
    if user.is_empty() {
        anyhow::bail!("the user name is empty");
    }
    Ok(Credentials {
        user: user.to_owned(),
        pass: Secret::new(pass.as_bytes().to_vec()),
        source,
    })
}

fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            eprintln!(
                "trawl: warning: --proxy-user-file {}: readable by group or others (chmod 600 it)",
                path.display()
            );
        }
    }
}

/// The `--proxy-credentials` value start.json records for credentials given in a
/// `--proxy` URL.
pub const URL_NOT_RECORDED: &str = "url-not-recorded";

/// The form of a `--proxy` value `start.json` records: the URL without its
/// credentials (a resume reads them again from a file or variable, or is given
/// `--proxy` again), and whether it had some.
pub fn recordable_proxy(raw: &str) -> (String, bool) {
    match ProxyUrl::parse(raw, "--proxy") {
        Ok(url) => (url.to_string(), url.auth.is_some()),
        Err(_) => (crate::net::egress::url::redact(raw), raw.contains('@')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_pass_splits_at_the_first_colon_and_never_shows_the_password() {
        let c = split_user_pass("u:p:w\n", CredSource::Env("P".into())).expect("creds");
        assert_eq!(c.user, "u");
        assert_eq!(c.pass.expose(), b"p:w");
        assert!(split_user_pass("nopass", CredSource::Env("P".into())).is_err());
        assert!(split_user_pass(":p", CredSource::Env("P".into())).is_err());
    }

    #[test]
    fn a_recorded_proxy_has_no_credentials() {
        assert_eq!(
            recordable_proxy("http://u:secret@proxy.test:3128"),
            ("http://proxy.test:3128".to_owned(), true)
        );
        assert_eq!(
            recordable_proxy("socks5h://p.test"),
            ("socks5h://p.test:1080".to_owned(), false)
        );
        assert!(!recordable_proxy("bogus://u:secret@x").0.contains("secret"));
    }
}
