//! The shell's error: every failure a command can meet, each shown as one
//! line. Commands return it with `?` from store, codec and batch errors
//! alike; a wrong call is `Usage`, which the dispatcher turns into the
//! command's usage line from the table.

use crate::store::StoreError;

#[derive(Debug)]
pub enum ShellError {
    /// The words do not fit the command: print its usage line.
    Usage,
    /// A one-line message for the user.
    Msg(String),
    /// The database failed (read, write, decode).
    Store(StoreError),
    /// A sourced file failed at a line.
    Batch(super::batch::BatchError),
}

pub type Result<T> = std::result::Result<T, ShellError>;

impl std::fmt::Display for ShellError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShellError::Usage => f.write_str("wrong arguments (help lists usage)"),
            ShellError::Msg(m) => f.write_str(m),
            ShellError::Store(e) => write!(f, "{e}"),
            ShellError::Batch(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ShellError {}

impl From<String> for ShellError {
    fn from(m: String) -> Self {
        ShellError::Msg(m)
    }
}

impl From<&str> for ShellError {
    fn from(m: &str) -> Self {
        ShellError::Msg(m.to_string())
    }
}

impl From<StoreError> for ShellError {
    fn from(e: StoreError) -> Self {
        ShellError::Store(e)
    }
}

impl From<super::batch::BatchError> for ShellError {
    fn from(e: super::batch::BatchError) -> Self {
        ShellError::Batch(e)
    }
}

impl From<crate::schema::CodecError> for ShellError {
    fn from(e: crate::schema::CodecError) -> Self {
        ShellError::Msg(format!("a stored record is unreadable: {e}"))
    }
}

/// `Err(Msg)` from a format string: `bail!("{url} is not in the db")`.
macro_rules! bail {
    ($($t:tt)*) => {
        return Err($crate::shell::error::ShellError::Msg(format!($($t)*)))
    };
}
pub(crate) use bail;
