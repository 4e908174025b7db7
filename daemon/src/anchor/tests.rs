//! Re-anchoring scenarios written as texts with markers: `«` and `»` delimit
//! the anchored range in the before text and the expected range in the after
//! text (no markers: expected orphaned).

use std::time::Instant;

use proptest::prelude::*;
use proptest::sample::Index;

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Anchored,
    Moved,
    Modified,
    Orphaned,
    Unsearched,
}

/// Anchors the marked range of `before`, re-anchors it against `after` with
/// and without the before text as a snapshot, and checks the state and range.
fn check(before: &str, after: &str, want: Want) {
    let (old, range) = unmark(before);
    let range = range.expect("the before text marks a range with « and »");
    let (new, expected) = unmark(after);
    let anchor = capture(&old, range);

    let got = reanchor(&anchor, Some(&old), &new);
    assert_eq!(
        (kind(got.state), show(&new, got.range.clone())),
        (want, show(&new, expected.clone())),
        "with the snapshot: {got:?}"
    );
    assert_consistent(&new, &got);

    // Without the snapshot the old range is only a hint; the same text must
    // still be found (as moved rather than anchored, when it moved).
    let blind = reanchor(&anchor, None, &new);
    let blind_want =
        if want == Want::Anchored && anchor.range != expected.clone().unwrap_or_default() { Want::Moved } else { want };
    assert_eq!(
        (kind(blind.state), show(&new, blind.range.clone())),
        (blind_want, show(&new, expected)),
        "without the snapshot: {blind:?}"
    );
    assert_consistent(&new, &blind);
}

fn assert_consistent(text: &str, got: &Reanchored) {
    match (got.state, &got.range) {
        (AnchorState::Anchored | AnchorState::Moved, Some(_)) => assert_eq!(got.confidence, 1.0),
        (AnchorState::Modified { similarity }, Some(_)) => {
            assert!((BRACKET_MIN_SIMILARITY..=1.0).contains(&similarity), "similarity {similarity}");
            assert_eq!(got.confidence, similarity);
        }
        (AnchorState::Orphaned | AnchorState::Unsearched, None) => assert_eq!(got.confidence, 0.0),
        _ => panic!("state and range disagree: {got:?}"),
    }
    if let Some(range) = &got.range {
        assert!(text.get(range.clone()).is_some(), "{range:?} is not on char boundaries of the text");
    }
}

fn kind(state: AnchorState) -> Want {
    match state {
        AnchorState::Anchored => Want::Anchored,
        AnchorState::Moved => Want::Moved,
        AnchorState::Modified { .. } => Want::Modified,
        AnchorState::Orphaned => Want::Orphaned,
        AnchorState::Unsearched => Want::Unsearched,
    }
}

/// The text without markers, and the range they delimited.
fn unmark(marked: &str) -> (String, Option<Range<usize>>) {
    let Some(start) = marked.find('«') else {
        return (marked.to_owned(), None);
    };
    let text = marked.replacen('«', "", 1);
    let end = text.find('»').expect("« comes with »");
    (text.replacen('»', "", 1), Some(start..end))
}

/// `range` marked up in `text`, cut to the lines around it so that a failure
/// in a 20,000-line file prints a few lines.
fn show(text: &str, range: Option<Range<usize>>) -> String {
    let Some(range) = range else { return "orphaned".to_owned() };
    let from = text[..range.start].rmatch_indices('\n').nth(2).map_or(0, |(i, _)| i + 1);
    let to = text[range.end..].match_indices('\n').nth(2).map_or(text.len(), |(i, _)| range.end + i);
    let (first, _) = line_col(text, range.start);
    format!("from line {first}:\n{}«{}»{}", &text[from..range.start], &text[range.clone()], &text[range.end..to])
}

const BUGGY: &str = "\
use std::fmt;

/// Adds one.
«fn buggy(x: usize) -> usize {
    x + 1»
}

