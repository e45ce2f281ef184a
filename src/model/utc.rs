//! Calendar time in UTC from the stored clock (milliseconds since the
//! epoch), for the shell's tables and the dates archives carry.

/// A moment in UTC, to the millisecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utc {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub milli: u32,
}

impl Utc {
    pub fn of_ms(ms: u64) -> Utc {
        let secs = ms / 1000;
        let (days, rem) = (secs / 86_400, secs % 86_400);
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
        Utc {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            milli: (ms % 1000) as u32,
        }
    }

    /// `2026-11-28T08:13:05.123Z`: ISO 8601 to the millisecond, as WARC
    /// 1.1 dates are.
    pub fn iso_millis(self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.milli
        )
    }

    /// Milliseconds since the epoch of a WARC date (`2026-11-28T08:13:05Z`,
    /// with or without a fraction of a second); None when it is not one.
    pub fn parse_iso(s: &str) -> Option<u64> {
        let b = s.trim().as_bytes();
        let num = |r: std::ops::Range<usize>| -> Option<u64> {
            let part = b.get(r)?;
            part.iter()
                .all(u8::is_ascii_digit)
                .then(|| part.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
        };
        let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
        if seps.iter().any(|&(i, c)| b.get(i) != Some(&c)) || b.last() != Some(&b'Z') {
            return None;
        }
        let (year, month, day) = (num(0..4)? as i64, num(5..7)?, num(8..10)?);
        let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&month)
            || !(1..=31).contains(&day)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return None;
        }
        let milli = match b.get(19) {
            Some(b'.') => {
                let digits = &b[20..b.len() - 1];
                let n = digits.len().min(3);
                let v = num(20..20 + n)?;
                (digits.iter().all(u8::is_ascii_digit)).then_some(v * 10u64.pow(3 - n as u32))?
            }
            Some(b'Z') if b.len() == 20 => 0,
            _ => return None,
        };
        // Days since 1970-01-01 of the civil date (Howard Hinnant's algorithm).
        let y = if month <= 2 { year - 1 } else { year };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = month as i64;
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        let secs = days * 86_400 + (hour * 3600 + minute * 60 + second) as i64;
        u64::try_from(secs).ok().map(|s| s * 1000 + milli)
    }

    /// `20261128081305`: a CDX timestamp, to the second.
    pub fn timestamp14(self) -> String {
        format!(
            "{:04}{:02}{:02}{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `20261128081305123`: Heritrix's 17-digit timestamp, for file names.
    pub fn timestamp17(self) -> String {
        format!("{}{:03}", self.timestamp14(), self.milli)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warc_dates_parse_back() {
        for ms in [0, 1_709_251_199_999, 1_795_852_385_123, 951_782_400_000] {
            let iso = Utc::of_ms(ms).iso_millis();
            assert_eq!(Utc::parse_iso(&iso), Some(ms), "{iso}");
        }
        assert_eq!(
            Utc::parse_iso("2026-11-28T07:53:05Z"),
            Some(1_795_852_385_000)
        );
        for bad in [
            "2026-11-28",
            "2026-13-28T07:53:05Z",
            "2026-11-28T07:53:05",
            "x",
        ] {
            assert_eq!(Utc::parse_iso(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates_across_leap_years_and_the_epoch() {
        assert_eq!(Utc::of_ms(0).iso_millis(), "1970-01-01T00:00:00.000Z");
        // 2024-02-29T23:59:59.999Z
        assert_eq!(
            Utc::of_ms(1_709_251_199_999).iso_millis(),
            "2024-02-29T23:59:59.999Z"
        );
        assert_eq!(
            Utc::of_ms(1_795_852_385_123).iso_millis(),
            "2026-11-28T07:53:05.123Z"
        );
    }
}
