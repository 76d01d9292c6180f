use super::*;

/// Only flags given are recorded, as `--flag=value` with absolute file paths, and
/// never the seeds, the output or the config file; replayed before new flags, the
/// new ones win.
#[test]
fn recorded_flags_replay_under_the_new_ones() {
    let argv: Vec<String> = [
        "trawl",
        "crawl",
        "--seeds",
        "s.txt",
        "--seed",
        "http://a.test/",
        "--out",
        "o",
        "--hosts-file",
        "hosts.txt",
        "--delay-ms",
        "5",
        "--allow-private-addresses",
        "--resolve",
        "a.test:80:127.0.0.1",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let (_, matches) = parse_crawl_flags(crawl_flags(&argv)).unwrap();
    let recorded = recordable_args(&matches);
    let hosts = std::path::absolute("hosts.txt").unwrap();
    let mut sorted = recorded.clone();
    sorted.sort();
    let mut expected = vec![
        "--allow-private-addresses".to_owned(),
        "--delay-ms=5".to_owned(),
        format!("--hosts-file={}", hosts.display()),
        "--resolve=a.test:80:127.0.0.1".to_owned(),
    ];
    expected.sort();
    assert_eq!(sorted, expected);
    let mut replay = recorded;
    replay.extend([
        "--delay-ms".to_owned(),
        "9".to_owned(),
        "--resume".to_owned(),
        "o".to_owned(),
    ]);
    let (args, _) = parse_crawl_flags(&replay).unwrap();
    assert_eq!(args.delay_ms, 9);
    assert!(args.allow_private_addresses);
    assert_eq!(args.net.hosts_file.as_deref(), Some(hosts.as_path()));
    assert!(args.seeds.is_none() && args.seed.is_empty() && args.out.is_none());
    assert_eq!(output_dir(&args).unwrap(), PathBuf::from("o"));
}

#[test]
fn sizes_parse_with_units() {
    assert_eq!(parse_size("256M").unwrap(), 256 << 20);
    assert_eq!(parse_size("4g").unwrap(), 4 << 30);
    assert_eq!(parse_size("1000").unwrap(), 1000);
    assert_eq!(parse_size("1.5k").unwrap(), 1536);
    assert!(parse_size("12q").is_err());
    assert!(parse_size("-1M").is_err());
}

/// `--warc-dedup-memory`: default an eighth of `--memory` capped at 64 MiB, 0 turns
/// revisits off, and the index's budget comes out of the frontier's RAM.
#[test]
fn warc_dedup_memory_flag() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CrawlArgs,
    }
    let parse = |extra: &[&str]| {
        let mut argv = vec!["trawl", "--seed", "http://a.test/", "--out", "/tmp/x"];
        argv.extend_from_slice(extra);
        config_from(&Cli::try_parse_from(argv).unwrap().args).unwrap()
    };
    let c = parse(&["--memory", "256M"]);
    assert_eq!(c.warc_dedup_bytes, None);
    assert_eq!(c.warc_dedup_budget(), 32 << 20);
    assert_eq!(parse(&["--memory", "4G"]).warc_dedup_budget(), 64 << 20);
    let off = parse(&["--memory", "256M", "--warc-dedup-memory", "0"]);
    assert_eq!(off.warc_dedup_budget(), 0);
    assert!(off.frontier_ram_bytes_per_shard() >= c.frontier_ram_bytes_per_shard());
    let big = parse(&["--warc-dedup-memory", "150M"]);
    assert_eq!(big.warc_dedup_budget(), 150 << 20);
    assert_eq!(parse(&["--no-warc"]).warc_dedup_budget(), 0);
}