fn main() {
    println!(\"{}\", buggy(1));
}
";

#[test]
fn unchanged() {
    check(BUGGY, BUGGY, Want::Anchored);
}

#[test]
fn lines_inserted_above() {
    let after = BUGGY.replace("use std::fmt;\n", "use std::fmt;\nuse std::io;\nuse std::env;\n");
    check(BUGGY, &after, Want::Anchored);
}

#[test]
fn function_moved_to_end_of_file() {
    let after = "\
use std::fmt;

fn main() {
    println!(\"{}\", buggy(1));
}

/// Adds one.
«fn buggy(x: usize) -> usize {
    x + 1»
}
";
    // The line diff keeps the function's lines and moves `main`'s instead;
    // without the snapshot this is the exact quote found elsewhere.
    check(BUGGY, after, Want::Anchored);
}

#[test]
fn edited_inside() {
    let after = BUGGY.replace("x + 1", "x.saturating_add(1)");
    check(BUGGY, &after, Want::Modified);
}

#[test]
fn renamed_and_reindented() {
    let after = "\
use std::fmt;

impl Counter {
    /// Adds one.
    «fn fixed(x: usize) -> usize {
        x + 1»
    }
}

fn main() {
    println!(\"{}\", Counter::fixed(1));
}
";
    check(BUGGY, after, Want::Modified);
}

#[test]
fn deleted_entirely() {
    let after = "\
use std::fmt;

fn main() {
    println!(\"{}\", 2);
}
";
    check(BUGGY, after, Want::Orphaned);
}

#[test]
fn deleted_with_its_surroundings_intact() {
    let before = "\
fn total(items: &[Item]) -> u64 {
    let mut sum = 0;
«    sum += discount(items);
»    for item in items {
        sum += item.price;
    }
    sum
}
";
    let after = "\
fn total(items: &[Item]) -> u64 {
    let mut sum = 0;
    for item in items {
        sum += item.price;
    }
    sum
}
";
    check(before, after, Want::Orphaned);
}

#[test]
fn replaced_by_unrelated_code() {
    let after = "\
use std::fmt;

/// Adds one.
struct Settings {
    verbose: bool,
}

fn main() {
    println!(\"{}\", buggy(1));
}
";
    check(BUGGY, after, Want::Orphaned);
}

#[test]
fn duplicated_by_copy_paste_above() {
    let after = "\
use std::fmt;

fn buggy(x: usize) -> usize {
    x + 1
}

/// Adds one.
«fn buggy(x: usize) -> usize {
    x + 1»
}

fn main() {
    println!(\"{}\", buggy(1));
}
";
    check(BUGGY, after, Want::Anchored);
}

#[test]
fn multi_line_quote_longer_than_32_characters_edited_inside() {
    let before = "\
fn total(items: &[Item]) -> u64 {
    «let mut sum = 0;
    for item in items {
        sum += item.price * item.quantity;
    }»
    sum
}
";
    let after = "\
fn total(items: &[Item]) -> u64 {
    «let mut sum = 0;
    for item in items {
        sum += item.price.saturating_mul(item.quantity);
    }»
    sum
}
";
    check(before, after, Want::Modified);
}

#[test]
fn whitespace_only_change_at_the_edges() {
    let before = "\
/// Adds one.
fn buggy(x: usize) -> usize {
«    x + 1»
}
";
    let after = "\
/// Adds one.
fn buggy(x: usize) -> usize {
«\tx + 1»  
}
";
    check(before, after, Want::Modified);
}

#[test]
fn comes_back_when_the_text_returns() {
    let (old, range) = unmark(BUGGY);
    let anchor = capture(&old, range.expect("marked"));
    let deleted = old.replace("/// Adds one.\nfn buggy(x: usize) -> usize {\n    x + 1\n}\n\n", "");
    assert_eq!(reanchor(&anchor, Some(&old), &deleted).state, AnchorState::Orphaned);

    // The thread keeps its anchor while orphaned, so re-anchoring it against
    // the restored text (a revert, a branch switch) finds it again.
    assert_eq!(reanchor(&anchor, Some(&old), &old), Reanchored::anchored(anchor.range.clone()));
    let restored_lower = format!("// Reverted.\n{old}");
    let found = reanchor(&anchor, Some(&old), &restored_lower);
    assert_eq!(found.state, AnchorState::Anchored);
    assert_eq!(found.range.map(|r| &restored_lower[r]), Some(&*anchor.quote));
}

#[test]
fn non_ascii_moved() {
    let before = "// Grüße\nlet clef = «\"𝄞 café\"»;\nlet done = true;\n";
    let after = "// Grüße\nlet done = true;\nlet ünder = 1;\nlet clef = «\"𝄞 café\"»;\n";
    check(before, after, Want::Anchored);
}

#[test]
fn non_ascii_edited_inside() {
    let before = "// Grüße an alle\nlet clef = «\"𝄞 café au lait\"»;\nlet done = true;\n";
    let after = "// Grüße an alle\nlet clef = «\"𝄞 cafe au lait!\"»;\nlet done = true;\n";
    check(before, after, Want::Modified);
}

#[test]
fn non_ascii_edited_and_moved_into_other_code() {
    // Nothing of the context survives, and the quote is part of a line:
    // only the whole-file approximate search finds it.
    let before = "// Grüße an alle\nlet clef = «\"𝄞 café au lait\"»;\nlet done = true;\n";
    let after = "fn notes() {\n    play(«\"𝄞 cafe au lait\"», 2, ōrdo);\n}\n";
    check(before, after, Want::Modified);
}

#[test]
fn overlapping_copies_are_all_candidates() {
    // The quote (two spaces) also occurs one byte earlier, overlapping itself.
    check("aaa «  »a\n", "a «  »a\n", Want::Moved);
}

#[test]
fn quote_with_more_lines_than_the_new_text() {
    check("x\n«a\nb\nc\nd»\ny\n", "a b\n", Want::Orphaned);
}

#[test]
fn zero_width_anchor_follows_the_diff() {
    check("one\n«»two\nthree\n", "zero\none\n«»two\nthree\n", Want::Anchored);
    check("one\n«»two\nthree\n", "one\nthree\n", Want::Orphaned);
}

#[test]
fn moved_far_and_edited() {
    // Over `LOCAL_RADIUS_LINES` away, with its context changed: only the
    // whole-file search can find it.
    let filler: String = (0..400).map(|i| format!("let value_{i} = compute({i}, \"{i}\");\n")).collect();
    let before = format!("{BUGGY}{filler}");
    let after = format!(
        "use std::fmt;\n\nfn main() {{\n    println!(\"{{}}\", buggy(1));\n}}\n{filler}\n\
         /// Adds one, again.\n«fn buggy(x: usize) -> usize {{\n    x + 2»\n}}\n"
    );
    check(&before, &after, Want::Modified);
}

/// A near-repetitive file: five-line blocks that differ only in a number.
fn repetitive(lines: usize) -> String {
    (0..lines / 5)
        .map(|i| format!("fn item_{i}(x: u64) -> u64 {{\n    let y = x.wrapping_mul({i});\n    y ^ (y >> 7)\n}}\n\n"))
        .collect()
}

/// `text` with the markers of `range` put in.
fn mark(text: &str, range: Range<usize>) -> String {
    format!("{}«{}»{}", &text[..range.start], &text[range.clone()], &text[range.end..])
}

fn replace_lines(text: &str, first: u32, last: u32, with: &str) -> String {
    let range = line_range(text, first, last).expect("the lines exist");
    format!("{}{with}{}", &text[..range.start], &text[range.end..])
}

#[test]
fn large_repetitive_file_edited_inside() {
    let old = repetitive(20_000);
    let before = mark(&old, line_range(&old, 19_001, 19_003).expect("line 19003 exists"));
    let new = replace_lines(&old, 19_002, 19_002, "    y ^ (y >> 11) ^ 1");
    let after = mark(&new, line_range(&new, 19_001, 19_003).expect("line 19003 exists"));
    check(&before, &after, Want::Modified);
}

#[test]
fn large_repetitive_file_deleted() {
    let old = repetitive(20_000);
    let before = mark(&old, line_range(&old, 19_001, 19_003).expect("line 19003 exists"));
    let lines = line_range(&old, 19_001, 19_003).expect("line 19003 exists");
    let new = format!("{}{}", &old[..lines.start], &old[lines.end + 1..]);
    check(&before, &new, Want::Orphaned);
}

#[test]
fn reanchoring_500_anchors_in_a_20000_line_file() {
    let old = repetitive(20_000);
    // Two lines every 40, found in one pass (500 `line_range` calls would
    // each scan from the top, which is slow in a debug build).
    let starts: Vec<usize> = [0].into_iter().chain(memchr::memchr_iter(b'\n', old.as_bytes()).map(|i| i + 1)).collect();
    let anchors: Vec<Anchor> = (0..500).map(|i| capture(&old, starts[i * 40 + 1]..starts[i * 40 + 3] - 1)).collect();
    // Three lines inserted near the top, and one line inside the second anchor edited.
    let new = replace_lines(&old, 10, 10, "fn inserted() {}\n\n// Three new lines.\nfn item_2(x: u64) -> u64 {");
    let new = replace_lines(&new, 45, 45, "    y ^ (y >> 9)");

    let started = Instant::now();
    let reanchorer = Reanchorer::new(Some(&old), &new);
    let results: Vec<Reanchored> = anchors.iter().map(|anchor| reanchorer.reanchor(anchor)).collect();
    let shared = started.elapsed();
    let started = Instant::now();
    let one_by_one: Vec<Reanchored> = anchors.iter().map(|anchor| reanchor(anchor, Some(&old), &new)).collect();
    let separate = started.elapsed();
    println!("re-anchored 500 anchors in a 20,000-line file: {shared:?} sharing one diff, {separate:?} one diff each");

    assert_eq!(results, one_by_one);
    let modified: Vec<usize> =
        (0..results.len()).filter(|&i| matches!(results[i].state, AnchorState::Modified { .. })).collect();
    assert_eq!(modified, [1]);
    for (anchor, found) in anchors.iter().zip(&results).filter(|(_, r)| r.state == AnchorState::Anchored) {
        assert_eq!(found.range.clone().map(|r| &new[r]), Some(&*anchor.quote));
    }
    assert_eq!(results.iter().filter(|r| r.state == AnchorState::Anchored).count(), 499);
}

#[test]
fn capture_keeps_context_on_char_boundaries() {
    let text = format!("{}\nmiddle «é»\n{}", "𝄞".repeat(100), "é".repeat(150));
    let (text, range) = unmark(&text);
    let anchor = capture(&text, range.clone().expect("marked"));
    assert_eq!(&*anchor.quote, "é");
    assert_eq!(anchor.range, range.expect("marked"));
    assert!(anchor.prefix().len() <= CONTEXT_MAX_BYTES && anchor.prefix().ends_with("middle "));
    assert!(anchor.suffix().len() <= CONTEXT_MAX_BYTES && anchor.suffix().starts_with("\néé"));

    // Offsets off char boundaries or past the end are widened and clamped.
    assert_eq!(&*capture("a𝄞b", 2..3).quote, "𝄞");
    assert_eq!(&*capture("ab", 1..10).quote, "b");
    assert_eq!(capture("ab", Range { start: 5, end: 1 }).range, 2..2);
}

#[test]
fn line_helpers() {
    let text = "ab\nçd\n\nlast";
    for (offset, line_and_col) in
        [(0, (0, 0)), (2, (0, 2)), (3, (1, 0)), (5, (1, 2)), (7, (2, 0)), (12, (3, 4)), (99, (3, 4))]
    {
        assert_eq!(line_col(text, offset), line_and_col, "line_col at {offset}");
    }
    for (line, col, offset) in [
        (0, 0, Some(0)),
        (0, 2, Some(2)),
        (0, 3, None),
        (1, 1, None),
        (1, 2, Some(5)),
        (2, 0, Some(7)),
        (3, 4, Some(12)),
        (4, 0, None),
    ] {
        assert_eq!(offset_of(text, line, col), offset, "offset_of {line}:{col}");
    }
    assert_eq!(offset_of("a\n", 1, 0), Some(2), "the end of a text ending with a newline");
    for (first, last, range) in
        [(0, 0, Some(0..2)), (0, 1, Some(0..6)), (2, 2, Some(7..7)), (1, 3, Some(3..12)), (3, 4, None), (1, 0, None)]
    {
        assert_eq!(line_range(text, first, last), range, "line_range {first}..={last}");
    }
    assert_eq!(line_range("a\n", 1, 1), None, "a final newline does not start a line");
    assert_eq!(line_range("", 0, 0), None);
}

/// Lines of lowercase letters, spaces and a few multi-byte chars.
fn lines() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z é𝄞]{0,12}", 2..30).prop_map(|lines| lines.join("\n"))
}

