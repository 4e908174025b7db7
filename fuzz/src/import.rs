//! An import file (`parley import`, the store's own backups), read as the
//! hub's `store/import` reads it, then put to the uses the daemon puts an
//! imported thread, review and session to: re-anchored against file text,
//! listed, shown to editors, and exported again.

use std::sync::Arc;

use parley_daemon::anchor::Reanchorer;
use parley_daemon::feedback::{self, Thread, ThreadState};
use parley_daemon::hub::connection::decode;
use parley_daemon::position::LineIndex;
use parley_daemon::reviews::Review;
use parley_daemon::sessions::Session;
use parley_daemon::store::Export;
use parley_daemon::views;
use parley_protocol::hello::PositionEncoding;
use parley_protocol::methods as wire;
use serde_json::Value;

/// Any bytes as an import file.
///
/// Rules: nothing an import brings in panics the daemon when it is used; a
/// thread re-anchored and found says where its quote is; an export of what
/// was imported imports and exports again to the same.
pub fn import_file(data: &[u8]) {
    // `parley import` sends the file's JSON as the params of `store/import`,
    // which the hub decodes as the wire's export document, then as the
    // store's records.
    let Ok(params) = serde_json::from_slice::<Value>(data) else { return };
    let Ok(document) = decode::<wire::ExportDocument>(wire::STORE_IMPORT, &params) else { return };
    let document = serde_json::to_value(document).expect("an export document serializes");
    let Ok(export) = serde_json::from_value::<Export>(document) else { return };

    let reviews: Vec<Review> = export.reviews.into_iter().map(Review::from).collect();
    let mut threads: Vec<Thread> = export.threads.into_iter().map(Thread::from).collect();
    for record in export.sessions {
        let record = serde_json::to_value(record).expect("a session record serializes");
        let session: Session = serde_json::from_value(record).expect("a session record reads as its session");
        let _ = views::session(&session);
    }
    for review in &reviews {
        let _ = views::review(review);
        let _ = views::review_revision(review);
    }
    exports_again_the_same(&reviews, &threads);

    // The file text a thread is checked against: what it quoted in its
    // context, and the text of the first review (any text at all).
    let other = reviews.first().map_or("", |review| review.content.as_str());
    for thread in &mut threads {
        for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
            let _ = views::thread(thread, encoding);
        }
        let _ = views::path_within(thread, &thread.workspace.clone());
        let quoted = format!("{}{}{}", thread.anchor.prefix(), thread.anchor.quote, thread.anchor.suffix());
        recheck(thread, None, &quoted);
        recheck(thread, Some(&quoted), other);
    }
    feedback::sort_listing(&mut threads);
    let _ = feedback::FileCounts::of(&threads);
}

/// Re-anchors `thread` against `text` as `refresh` does when the file changed.
fn recheck(thread: &mut Thread, old: Option<&str>, text: &str) {
    let reanchorer = Reanchorer::new(old, text);
    let index = LineIndex::new(text);
    feedback::recheck(thread, &reanchorer, &index, &Arc::from("hash"), "2026-01-01T00:00:00Z");
    if matches!(thread.state, ThreadState::Anchored | ThreadState::Moved | ThreadState::Modified(_)) {
        let found = text.get(thread.anchor.range.clone());
        assert_eq!(found, Some(&*thread.anchor.quote), "a thread found at {:?} does not quote it", thread.anchor.range);
    }
}

/// Exports what was imported, imports that, and exports it again: the two
/// exports are the same.
fn exports_again_the_same(reviews: &[Review], threads: &[Thread]) {
    let export = |reviews: &[Review], threads: &[Thread]| {
        let export = Export::new(reviews.iter().map(Into::into).collect(), threads.iter().map(Into::into).collect());
        let mut value = serde_json::to_value(export).expect("an export serializes");
        value["exported_at"] = Value::String(String::new());
        value
    };
    let first = export(reviews, threads);
    let reread: Export = serde_json::from_value(first.clone())
        .unwrap_or_else(|e| panic!("an export does not import again: {e}\n{first}"));
    let reviews: Vec<Review> = reread.reviews.into_iter().map(Review::from).collect();
    let threads: Vec<Thread> = reread.threads.into_iter().map(Thread::from).collect();
    assert_eq!(export(&reviews, &threads), first, "an imported export exports differently");
}
