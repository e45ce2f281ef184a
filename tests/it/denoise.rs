//! Denoising end to end: a crawl with `denoise.enabled` stores what each
//! rule removed, the title, author and date; the page filters read the
//! denoised text (so keywords found only in a navigation bar and an ad do
//! not make a page relevant) unless `denoise.filter_text raw`; the shell
//! shows the denoised text and the noise; refilter judges the stored
//! denoised text; `refilter --denoise` denoises stored pages again from
//! their bodies; a GBK-encoded Chinese page is denoised after decoding.

use crate::common;

use common::{Db, Fixture, fast};
use trawl::filter::Mode;
use trawl::model::Verdict;
use trawl::settings::CrawlSettings;
use trawl::site::Response;

const ARTICLE: &str = "<p>The city council voted on Tuesday to expand the riverside park by \
    twelve acres, ending a debate that began in 2004.</p>\
    <p>Supporters said the new land, a former rail yard, would give the east side its first \
    large green space; <a href=/budget>the budget office</a> put the cost at four million \
    dollars over five years.</p>";

/// A news page whose only mentions of casinos and poker are its navigation
/// bar and an ad; the article links to /budget.
fn news(path: &str) -> Response {
    match path {
        "/robots.txt" => Response::status(404),
        "/" => Response::html(format!(
            "<html><head><title>Home</title></head><body>\
             <div><a href=/c>Casino</a> | <a href=/p>Poker</a> | <a href=/g>Casino games</a> | \
             <a href=/n>Poker night</a></div>\
             <h1>Council expands riverside park</h1>\
             <p>By Ann Lee</p><p>Last modified: March 5, 2009</p>{ARTICLE}\
             <div><a href=/ad>Casino poker bonus</a></div>\
             <p>Copyright 2009 The Example Company. All rights reserved.</p></body></html>"
        )),
        _ => Response::html("<title>leaf</title><p>a leaf page</p>"),
    }
}

