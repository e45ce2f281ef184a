//! Document 000 keeps its key-domain set in a trie, arguing a trie beats
//! hashing. This measures both on the same question — does a host contain
//! any key domain — over a mix of passing and failing hosts.
//!
//! Run: `cargo bench --bench domain_lookup` (add `-- --quick` for a fast pass).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use trawl::filter::domain::{DomainHashSet, DomainMatcher, DomainTrie};

fn keys(n: usize) -> Vec<String> {
    let mut k: Vec<String> = [
        "163", "souhu", "uestc", "ctbu", "sina", "tsinghua", "pku", "zju",
    ]
    .map(String::from)
    .to_vec();
    k.extend((0..n.saturating_sub(k.len())).map(|i| format!("site{i:04}x")));
    k
}

fn hosts() -> Vec<String> {
    let mut h = Vec::new();
    for i in 0..500 {
        h.push(format!("news{i}.sina.com.cn"));
        h.push(format!("www.example{i}.com"));
        h.push(format!("lib.dept{i}.uestc.edu.cn"));
        h.push(format!("cdn{i}.images.static-content.net"));
    }
    h.into_iter().map(|s| s.replace('-', "")).collect()
}

fn bench(c: &mut Criterion) {
    let hosts = hosts();
    for n in [8usize, 1000] {
        let ks = keys(n);
        let (mut trie, mut set) = (DomainTrie::default(), DomainHashSet::default());
        for k in &ks {
            trie.insert(k);
            set.insert(k);
        }
        let mut g = c.benchmark_group(format!("domain_lookup/{n}_keys/2000_hosts"));
        g.bench_function("trie", |b| {
            b.iter(|| {
                hosts
                    .iter()
                    .filter(|h| trie.contains_key_of(black_box(h)))
                    .count()
            })
        });
        g.bench_function("hash_set", |b| {
            b.iter(|| {
                hosts
                    .iter()
                    .filter(|h| set.contains_key_of(black_box(h)))
                    .count()
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
