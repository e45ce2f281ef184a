//! The built-in demo web: several hosts on loopback ports with a few
//! thousand deterministic pages — topical (Chinese keywords) and off-topic
//! ones, a robots.txt that disallows `/private/`, GBK-encoded pages,
//! redirects, 404s, byte-identical copies, and links to hosts outside it.

use std::fmt::Write;

use bytes::Bytes;
use tokio::net::TcpListener;
use xxhash_rust::xxh3::xxh3_64;

use super::{Response, Server, handler};

/// The demo's hosts: (name, what its pages are about).
const HOSTS: [(&str, Topic); 4] = [
    ("news", Topic::Sport),
    ("grad", Topic::Study),
    ("shop", Topic::Off),
    ("blog", Topic::Mixed),
];

#[derive(Clone, Copy, PartialEq)]
enum Topic {
    Sport,
    Study,
    Off,
    Mixed,
}

const SPORT: [&str; 8] = [
    "体育",
    "篮球",
    "比赛",
    "球队",
    "冠军",
    "训练",
    "运动员",
    "联赛",
];
const STUDY: [&str; 8] = [
    "研究生",
    "论文",
    "毕业",
    "导师",
    "答辩",
    "学院",
    "科研",
    "招生",
];
const OFF: [&str; 12] = [
    "price", "cart", "shipping", "discount", "order", "garden", "recipe", "travel", "weather",
    "music", "camera", "sofa",
];
const FILLER: [&str; 10] = [
    "的", "通知", "关于", "我们", "今天", "新闻", "发布", "信息", "工作", "安排",
];

/// A running demo web.
pub struct Demo {
    pub servers: Vec<Server>,
    pub pages_per_host: usize,
}

impl Demo {
    /// Starts one server per demo host on 127.0.0.1.
    pub async fn start(pages_per_host: usize) -> std::io::Result<Demo> {
        let mut listeners = Vec::new();
        for _ in HOSTS {
            listeners.push(TcpListener::bind("127.0.0.1:0").await?);
        }
        let ports: Vec<u16> = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<Result<_, _>>()?;
        let mut servers = Vec::new();
        for (i, l) in listeners.into_iter().enumerate() {
            let site = std::sync::Arc::new(Site {
                host: i,
                ports: ports.clone(),
                n: pages_per_host.max(1),
            });
            servers.push(Server::start(
                l,
                handler(move |req| {
                    let site = site.clone();
                    async move { site.respond(&req.path) }
                }),
            )?);
        }
        Ok(Demo {
            servers,
            pages_per_host,
        })
    }

    /// The seeds: each host's front page.
    pub fn seeds(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.url("/")).collect()
    }
}

struct Site {
    host: usize,
    ports: Vec<u16>,
    n: usize,
}

impl Site {
    fn respond(&self, path: &str) -> Response {
        let path = path.split('?').next().unwrap_or(path);
        if path == "/robots.txt" {
            return Response::text("User-agent: *\nDisallow: /private/\n");
        }
        if path == "/" {
            return Response::html(self.index());
        }
        if let Some(i) = num(path, "/r/", "") {
            return Response::redirect(301, &format!("/p/{}.html", (i * 7 + 3) % self.n));
        }
        if let Some(i) = num(path, "/p/", ".html").filter(|&i| i < self.n) {
            return self.page(i);
        }
        if num(path, "/copy/", ".html").is_some() {
            // Byte-identical to page 0: content dedup must catch it.
            return self.page(0);
        }
        if path.starts_with("/private/") {
            return Response::html("<title>private</title><p>robots.txt disallows this folder</p>");
        }
        Response::new(404, "<title>404</title>not found").header("content-type", "text/html")
    }

    fn rand(&self, i: usize, k: usize) -> usize {
        xxh3_64(format!("{}/{i}/{k}", self.host).as_bytes()) as usize
    }

    fn topic(&self, i: usize) -> Topic {
        match HOSTS[self.host].1 {
            Topic::Mixed => [Topic::Sport, Topic::Study, Topic::Off][i % 3],
            t => t,
        }
    }

