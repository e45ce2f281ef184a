//! Denoising on hand-made pages, parsed as a crawl parses them.
use super::*;
use crate::parse::{DEFAULT_MAX_LINKS, parse_html};

fn page(html: &str) -> ParsedPage {
    parse_html(
        html,
        &url::Url::parse("http://news.example/2009/story.html").unwrap(),
        encoding_rs::UTF_8,
        "trawl",
        DEFAULT_MAX_LINKS,
    )
}

/// Each removed line's rule and text.
fn noise_of(p: &ParsedPage, d: &Denoised) -> Vec<(&'static str, String)> {
    removed(&p.text, d.noise.iter().copied())
        .into_iter()
        .map(|(r, t)| (r.name(), t))
        .collect()
}

const ARTICLE: &str = "<p>The city council voted on Tuesday to expand the \
    riverside park by twelve acres, ending a debate that began in 2004.</p>\
    <p>Supporters said the new land, a former rail yard, would give the east \
    side its first large green space; <a href=/budget>the budget office</a> \
    put the cost at four million dollars over five years.</p>\
    <p>Opponents had asked for the site to be kept for housing.</p>";

#[test]
fn an_english_news_page_loses_its_noise_and_keeps_its_story() {
    let html = format!(
        "<html><head><title>Home</title></head><body>\
         <div class=nav><a href=/>Local News</a> | <a href=/c>Skilled at code, he wins a load</a> | \
         <a href=/st>Seattle Times</a></div>\
         <h1>Council expands riverside park</h1>\
         <p>By Ann Lee</p><p>Last modified: March 5, 2009</p>\
         {ARTICLE}\
         <p>See also &lt;http://blog.example/allyoucaneat/&gt; All You Can Eat</p>\
         <div><a href=/ads/1>Cheap flights</a></div>\
         <div><a href=/a>Food</a> <a href=/b>Wine</a> <a href=/c2>Travel</a> and more deals on \
         <a href=/d>Homes</a></div>\
         <p>Copyright 2009 The Example Company. All rights reserved.</p>\
         </body></html>"
    );
    let p = page(&html);
    let d = denoise(&p, "news.example", &Denoiser::new(&DenoiseRules::default()));
    assert_eq!(d.title, "Council expands riverside park");
    assert_eq!(d.author.as_deref(), Some("Ann Lee"));
    assert_eq!(d.date.as_deref(), Some("2009-03-05"));
    assert_eq!(
        noise_of(&p, &d),
        [
            (
                "navigation",
                "Local News | Skilled at code, he wins a load | Seattle Times".to_string()
            ),
            (
                "bracketed",
                "<http://blog.example/allyoucaneat/>".to_string()
            ),
            ("ad", "Cheap flights".to_string()),
            ("ad", "Food Wine Travel and more deals on Homes".to_string()),
            (
                "copyright",
                "Copyright 2009 The Example Company. All rights reserved.".to_string()
            ),
        ]
    );
    let text = clean_text(&p.text, d.noise.iter().copied());
    // The title, author and date lines are short and kept: step 1 comes
    // before the ad rule.
    assert!(
        text.starts_with("Council expands riverside park\nBy Ann Lee\nLast modified"),
        "{text}"
    );
    assert!(text.contains("\nSee also All You Can Eat"), "{text}");
    for sentence in page(ARTICLE).text.lines() {
        assert!(text.contains(sentence), "lost: {sentence}");
    }
}

#[test]
fn a_chinese_page_counts_each_character_as_a_word() {
    let html = "<html><head><title>新闻中心</title>\
        <meta property=og:site_name content=新闻中心></head><body>\
        <div><a href=/>首页</a> | <a href=/n>新闻</a> | <a href=/s>体育</a> | <a href=/f>财经</a></div>\
        <h1>市政府扩建滨江公园</h1>\
        <p>作者：张三</p><p>发布时间：2009年3月5日</p>\
        <p>市议会周二投票决定将滨江公园扩大十二英亩，结束了始于二〇〇四年的争论。\
        支持者说，这块原为铁路货场的土地将为东区带来第一块大型绿地。</p>\
        <div><a href=/ad>点击进入</a></div>\
        <p>版权所有 © 2009 某某网络公司 联系邮箱 news@example.cn</p>\
        </body></html>";
    let p = page(html);
    let d = denoise(&p, "news.example", &Denoiser::new(&DenoiseRules::default()));
    // The <title> is the site's name (og:site_name): the <h1> names the page.
    assert_eq!(d.title, "市政府扩建滨江公园");
    assert_eq!(d.author.as_deref(), Some("张三"));
    assert_eq!(d.date.as_deref(), Some("2009-03-05"));
    let rules: Vec<_> = noise_of(&p, &d).into_iter().map(|(r, _)| r).collect();
    assert_eq!(rules, ["navigation", "ad", "copyright"]);
    let text = clean_text(&p.text, d.noise.iter().copied());
    assert!(text.contains("市议会周二投票决定"), "{text}");
    assert!(
        text.contains("作者：张三") && text.contains("2009年3月5日"),
        "{text}"
    );
    assert_eq!(words("市议会 votes today"), 5);
    assert_eq!(words("don't stop — 2009"), 3);
}

#[test]
fn a_clean_article_loses_nothing() {
    let html = format!(
        "<html><head><title>Park vote</title></head><body><h1>Park vote</h1>{ARTICLE}</body></html>"
    );
    let p = page(&html);
    let d = denoise(&p, "news.example", &Denoiser::new(&DenoiseRules::default()));
    assert_eq!(d.noise, []);
    assert_eq!(clean_text(&p.text, d.noise.iter().copied()), p.text);
}