/// Inserts `insert` at a char boundary, or deletes between two, of `text`
/// provided the edit keeps clear of `range`, which it keeps up to date.
fn edit_outside(text: &mut String, range: &mut Range<usize>, (insert, at, to, with): (bool, Index, Index, String)) {
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    let (a, b) = (*at.get(&boundaries), *to.get(&boundaries));
    if insert {
        if a < range.start {
            text.insert_str(a, &with);
            *range = range.start + with.len()..range.end + with.len();
        } else if a > range.end {
            text.insert_str(a, &with);
        }
    } else {
        let (a, b) = (a.min(b), a.max(b));
        if b <= range.start {
            text.replace_range(a..b, "");
            *range = range.start - (b - a)..range.end - (b - a);
        } else if a >= range.end {
            text.replace_range(a..b, "");
        }
    }
}

/// Any edit at all: inserts `with` at a char boundary, or deletes between two.
fn edit_anywhere(text: &mut String, (insert, at, to, with): (bool, Index, Index, String)) {
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    let (a, b) = (*at.get(&boundaries), *to.get(&boundaries));
    if insert {
        text.insert_str(a, &with);
    } else {
        text.replace_range(a.min(b)..a.max(b), "");
    }
}

#[test]
fn a_spent_budget_leaves_anchors_unsearched_but_finds_them_in_place() {
    let old = "fn a() {}\nfn b() {}\nfn c() {}\n";
    let (a, b) = (capture(old, 0..9), capture(old, 10..19));
    let new = "fn b() {}\nfn a() {}\nfn c() {}\n";
    let c = capture(old, 20..29);
    // Enough for one exact search of the text: the first anchor that moved
    // is found, the second is left unsearched, and one at its old place is
    // found for free.
    let reanchorer = Reanchorer::with_budget(None, new, new.len());
    let found = reanchorer.reanchor(&b);
    assert_eq!((found.state, found.range), (AnchorState::Moved, Some(0..9)));
    assert_eq!(reanchorer.budget_left(), 0);
    let left = reanchorer.reanchor(&a);
    assert_eq!((kind(left.state), left.range, left.confidence), (Want::Unsearched, None, 0.0));
    assert_eq!(reanchorer.reanchor(&c).state, AnchorState::Anchored);
    // With the default budget both are found.
    let reanchorer = Reanchorer::new(None, new);
    assert_eq!(reanchorer.reanchor(&a).range, Some(10..19));
    assert_eq!(reanchorer.reanchor(&b).range, Some(0..9));
}