    fn words(&self, i: usize, count: usize) -> String {
        let topic = self.topic(i);
        let mut s = String::new();
        for k in 0..count {
            let r = self.rand(i, 1000 + k);
            let w = match topic {
                Topic::Sport if r.is_multiple_of(3) => SPORT[r / 3 % SPORT.len()],
                Topic::Study if r.is_multiple_of(3) => STUDY[r / 3 % STUDY.len()],
                Topic::Off | Topic::Mixed => OFF[r / 3 % OFF.len()],
                _ => FILLER[r / 3 % FILLER.len()],
            };
            s.push_str(w);
            if topic == Topic::Off {
                s.push(' ');
            }
        }
        s
    }

    fn index(&self) -> String {
        let mut h = format!(
            "<html><head><title>{} home</title></head><body><h1>{}</h1><ul>",
            HOSTS[self.host].0, HOSTS[self.host].0
        );
        for i in 0..self.n.min(10) {
            let _ = write!(h, "<li><a href=\"/p/{i}.html\">page {i}</a></li>");
        }
        h.push_str("<li><a href=\"/private/index.html\">private</a></li></ul></body></html>");
        h
    }

    fn page(&self, i: usize) -> Response {
        let title = format!("{} {}", self.words(i, 3), i);
        let mut h = String::with_capacity(4096);
        let gbk = self.topic(i) == Topic::Study && i.is_multiple_of(5);
        let _ = write!(h, "<!DOCTYPE html><html><head>");
        if gbk && i.is_multiple_of(10) {
            // Declared only in the document: the decoder must find the <meta>.
            h.push_str("<meta charset=\"gbk\">");
        }
        let _ = write!(
            h,
            "<title>{title}</title></head><body><nav><a href=\"/\">home</a> | <a href=\"/p/0.html\">first</a></nav>"
        );
        let _ = write!(h, "<h1>{title}</h1>");
        for p in 0..4 {
            let _ = write!(h, "<p>{}</p>", self.words(i * 10 + p, 40));
        }
        h.push_str("<ul>");
        let mut link = |href: String, text: String| {
            let _ = write!(
                h,
                "<li>{} <a href=\"{href}\">{text}</a> {}</li>",
                self.words(i + href.len(), 4),
                self.words(i + 7, 3)
            );
        };
        for c in [2 * i + 1, 2 * i + 2] {
            if c < self.n {
                link(format!("/p/{c}.html"), self.words(c, 2));
            }
        }
        for k in 0..5 {
            let j = self.rand(i, k) % self.n;
            link(format!("/p/{j}.html"), self.words(j, 2));
        }
        let other = (self.host + 1 + self.rand(i, 9) % (self.ports.len() - 1)) % self.ports.len();
        link(
            format!(
                "http://127.0.0.1:{}/p/{}.html",
                self.ports[other],
                self.rand(i, 8) % self.n
            ),
            "elsewhere".into(),
        );
        link(
            format!("http://www.external-{}.example/", i % 13),
            "external".into(),
        );
        if i % 10 == 3 {
            link(format!("/missing/{i}.html"), "gone".into());
        }
        if i % 10 == 7 {
            link(format!("/r/{i}"), "moved".into());
        }
        if i.is_multiple_of(25) {
            link(format!("/copy/{i}.html"), "copy".into());
        }
        if i.is_multiple_of(9) {
            link(format!("/private/{i}.html"), "private".into());
        }
        h.push_str(
            "</ul><footer>Copyright demo site | E-mail: demo@example.com</footer></body></html>",
        );
        if gbk {
            let (bytes, _, _) = encoding_rs::GBK.encode(&h);
            let ct = if i.is_multiple_of(10) {
                "text/html"
            } else {
                "text/html; charset=gbk"
            };
            return Response::new(200, Bytes::from(bytes.into_owned())).header("content-type", ct);
        }
        Response::html(h)
    }
}

/// The number in `prefix{n}suffix`.
fn num(path: &str, prefix: &str, suffix: &str) -> Option<usize> {
    path.strip_prefix(prefix)?
        .strip_suffix(suffix)?
        .parse()
        .ok()
}
