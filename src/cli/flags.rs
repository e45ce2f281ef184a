//! The `trawl crawl` flags that set a setting: one row each, naming the
//! setting and the unit its number is in. The value goes through the
//! settings table, so a flag is typed, range-checked and defaulted exactly
//! as `set KEY VALUE` in the shell; clap's arguments are made from this
//! table, so a flag cannot exist without its setting.

use clap::{Arg, ArgMatches};

use crate::settings;
use crate::settings::CrawlSettings;

pub struct Flag {
    /// The long flag, without `--`.
    pub flag: &'static str,
    /// The setting it sets.
    pub key: &'static str,
    /// Appended to the value before the setting parses it (`--delay-ms 0`
    /// is `set crawl.delay 0ms`).
    pub unit: &'static str,
    pub value_name: &'static str,
}

pub static FLAGS: &[Flag] = &[
    flag("depth", "crawl.depth", "", "N"),
    flag("max-pages", "crawl.max_pages", "", "N"),
    flag("delay-ms", "crawl.delay", "ms", "MS"),
    flag("concurrency", "crawl.concurrency", "", "N"),
    flag("per-host", "crawl.per_host", "", "N"),
    flag("max-outlinks", "crawl.max_outlinks", "", "N"),
    flag("scope", "crawl.scope", "", "SCOPE"),
    flag("site-batch", "crawl.site_batch", "", "N"),
    flag("user-agent", "fetch.user_agent", "", "UA"),
    flag("ca-file", "fetch.ca_file", "", "PEM"),
    flag("max-body-bytes", "fetch.max_body", "", "BYTES"),
    flag("timeout-secs", "fetch.timeout", "s", "SECS"),
    flag(
        "max-crawl-delay-secs",
        "robots.max_crawl_delay",
        "s",
        "SECS",
    ),
    flag("warc", "warc.dir", "", "DIR"),
];

const fn flag(
    flag: &'static str,
    key: &'static str,
    unit: &'static str,
    value_name: &'static str,
) -> Flag {
    Flag {
        flag,
        key,
        unit,
        value_name,
    }
}

impl Flag {
    fn setting(&self) -> &'static dyn settings::Setting {
        settings::find(self.key).expect("every flag names a setting (tested)")
    }

    /// `--help`: the setting's meaning, name and default.
    fn help(&self) -> String {
        let k = self.setting();
        format!(
            "{} (setting {}, default {}{})",
            k.meaning(),
            k.name(),
            k.default_value(),
            if self.unit.is_empty() {
                String::new()
            } else {
                format!("; the number is in {}", self.unit)
            }
        )
    }
}

/// The flags given on one command line, with their values as typed.
#[derive(Default)]
pub struct SettingFlags(Vec<(&'static Flag, String)>);

impl SettingFlags {
    /// Applies each flag to `s` through the settings table.
    pub fn apply(&self, s: &mut CrawlSettings) -> Result<(), String> {
        for (f, value) in &self.0 {
            if !f.unit.is_empty() && value.parse::<u64>().is_err() {
                return Err(format!(
                    "--{} {value}: expected a whole number of {} (or --set {}=DURATION)",
                    f.flag, f.unit, f.key
                ));
            }
            f.setting()
                .set(s, &format!("{value}{}", f.unit))
                .map_err(|e| format!("--{} {value}: {e}", f.flag))?;
        }
        Ok(())
    }
}

impl clap::FromArgMatches for SettingFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let given = FLAGS
            .iter()
            .filter_map(|f| m.get_one::<String>(f.flag).map(|v| (f, v.clone())))
            .collect();
        Ok(SettingFlags(given))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for SettingFlags {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        FLAGS.iter().fold(cmd, |cmd, f| {
            cmd.arg(
                Arg::new(f.flag)
                    .long(f.flag)
                    .value_name(f.value_name)
                    .allow_hyphen_values(true)
                    .help(f.help()),
            )
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(pairs: &[(&str, &str)]) -> Result<CrawlSettings, String> {
        let given = pairs
            .iter()
            .map(|(f, v)| (FLAGS.iter().find(|x| x.flag == *f).unwrap(), v.to_string()))
            .collect();
        let mut s = CrawlSettings::default();
        SettingFlags(given).apply(&mut s)?;
        Ok(s)
    }

    #[test]
    fn every_flag_names_a_setting_once() {
        for (i, f) in FLAGS.iter().enumerate() {
            assert!(
                settings::find(f.key).is_some(),
                "--{}: no setting {}",
                f.flag,
                f.key
            );
            assert!(
                FLAGS[..i]
                    .iter()
                    .all(|g| g.flag != f.flag && g.key != f.key)
            );
            assert!(!f.help().is_empty());
        }
    }

    #[test]
    fn values_go_through_the_settings_table() {
        let s = apply(&[("delay-ms", "250"), ("timeout-secs", "5"), ("depth", "3")]).unwrap();
        assert_eq!(s.delay, std::time::Duration::from_millis(250));
        assert_eq!(s.fetch.total_timeout, std::time::Duration::from_secs(5));
        assert_eq!(s.max_depth, Some(3));
        let e = apply(&[("concurrency", "0")]).unwrap_err();
        assert!(e.starts_with("--concurrency 0: crawl.concurrency"), "{e}");
        let e = apply(&[("delay-ms", "-1")]).unwrap_err();
        assert!(
            e.starts_with("--delay-ms -1: expected a whole number of ms"),
            "{e}"
        );
        let e = apply(&[("timeout-secs", "0")]).unwrap_err();
        assert!(e.starts_with("--timeout-secs 0: fetch.timeout"), "{e}");
        assert!(apply(&[("scope", "planet")]).is_err());
    }
}
