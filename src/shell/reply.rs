//! What a command prints: text for people, JSON for `--json`.

pub struct Reply {
    pub human: String,
    pub json: serde_json::Value,
}

impl Reply {
    /// Nothing to print (`{"ok": true}` as JSON).
    pub fn none() -> Reply {
        Reply {
            human: String::new(),
            json: serde_json::json!({"ok": true}),
        }
    }

    /// A message, the same for people and as JSON.
    pub fn text(t: impl Into<String>) -> Reply {
        let t = t.into();
        Reply {
            json: serde_json::json!({ "message": t.trim_end() }),
            human: t,
        }
    }

    pub fn with(human: String, json: serde_json::Value) -> Reply {
        Reply { human, json }
    }
}
