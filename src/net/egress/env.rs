//! The proxy environment variables, read as curl 7.88 reads them (notes §10; the table
//! `tests/data/proxy_env/table.json` is checked against both this module and
//! `/usr/bin/curl` by `tests/proxy_env.rs`).
//!
//! - `http://` URLs: `http_proxy` (lower case only: an upper-case `HTTP_PROXY` can be
//!   set by a CGI request header, "httpoxy"), then `all_proxy`, then `ALL_PROXY`.
//! - `https://` URLs: `https_proxy`, then `HTTPS_PROXY`, then `all_proxy`, `ALL_PROXY`.
//! - The bypass list: `no_proxy`, then `NO_PROXY`.
//!
//! An empty value counts as unset. The environment is injected as a function, so the
//! reading is a pure function of it.

use super::url::{redact, ProxyUrl, ProxyUrlError};

/// The environment, as a function from a variable's name to its value.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The variables consulted for `http://` URLs, in order.
pub const HTTP_VARS: &[&str] = &["http_proxy", "all_proxy", "ALL_PROXY"];
/// The variables consulted for `https://` URLs, in order.
pub const HTTPS_VARS: &[&str] = &["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"];
/// The bypass list's variables, in order.
pub const NO_PROXY_VARS: &[&str] = &["no_proxy", "NO_PROXY"];

/// What the environment asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvProxies {
    /// The proxy for `http://` URLs.
    pub http: Option<ProxyUrl>,
    /// The proxy for `https://` URLs.
    pub https: Option<ProxyUrl>,
    /// The bypass list, unparsed.
    pub no_proxy: Option<String>,
}

/// A proxy variable whose value is not a usable proxy URL.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{var}={shown}: {source}")]
pub struct EnvError {
    /// The variable.
    pub var: &'static str,
    /// Its value, with any userinfo replaced by `***@`.
    pub shown: String,
    /// Why.
    pub source: ProxyUrlError,
}

impl EnvProxies {
    /// Reads the variables through `get` (`std::env::var(name).ok()` in the binary, a map
    /// in tests). Only the variables that decide a route are parsed: a broken
    /// `ALL_PROXY` shadowed by `http_proxy` and `https_proxy` is never read, as in curl.
    ///
    /// # Errors
    /// [`EnvError`] for a deciding variable that is not a proxy URL.
    pub fn read(get: Lookup<'_>) -> Result<Self, EnvError> {
        Ok(Self {
            http: proxy(get, HTTP_VARS)?,
            https: proxy(get, HTTPS_VARS)?,
            no_proxy: no_proxy(get),
        })
    }
}

/// The bypass list alone (`--proxy` given: the proxy variables are not read, so a
/// broken one cannot stop the crawl).
pub fn no_proxy(get: Lookup<'_>) -> Option<String> {
    first(get, NO_PROXY_VARS).map(|(_, v)| v)
}

fn first(get: Lookup<'_>, vars: &[&'static str]) -> Option<(&'static str, String)> {
    vars.iter()
        .find_map(|&var| get(var).filter(|v| !v.is_empty()).map(|v| (var, v)))
}

fn proxy(get: Lookup<'_>, vars: &[&'static str]) -> Result<Option<ProxyUrl>, EnvError> {
    let Some((var, value)) = first(get, vars) else {
        return Ok(None);
    };
    ProxyUrl::parse(&value, &format!("env:{var}"))
        .map(Some)
        .map_err(|source| EnvError {
            var,
            shown: redact(&value),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::super::url::ProxyKind;
    use super::*;

    const P: &str = "http://127.0.0.1:9";

    #[test]
    fn all_proxy_may_be_socks5h() {
        let get =
            |name: &str| (name == "all_proxy").then(|| "socks5h://u:pw@127.0.0.2:9".to_owned());
        let env = EnvProxies::read(&get).expect("reads");
        let http = env.http.expect("all_proxy for http");
        assert_eq!(http.kind, ProxyKind::Socks5h);
        assert_eq!(
            http.auth.map(|a| a.source.to_string()).as_deref(),
            Some("url:env:all_proxy")
        );
        assert_eq!(env.https.map(|p| p.kind), Some(ProxyKind::Socks5h));
    }

    #[test]
    fn a_bad_value_names_its_variable_not_its_password() {
        let get = |name: &str| (name == "HTTPS_PROXY").then(|| "socks4://u:pw@h".to_owned());
        let err = EnvProxies::read(&get).expect_err("socks4");
        assert_eq!(err.var, "HTTPS_PROXY");
        let shown = err.to_string();
        assert!(shown.starts_with("HTTPS_PROXY=socks4://***@h: "), "{shown}");
        // Shadowed variables are never parsed.
        let get = |name: &str| match name {
            "http_proxy" | "https_proxy" => Some(P.to_owned()),
            "ALL_PROXY" => Some("::bad::".to_owned()),
            _ => None,
        };
        assert!(EnvProxies::read(&get).is_ok());
    }
}
