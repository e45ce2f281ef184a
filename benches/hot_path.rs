//! The per-page hot path, piece by piece, on a page of the benchmark web
//! (~13 KB, ~20 links): decode + parse + extract links, URL normalization,
//! the topic score and cosine relevance, and one page's RocksDB write batch.
//!
//! Run: `cargo bench --bench hot_path` (add `-- --quick` for a fast pass;
//! `cargo test --release` runs each once so they cannot rot).

mod common;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use trawl::filter::{FilterSettings, Filters, Mode};
use trawl::model::{self, UrlId};
use trawl::parse;
use trawl::schema::{
    CF_DOCS, CF_LINKS, CF_PAGES, CF_VERDICTS, DocRecord, LinkView, PageLinksBuilder, PageRecord,
    VerdictRecord,
};
use trawl::store::Store;

// The same allocator as the `trawl` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn bench(c: &mut Criterion) {
    let html = trawl::site::bench::sample_page(1, 1234);
    let url = model::normalize("http://127.0.0.1:2/s2/p1234.html").unwrap();
    let body = html.as_bytes();
    let decode_parse = |body: &[u8]| {
        let d = parse::decode(body, Some("text/html; charset=utf-8"));
        let max = parse::DEFAULT_MAX_LINKS;
        parse::parse_html(&d.text, url.url(), d.charset, "trawl", max)
    };
    c.bench_function("decode+parse 13KB page", |b| {
        b.iter(|| decode_parse(black_box(body)))
    });
    let page = decode_parse(body);
    let hrefs: Vec<String> = page
        .links
        .iter()
        .map(|l| l.url.as_str().to_string())
        .collect();
    c.bench_function("normalize one URL", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % hrefs.len();
            model::normalize(black_box(&hrefs[i]))
        })
    });
    for mode in [Mode::DomainTopic, Mode::Relevance] {
        let settings = FilterSettings {
            mode,
            ..FilterSettings::default()
        };
        let filters = Filters::new(&settings, ["127.0.0.1"]);
        c.bench_function(&format!("score a page ({})", mode.name()), |b| {
            b.iter(|| filters.page(black_box("127.0.0.1"), &page.title, &page.text))
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let body_zstd = zstd::bulk::compress(body, 3).unwrap();
    let mut n = 0u64;
    let mut window = common::InLinkWindow::default();
    c.bench_function("one page's write batch", |b| {
        b.iter(|| {
            // What the engine writes for a page: its record, doc, verdict,
            // its links row, its in-links (a window's group rows every
            // 4,096 pages), and each new target's seen/url/frontier rows.
            n += 1;
            let id = UrlId::of(&format!("{}?{n}", url.as_str()));
            let mut batch = store.batch();
            let rec = PageRecord {
                url: url.as_str().to_string(),
                status: 200,
                body_zstd: body_zstd.clone(),
                ..PageRecord::default()
            };
            batch.put(CF_PAGES, &id.to_bytes(), &rec);
            let doc = DocRecord {
                title: page.title.clone(),
                text: page.text.clone(),
                ..DocRecord::default()
            };
            batch.put(CF_DOCS, &id.to_bytes(), &doc);
            batch.put(CF_VERDICTS, &id.to_bytes(), &VerdictRecord::default());
            let mut links = PageLinksBuilder::default();
            let mut targets = Vec::new();
            for l in &page.links {
                let dst = UrlId::of(&format!("{}?{n}", l.url.as_str()));
                let view = LinkView {
                    anchor: &l.anchor,
                    before: &l.before,
                    after: &l.after,
                    link_type: Some(trawl::model::LinkType::Horizontal),
                    verdict: trawl::model::LinkVerdict::Follow,
                    dst_host: l.url.host(),
                    dst_url: l.url.as_str(),
                    ..LinkView::default()
                };
                links.push(dst, &view);
                if !targets.contains(&dst) {
                    targets.push(dst);
                }
                common::queue_new_url(&mut batch, dst, &l.url, id, n);
            }
            window.add(&mut batch, id, &targets);
            batch.put_raw(CF_LINKS, &id.to_bytes(), &links.encode());
            batch.write().unwrap();
            window.write_if_full(&store)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
