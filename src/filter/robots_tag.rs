//! The `X-Robots-Tag` response header: the same directives as meta robots
//! (read by the same parser), for every user agent or, written
//! `X-Robots-Tag: trawl: noindex`, for one.

use crate::parse::{RobotsDirectives, robots_directives};

/// The directives of one `X-Robots-Tag` value that apply to `agent` (the
/// robots.txt product token); none when it names another agent.
pub fn x_robots_tag(value: &str, agent: &str) -> RobotsDirectives {
    let (scope, rules) = match value.split_once(':') {
        Some((a, r)) if !a.contains(',') && !a.trim().contains(' ') => (Some(a.trim()), r),
        _ => (None, value),
    };
    if scope.is_some_and(|a| !a.eq_ignore_ascii_case(agent)) {
        return RobotsDirectives::default();
    }
    robots_directives(rules, &[','])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_to_everyone_or_to_the_named_agent() {
        let both = RobotsDirectives {
            noindex: true,
            nofollow: true,
        };
        assert_eq!(x_robots_tag("noindex, nofollow", "trawl"), both);
        assert_eq!(x_robots_tag("NONE", "trawl"), both);
        assert!(x_robots_tag("trawl: nofollow", "trawl").nofollow);
        assert_eq!(
            x_robots_tag("googlebot: noindex", "trawl"),
            RobotsDirectives::default()
        );
        // Directives are separated by commas only.
        assert_eq!(
            x_robots_tag("noarchive nofollow", "trawl"),
            RobotsDirectives::default()
        );
        // A date after a directive is not an agent name.
        assert!(x_robots_tag("noindex, unavailable_after: 25 Jun 2010", "trawl").noindex);
    }
}
