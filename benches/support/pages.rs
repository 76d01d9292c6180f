//! Deterministic HTML pages for the link benchmarks and the html5ever comparison
//! test: "synthweb-like" pages (the shape of pages the synthetic web server serves:
//! ~20 KB, navigation, article text, link lists) and a small realistic corpus of
//! varied real-world shapes (news article, shop listing, forum thread, script-heavy
//! app shell, SVG icon sprite page, windows-1252 legacy page, frameset, and two pages
//! of a few hundred KB). Generated, not downloaded: no network, same bytes every run.

#![allow(dead_code)] // shared by a bench and a test, each using part of it

/// A tiny xorshift generator: deterministic, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "crawler",
    "frontier",
    "robots",
    "politeness",
    "archive",
    "the",
    "of",
    "and",
    "a",
    "to",
    "in",
    "is",
    "for",
    "on",
    "with",
    "web",
    "page",
    "link",
    "server",
    "host",
    "queue",
    "bandwidth",
    "latency",
    "index",
    "search",
    "document",
    "engine",
    "network",
    "protocol",
    "caf\u{e9}",
    "na\u{ef}ve",
    "\u{fc}ber",
    "data",
    "graph",
    "trap",
    "calendar",
    "session",
];

/// `min + below(spread)` words.
fn words(rng: &mut Rng, min: usize, spread: usize, out: &mut String) {
    let n = min + rng.below(spread.max(1));
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(rng.pick(WORDS));
    }
}

fn path(rng: &mut Rng) -> String {
    let depth = 1 + rng.below(4);
    let mut p = String::new();
    for _ in 0..depth {
        p.push('/');
        p.push_str(rng.pick(&[
            "news", "2024", "products", "item", "wiki", "docs", "a", "b", "user", "tag", "en",
        ]));
    }
    match rng.below(6) {
        0 => p.push_str(".html"),
        1 => p.push('/'),
        2 => p.push_str(&format!(
            "?id={}&amp;page={}",
            rng.below(10_000),
            rng.below(50)
        )),
        3 => p.push_str(&format!("-{}#section{}", rng.below(999), rng.below(9))),
        _ => {}
    }
    p
}

fn href(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => format!("https://site{}.example.com{}", rng.below(200), path(rng)),
        1 => format!("//cdn.example.net{}", path(rng)),
        2 => format!("..{}", path(rng)),
        3 => path(rng).trim_start_matches('/').to_owned(),
        4 => format!("http://www.example.org/%7Euser{}", path(rng)),
        _ => path(rng),
    }
}

fn quote(rng: &mut Rng, value: &str) -> String {
    match rng.below(8) {
        0 => format!("'{value}'"),
        1 if !value.contains([' ', '>', '\'', '"']) => value.to_owned(),
        _ => format!("\"{value}\""),
    }
}

/// A synthweb-like page of about `target_bytes`.
pub fn synthweb_page(seed: u64, target_bytes: usize) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut s = String::with_capacity(target_bytes + 4096);
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    s.push_str(&format!("<title>Page {seed} - synthweb</title>\n"));
    s.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    s.push_str("<link rel=\"stylesheet\" href=\"/static/site.css\">\n<link rel=\"icon\" href=\"/favicon.ico\">\n");
    s.push_str("<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);} if (a < b && c > d) { gtag('js', new Date()); }</script>\n");
    s.push_str("<style>body{margin:0;font:16px/1.5 sans-serif} a:hover>span{color:#c00}</style>\n</head>\n<body class=\"page\">\n");
    s.push_str("<header id=\"top\"><nav class=\"main-nav\"><ul>\n");
    for _ in 0..12 {
        let h = href(&mut rng);
        s.push_str(&format!(
            "<li class=\"nav-item\"><a class=\"nav-link\" href={}>",
            quote(&mut rng, &h)
        ));
        words(&mut rng, 1, 2, &mut s);
        s.push_str("</a></li>\n");
    }
    s.push_str("</ul></nav></header>\n<main>\n<article>\n");
    let mut para = 0;
    while s.len() < target_bytes.saturating_sub(1500) {
        para += 1;
        s.push_str(&format!("<h2 id=\"s{para}\">"));
        words(&mut rng, 3, 5, &mut s);
        s.push_str("</h2>\n<p>");
        for _ in 0..(2 + rng.below(4)) {
            words(&mut rng, 8, 30, &mut s);
            s.push(' ');
            match rng.below(5) {
                0 => {
                    let h = href(&mut rng);
                    let rel = if rng.below(4) == 0 { " rel=\"nofollow\"" } else { "" };
                    s.push_str(&format!("<a href={}{rel} title=\"more &amp; more\">", quote(&mut rng, &h)));
                    words(&mut rng, 1, 3, &mut s);
                    s.push_str("</a>");
                }
                1 => s.push_str("<em>emphasis</em>, <strong>strong &lt;text&gt;</strong>"),
                2 => s.push_str(&format!("<img src=\"/img/{}.jpg\" alt=\"a picture\" width=\"640\" height=\"480\" loading=\"lazy\">", rng.below(9999))),
                3 => s.push_str("<span class=\"note\" data-x='1 > 0'>note</span>"),
                _ => s.push_str("<code>x &lt; y</code>"),
            }
            s.push_str(". ");
        }
        s.push_str("</p>\n");
        if para % 4 == 0 {
            s.push_str(
                "<!-- related links: <a href=\"/commented-out\"> -->\n<ul class=\"related\">\n",
            );
            for _ in 0..5 {
                let h = href(&mut rng);
                s.push_str(&format!("<li><a href={}>", quote(&mut rng, &h)));
                words(&mut rng, 2, 1, &mut s);
                s.push_str("</a></li>\n");
            }
            s.push_str("</ul>\n");
        }
    }
    s.push_str("</article>\n</main>\n<footer><p>&copy; 2026 synthweb &middot; <a href=\"/about\">about</a> &middot; <a href=\"/contact\">contact</a></p></footer>\n");
    s.push_str("<script src=\"/static/app.js\" defer></script>\n</body>\n</html>\n");
    s.into_bytes()
}

