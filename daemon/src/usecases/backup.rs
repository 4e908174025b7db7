//! Exporting everything as one JSON document, and importing one: the CLI's
//! `parley export` and `parley import`. An import goes through the state
//! owner, so no write path bypasses it.

use std::path::{Path, PathBuf};

use parley_protocol::methods::ExportDocument;

use super::Context;
use crate::regular_file::{self, RegularFileError};
use crate::state::{ImportError, Stopped};
use crate::store::{Export, ExportCounts};

/// Why an export or import failed.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("not a Parley export: \"format\" must be \"parley-export\"")]
    NotAnExport,
    #[error("nothing was imported: {0}; fix or remove that record in the file and import it again")]
    BadRecord(String),
    #[error("the store could not be read or written: {0}")]
    Store(String),
    #[error("the Parley daemon is shutting down; try again in a moment")]
    Stopped,
    /// The file named cannot be used as asked; the text says why.
    #[error("{0}")]
    File(String),
}

impl From<Stopped> for BackupError {
    fn from(_: Stopped) -> Self {
        BackupError::Stopped
    }
}

/// Every review, thread, session and walkthrough, as the export format has them (the
/// hub's `store/export` document).
pub async fn export(cx: &Context) -> Result<ExportDocument, BackupError> {
    let export = cx.store.export().map_err(|e| BackupError::Store(e.to_string()));
    // Reading every record leaves sled holding them; a fresh handle does
    // not. In the background: it may wait for a moment the store is idle.
    let store = cx.store.clone();
    tokio::spawn(async move { store.release_memory().await });
    ExportDocument::try_from(export?).map_err(|e| BackupError::Store(format!("a record would not encode: {e}")))
}

/// What [`export_to`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    pub path: PathBuf,
    pub bytes: u64,
    pub counts: ExportCounts,
}

/// Writes every review, thread and session to the file at `path` (absolute),
/// a record at a time, so a store of any size is exported; the file is
/// replaced only once the export is whole.
pub async fn export_to(cx: &Context, path: &Path) -> Result<Written, BackupError> {
    let path = checked(path)?;
    let store = cx.store.clone();
    let target = path.clone();
    let written = tokio::task::spawn_blocking(move || {
        let shown = target.display();
        if let Ok(meta) = std::fs::metadata(&target)
            && !meta.is_file()
        {
            return Err(format!("{shown} is not a regular file: give the path of a file to write the export to"));
        }
        store.export_to(&target).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| BackupError::Store(e.to_string()))?
    .map_err(BackupError::File);
    let store = cx.store.clone();
    tokio::spawn(async move { store.release_memory().await });
    let (counts, bytes) = written?;
    Ok(Written { path, bytes, counts })
}

/// Imports the export in the file at `path` (absolute), read as it is
/// parsed, so an export of any size is restored. Only a regular file is
/// read: a FIFO or a device is refused at once.
pub async fn import_from(cx: &Context, path: &Path) -> Result<ImportCounts, BackupError> {
    let path = checked(path)?;
    let shown = path.display().to_string();
    let export = tokio::task::spawn_blocking(move || {
        let file = regular_file::open(&path).map_err(|e| match e {
            RegularFileError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                format!("{} does not exist: give the path of an export file", path.display())
            }
            e => format!("{}: {e}: give the path of an export file", path.display()),
        })?;
        serde_json::from_reader::<_, Export>(std::io::BufReader::new(file))
            .map_err(|e| format!("{} is not a Parley export: {e}", path.display()))
    })
    .await
    .map_err(|e| BackupError::Store(format!("reading {shown} failed: {e}")))?
    .map_err(BackupError::File)?;
    import_records(cx, export).await
}

/// A path the daemon may be given: absolute, as the daemon's working
/// directory is not the caller's.
fn checked(path: &Path) -> Result<PathBuf, BackupError> {
    match path.is_absolute() {
        true => Ok(path.to_owned()),
        false => {
            Err(BackupError::File(format!("{} is not an absolute path: give the file's absolute path", path.display())))
        }
    }
}

/// What an import brought in.
#[derive(Debug, Clone, Copy)]
pub struct ImportCounts {
    pub reviews: usize,
    pub threads: usize,
    pub walkthroughs: usize,
}

/// Adds (or replaces, by key) everything in `document` (the hub's
/// `store/import`); answers once durable.
pub async fn import(cx: &Context, document: ExportDocument) -> Result<ImportCounts, BackupError> {
    if document.format != "parley-export" {
        return Err(BackupError::NotAnExport);
    }
    import_records(cx, Export::try_from(document).map_err(BackupError::BadRecord)?).await
}

/// Adds (or replaces, by key) every record of `export`; answers once durable.
async fn import_records(cx: &Context, export: Export) -> Result<ImportCounts, BackupError> {
    if export.format != "parley-export" {
        return Err(BackupError::NotAnExport);
    }
    // All or nothing: a file with one bad record writes none of them.
    export.check().map_err(BackupError::BadRecord)?;
    let imported = cx.state.import(export).await.map_err(|e| match e {
        ImportError::Stopped(_) => BackupError::Stopped,
        ImportError::Store(e) => BackupError::Store(e),
    })?;
    for file in imported.files {
        cx.watch.follow(file);
    }
    // The threads it brought sit among what reading them freed: once a
    // series of imports is over, the state owner compacts them and the store
    // reopens to let go of what it wrote.
    Ok(ImportCounts { reviews: imported.reviews, threads: imported.threads, walkthroughs: imported.walkthroughs })
}
