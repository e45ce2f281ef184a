//! Which bits are set in more than half of a stream of 64-bit hashes: the
//! last step of a simhash, done per shingle. Hashes are summed bit-sliced
//! (Harley and Seal's carry-save adders: sixteen hashes become one word of
//! "sixteens" in fifteen adds of five operations), and only those words are
//! counted per bit, eight bits at once in byte lanes. A per-bit count of
//! every hash cost four times as much.

/// Running bit counts of the hashes pushed.
pub(super) struct Majority {
    block: [u64; 16],
    filled: usize,
    /// Bit-sliced counts below sixteen of the hashes in full blocks.
    ones: u64,
    twos: u64,
    fours: u64,
    eights: u64,
    /// Per-bit counts of sixteens: byte lanes and their overflow.
    lanes: [u64; 8],
    in_lanes: u32,
    sixteens: [u32; 64],
    pushed: u32,
}

impl Default for Majority {
    fn default() -> Self {
        Majority {
            block: [0; 16],
            filled: 0,
            ones: 0,
            twos: 0,
            fours: 0,
            eights: 0,
            lanes: [0; 8],
            in_lanes: 0,
            sixteens: [0; 64],
            pushed: 0,
        }
    }
}

impl Majority {
    #[inline(always)]
    pub fn push(&mut self, h: u64) {
        self.block[self.filled] = h;
        self.filled += 1;
        self.pushed += 1;
        if self.filled == 16 {
            self.add_block();
            self.filled = 0;
        }
    }

    /// Hashes pushed.
    pub fn len(&self) -> u32 {
        self.pushed
    }

    /// The bits set in more than half of the hashes pushed.
    pub fn finish(mut self) -> u64 {
        self.empty_lanes();
        let mut counts = [0u32; 64];
        for (i, count) in counts.iter_mut().enumerate() {
            let bit = |w: u64| (w >> i & 1) as u32;
            *count = 16 * self.sixteens[i]
                + 8 * bit(self.eights)
                + 4 * bit(self.fours)
                + 2 * bit(self.twos)
                + bit(self.ones);
            *count += self.block[..self.filled]
                .iter()
                .map(|&h| bit(h))
                .sum::<u32>();
        }
        let n = self.pushed;
        (0..64).fold(0, |out, i| out | (u64::from(2 * counts[i] > n) << i))
    }

    fn add_block(&mut self) {
        let d = self.block;
        let (twos_a, ones) = csa(self.ones, d[0], d[1]);
        let (twos_b, ones) = csa(ones, d[2], d[3]);
        let (fours_a, twos) = csa(self.twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, d[4], d[5]);
        let (twos_b, ones) = csa(ones, d[6], d[7]);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (eights_a, fours) = csa(self.fours, fours_a, fours_b);
        let (twos_a, ones) = csa(ones, d[8], d[9]);
        let (twos_b, ones) = csa(ones, d[10], d[11]);
        let (fours_a, twos) = csa(twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, d[12], d[13]);
        let (twos_b, ones) = csa(ones, d[14], d[15]);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (eights_b, fours) = csa(fours, fours_a, fours_b);
        let (sixteens, eights) = csa(self.eights, eights_a, eights_b);
        (self.ones, self.twos, self.fours, self.eights) = (ones, twos, fours, eights);
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            *lane += SPREAD[(sixteens >> (8 * j)) as u8 as usize];
        }
        self.in_lanes += 1;
        if self.in_lanes == 255 {
            self.empty_lanes();
        }
    }

    fn empty_lanes(&mut self) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            for k in 0..8 {
                self.sixteens[8 * j + k] += ((*lane >> (8 * k)) & 0xff) as u32;
            }
            *lane = 0;
        }
        self.in_lanes = 0;
    }
}

/// A carry-save adder: per bit, the carry and the sum of `a + b + c`.
#[inline(always)]
fn csa(a: u64, b: u64, c: u64) -> (u64, u64) {
    let u = a ^ b;
    ((a & b) | (u & c), u ^ c)
}

/// Each byte value with its eight bits spread to the low bit of eight
/// bytes, so one add counts a byte's bits in eight lanes at once.
static SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut bit = 0;
        while bit < 8 {
            if b & (1 << bit) != 0 {
                t[b] |= 1 << (8 * bit);
            }
            bit += 1;
        }
        b += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The majority by a plain loop over each bit of each hash.
    fn slow(hashes: &[u64]) -> u64 {
        (0..64).fold(0u64, |out, i| {
            let ones = hashes.iter().filter(|h| *h >> i & 1 == 1).count();
            out | (u64::from(2 * ones > hashes.len()) << i)
        })
    }

    #[test]
    fn counts_like_a_bit_loop_at_every_length() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut hashes = Vec::new();
        // Past 16 × 255 blocks the lanes empty; odd lengths leave a tail;
        // skewed bits make the counts near half matter.
        for n in (0..70).chain([255, 256, 4079, 4080, 4081, 4096 * 16 + 7]) {
            hashes.clear();
            for _ in 0..n {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                hashes.push(x & (x >> 7) | 0x8000_0000_0000_0001);
            }
            let mut m = Majority::default();
            hashes.iter().for_each(|&h| m.push(h));
            assert_eq!(m.len() as usize, n);
            assert_eq!(m.finish(), slow(&hashes), "{n} hashes");
        }
    }
}