/// `count` synthweb-like pages of about 20 KB.
pub fn synthweb_pages(count: usize) -> Vec<Vec<u8>> {
    (0..count as u64)
        .map(|i| synthweb_page(i + 1, 20_000))
        .collect()
}

fn news_article(rng: &mut Rng, paragraphs: usize) -> String {
    let mut s = String::from("<!doctype html><html><head><meta charset=utf-8><title>Breaking: crawler reaches the end of the web</title>\
        <meta property=og:title content=\"Breaking news\"><meta name=robots content=\"index, follow, max-image-preview:large\">\
        <link rel=canonical href=\"https://news.example.com/2026/11/22/crawler\"><link rel=alternate hreflang=de href=\"https://news.example.com/de/crawler\">\
        <script type=\"application/ld+json\">{\"@context\":\"https://schema.org\",\"@type\":\"NewsArticle\",\"url\":\"<a href=no>\"}</script></head><body>\n");
    s.push_str("<div class=\"top-bar\"><a href=\"/\" class=\"logo\"><svg viewBox=\"0 0 10 10\" aria-hidden=\"true\"><path d=\"M0 0h10v10H0z\"/></svg>News</a></div>\n");
    for i in 0..paragraphs {
        s.push_str("<p class=\"article-body__paragraph\">");
        words(rng, 60, 60, &mut s);
        if i % 3 == 0 {
            let h = href(rng);
            s.push_str(&format!(
                " <a href=\"{h}\" data-track=\"inline-{i}\">read more</a>"
            ));
        }
        s.push_str("</p>\n");
        if i % 10 == 9 {
            s.push_str("<aside class=\"ad\"><iframe src=\"https://ads.example.net/frame?slot=");
            s.push_str(&i.to_string());
            s.push_str("\" width=300 height=250 frameborder=0></iframe></aside>\n");
        }
    }
    s.push_str("<footer>");
    for _ in 0..40 {
        let h = href(rng);
        s.push_str(&format!("<a href='{h}'>footer link</a> | "));
    }
    s.push_str("</footer></body></html>\n");
    s
}

fn shop_listing(rng: &mut Rng, items: usize) -> String {
    let mut s = String::from("<!DOCTYPE html><html><head><title>Shop</title><link rel=stylesheet href=/a.css><link rel=preload as=font href=/f.woff2 crossorigin></head><body><div id=app class=\"grid grid--4\">\n");
    for i in 0..items {
        s.push_str(&format!(
            "<div class=\"product-card product-card--{}\" data-sku=\"SKU-{:06}\" data-price=\"{}.{:02}\" itemscope itemtype=\"https://schema.org/Product\">\
             <a class=\"product-card__link\" href=\"/p/{}-{}?ref=list&amp;pos={i}\"><img class=\"product-card__img\" src=\"//img.example.com/{}.webp\" srcset=\"//img.example.com/{}@2x.webp 2x\" alt=\"\">\
             <span class=\"product-card__title\" itemprop=name>",
            i % 7, rng.below(999_999), rng.below(500), rng.below(100), rng.pick(WORDS), i, i, i
        ));
        words(rng, 3, 4, &mut s);
        s.push_str("</span></a><button type=button class=\"btn btn--cart\" onclick=\"cart.add(this)\" aria-label=\"Add to cart\">+</button></div>\n");
    }
    s.push_str("</div><nav class=pagination>");
    for p in 1..=20 {
        s.push_str(&format!(
            "<a href=\"?page={p}\" rel=\"{}\">{p}</a>",
            if p == 2 { "next" } else { "nofollow" }
        ));
    }
    s.push_str("</nav></body></html>\n");
    s
}

