//! Print manifest sizes and timing for a configuration (development aid).
use std::time::Instant;

use synthweb::manifest::{compute, ManifestPolicy};
use synthweb::{Profiles, Site, SiteConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let hosts: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    let profiles = Profiles::parse(args.get(2).map_or("default", String::as_str)).expect("profile");
    let budget: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let site = Site::new(SiteConfig {
        hosts,
        profiles,
        ..SiteConfig::default()
    })
    .expect("config");
    let started = Instant::now();
    let policy = ManifestPolicy {
        max_pages_per_host: budget,
        ..ManifestPolicy::default()
    };
    match compute(&site, &policy) {
        Ok(m) => {
            let mut per_host = std::collections::HashMap::<String, usize>::new();
            for u in &m.must {
                let h = u.split('/').nth(2).unwrap_or("").to_owned();
                *per_host.entry(h).or_default() += 1;
            }
            let mut v: Vec<_> = per_host.into_iter().collect();
            v.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
            println!(
                "hosts {hosts} M {} F {} in {:?}; largest hosts {:?}",
                m.must.len(),
                m.forbidden.len(),
                started.elapsed(),
                &v[..v.len().min(8)]
            );
        }
        Err(e) => println!("error after {:?}: {e}", started.elapsed()),
    }
}
