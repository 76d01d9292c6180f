//! Time page generation (no cache, no sockets):
//! `cargo run --release -p synthweb --example gen_speed -- 20480 2000`
use std::time::Instant;

use synthweb::{Scheme, Site, SiteConfig, Span};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(20_480);
    let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2_000);
    let cfg = SiteConfig {
        page_bytes: Span {
            min: bytes,
            max: bytes,
        },
        fixed_size: true,
        pages_per_host: Span { min: 200, max: 200 },
        ..SiteConfig::default()
    };
    let Ok(site) = Site::new(cfg) else { return };
    let start = Instant::now();
    let mut total = 0usize;
    for i in 0..n {
        let v = site.page(Scheme::Http, i % 100, &format!("/p/{}", 1 + i % 199));
        total += v.response.body.len();
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{n} pages, {total} bytes in {secs:.3} s: {:.1} us/page, {:.0} MB/s",
        secs * 1e6 / f64::from(n),
        total as f64 / secs / 1e6
    );
}