fn settings(denoise: bool, raw: bool) -> CrawlSettings {
    let mut s = fast();
    s.max_depth = Some(1);
    s.filter.mode = Mode::Relevance;
    s.filter.relevance_keywords = vec![("casino".into(), 1.0), ("poker".into(), 1.0)];
    s.filter.relevance_threshold = 0.05;
    s.denoise.enabled = denoise;
    s.denoise.filters_read_raw = raw;
    // The seed's verdict decides its links here (it is the page judged).
    s.follow_seed_links = false;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filters_read_the_denoised_text_and_the_shell_shows_the_noise() {
    // Denoised: the keywords were noise, the page is irrelevant, its
    // links are not followed.
    let f = Fixture::start(news).await;
    let db = Db::new();
    db.crawl(settings(true, false), &[f.url("/")]).await;
    assert_eq!(f.fetched(), ["/"]);
    let home = f.url("/");
    let doc = db.doc(&home).expect("doc");
    assert_eq!(db.verdict(&home).unwrap().verdict, Verdict::Relevance);
    let d = doc.denoise.expect("denoised");
    assert_eq!(d.title, "Council expands riverside park");
    assert_eq!(d.author.as_deref(), Some("Ann Lee"));
    assert_eq!(d.date.as_deref(), Some("2009-03-05"));

    let out = common::shell(
        db.store.clone(),
        vec![format!("page {home}"), format!("page {home} --noise")],
    )
    .await;
    assert!(
        out.contains(
            "denoised      title \"Council expands riverside park\", author \"Ann Lee\", date 2009-03-05, 3 noise lines"
        ),
        "{out}"
    );
    assert!(
        out.contains("navigation  Casino | Poker | Casino games | Poker night"),
        "{out}"
    );
    assert!(out.contains("ad          Casino poker bonus"), "{out}");
    assert!(
        out.contains("copyright   Copyright 2009 The Example Company"),
        "{out}"
    );
    let text = common::shell(db.store.clone(), vec![format!("page {home} --text")]).await;
    assert!(
        text.starts_with("Council expands riverside park\nBy Ann Lee\nLast modified"),
        "{text}"
    );
    assert!(text.contains("the budget office put the cost"), "{text}");
    assert!(
        !text.contains("Casino") && !text.contains("Copyright"),
        "{text}"
    );

    // Refilter with the filters reading the raw text: the page is
    // relevant now, and the link it gave is queued.
    let report = common::refilter(db.store.clone(), settings(true, true), false).await;
    assert_eq!((report.pages, report.changed), (1, 1));
    assert!(report.enqueued >= 1);
    assert_eq!(db.verdict(&home).unwrap().verdict, Verdict::Keep);

    // Raw from the start: relevant, /budget fetched; denoising still
    // stored.
    let f = Fixture::start(news).await;
    let db = Db::new();
    db.crawl(settings(true, true), &[f.url("/")]).await;
    assert!(
        f.fetched().contains(&"/budget".to_string()),
        "{:?}",
        f.fetched()
    );
    assert!(db.doc(&f.url("/")).unwrap().denoise.is_some());

    // Off: nothing stored, and --noise says how to get it.
    let f = Fixture::start(news).await;
    let db = Db::new();
    db.crawl(settings(false, false), &[f.url("/")]).await;
    assert!(db.doc(&f.url("/")).unwrap().denoise.is_none());
    let err = common::shell_error(db.store.clone(), format!("page {} --noise", f.url("/"))).await;
    assert!(
        err.contains("was not denoised (set denoise.enabled true"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refilter_denoise_recomputes_stored_pages_without_refetching() {
    // Crawled raw: the keywords in the navigation bar and the ad make the
    // home page relevant.
    let f = Fixture::start(news).await;
    let db = Db::new();
    let mut s = settings(false, false);
    s.max_depth = Some(0);
    db.crawl(s, &[f.url("/")]).await;
    let home = f.url("/");
    assert_eq!(db.verdict(&home).unwrap().verdict, Verdict::Keep);
    let fetched = f.fetched().len();

    // Denoised from the stored body: the page is irrelevant now.
    let out = common::shell(
        db.store.clone(),
        vec![
            "set filter.mode relevance".into(),
            "set relevance.keywords casino:1,poker:1".into(),
            "set relevance.threshold 0.05".into(),
            "set denoise.enabled true".into(),
            "refilter --denoise".into(),
            format!("page {home} --noise"),
        ],
    )
    .await;
    assert!(
        out.contains("denoised again: 1 changed, 0 as they were"),
        "{out}"
    );
    assert!(out.contains("ad          Casino poker bonus"), "{out}");
    let doc = db.doc(&home).unwrap();
    assert_eq!(db.verdict(&home).unwrap().verdict, Verdict::Relevance);
    let d = doc.denoise.expect("denoised");
    assert_eq!(d.title, "Council expands riverside park");
    assert_eq!(d.noise.len(), 3);

    // A threshold changed: the ad line (3 words, 1 link) stays under
    // ad_words 3 and a link ratio of 0.4; the same settings again change
    // nothing.
    let out = common::shell(
        db.store.clone(),
        vec![
            "set denoise.ad_words 3".into(),
            "set denoise.ad_link_ratio 0.4".into(),
            "refilter --denoise".into(),
            "refilter --denoise".into(),
            format!("page {home} --noise"),
        ],
    )
    .await;
    assert!(
        out.contains("denoised again: 1 changed, 0 as they were"),
        "{out}"
    );
    assert!(
        out.contains("denoised again: 0 changed, 1 as they were"),
        "{out}"
    );
    assert!(!out.contains("ad          Casino poker bonus"), "{out}");
    assert_eq!(db.doc(&home).unwrap().denoise.unwrap().noise.len(), 2);
    assert_eq!(f.fetched().len(), fetched, "refilter fetched nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gbk_chinese_page_is_denoised_after_decoding() {
    let page = "<html><head><meta charset=gbk><title>新闻中心</title>\
        <meta property=og:site_name content=新闻中心></head><body>\
        <div><a href=/>首页</a> | <a href=/n>新闻</a> | <a href=/s>体育</a> | <a href=/f>财经</a></div>\
        <h1>市政府扩建滨江公园</h1><p>作者：张三</p><p>发布时间：2009年3月5日</p>\
        <p>市议会周二投票决定将滨江公园扩大十二英亩，结束了始于二〇〇四年的争论。</p>\
        <div><a href=/ad>点击进入</a></div>\
        <p>版权所有 © 2009 某某网络公司</p></body></html>";
    let (gbk, _, _) = encoding_rs::GBK.encode(page);
    let body = gbk.into_owned();
    let f = Fixture::start(move |path: &str| match path {
        "/robots.txt" => Response::status(404),
        _ => Response::new(200, body.clone()).header("content-type", "text/html"),
    })
    .await;
    let db = Db::new();
    let mut s = fast();
    s.max_depth = Some(0);
    s.denoise.enabled = true;
    db.crawl(s, &[f.url("/")]).await;
    let doc = db.doc(&f.url("/")).expect("doc");
    assert_eq!(doc.charset, "GBK");
    let d = doc.denoise.expect("denoised");
    assert_eq!(d.title, "市政府扩建滨江公园");
    assert_eq!(d.author.as_deref(), Some("张三"));
    assert_eq!(d.date.as_deref(), Some("2009-03-05"));
    let rules: Vec<u8> = d.noise.iter().map(|(_, r)| *r).collect();
    assert_eq!(rules, [3, 4, 6]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denoise_settings_are_set_and_checked_in_the_shell() {
    let db = Db::new();
    let out = common::shell(
        db.store.clone(),
        vec![
            "set denoise.enabled true".into(),
            "set denoise.ad_words 5".into(),
            "set denoise.copyright_terms copyright,版权".into(),
            "config".into(),
        ],
    )
    .await;
    assert!(out.contains("denoise.ad_words"), "{out}");
    let err = common::shell_error(db.store.clone(), "set denoise.ad_link_ratio lots".into()).await;
    assert!(err.contains("denoise.ad_link_ratio"), "{err}");
    let err = common::shell_error(db.store.clone(), "set denoise.filter_text clean".into()).await;
    assert!(
        err.contains("denoised|raw") || err.contains("denoised"),
        "{err}"
    );
}