#[test]
fn an_exact_pass_then_the_rest_finds_what_one_pass_does() {
    let old = "fn a() {}\nfn buggy(x: usize) -> usize {\n    x + 1\n}\nfn c() {}\n";
    let moved = capture(old, 0..9);
    let edited = capture(old, 10..old.find("}\nfn c").expect("present") + 1);
    let new = "fn c() {}\nfn buggy(x: usize) -> usize {\n    x.saturating_add(1)\n}\nfn a() {}\n";
    let reanchorer = Reanchorer::new(Some(old), new);
    reanchorer.set_pass(Pass::Exact);
    assert_eq!(reanchorer.reanchor(&moved), reanchor(&moved, Some(old), new));
    assert_eq!(reanchorer.reanchor(&edited).state, AnchorState::Unsearched);
    let exact_spent = SEARCH_BUDGET_BYTES - reanchorer.budget_left();
    reanchorer.set_pass(Pass::Rest);
    assert_eq!(reanchorer.reanchor(&edited), reanchor(&edited, Some(old), new));
    assert!(matches!(reanchor(&edited, Some(old), new).state, AnchorState::Modified { .. }));
    // The rest pass did not search for the exact quote a second time.
    let one_pass = Reanchorer::new(Some(old), new);
    one_pass.reanchor(&moved);
    one_pass.reanchor(&edited);
    assert_eq!(reanchorer.budget_left(), one_pass.budget_left(), "spent {exact_spent} on exact searches");
}

