//! `learned [show] [N]`: the learned order's link model as the crawl last
//! saved it — how many pages it learned from, and the features that most
//! raise and most lower a link's score.

use serde_json::json;

use super::{Call, Command, Run, Sub, nothing};
use crate::frontier::learned::LinkModel;
use crate::schema::tables::ModelRow;
use crate::shell::error::{Result, ShellError};
use crate::shell::lookup::parse_n;
use crate::shell::reply::Reply;
use crate::shell::{Ctx, table};

pub const COMMAND: Command = Command {
    name: "learned",
    usage: "learned [show [N]]",
    summary: "the learned order's link model: its strongest features",
    examples: &["learned", "learned show 20"],
    arity: (0, Some(2)),
    subs: &[Sub {
        words: "show",
        writes: false,
    }],
    writes: false,
    complete: nothing,
    detail,
    run: Run::Data(run),
};

fn detail() -> String {
    "Under `set crawl.order learned` the crawl trains a logistic regression on each page it \
     judges: the features of the link that queued the page (anchor:, context: and url: words, \
     host:, type:, parent: kept or dropped, sim: the linking page's similarity in tenths) are \
     good when the page filters kept the page. Queued URLs are scored again at 1, 2, 4, 8 … \
     pages learned. The model is saved every minute, at each of those steps and when a run ends."
        .into()
}

/// Features listed each way unless N is given.
const DEFAULT_TOP: usize = 10;

fn run(sh: &mut Ctx, call: &Call) -> Result<Reply> {
    let n = match call.args[..] {
        [] | ["show"] => DEFAULT_TOP,
        ["show", n] => parse_n(n)?,
        _ => return Err(ShellError::Usage),
    };
    let Some(record) = sh.store.meta::<ModelRow>()? else {
        return Ok(Reply::record(
            "no link model yet (set crawl.order learned, then crawl: it learns from each page judged)",
            json!({"updates": 0}),
        ));
    };
    let model = LinkModel::from_record(record);
    let (positive, negative) = model.top(n);
    let rows = |list: &[(&str, f32)]| -> Vec<Vec<String>> {
        list.iter()
            .map(|(name, w)| vec![format!("{w:+.3}"), name.to_string()])
            .collect()
    };
    let mut human = format!(
        "link model: {} pages learned, {} relevant; {} features\n",
        table::thousands(model.updates),
        table::thousands(model.positives),
        table::thousands(model.len() as u64)
    );
    human += "\nraise a link's score:\n";
    human += &table::render(&["weight", "feature"], &rows(&positive), sh.sink.width);
    human += "\nlower it:\n";
    human += &table::render(&["weight", "feature"], &rows(&negative), sh.sink.width);
    let list = |l: &[(&str, f32)]| -> Vec<serde_json::Value> {
        l.iter()
            .map(|(name, w)| json!({"feature": name, "weight": w}))
            .collect()
    };
    let j = json!({"updates": model.updates, "positives": model.positives,
        "features": model.len(), "positive": list(&positive), "negative": list(&negative)});
    Ok(Reply::record(human, j))
}
