//! The `plugins` and `modes` tables: what is installed, from where, whether it is on, and the
//! modes the user set. Kinds, effects and modes are stored as their names and read back typed;
//! a row that does not parse is [`StoreError::Corrupt`] naming the row, never skipped.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, Transaction, params};

use super::StoreError;
use crate::policy::Mode;
use crate::registry::{Effect, PluginKind};

impl ToSql for Effect {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for Effect {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        Effect::parse(text).ok_or_else(|| unknown("effect", text))
    }
}

impl ToSql for Mode {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for Mode {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        Mode::parse(text).ok_or_else(|| unknown("mode", text))
    }
}

impl ToSql for PluginKind {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for PluginKind {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        PluginKind::parse(text).ok_or_else(|| unknown("kind", text))
    }
}

/// A stored name this version does not know, as a conversion error that says which.
pub(crate) fn unknown(what: &str, text: &str) -> FromSqlError {
    FromSqlError::Other(format!("unknown {what} \"{text}\"").into())
}

/// A column that did not convert, as a corrupt row named by `row`.
pub(crate) fn corrupt(row: String) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |e| match e {
        rusqlite::Error::FromSqlConversionFailure(_, _, cause) => {
            StoreError::Corrupt(format!("{row}: {cause}"))
        }
        other => StoreError::Sql(other),
    }
}

/// An installed plugin as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginRow {
    pub id: String,
    pub kind: PluginKind,
    pub source: String,
    /// The manifest JSON of a document or remote plugin; bundled plugins come from code.
    pub manifest: Option<String>,
    pub enabled: bool,
}

pub fn put_plugin(tx: &Transaction<'_>, row: &PluginRow, at_ms: i64) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO plugins (id, kind, source, manifest, enabled, installed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (id) DO UPDATE SET kind = ?2, source = ?3, manifest = ?4",
        params![row.id, row.kind, row.source, row.manifest, row.enabled, at_ms],
    )?;
    Ok(())
}

pub fn delete_plugin(tx: &Transaction<'_>, id: &str) -> Result<(), StoreError> {
    tx.execute("DELETE FROM plugins WHERE id = ?1", [id])?;
    Ok(())
}

pub fn set_enabled(tx: &Transaction<'_>, id: &str, enabled: bool) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE plugins SET enabled = ?2 WHERE id = ?1",
        params![id, enabled],
    )?;
    Ok(())
}

pub fn plugins(conn: &Connection) -> Result<Vec<PluginRow>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT id, kind, source, manifest, enabled FROM plugins ORDER BY id")?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let id: String = r.get(0)?;
        out.push(PluginRow {
            kind: r.get(1).map_err(corrupt(format!("plugins row \"{id}\"")))?,
            source: r.get(2)?,
            manifest: r.get(3)?,
            enabled: r.get(4)?,
            id,
        });
    }
    Ok(out)
}

pub fn set_mode(
    tx: &Transaction<'_>,
    plugin: &str,
    effect: Effect,
    mode: Mode,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO modes (plugin, effect, mode) VALUES (?1, ?2, ?3)
         ON CONFLICT (plugin, effect) DO UPDATE SET mode = ?3",
        params![plugin, effect, mode],
    )?;
    Ok(())
}

/// Forgets the mode the user set for one effect of `plugin`: its default applies again.
pub fn clear_mode(tx: &Transaction<'_>, plugin: &str, effect: Effect) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM modes WHERE plugin = ?1 AND effect = ?2",
        params![plugin, effect],
    )?;
    Ok(())
}

/// Every mode the user set, as (plugin, effect, mode).
pub fn modes(conn: &Connection) -> Result<Vec<(String, Effect, Mode)>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT plugin, effect, mode FROM modes ORDER BY plugin, effect")?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let plugin: String = r.get(0)?;
        let effect_text: String = r.get(1)?;
        let effect: Effect = r.get(1).map_err(corrupt(format!(
            "modes row (plugin \"{plugin}\", effect \"{effect_text}\")"
        )))?;
        let mode: Mode = r.get(2).map_err(corrupt(format!(
            "modes row (plugin \"{plugin}\", effect \"{effect_text}\")"
        )))?;
        out.push((plugin, effect, mode));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    /// A database whose CHECK constraints are gone (an older or hand-edited file) can still
    /// hold a name this version does not know.
    fn store_with_mode(effect: &str, mode: &str) -> Store {
        let store = Store::open_in_memory().unwrap();
        store
            .write(|tx| {
                tx.execute_batch(
                    "PRAGMA ignore_check_constraints = ON;
                     INSERT INTO plugins (id, kind, source, enabled, installed_at)
                         VALUES ('wallet', 'bundled', 'bundled', 1, 0);",
                )?;
                tx.execute(
                    "INSERT INTO modes (plugin, effect, mode) VALUES ('wallet', ?1, ?2)",
                    [effect, mode],
                )?;
                Ok(())
            })
            .unwrap();
        store
    }

    #[test]
    fn a_mode_row_with_an_unknown_effect_is_corrupt_and_names_the_row() {
        let store = store_with_mode("cash", "auto");
        let err = store.read(modes).unwrap_err();
        assert_eq!(
            err.to_string(),
            "stored data is not valid: modes row (plugin \"wallet\", effect \"cash\"): unknown effect \"cash\""
        );
    }

    #[test]
    fn a_mode_row_with_an_unknown_mode_is_corrupt_and_names_the_row() {
        let store = store_with_mode("money", "sometimes");
        let err = store.read(modes).unwrap_err();
        assert_eq!(
            err.to_string(),
            "stored data is not valid: modes row (plugin \"wallet\", effect \"money\"): unknown mode \"sometimes\""
        );
    }

    #[test]
    fn modes_read_back_typed() {
        let store = store_with_mode("money", "ask");
        assert_eq!(
            store.read(modes).unwrap(),
            vec![("wallet".to_owned(), Effect::Money, Mode::Ask)]
        );
    }
}
