//! The manifest options of the `synthweb` command line: the policy they give and
//! writing the manifest file once the ports are bound.

use std::fs::File;
use std::io;
use std::path::PathBuf;

use crate::config::SiteConfig;
use crate::formats;
use crate::site::Site;

use super::{compute, ManifestError, ManifestPolicy};

/// The manifest options of the server command line (`--manifest FILE` and the policy it
/// is computed for).
#[derive(Debug, Clone, clap::Args)]
pub struct ManifestArgs {
    /// Write the ground-truth manifest (M and F URLs) here, once the ports are bound.
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// Robots agent (product token) the manifest's crawler obeys robots.txt as.
    #[arg(long, default_value = "trawl", value_name = "NAME")]
    pub manifest_agent: String,
    /// How the manifest's crawler treats a robots.txt answered 401/403: allow (RFC 9309)
    /// or disallow.
    #[arg(long, default_value = "allow", value_name = "allow|disallow")]
    pub manifest_robots_4xx: String,
    /// The manifest's per-host budget: most requests per host, robots files not counted.
    #[arg(long, default_value_t = 2_000, value_name = "N")]
    pub manifest_max_pages_per_host: u32,
    /// The manifest's URL length limit in bytes.
    #[arg(long, default_value_t = 2_048, value_name = "BYTES")]
    pub manifest_max_url_bytes: usize,
    /// The manifest's redirect chain cap.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub manifest_max_redirects: u32,
}

impl ManifestArgs {
    /// The validated policy.
    ///
    /// # Errors
    /// [`ManifestError::Policy`] for a `--manifest-robots-4xx` other than allow/disallow.
    pub fn policy(&self) -> Result<ManifestPolicy, ManifestError> {
        let robots_4xx_disallow = match self.manifest_robots_4xx.as_str() {
            "allow" => false,
            "disallow" => true,
            _ => {
                return Err(ManifestError::Policy(
                    "--manifest-robots-4xx must be allow or disallow",
                ))
            }
        };
        Ok(ManifestPolicy {
            agent: self.manifest_agent.clone(),
            robots_4xx_disallow,
            max_pages_per_host: self.manifest_max_pages_per_host,
            max_url_bytes: self.manifest_max_url_bytes,
            max_redirects: self.manifest_max_redirects,
        })
    }

    /// When `--manifest` is given, compute the manifest of the web `site` describes as
    /// served on the bound ports, and write it (to a temporary file renamed into place, so
    /// a reader never sees half a manifest).
    ///
    /// # Errors
    /// An invalid policy or configuration, an ambiguous manifest, or an I/O error.
    pub fn write(
        &self,
        mut site: SiteConfig,
        http_port: u16,
        tls_port: Option<u16>,
    ) -> Result<(), ManifestError> {
        let Some(path) = &self.manifest else {
            return Ok(());
        };
        site.http_port = http_port;
        site.tls_port = tls_port;
        let site = Site::new(site)?;
        let manifest = compute(&site, &self.policy()?)?;
        let mut tmp = path.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut out = io::BufWriter::new(File::create(&tmp)?);
        formats::write_manifest(&mut out, &manifest)?;
        out.into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    }
}