/// `--warc-gzip-level`: default 1, the implementation's range accepted, beyond it
/// refused with the range in the message.
#[test]
fn warc_gzip_level_flag() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CrawlArgs,
    }
    let parse = |extra: &[&str]| {
        let mut argv = vec!["trawl", "--seed", "http://a.test/", "--out", "/tmp/x"];
        argv.extend_from_slice(extra);
        config_from(&Cli::try_parse_from(argv).unwrap().args)
    };
    assert_eq!(parse(&[]).unwrap().warc_gzip_level, 1);
    assert_eq!(
        parse(&["--warc-gzip-level", "0"]).unwrap().warc_gzip_level,
        0
    );
    assert_eq!(
        parse(&["--warc-gzip-level", "12"]).unwrap().warc_gzip_level,
        12
    );
    let err = parse(&["--warc-gzip-level", "13"]).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        "--warc-gzip-level: gzip level 13 is out of range: 0 (store) to 12 (smallest)"
    );
}

/// `--sitemap-lastmod`: `conditional` by default, `skip` recorded in `start.json`
/// and replayed by a resume (which passes no flag), anything else refused.
#[test]
fn sitemap_lastmod_flag_is_recorded_and_replayed() {
    use crate::recrawl::LastmodPolicy;
    let argv: Vec<String> = [
        "trawl",
        "crawl",
        "--recrawl",
        "/tmp/prev",
        "--out",
        "o",
        "--sitemap-lastmod",
        "skip",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let (args, matches) = parse_crawl_flags(crawl_flags(&argv)).unwrap();
    assert_eq!(
        config_from(&args).unwrap().sitemap_lastmod,
        LastmodPolicy::Skip
    );
    let recorded = recordable_args(&matches);
    assert!(
        recorded.contains(&"--sitemap-lastmod=skip".to_owned()),
        "{recorded:?}"
    );
    let mut replay = recorded;
    replay.extend(["--resume".to_owned(), "o".to_owned()]);
    let (args, _) = parse_crawl_flags(&replay).unwrap();
    assert_eq!(
        config_from(&args).unwrap().sitemap_lastmod,
        LastmodPolicy::Skip
    );
    // Not given: the default, and nothing recorded.
    let plain: Vec<String> = ["trawl", "crawl", "--recrawl", "/tmp/prev", "--out", "o"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let (args, matches) = parse_crawl_flags(crawl_flags(&plain)).unwrap();
    assert_eq!(
        config_from(&args).unwrap().sitemap_lastmod,
        LastmodPolicy::Conditional
    );
    assert!(!recordable_args(&matches)
        .iter()
        .any(|a| a.starts_with("--sitemap-lastmod")));
    let mut bad = plain;
    bad.extend(["--sitemap-lastmod".to_owned(), "never".to_owned()]);
    let (args, _) = parse_crawl_flags(crawl_flags(&bad)).unwrap();
    let err = config_from(&args).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        "--sitemap-lastmod must be conditional or skip, not \"never\""
    );
}

/// `--disk-reserve`: `auto` by default, sizes and percentages, 0 for off, and a
/// clear error for anything else.
#[test]
fn disk_reserve_flag() {
    use crate::engine::space::Reserve;
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CrawlArgs,
    }
    let parse = |extra: &[&str]| {
        let mut argv = vec!["trawl", "--seed", "http://a.test/", "--out", "/tmp/x"];
        argv.extend_from_slice(extra);
        config_from(&Cli::try_parse_from(argv).unwrap().args).map(|c| c.disk_reserve)
    };
    assert_eq!(parse(&[]).unwrap(), Reserve::Auto);
    assert_eq!(
        parse(&["--disk-reserve", "64M"]).unwrap(),
        Reserve::Bytes(64 << 20)
    );
    assert_eq!(
        parse(&["--disk-reserve", "5%"]).unwrap(),
        Reserve::Percent(5.0)
    );
    assert_eq!(parse(&["--disk-reserve", "0"]).unwrap(), Reserve::Bytes(0));
    let e = parse(&["--disk-reserve", "lots"]).unwrap_err().to_string();
    assert!(e.contains("bad disk reserve \"lots\""), "{e}");
}
