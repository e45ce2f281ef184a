//! `search.*`: the full-text index beside the db.

use super::*;

pub(super) static KEYS: &[&dyn Setting] = &[key!(
    "search.live",
    Bool,
    "keep the search index beside the db current while crawling: a side thread takes the pages the crawl stored every 2 s (building the index first when the db has none); false leaves it to `reindex search`",
    |s| s.search_live,
    |s, b| s.search_live = b,
    at_start
)];
