//! The benchmark web: a deterministic synthetic web of N pages spread over a
//! few virtual hosts (one loopback port each), built to look like real
//! pages to a crawler — about 12 KB of HTML with a title, headings,
//! paragraphs drawn from a fixed vocabulary with Chinese words, a nav bar, a
//! footer, and 10–30 links (mostly to the same host, some to the other
//! hosts, a few off-site). `robots.txt` disallows `/private/`, which some
//! pages link to. Every page is reachable from its host's `/` through a
//! tree of child links; the rest are random.
//!
//! Pages are assembled from a pool of paragraphs rendered once at start,
//! so serving one costs a few microseconds and the server is not what a
//! crawl benchmark measures.

use std::fmt::Write;
use std::sync::Arc;

use tokio::net::TcpListener;
use xxhash_rust::xxh3::xxh3_64;

use super::{Response, Server, handler};

/// Child links per page: the tree that makes every page reachable.
const FANOUT: usize = 4;
/// Pages per folder (`/s{i / FOLDER}/p{i}.html`).
const FOLDER: usize = 500;
/// Paragraphs in the shared pool.
const POOL: usize = 512;
/// Distinct off-site hosts linked to.
const OFFSITE_HOSTS: usize = 50;

const WORDS_EN: [&str; 48] = [
    "research", "report", "archive", "network", "library", "history", "season", "market",
    "science", "student", "policy", "energy", "climate", "city", "river", "museum", "travel",
    "music", "health", "school", "system", "project", "village", "harbor", "festival", "council",
    "record", "garden", "bridge", "station", "journal", "letter", "method", "theory", "survey",
    "dataset", "crawler", "index", "query", "signal", "harvest", "winter", "summer", "morning",
    "evening", "public", "private", "review",
];
const WORDS_ZH: [&str; 32] = [
    "研究生",
    "论文",
    "毕业",
    "体育",
    "篮球",
    "新闻",
    "通知",
    "学院",
    "科研",
    "比赛",
    "图书馆",
    "历史",
    "城市",
    "经济",
    "文化",
    "技术",
    "数据",
    "网络",
    "教育",
    "发展",
    "会议",
    "报告",
    "社会",
    "环境",
    "市场",
    "政策",
    "项目",
    "工作",
    "今天",
    "关于",
    "我们",
    "信息",
];

/// A running benchmark web.
pub struct BenchWeb {
    pub servers: Vec<Server>,
    /// Pages over all hosts.
    pub pages: usize,
}

impl BenchWeb {
    /// Starts `hosts` servers on 127.0.0.1 sharing `pages` pages, on
    /// ports from `first_port` up (None: free ports).
    pub async fn start(
        pages: usize,
        hosts: usize,
        first_port: Option<u16>,
    ) -> std::io::Result<BenchWeb> {
        BenchWeb::start_with_robots(pages, hosts, first_port, 0).await
    }

    /// [`BenchWeb::start`] with each robots.txt padded with comment lines
    /// to at least `robots_bytes` (real ones run to hundreds of KiB).
    pub async fn start_with_robots(
        pages: usize,
        hosts: usize,
        first_port: Option<u16>,
        robots_bytes: usize,
    ) -> std::io::Result<BenchWeb> {
        let hosts = hosts.clamp(1, 64);
        let mut listeners = Vec::new();
        for k in 0..hosts {
            let port = first_port.map_or(0, |p| p.saturating_add(k as u16));
            listeners.push(TcpListener::bind(("127.0.0.1", port)).await?);
        }
        let ports: Vec<u16> = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<Result<_, _>>()?;
        let mut web = Web::new(pages.max(hosts), ports);
        while web.robots.len() < robots_bytes {
            web.robots
                .push_str("# padding: a long robots.txt, as some sites serve\n");
        }
        let web = Arc::new(web);
        let mut servers = Vec::new();
        for (host, l) in listeners.into_iter().enumerate() {
            let web = web.clone();
            servers.push(Server::start(
                l,
                handler(move |req| {
                    let web = web.clone();
                    async move { web.respond(host, &req.path) }
                }),
            )?);
        }
        Ok(BenchWeb { servers, pages })
    }

    /// Each host's front page.
    pub fn seeds(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.url("/")).collect()
    }
}

