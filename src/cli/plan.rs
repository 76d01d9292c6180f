//! `trawl plan`: the memory and disk a crawl of a given size needs, worked out in
//! advance from the presence-bit model and stated assumptions.

use std::process::ExitCode;

use clap::Args;
use trawl::bytesize::human_bytes;
use trawl::seen::{model, Sizing, HEADER_BYTES};

use super::count::{parse_count, parse_probability};

/// Work out the memory and disk a crawl needs before starting it.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Distinct URLs the crawl is expected to discover (e.g. 5e9).
    #[arg(long, value_parser = parse_count)]
    urls: u64,
    /// Target false-positive rate of the URL seen set when it holds --urls URLs.
    #[arg(long, default_value = "1e-3", value_parser = parse_probability)]
    fp: f64,
    /// Pages the crawl will fetch (defaults to --urls: every discovered URL fetched).
    #[arg(long, value_parser = parse_count)]
    pages: Option<u64>,
    /// Target false-positive rate of the content-fingerprint set.
    #[arg(long, default_value = "1e-6", value_parser = parse_probability)]
    content_fp: f64,
    /// Assumed bytes per queued URL in the on-disk frontier (compressed). An estimate
    /// until the frontier's segment format lands.
    #[arg(long, default_value_t = 50)]
    frontier_bytes_per_url: u64,
    /// Assumed average bytes of WARC output per fetched page (gzip'd request, response
    /// and metadata records).
    #[arg(long, default_value_t = 30_000)]
    warc_bytes_per_page: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `trawl plan`.
pub fn run(args: PlanArgs) -> anyhow::Result<ExitCode> {
    if args.urls == 0 {
        anyhow::bail!("--urls must be at least 1");
    }
    let pages = args.pages.unwrap_or(args.urls);
    let urls = args.urls as f64;
    let bits = Sizing::for_fp(args.urls, args.fp).ok_or_else(|| {
        anyhow::anyhow!("cannot size a set for {} URLs at fp {}", args.urls, args.fp)
    })?;
    let bits_bytes = (bits.bit_bytes() + HEADER_BYTES) as f64;
    let model_fp = model::false_positive_rate(urls, bits.blocks, bits.k);
    let lost = model::expected_lost(urls, bits.blocks, bits.k);
    let lossless = Sizing::for_loss(args.urls, 0.5);
    let content = if pages > 0 {
        Sizing::for_fp(pages, args.content_fp)
    } else {
        None
    };
    let content_bytes = content.map_or(0.0, |s| (s.bit_bytes() + HEADER_BYTES) as f64);
    let frontier_bytes = urls * args.frontier_bytes_per_url as f64;
    let warc_bytes = pages as f64 * args.warc_bytes_per_page as f64;
    // Disk: live bits + the last snapshot + the snapshot being written.
    let seen_disk = 3.0 * (bits_bytes + content_bytes);
    let ram = bits_bytes + content_bytes;
    let disk = seen_disk + frontier_bytes + warc_bytes;

    if args.json {
        let v = serde_json::json!({
            "urls": args.urls,
            "pages": pages,
            "fp": args.fp,
            "presence_bits_bytes": bits_bytes,
            "presence_bits_per_url": bits.bits() as f64 / urls,
            "presence_k": bits.k,
            "presence_model_fp": model_fp,
            "presence_expected_lost_urls": lost,
            "lossless_presence_bits_bytes": lossless.map(|s| (s.bit_bytes() + HEADER_BYTES) as f64),
            "lossless_bits_per_url": lossless.map(|s| s.bits() as f64 / urls),
            "content_fp": args.content_fp,
            "content_set_bytes": content_bytes,
            "frontier_bytes_per_url": args.frontier_bytes_per_url,
            "frontier_disk_bytes": frontier_bytes,
            "warc_bytes_per_page": args.warc_bytes_per_page,
            "warc_disk_bytes": warc_bytes,
            "ram_bytes": ram,
            "disk_bytes": disk,
        });
        println!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "crawl plan: {} URLs discovered, {} pages fetched",
        args.urls, pages
    );
    println!();
    println!(
        "presence bits (URL seen set, fp {:e} at {} URLs)",
        args.fp, args.urls
    );
    println!(
        "  size                {:>12}  ({:.2} bits/URL, k = {}, 512-bit blocks)",
        human_bytes(bits_bytes, 2),
        bits.bits() as f64 / urls,
        bits.k
    );
    println!("  model fp when full  {model_fp:>12.3e}");
    println!("  URLs lost (expect.) {lost:>12.1}  (sum of the fp at each new URL over the crawl)");
    if let Some(s) = lossless {
        println!(
            "  lossless instead    {:>12}  ({:.1} bits/URL, k = {}: < 0.5 URL lost in expectation)",
            human_bytes((s.bit_bytes() + HEADER_BYTES) as f64, 2),
            s.bits() as f64 / urls,
            s.k
        );
    }
    println!(
        "content fingerprints (fp {:e} at {} pages)",
        args.content_fp, pages
    );
    println!(
        "  size                {:>12}",
        human_bytes(content_bytes, 2)
    );
    println!(
        "frontier on disk (assumed {} bytes per queued URL, all URLs queued at once)",
        args.frontier_bytes_per_url
    );
    println!(
        "  size                {:>12}  (estimate until the frontier format lands)",
        human_bytes(frontier_bytes, 2)
    );
    println!(
        "WARC output (assumed {} bytes per page)",
        args.warc_bytes_per_page
    );
    println!("  size                {:>12}", human_bytes(warc_bytes, 2));
    println!();
    println!(
        "RAM  (presence bits + fingerprints resident) {:>12}",
        human_bytes(ram, 2)
    );
    println!(
        "disk (sets x3 for live + 2 snapshots, frontier, WARC) {:>12}",
        human_bytes(disk, 2)
    );
    Ok(ExitCode::SUCCESS)
}
