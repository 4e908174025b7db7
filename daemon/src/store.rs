//! Durable state in sled: the only module that imports it.
//!
//! Records on disk are their own versioned types, separate from domain and
//! wire types, so the format can evolve without touching either.
//! A write is acknowledged only after [`Store::flush`] has made it durable.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::reviews::{CheckedReference, FoundReference, Review};

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot open the store at {path}: {source}; if another Parley daemon uses it, stop that one or set PARLEY_DATA_DIR"
    )]
    Open { path: PathBuf, source: sled::Error },
    #[error("store: {0}")]
    Sled(#[from] sled::Error),
    #[error("a stored record is unreadable: {0}")]
    Record(#[from] serde_json::Error),
}

/// The daemon's store.
#[derive(Debug, Clone)]
pub struct Store {
    db: sled::Db,
    reviews: sled::Tree,
    path: PathBuf,
}

/// A review as stored.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "v")]
enum ReviewRecord {
    #[serde(rename = "1")]
    V1(ReviewV1),
}

#[derive(Debug, Serialize, Deserialize)]
struct ReviewV1 {
    base: PathBuf,
    content: String,
    revision: u64,
    updated_at: String,
    references: Vec<ReferenceV1>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ReferenceV1 {
    text: String,
    path: String,
    line: Option<u32>,
    end_line: Option<u32>,
    resolved: Option<PathBuf>,
    problem: Option<String>,
}

impl Store {
    /// Opens (creating if needed) the store in `dir`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let path = dir.join("store");
        let db =
            sled::Config::new().path(&path).open().map_err(|source| StoreError::Open { path: path.clone(), source })?;
        let reviews = db.open_tree("reviews")?;
        Ok(Store { db, reviews, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every stored review.
    pub fn reviews(&self) -> Result<Vec<Review>, StoreError> {
        let mut out = Vec::new();
        for entry in self.reviews.iter() {
            let (_, bytes) = entry?;
            let ReviewRecord::V1(r) = serde_json::from_slice(&bytes)?;
            out.push(Review {
                base: r.base,
                content: r.content,
                revision: r.revision,
                updated_at: r.updated_at,
                references: r.references.into_iter().map(CheckedReference::from).collect(),
            });
        }
        Ok(out)
    }

    /// Writes a review; durable after the next [`Store::flush`].
    pub fn put_review(&self, review: &Review) -> Result<(), StoreError> {
        let record = ReviewRecord::V1(ReviewV1 {
            base: review.base.clone(),
            content: review.content.clone(),
            revision: review.revision,
            updated_at: review.updated_at.clone(),
            references: review.references.iter().map(ReferenceV1::from).collect(),
        });
        let key = review.base.as_os_str().as_encoded_bytes();
        self.reviews.insert(key, serde_json::to_vec(&record)?)?;
        Ok(())
    }

    /// Makes every write so far durable.
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.db.flush_async().await?;
        Ok(())
    }
}

impl From<ReferenceV1> for CheckedReference {
    fn from(r: ReferenceV1) -> Self {
        CheckedReference {
            found: FoundReference { text: r.text, path: r.path, line: r.line, end_line: r.end_line },
            resolved: r.resolved,
            problem: r.problem,
        }
    }
}

impl From<&CheckedReference> for ReferenceV1 {
    fn from(r: &CheckedReference) -> Self {
        ReferenceV1 {
            text: r.found.text.clone(),
            path: r.found.path.clone(),
            line: r.found.line,
            end_line: r.found.end_line,
            resolved: r.resolved.clone(),
            problem: r.problem.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reviews_survive_reopening() {
        let dir = tempfile::tempdir().expect("tempdir");
        let review = Review {
            base: PathBuf::from("/ws"),
            content: "# R\n[`a.rs:1`][]".into(),
            revision: 3,
            updated_at: "2026-11-21T00:00:00Z".into(),
            references: crate::reviews::check_references(
                crate::reviews::find_references("[`a.rs:1`][]"),
                Path::new("/ws"),
                |_| crate::reviews::FileFacts::Lines(1),
            ),
        };
        {
            let store = Store::open(dir.path()).expect("open");
            store.put_review(&review).expect("put");
            store.flush().await.expect("flush");
        }
        let store = Store::open(dir.path()).expect("reopen");
        assert_eq!(store.reviews().expect("read"), vec![review]);
    }
}
