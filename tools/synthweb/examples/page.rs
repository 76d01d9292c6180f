//! Print what the generator answers for one URL, and its links:
//! `cargo run -p synthweb --example page -- 3 /p/5`
use synthweb::{Scheme, Site, SiteConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let host: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let target = args.get(2).cloned().unwrap_or_else(|| "/".to_owned());
    let cfg = SiteConfig {
        profiles: synthweb::Profiles::parse("traps,hostile").unwrap_or_default(),
        ..SiteConfig::default()
    };
    let Ok(site) = Site::new(cfg) else { return };
    let v = site.page(Scheme::Http, host, &target);
    println!(
        "status {} headers {:?} body {} bytes hostile {:?} depth {:?} redirect {:?}",
        v.response.status,
        v.response.headers,
        v.response.body.len(),
        v.response.hostile,
        v.trap_depth,
        v.redirect_to
    );
    for l in &v.links {
        println!("{:?} {:?} {:?} -> {:?}", l.element, l.kind, l.href, l.url);
    }
    if std::env::var_os("BODY").is_some() {
        println!("{}", String::from_utf8_lossy(&v.response.body));
    }
}
