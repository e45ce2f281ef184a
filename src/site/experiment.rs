//! The synthetic web of document 000's experiment: the paper's four seed
//! sites, hosts that share their key-domain labels, unrelated off-topic
//! sites, and off-domain sites that are on the topic (preset B's keywords
//! in title or body). One loopback server answers for every name (by the
//! Host header); crawls reach it through the resolve override.

use std::fmt::Write;

use tokio::net::TcpListener;
use xxhash_rust::xxh3::xxh3_64;

use super::{Response, Server, handler};

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// A seed portal or university: mixed topical and general pages.
    Seed,
    /// Shares a seed's key domain (news.163.com): mixed as well.
    SameDomain,
    /// Unrelated and off-topic.
    OffTopic,
    /// Off the key domains but on the topic.
    OnTopic,
}

/// (host, kind). The first four are the paper's seeds.
const HOSTS: [(&str, Kind); 14] = [
    ("www.163.com", Kind::Seed),
    ("www.souhu.com", Kind::Seed),
    ("www.uestc.edu.cn", Kind::Seed),
    ("www.ct-bu.edu.cn", Kind::Seed),
    ("news.163.com", Kind::SameDomain),
    ("sports.souhu.com", Kind::SameDomain),
    ("lib.uestc.edu.cn", Kind::SameDomain),
    ("jwc.ct-bu.edu.cn", Kind::SameDomain),
    ("www.shop.com", Kind::OffTopic),
    ("www.travel.net", Kind::OffTopic),
    ("www.recipes.org", Kind::OffTopic),
    ("www.cars.com", Kind::OffTopic),
    ("www.sport-news.com", Kind::OnTopic),
    ("www.thesis.org", Kind::OnTopic),
];

const TOPIC: [&str; 5] = ["研究生", "论文", "毕业", "体育", "篮球"];
const GENERAL: [&str; 10] = [
    "新闻", "通知", "公告", "生活", "科技", "财经", "天气", "娱乐", "图片", "视频",
];
const OFF: [&str; 8] = [
    "price", "cart", "hotel", "flight", "recipe", "engine", "sofa", "coupon",
];

pub struct ExperimentWeb {
    pub server: Server,
    pub pages_per_host: usize,
}

impl ExperimentWeb {
    pub async fn start(pages_per_host: usize) -> std::io::Result<ExperimentWeb> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let n = pages_per_host.max(2);
        let server = Server::start(
            listener,
            handler(move |req| {
                let host = req.host();
                let r = page(&host, &req.path, port, n);
                async move { r }
            }),
        )?;
        Ok(ExperimentWeb {
            server,
            pages_per_host: n,
        })
    }

    pub fn port(&self) -> u16 {
        self.server.addr().port()
    }

    /// Every host name of the web, for the resolve override.
    pub fn hosts() -> impl Iterator<Item = &'static str> {
        HOSTS.iter().map(|h| h.0)
    }

    pub fn seeds(&self) -> Vec<String> {
        HOSTS
            .iter()
            .filter(|h| h.1 == Kind::Seed)
            .map(|h| format!("http://{}:{}/", h.0, self.port()))
            .collect()
    }
}

fn page(host: &str, path: &str, port: u16, n: usize) -> Response {
    if path == "/robots.txt" {
        return Response::status(404);
    }
    let Some(hi) = HOSTS.iter().position(|h| h.0 == host) else {
        return Response::status(404);
    };
    let kind = HOSTS[hi].1;
    let i: usize = match path {
        "/" => 0,
        p => match p
            .strip_prefix("/p/")
            .and_then(|s| s.strip_suffix(".html"))
            .and_then(|s| s.parse().ok())
        {
            Some(i) if i < n => i,
            _ => return Response::status(404),
        },
    };
    let r = |k: usize| xxh3_64(format!("{host}/{i}/{k}").as_bytes()) as usize;
    // Seed and same-domain sites: a third of the pages are on the topic.
    let topical = match kind {
        Kind::OnTopic => true,
        Kind::OffTopic => false,
        _ => i.is_multiple_of(3),
    };
    let words = |count: usize, salt: usize| -> String {
        (0..count)
            .map(|k| {
                let x = r(salt + k);
                match (kind, topical) {
                    (Kind::OffTopic, _) => OFF[x % OFF.len()].to_string() + " ",
                    (_, true) if x.is_multiple_of(3) => TOPIC[x / 3 % TOPIC.len()].to_string(),
                    _ => GENERAL[x % GENERAL.len()].to_string(),
                }
            })
            .collect()
    };
    let mut h = format!(
        "<html><head><title>{}</title></head><body><h1>{}</h1>",
        words(3, 0),
        host
    );
    for p in 0..3 {
        let _ = write!(h, "<p>{}</p>", words(30, 100 * (p + 1)));
    }
    h.push_str("<ul>");
    for c in [2 * i + 1, 2 * i + 2] {
        if c < n {
            let _ = write!(
                h,
                "<li><a href=\"/p/{c}.html\">{}</a></li>",
                words(2, 900 + c)
            );
        }
    }
    // Links into the rest of the web: two random hosts, one random page each.
    for k in 0..2 {
        let (other, _) = HOSTS[(hi + 1 + r(50 + k) % (HOSTS.len() - 1)) % HOSTS.len()];
        let _ = write!(
            h,
            "<li><a href=\"http://{other}:{port}/p/{}.html\">{}</a></li>",
            r(60 + k) % n,
            words(2, 990 + k)
        );
    }
    h.push_str("</ul></body></html>");
    Response::html(h)
}