/// Page `i` of host `host` in a 100,000-page, 4-host benchmark web whose
/// hosts listen on ports 1–4: the input of the per-page micro-benchmarks.
pub fn sample_page(host: usize, i: usize) -> String {
    Web::new(100_000, vec![1, 2, 3, 4]).page(host % 4, i)
}

/// The URLs of a `pages`-page benchmark web over `hosts` hosts whose ports
/// are 8081, 8082, …: what the URL-seen benchmark feeds its structures.
pub struct BenchUrls {
    web: Web,
}

impl BenchUrls {
    pub fn new(pages: usize, hosts: usize) -> BenchUrls {
        BenchUrls::on_ports(pages, (0..hosts.max(1)).map(|h| 8081 + h as u16).collect())
    }

    /// The URLs of a running `pages`-page benchmark web whose hosts listen
    /// on `ports` (in the order `trawl bench-web` prints its seeds).
    pub fn on_ports(pages: usize, ports: Vec<u16>) -> BenchUrls {
        BenchUrls {
            web: Web::new(pages.max(ports.len()).max(1), ports),
        }
    }

    fn absolute(&self, host: usize, href: &str) -> String {
        if href.starts_with("http") {
            href.to_string()
        } else {
            format!("http://127.0.0.1:{}{href}", self.web.ports[host])
        }
    }

    /// Every page's URL once, in the order a breadth-first crawl finds them
    /// (the child tree is level-ordered by page number), hosts interleaved.
    pub fn pages(&self) -> impl Iterator<Item = String> + '_ {
        let hosts = self.web.ports.len();
        (0..self.web.per_host * hosts).map(move |k| self.absolute(k % hosts, &Web::path(k / hosts)))
    }

    /// The absolute URLs of every page's links, page by page in the same
    /// order: a crawl's stream of seen-set queries (mostly repeats).
    pub fn links(&self) -> impl Iterator<Item = String> + '_ {
        let hosts = self.web.ports.len();
        (0..self.web.per_host * hosts).flat_map(move |k| {
            let (host, i) = (k % hosts, k / hosts);
            self.web
                .links(host, i)
                .into_iter()
                .map(move |(href, _)| self.absolute(host, &href))
        })
    }
}

/// The web's content, shared by its hosts.
struct Web {
    ports: Vec<u16>,
    /// Pages on each host.
    per_host: usize,
    paragraphs: Vec<String>,
    robots: String,
}

fn hash(parts: &[usize]) -> usize {
    let mut key = Vec::with_capacity(parts.len() * 8);
    for p in parts {
        key.extend_from_slice(&(*p as u64).to_le_bytes());
    }
    xxh3_64(&key) as usize
}

fn words(seed: usize, n: usize, out: &mut String) {
    for k in 0..n {
        let r = hash(&[seed, k]);
        if r.is_multiple_of(3) {
            out.push_str(WORDS_ZH[r / 3 % WORDS_ZH.len()]);
        } else {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            out.push_str(WORDS_EN[r / 3 % WORDS_EN.len()]);
            out.push(' ');
        }
    }
}

impl Web {
    fn new(pages: usize, ports: Vec<u16>) -> Web {
        let paragraphs = (0..POOL)
            .map(|i| {
                let mut p = String::new();
                words(1_000_000 + i, 90 + hash(&[i]) % 60, &mut p);
                p
            })
            .collect();
        Web {
            // No ports, no pages (rather than a division by zero).
            per_host: pages.div_ceil(ports.len().max(1)),
            ports,
            paragraphs,
            robots: "User-agent: *\nDisallow: /private/\n".to_string(),
        }
    }

    fn respond(&self, host: usize, path: &str) -> Response {
        let path = path.split('?').next().unwrap_or(path);
        if path == "/robots.txt" {
            return Response::text(self.robots.clone());
        }
        if path == "/" {
            return Response::html(self.index(host));
        }
        if let Some(i) = page_number(path).filter(|&i| i < self.per_host) {
            return Response::html(self.page(host, i));
        }
        if path.starts_with("/private/") {
            return Response::html("<title>private</title><p>robots.txt disallows this</p>");
        }
        Response::new(404, "<title>404</title>not found").header("content-type", "text/html")
    }

    fn path(i: usize) -> String {
        format!("/s{}/p{i}.html", i / FOLDER)
    }