#[test]
fn the_default_budget_covers_many_searches_of_an_ordinary_file() {
    // 500 anchors on a 20,000-line file, all moved by an edit the line diff
    // cannot see (no snapshot): each costs one exact search, and all fit.
    let old: String = (0..20_000).map(|n| format!("    let value_{n} = compute({n});\n")).collect();
    let anchors: Vec<Anchor> = (0..500)
        .map(|k| {
            let start = old.match_indices('\n').nth(36 * k).map_or(0, |(i, _)| i + 1);
            let end = start + old[start..].find('\n').expect("a line");
            capture(&old, start..end)
        })
        .collect();
    let new = format!("// one\n// two\n{old}");
    let reanchorer = Reanchorer::new(None, &new);
    assert!(anchors.iter().all(|a| reanchorer.reanchor(a).state == AnchorState::Moved));
}

proptest! {
    // Each case runs every step on texts of up to a few kilobytes, about 5 ms
    // in a debug build: 64 cases unless PROPTEST_CASES asks for a longer run.
    #![proptest_config(ProptestConfig {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() { ProptestConfig::default().cases } else { 64 },
        ..ProptestConfig::default()
    })]

    #[test]
    fn never_panics_and_stays_on_char_boundaries(
        old in prop::collection::vec("[ab{} é𝄞\0]{0,40}", 0..25).prop_map(|lines| lines.join("\n")),
        ends in (any::<Index>(), any::<Index>()),
        edits in prop::collection::vec((any::<bool>(), any::<Index>(), any::<Index>(), "[ab\n é𝄞\0]{1,30}"), 0..8),
        stale in ("[ab\n é𝄞]{0,30}", "[ab\n é𝄞]{0,30}", "[ab\n é𝄞]{0,30}", 0usize..2000, 0usize..300),
    ) {
        let boundaries: Vec<usize> = old.char_indices().map(|(i, _)| i).chain([old.len()]).collect();
        let (a, b) = (*ends.0.get(&boundaries), *ends.1.get(&boundaries));
        let mut new = old.clone();
        for edit in edits {
            edit_anywhere(&mut new, edit);
        }
        // A captured anchor, and one that matches nothing: a stale range
        // (possibly off char boundaries or past the end) and made-up text.
        let (quote, prefix, suffix, start, len) = stale;
        let made_up = Anchor::new(start..start + len, quote, prefix, suffix);
        for anchor in [capture(&old, a.min(b)..a.max(b)), made_up] {
            for snapshot in [Some(old.as_str()), None] {
                assert_consistent(&new, &reanchor(&anchor, snapshot, &new));
            }
        }
    }
}