#[test]
fn thresholds_are_the_rules_settings() {
    let p = page("<p><a href=/x>one short linked line</a></p><p>Home | About</p>");
    let d = denoise(&p, "news.example", &Denoiser::new(&DenoiseRules::default()));
    // One separator is not navigation by default; the link line is an ad.
    assert_eq!(d.noise, [(0, Rule::Ad)]);
    let loose = DenoiseRules {
        ad_words: 3,
        nav_separators: 1,
        ..DenoiseRules::default()
    };
    assert_eq!(
        denoise(&p, "news.example", &Denoiser::new(&loose)).noise,
        [(1, Rule::Navigation)]
    );
}

/// The title denoising chooses for a page of its own host.
fn title_of(html: &str) -> String {
    let d = Denoiser::new(&DenoiseRules::default());
    denoise(&page(html), "news.example", &d).title
}

#[test]
fn the_title_is_chosen_as_a_good_extractor_does() {
    let cases = [
        // A <title> naming the site or section gives way to the one <h1>.
        (
            "<title>Example News - Home</title><h1>Council approves budget</h1>",
            "Council approves budget",
        ),
        (
            "<title>Science Portal</title><h1>Comet seen at dawn</h1>",
            "Comet seen at dawn",
        ),
        (
            "<title>某某大学新闻网</title><h1>学校召开工作会议</h1>",
            "学校召开工作会议",
        ),
        ("<title>体育频道</title><h1>女排夺冠</h1>", "女排夺冠"),
        (
            "<title>Untitled Document</title><h1>Real headline</h1>",
            "Real headline",
        ),
        // Sphinx: the <h1> plus the site's name, the <h1> with its permalink.
        (
            "<title>winreg — Windows registry access — Python 3.11.2 documentation</title><h1>winreg — Windows registry access<a class=headerlink href=#x>¶</a></h1>",
            "winreg — Windows registry access",
        ),
        // og:title (its last) and title metas say it outright.
        (
            "<meta property=og:title content=First><meta property=og:title content='Leader spotlight'><meta name=twitter:title content=T><title>Leader spotlight - The Blog</title><h1>The Blog</h1><h1>Leader spotlight: Erin</h1>",
            "Leader spotlight",
        ),
        (
            "<meta name=dc.title content='Über uns'><title>x</title><h1>a</h1>",
            "Über uns",
        ),
        // Several <h1>s: a heading whose class names a title, else the
        // first <h1> the <title> wraps, else the <title>.
        (
            "<title>T</title><h1>Logo</h1><h2 class=entry-title>The story</h2><h1>Other</h1>",
            "The story",
        ),
        (
            "<title>Real headline | Site</title><h1>Real headline</h1><h1>More</h1>",
            "Real headline",
        ),
        (
            "<title>A good title</title><h1>Section</h1><h1>Other</h1>",
            "A good title",
        ),
        // No <h1>: the <title> without the site's name around it.
        (
            "<title>Akkuschrauber, Werkzeug &amp; Co - Test - CHIP</title>",
            "Akkuschrauber, Werkzeug & Co - Test",
        ),
        (
            "<title>BMJV | Transparenz bei Preisanpassungen</title>",
            "Transparenz bei Preisanpassungen",
        ),
        ("<title>Home - example.org</title><p>x</p>", "Home"),
        (
            "<title>U.S. troops leave Kabul | Reuters</title>",
            "U.S. troops leave Kabul",
        ),
        (
            "<title>9.4. String Functions</title>",
            "9.4. String Functions",
        ),
        (
            "<title>collation_character_set_\u{200B}applicability</title>",
            "collation_character_set_applicability",
        ),
        (
            "<title>carta.info</title><h1></h1><h2>Der neue Trend</h2>",
            "Der neue Trend",
        ),
        // Entities in a meta's content are text.
        (
            "<meta property=og:title content='Germany&#39;s past &amp; more'><h1>x</h1>",
            "Germany's past & more",
        ),
        (
            "<meta property='og&#x3A;title' content='Der&#x20;Plan'><h1>x</h1>",
            "Der Plan",
        ),
        // A class that names the site is no article's title.
        (
            "<title>OUTDOOR LOVERS | iloveponysmag.com</title><h1 class=site-title>iloveponysmag.com</h1><h1>b</h1>",
            "OUTDOOR LOVERS",
        ),
        // Nothing but an <h2>.
        ("<h2>Only a subheading</h2><p>text</p>", "Only a subheading"),
        ("<title></title><h1>Headline</h1>", "Headline"),
    ];
    for (html, want) in cases {
        assert_eq!(title_of(html), want, "{html}");
    }
}

#[test]
fn a_title_the_sites_pages_share_gives_way_to_each_h1() {
    let d = Denoiser::new(&DenoiseRules::default());
    let story = |h1: &str| {
        page(&format!(
            "<title>The Riverside Courier</title><h1>{h1}</h1>{ARTICLE}<h1>Related</h1>"
        ))
    };
    let titles: Vec<String> = ["Park expands", "Budget passes", "Rail yard sold"]
        .iter()
        .map(|h1| denoise(&story(h1), "news.example", &d).title)
        .collect();
    // The third page shows the title is the site's; the first two were
    // denoised before that was known.
    assert_eq!(
        titles,
        [
            "The Riverside Courier",
            "The Riverside Courier",
            "Rail yard sold"
        ]
    );
    assert_eq!(
        denoise(&story("Mayor resigns"), "news.example", &d).title,
        "Mayor resigns"
    );
    // Another site with the same title is counted apart.
    assert_eq!(
        denoise(&story("Mayor resigns"), "other.example", &d).title,
        "The Riverside Courier"
    );
}
