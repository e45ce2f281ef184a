//! `seed accept HOST` and `seed reject HOST`: a person's decision about a
//! host `discover seeds` proposed, kept in the host's `sites` record so
//! that it is not proposed again. Accepted, the host's home page becomes
//! a seed and the host a seed site; one that resolves to a private or
//! loopback address only with `--allow-private`, which also lets the crawl
//! fetch it there (an accepted seed site never gets the network guard's
//! seed exception by being accepted).

use super::seed::Admission;
use super::site_fields::Values;
use crate::crawl::probe;
use crate::fetch::AddrClass;
use crate::model::{self, HostId, now_ms};
use crate::schema::tables::Sites;
use crate::schema::{Decision, SiteRecord};
use crate::shell::Ctx;
use crate::shell::error::{Result, bail};
use crate::shell::reply::Reply;

/// Where a seed site found by `discover seeds` was found.
const SOURCE: &str = "co-link discovery";

impl Ctx {
    /// The origins `host` names: a URL or origin names one; a bare name
    /// (`x.org`) names its http and https origins, those a record has (a
    /// probed candidate) if any.
    fn candidate_origins(&self, host: &str) -> Result<Vec<(HostId, String)>> {
        let tries: Vec<String> = if host.contains("://") {
            vec![host.to_string()]
        } else {
            vec![format!("http://{host}/"), format!("https://{host}/")]
        };
        let mut all = Vec::new();
        for t in &tries {
            if let Ok(u) = model::normalize(t) {
                all.push((u.host_id(), u.host_key()));
            }
        }
        if all.is_empty() {
            bail!("{host}: not a host name or URL");
        }
        let mut known = Vec::new();
        for o in &all {
            if self.store.row::<Sites>(&o.0)?.is_some() {
                known.push(o.clone());
            }
        }
        Ok(if known.is_empty() { all } else { known })
    }

    /// `seed accept HOST [--FIELD VALUE]...`: its home page becomes a
    /// seed, its site records the decision (and where it was found).
    pub(super) fn accept_site(
        &mut self,
        host: &str,
        mut values: Values,
        allow_private: bool,
    ) -> Result<Reply> {
        let (id, origin) = match &self.candidate_origins(host)?[..] {
            [one] => one.clone(),
            _ => bail!(
                "{host}: http or https? give the origin discover seeds shows (https://{host})"
            ),
        };
        let home = model::normalize(&format!("{origin}/")).map_err(|e| e.to_string())?;
        let resolve = self.settings.fetch.resolve.clone();
        let found = (self.rt.clone()).block_on(probe::non_public_addresses(
            &resolve,
            &[home.host().to_string()],
            || true,
        ));
        match found.first().copied().flatten() {
            Some((ip, AddrClass::Forbidden(what))) => {
                bail!("{origin} resolves to {ip} ({what}): the network guard never fetches it")
            }
            Some((ip, AddrClass::Private(what))) if !allow_private => bail!(
                "{origin} resolves to {ip}, a {what} address: `seed accept {host} --allow-private` accepts it and lets the crawl fetch it there"
            ),
            _ => {}
        }
        let stored = self.store.row::<Sites>(&id)?;
        let has_source = values.iter().any(|(f, _)| *f == "source");
        if !has_source && stored.as_ref().is_none_or(|r| r.source.is_empty()) {
            values.push(("source", SOURCE.to_string()));
        }
        let reply = self.admit(vec![Admission {
            urls: vec![home],
            values,
            decision: Some(if allow_private {
                Decision::AcceptedPrivate
            } else {
                Decision::Accepted
            }),
        }])?;
        Ok(Reply::text(format!("{origin} accepted: {}", reply.view())))
    }

    /// `seed reject HOST`: never proposed again.
    pub(super) fn reject_site(&mut self, host: &str) -> Result<Reply> {
        if let Ok(site) = self.find_site(host) {
            bail!(
                "{} is a seed site: seed remove its seed URLs first ({})",
                site.rec.origin,
                site.urls.join(" ")
            );
        }
        // A bare name's http and https origins both, unless one is known.
        let origins = self.candidate_origins(host)?;
        let mut b = self.store.batch();
        for (id, origin) in &origins {
            let mut rec = self.store.row::<Sites>(id)?.unwrap_or_else(|| SiteRecord {
                origin: origin.clone(),
                source: SOURCE.into(),
                added_ms: now_ms(),
                ..SiteRecord::default()
            });
            rec.decision = Decision::Rejected;
            rec.decided_ms = now_ms();
            b.put_row::<Sites>(id, &rec);
        }
        b.write()?;
        let names: Vec<&str> = origins.iter().map(|(_, o)| o.as_str()).collect();
        Ok(Reply::text(format!(
            "{} rejected: discover seeds will not propose it again",
            names.join(" and ")
        )))
    }
}