    fn index(&self, host: usize) -> String {
        let mut h = format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>host {host} home</title></head><body><h1>host {host}</h1><ul>"
        );
        for i in 0..FANOUT.min(self.per_host) {
            let _ = write!(h, "<li><a href=\"{}\">page {i}</a></li>", Self::path(i));
        }
        h.push_str("</ul></body></html>");
        h
    }

    /// The links of page `i` of `host` besides the nav bar's 3 and the
    /// footer's 1 (6–26): href and the number their words are drawn from.
    fn links(&self, host: usize, i: usize) -> Vec<(String, usize)> {
        let seed = hash(&[host, i]);
        let mut links: Vec<(String, usize)> = Vec::new();
        for c in (i * FANOUT + 1..=i * FANOUT + FANOUT).filter(|&c| c < self.per_host) {
            links.push((Self::path(c), c));
        }
        let others = self.ports.len() - 1;
        for k in 0..2.min(others) {
            let to = (host + 1 + hash(&[seed, 50 + k]) % others) % self.ports.len();
            let j = hash(&[seed, 60 + k]) % self.per_host;
            links.push((
                format!("http://127.0.0.1:{}{}", self.ports[to], Self::path(j)),
                j,
            ));
        }
        let off = hash(&[seed, 70]) % OFFSITE_HOSTS;
        links.push((format!("http://www.offsite{off}.example/"), off));
        if i % 20 == 7 {
            links.push((format!("/private/p{i}.html"), i));
        }
        let total = 6 + seed % 21;
        let mut k = 0;
        while links.len() < total {
            let j = hash(&[seed, 100 + k]) % self.per_host;
            links.push((Self::path(j), j));
            k += 1;
        }
        links
    }

    /// Page `i` of `host`: about 12 KB.
    fn page(&self, host: usize, i: usize) -> String {
        let seed = hash(&[host, i]);
        let mut title = String::new();
        words(seed, 5, &mut title);
        let title = title.trim();
        let mut h = String::with_capacity(14_000);
        let _ = write!(
            h,
            "<!DOCTYPE html><html lang=\"zh\"><head><meta charset=\"utf-8\"><title>{title}</title>\
             <meta name=\"description\" content=\"{title}\"></head><body>\
             <header><nav><a href=\"/\">home</a> | <a href=\"{}\">first</a> | <a href=\"{}\">section</a></nav></header>\
             <main><h1>{title}</h1>",
            Self::path(0),
            Self::path(i / FOLDER * FOLDER),
        );
        let links = self.links(host, i);
        // Three sections, each a heading, paragraphs and a share of the links.
        let per_section = links.len().div_ceil(3);
        for (s, chunk) in links.chunks(per_section.max(1)).enumerate() {
            h.push_str("<h2>");
            words(seed + s, 3, &mut h);
            h.push_str("</h2>");
            for p in 0..4 {
                h.push_str("<p>");
                h.push_str(&self.paragraphs[hash(&[seed, s, p]) % POOL]);
                h.push_str("</p>");
            }
            h.push_str("<ul>");
            for (href, n) in chunk {
                h.push_str("<li>");
                words(*n, 3, &mut h);
                let _ = write!(h, "<a href=\"{href}\">");
                words(*n + 7, 2, &mut h);
                h.push_str("</a> ");
                words(*n + 11, 3, &mut h);
                h.push_str("</li>");
            }
            h.push_str("</ul>");
        }
        h.push_str(
            "</main><footer><p>Copyright bench web · <a href=\"/\">home</a> · contact: bench@example.com</p></footer></body></html>",
        );
        h
    }
}

/// `i` from `/s{folder}/p{i}.html`.
fn page_number(path: &str) -> Option<usize> {
    let rest = path.strip_prefix("/s")?;
    let (_, file) = rest.split_once('/')?;
    file.strip_prefix('p')?.strip_suffix(".html")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_about_12kb_with_10_to_30_links() {
        let web = Web::new(100_000, vec![1, 2, 3, 4]);
        let mut sizes = Vec::new();
        for i in [0, 1, 77, 4_999, 24_999] {
            let p = web.page(2, i);
            let links = p.matches("<a href=").count();
            assert!((10..=30).contains(&links), "page {i}: {links} links");
            sizes.push(p.len());
        }
        let avg = sizes.iter().sum::<usize>() / sizes.len();
        assert!((9_000..16_000).contains(&avg), "average page {avg} bytes");
        assert_eq!(page_number("/s3/p1700.html"), Some(1700));
        assert_eq!(web.page(1, 5), web.page(1, 5), "deterministic");
    }
}
