//! Exporting everything as one JSON document, and importing one: the CLI's
//! `parley export` and `parley import`. An import goes through the state
//! owner, so no write path bypasses it.

use crate::context::Context;
use crate::state::{ImportError, Stopped};
use crate::store::Export;

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
}

impl From<Stopped> for BackupError {
    fn from(_: Stopped) -> Self {
        BackupError::Stopped
    }
}

/// Every review, thread and session, as the export format has them.
pub async fn export(cx: &Context) -> Result<Export, BackupError> {
    let export = cx.store.export().map_err(|e| BackupError::Store(e.to_string()));
    // Reading every record leaves sled holding them; a fresh handle does
    // not. In the background: it may wait for a moment the store is idle.
    let store = cx.store.clone();
    tokio::spawn(async move { store.release_memory().await });
    export
}

/// What an import brought in.
#[derive(Debug, Clone, Copy)]
pub struct ImportCounts {
    pub reviews: usize,
    pub threads: usize,
}

/// Adds (or replaces, by key) everything in `export`; answers once durable.
pub async fn import(cx: &Context, export: Export) -> Result<ImportCounts, BackupError> {
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
    Ok(ImportCounts { reviews: imported.reviews, threads: imported.threads })
}
