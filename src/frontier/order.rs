//! The order URLs leave the frontier in. Within a host it is the key order
//! of the `frontier` CF, so an order is a priority computed when a URL is
//! queued (lowest first); across hosts the ready heap picks the host whose
//! politeness delay ends first. The crawl orders of document 002 plug in
//! here as variants.

/// How queued URLs are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Breadth-first: shallower first, then in discovery order.
    #[default]
    Bfs,
}

impl Order {
    /// The priority of a URL at `depth`, the `seq`-th queued (lowest first).
    pub fn priority(self, depth: u16, seq: u64) -> u64 {
        match self {
            Order::Bfs => (u64::from(depth) << 48) | (seq & 0xFFFF_FFFF_FFFF),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bfs_takes_depth_before_discovery_order() {
        let o = Order::Bfs;
        assert!(o.priority(1, 1_000_000) < o.priority(2, 0));
        assert!(o.priority(2, 5) < o.priority(2, 6));
    }
}