fn forum_thread(rng: &mut Rng, posts: usize) -> String {
    let mut s = String::from("<html><head><title>Thread</title><META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=utf-8\"></head><body><table class=posts>\n");
    for i in 0..posts {
        s.push_str(&format!("<tr id=post{i}><td class=author><a href=\"member.php?u={}\">user{}</a><br><IMG SRC=\"avatars/{}.gif\"></td><td class=body>", rng.below(5000), i, i));
        words(rng, 30, 80, &mut s);
        if i % 2 == 0 {
            s.push_str(&format!("<blockquote>Quote: <a href=\"showthread.php?t={}&p={}#post{}\" target=_blank>link</a></blockquote>", rng.below(9999), i, i));
        }
        s.push_str("<div class=sig>-- <A HREF=http://www.example.com/~me/>my homepage</A></div></td></tr>\n");
    }
    s.push_str("</table><form action=search.php><input name=q><textarea name=reply>Write <a href=not-a-link> here</textarea></form></body></html>\n");
    s
}

fn script_heavy(rng: &mut Rng, kb: usize) -> String {
    let mut s = String::from("<!doctype html><html><head><meta charset=utf-8><title>App</title><link rel=modulepreload href=/js/app.mjs>");
    s.push_str("<script>");
    while s.len() < kb * 1024 {
        s.push_str(&format!(
            "var t{0}='<a href=\"/fake{0}\">x</a>';if(i<{1}&&j>2){{document.write(\"<div class='c'>\"+t{0}+\"</div>\")}}\n",
            rng.below(1_000_000), rng.below(100)
        ));
    }
    s.push_str("</script><script>var s = '<!--'; var e = '-->';</script></head><body><div id=root></div><noscript><p>Enable JavaScript</p></noscript><a href=\"/help\">help</a>");
    s.push_str("<script type=module src=/js/app.mjs></script></body></html>\n");
    s
}

fn svg_sprites(rng: &mut Rng, icons: usize) -> String {
    let mut s = String::from("<!DOCTYPE html><html><head><title>Icons</title></head><body><svg xmlns=\"http://www.w3.org/2000/svg\" style=\"display:none\"><defs><style><![CDATA[ .a{fill:#fff} ]]></style></defs>\n");
    for i in 0..icons {
        s.push_str(&format!(
            "<symbol id=\"icon-{i}\" viewBox=\"0 0 24 24\"><title>icon {i}</title><path d=\"M{} {}L{} {}Z\" fill-rule=\"evenodd\"/></symbol>\n",
            rng.below(24), rng.below(24), rng.below(24), rng.below(24)
        ));
    }
    s.push_str("</svg><ul>");
    for i in 0..icons {
        s.push_str(&format!("<li><a href=\"/icons/{i}\"><svg class=icon><use href=\"#icon-{i}\"></use></svg> icon {i}</a></li>"));
    }
    s.push_str("</ul></body></html>\n");
    s
}

fn legacy_1252(rng: &mut Rng) -> Vec<u8> {
    let mut s = String::from("<HTML><HEAD><META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=windows-1252\"><TITLE>Caf\u{e9}</TITLE></HEAD><BODY BGCOLOR=#ffffff>\n");
    for i in 0..200 {
        s.push_str(&format!("<P><FONT FACE=Arial><A HREF=\"recherche.asp?q=caf\u{e9}&amp;n={i}\">R\u{e9}sultat {i}</A></FONT> "));
        words(rng, 20, 1, &mut s);
        s.push_str("</P>\n");
    }
    s.push_str("<MAP NAME=m><AREA SHAPE=rect COORDS=\"0,0,10,10\" HREF=\"plan.html\"></MAP></BODY></HTML>\n");
    // Every character used is in windows-1252.
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

fn frameset() -> String {
    "<html><head><title>Frames</title></head><frameset cols=\"20%,80%\"><frame src=\"menu.html\" name=menu><frame src=\"main.html\" name=main><noframes><body><a href=\"menu.html\">menu</a></body></noframes></frameset></html>\n".to_owned()
}

/// The realistic corpus: `(name, page bytes, encoding label)`.
pub fn realistic_corpus() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let mut rng = Rng::new(42);
    vec![
        (
            "news-article-60k",
            news_article(&mut rng, 80).into_bytes(),
            "utf-8",
        ),
        (
            "news-article-400k",
            news_article(&mut rng, 550).into_bytes(),
            "utf-8",
        ),
        (
            "shop-listing-120k",
            shop_listing(&mut rng, 200).into_bytes(),
            "utf-8",
        ),
        (
            "forum-thread-90k",
            forum_thread(&mut rng, 150).into_bytes(),
            "utf-8",
        ),
        (
            "script-heavy-300k",
            script_heavy(&mut rng, 300).into_bytes(),
            "utf-8",
        ),
        (
            "svg-sprites-50k",
            svg_sprites(&mut rng, 150).into_bytes(),
            "utf-8",
        ),
        ("legacy-1252-30k", legacy_1252(&mut rng), "windows-1252"),
        ("frameset-1k", frameset().into_bytes(), "utf-8"),
    ]
}
