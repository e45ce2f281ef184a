//! `crawl.stop_when`: the rules that end a crawl once it stops finding
//! relevant pages, as a setting's value (the ledger's harvest applies
//! them).

/// One rule of `crawl.stop_when`.
#[derive(Clone, Debug, PartialEq)]
pub enum StopRule {
    /// Harvest rate over the last `over` pages below `below`.
    Harvest { below: f64, over: u64 },
    /// No relevant page in the last `over` pages.
    NoRelevant { over: u64 },
    /// Mean share of a page's terms never seen before, over the last
    /// `over` pages, below `below` (the crawl's vocabulary is saturated).
    Saturation { below: f64, over: u64 },
}

/// Words the rules are written with, for errors and help.
pub const STOP_SYNTAX: &str = "comma-separated rules: harvest<X/N (harvest rate over the last N pages below X), no-relevant/N (no relevant page in the last N), saturation<X/N (share of new terms per page below X over N pages), or none";

impl StopRule {
    /// Parses `harvest<0.1/500, no-relevant/1000, saturation<0.02/300`
    /// (or `none`: no rule).
    pub fn parse_list(raw: &str) -> Result<Vec<StopRule>, String> {
        if raw.trim().eq_ignore_ascii_case("none") {
            return Ok(Vec::new());
        }
        raw.split(',')
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(StopRule::parse)
            .collect()
    }

    fn parse(rule: &str) -> Result<StopRule, String> {
        let bad = || format!("{rule:?} is not a stop rule");
        let (head, over) = rule.rsplit_once('/').ok_or_else(bad)?;
        let over: u64 = over
            .trim()
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{rule:?}: N must be a whole number ≥ 1"))?;
        let share = |x: &str| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or_else(|| format!("{rule:?}: X must be a number from 0 to 1"))
        };
        let head = head.trim().to_ascii_lowercase();
        match head.split_once('<') {
            Some(("harvest", x)) => Ok(StopRule::Harvest {
                below: share(x)?,
                over,
            }),
            Some(("saturation", x)) => Ok(StopRule::Saturation {
                below: share(x)?,
                over,
            }),
            None if head == "no-relevant" => Ok(StopRule::NoRelevant { over }),
            _ => Err(bad()),
        }
    }

    /// The rule as written back (`set` shows it, the run record keeps it).
    pub fn text(&self) -> String {
        match self {
            StopRule::Harvest { below, over } => format!("harvest<{below}/{over}"),
            StopRule::NoRelevant { over } => format!("no-relevant/{over}"),
            StopRule::Saturation { below, over } => format!("saturation<{below}/{over}"),
        }
    }

    pub fn list_text(rules: &[StopRule]) -> String {
        match rules {
            [] => "none".into(),
            r => r.iter().map(StopRule::text).collect::<Vec<_>>().join(","),
        }
    }
}