proptest! {
    #[test]
    fn edits_outside_the_range_never_orphan_it(
        old in lines(),
        ends in (any::<Index>(), any::<Index>()),
        edits in prop::collection::vec((any::<bool>(), any::<Index>(), any::<Index>(), "[a-z\n é𝄞]{1,8}"), 1..6),
    ) {
        let boundaries: Vec<usize> = old.char_indices().map(|(i, _)| i).chain([old.len()]).collect();
        let (a, b) = (*ends.0.get(&boundaries), *ends.1.get(&boundaries));
        prop_assume!(a != b);
        let anchor = capture(&old, a.min(b)..a.max(b));
        let mut new = old.clone();
        let mut range = anchor.range.clone();
        for edit in edits {
            edit_outside(&mut new, &mut range, edit);
        }
        let copies = occurrences(new.as_bytes(), anchor.quote.as_bytes()).count();
        for snapshot in [Some(old.as_str()), None] {
            let found = reanchor(&anchor, snapshot, &new);
            prop_assert!(matches!(found.state, AnchorState::Anchored | AnchorState::Moved), "{found:?}");
            let at = found.range.clone().expect("anchored or moved has a range");
            prop_assert_eq!(&new[at.clone()], &*anchor.quote);
            if copies == 1 {
                prop_assert_eq!(at, range.clone());
            }
        }
    }

    #[test]
    fn similarity_agrees_with_strsim(a in "[a-cé𝄞 ]{0,40}", b in "[a-cé𝄞 ]{0,40}") {
        // triple_accel's SIMD code has had wrong distances reported; the
        // scores here rest on it, so compare with a plain implementation.
        let bytes = |s: &str| s.bytes().collect::<Vec<u8>>();
        let expected = strsim::generic_levenshtein(&bytes(&a), &bytes(&b));
        let longest = a.len().max(b.len());
        let expected = if longest == 0 { 1.0 } else { 1.0 - expected as f32 / longest as f32 };
        prop_assert_eq!(similarity(a.as_bytes(), b.as_bytes()), expected);
    }
}

