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
}

#[cfg(test)]
mod tests {
    use super::*;

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
