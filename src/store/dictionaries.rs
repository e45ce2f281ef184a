//! The db's zstd dictionaries in `meta` (`dict:` ‖ id), and their
//! registration with the frame decoder (`schema::dictionary`).

use super::{Result, Store};
use crate::schema::dictionary::{self, Dictionary};
use crate::schema::{CF_META, meta_keys};

impl Store {
    /// The dictionaries the db holds, oldest id first. Rows that are not a
    /// dictionary are skipped (a frame that needs one fails by its id).
    pub fn dictionaries(&self) -> Result<Vec<Dictionary>> {
        let mut found = Vec::new();
        for row in self.scan(CF_META, meta_keys::DICT_PREFIX) {
            let (_, value) = row?;
            found.extend(Dictionary::from_bytes(&value));
        }
        Ok(found)
    }

    /// Makes every dictionary of the db known to the frame decoder: at
    /// open, and when a read-only attach catches up with a crawl that has
    /// trained one since.
    pub(super) fn register_dictionaries(&self) -> Result<()> {
        // A catch-up runs before every shell command: a dictionary already
        // known is not copied again.
        for row in self.scan(CF_META, meta_keys::DICT_PREFIX) {
            let (_, value) = row?;
            let id = zstd::zstd_safe::get_dict_id_from_dict(&value).map(|id| id.get());
            if id.is_some_and(|id| !dictionary::is_known(id))
                && let Some(d) = Dictionary::from_bytes(&value)
            {
                d.register();
            }
        }
        Ok(())
    }

    /// Stores a dictionary, alone and through the WAL, then registers it:
    /// a frame that names it is written after it, so no kill can keep the
    /// frame and lose the dictionary.
    pub fn put_dictionary(&self, dict: &Dictionary) -> Result<()> {
        let mut b = self.batch();
        b.put_raw(CF_META, &meta_keys::dict(dict.id), &dict.bytes);
        b.write()?;
        dict.register();
        Ok(())
    }
}