/// Whole-line anchors ([`Reanchorer::reanchor_lines`]): `before` marks whole
/// lines, and what is found is widened to whole lines in `after`. Checked
/// with and without the snapshot, as [`check`] does.
#[test]
fn whole_lines_follow_their_lines() {
    let cases: &[(&str, &str, &str, Want)] = &[
        (
            "the line grew: its new text, modified",
            "def expired(t, ttl):\n«    return now() - t > ttl»\n",
            "def expired(t, ttl_seconds):\n«    return now() - t > ttl_seconds»\n",
            Want::Modified,
        ),
        (
            "the line grew at its start",
            "fn add(&mut self) {\n«    total += price * qty;»\n}\n",
            "fn add(&mut self) {\n«    self.total += price * qty;»\n}\n",
            Want::Modified,
        ),
        ("re-indented", "fn a() {\n«    x + 1»\n}\n", "fn a() {\n«        x + 1»\n}\n", Want::Modified),
        ("shorter", "fn a() {\n«    x + 1 + 2»\n}\n", "fn a() {\n«    x + 1»\n}\n", Want::Modified),
        (
            "the second of two lines grew",
            "fn a() {\n«    let y = 1;\n    x + y»\n}\n",
            "fn a() {\n«    let y = 1;\n    x + y + 2»\n}\n",
            Want::Modified,
        ),
        ("unchanged, lines added above", "a\n«b»\nc\n", "z\na\n«b»\nc\n", Want::Anchored),
        ("with its newline, the line grew", "a\n«b\n»c\n", "a\n«b2\n»c\n", Want::Modified),
        ("deleted", "fn a() {\n    let q = 0;\n«    x + 1»\n}\n", "fn a() {\n    let q = 0;\n}\n", Want::Orphaned),
    ];
    for (name, before, after, want) in cases {
        let (old, range) = unmark(before);
        let anchor = capture(&old, range.expect("marked"));
        assert!(covers_whole_lines(&old, &anchor.range), "{name}: the case marks whole lines");
        let (new, expected) = unmark(after);
        for snapshot in [Some(old.as_str()), None] {
            let got = Reanchorer::new(snapshot, &new).reanchor_lines(&anchor);
            let want = match (snapshot, want) {
                (None, Want::Anchored) if expected.clone() != Some(anchor.range.clone()) => Want::Moved,
                _ => *want,
            };
            assert_eq!(
                (kind(got.state), show(&new, got.range.clone())),
                (want, show(&new, expected.clone())),
                "{name} (snapshot: {}): {got:?}",
                snapshot.is_some()
            );
            if let AnchorState::Modified { similarity: s } = got.state {
                assert!(s > 0.0 && s < 1.0 && got.confidence == s, "{name}: {got:?}");
            }
        }
    }
}

#[test]
fn whole_lines_are_told_from_character_ranges() {
    let cases = [
        ("«one»\ntwo\n", true),
        ("one\n«two»", true),
        ("«one\ntwo»\n", true),
        ("«one\n»two\n", true),
        ("o«ne»\n", false),
        ("«on»e\n", false),
        ("one«»\n", false),
        ("«one\nt»wo\n", false),
    ];
    for (marked, want) in cases {
        let (text, range) = unmark(marked);
        assert_eq!(covers_whole_lines(&text, &range.expect("marked")), want, "{marked:?}");
    }
}

#[test]
fn a_character_range_on_a_line_that_grew_stays_on_its_characters() {
    // An editor's selection of a word is not widened: the word is still there.
    check("fn a() {\n    «x» + 1\n}\n", "fn a() {\n    «x» + 1 + 2\n}\n", Want::Anchored);
}
