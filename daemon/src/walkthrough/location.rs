//! The locations a walkthrough's comments name: `path:line`, `path:start-end`,
//! `lines(path, start, end)`, `search(path, regex)`, `findDefinition(name)`
//! and `findReferences(name)`. Arguments may be quoted with `"`, `'` or
//! backticks, as Symposium's agents write them, or left bare.

/// A parsed location; lines are 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A path and its lines (`path:line`, `path:start-end`, `lines(…)`); a
    /// bare path means its first line.
    Lines { path: String, start: u32, end: u32 },
    /// Every line matching `regex` in a file, or in the files under a folder
    /// (`.gitignore` respected), optionally only those ending in `extension`.
    Search { path: String, regex: String, extension: Option<String> },
    /// Where a symbol is defined.
    Definition { name: String },
    /// Every place a symbol is used.
    References { name: String },
}

/// Reads a location as written after `location:`.
pub fn parse_location(text: &str) -> Result<Location, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the location is empty: write `path:line`, `lines(path, start, end)`, `search(path, regex)`, `findDefinition(name)` or `findReferences(name)`".into());
    }
    if let Some((function, inside)) = call(text) {
        let args = arguments(inside).map_err(|why| format!("`{text}`: {why}"))?;
        return from_call(function, &args).map_err(|why| format!("`{text}`: {why}"));
    }
    if let Some(open) = text.find('(')
        && open > 0
        && text[..open].chars().all(|c| c.is_ascii_alphabetic())
    {
        return Err(format!("`{text}`: the `(` after `{}` is not closed", &text[..open]));
    }
    path_and_lines(unquote(text))
}

/// `name(…)`: the function's name and what is inside its parentheses.
fn call(text: &str) -> Option<(&str, &str)> {
    let open = text.find('(')?;
    let name = &text[..open];
    let named = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphabetic());
    (named && text.ends_with(')')).then(|| (name, &text[open + 1..text.len() - 1]))
}

fn from_call(function: &str, args: &[String]) -> Result<Location, String> {
    let arity = |want: &[usize]| -> Result<(), String> {
        if want.contains(&args.len()) {
            Ok(())
        } else {
            Err(format!(
                "{function} takes {} arguments, not {}",
                want.iter().map(usize::to_string).collect::<Vec<_>>().join(" or "),
                args.len()
            ))
        }
    };
    match function.to_ascii_lowercase().as_str() {
        "lines" => {
            arity(&[2, 3])?;
            let start = line_number(&args[1])?;
            let end = match args.get(2) {
                Some(end) => line_number(end)?,
                None => start,
            };
            ordered(args[0].clone(), start, end)
        }
        "search" => {
            arity(&[2, 3])?;
            regex::Regex::new(&args[1]).map_err(|e| format!("the regex does not compile: {e}"))?;
            let extension = args.get(2).map(|e| e.trim_start_matches('.').to_owned()).filter(|e| !e.is_empty());
            Ok(Location::Search { path: args[0].clone(), regex: args[1].clone(), extension })
        }
        "finddefinition" | "finddefinitions" => {
            arity(&[1])?;
            Ok(Location::Definition { name: symbol(&args[0])? })
        }
        "findreferences" => {
            arity(&[1])?;
            Ok(Location::References { name: symbol(&args[0])? })
        }
        _ => {
            Err(format!("`{function}` is not a location function: use lines, search, findDefinition or findReferences"))
        }
    }
}

fn symbol(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() { Err("the symbol's name is empty".into()) } else { Ok(name.to_owned()) }
}

/// `path`, `path:line` or `path:start-end` (also `path#L3-L5`).
fn path_and_lines(text: &str) -> Result<Location, String> {
    let (path, lines) = match text.rsplit_once('#') {
        Some((path, anchor)) if anchor.starts_with('L') => (path, Some(anchor.replace('L', ""))),
        _ => match text.rsplit_once(':') {
            Some((path, lines)) if !lines.is_empty() && lines.chars().all(|c| c.is_ascii_digit() || c == '-') => {
                (path, Some(lines.to_owned()))
            }
            _ => (text, None),
        },
    };
    if path.is_empty() {
        return Err(format!("`{text}` names no file: write `path:line`"));
    }
    let Some(lines) = lines else { return ordered(path.to_owned(), 1, 1) };
    let (start, end) = match lines.split_once('-') {
        Some((start, end)) => (line_number(start)?, line_number(end)?),
        None => {
            let line = line_number(&lines)?;
            (line, line)
        }
    };
    ordered(path.to_owned(), start, end)
}

fn ordered(path: String, start: u32, end: u32) -> Result<Location, String> {
    if end < start {
        return Err(format!("the lines {start}-{end} run backwards"));
    }
    Ok(Location::Lines { path, start, end })
}

fn line_number(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(0) => Err("lines count from 1".into()),
        Ok(line) => Ok(line),
        Err(_) => Err(format!("`{}` is not a line number", text.trim())),
    }
}

/// Splits a call's arguments on top-level commas, unquoting each.
fn arguments(inside: &str) -> Result<Vec<String>, String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = inside.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), '\\') if q != '`' => match chars.next() {
                Some(next) if next == q || next == '\\' => current.push(next),
                Some(next) => {
                    current.push('\\');
                    current.push(next);
                }
                None => current.push('\\'),
            },
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, ',') => args.push(std::mem::take(&mut current).trim().to_owned()),
            (None, c) => current.push(c),
        }
    }
    if let Some(q) = quote {
        return Err(format!("a {q} is not closed"));
    }
    let last = current.trim().to_owned();
    if !last.is_empty() || !args.is_empty() {
        args.push(last);
    }
    Ok(args)
}

fn unquote(text: &str) -> &str {
    for q in ['"', '\'', '`'] {
        if let Some(inner) = text.strip_prefix(q).and_then(|t| t.strip_suffix(q)) {
            return inner;
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(path: &str, start: u32, end: u32) -> Location {
        Location::Lines { path: path.into(), start, end }
    }

    #[test]
    fn reads_every_form() {
        assert_eq!(parse_location("src/auth.rs:42"), Ok(lines("src/auth.rs", 42, 42)));
        assert_eq!(parse_location("src/auth.rs:42-50"), Ok(lines("src/auth.rs", 42, 50)));
        assert_eq!(parse_location("src/auth.rs#L3-L5"), Ok(lines("src/auth.rs", 3, 5)));
        assert_eq!(parse_location("README.md"), Ok(lines("README.md", 1, 1)));
        assert_eq!(parse_location("lines(\"src/a.rs\", 3, 9)"), Ok(lines("src/a.rs", 3, 9)));
        assert_eq!(parse_location("lines(`src/a.rs`, 3)"), Ok(lines("src/a.rs", 3, 3)));
        assert_eq!(
            parse_location(r#"search("src", "fn\s+main\(", rs)"#),
            Ok(Location::Search { path: "src".into(), regex: r"fn\s+main\(".into(), extension: Some("rs".into()) })
        );
        assert_eq!(
            parse_location("findDefinition(`validateToken`)"),
            Ok(Location::Definition { name: "validateToken".into() })
        );
        assert_eq!(parse_location("findDefinitions(\"Cart\")"), Ok(Location::Definition { name: "Cart".into() }));
        assert_eq!(
            parse_location("findReferences('total, tax')"),
            Ok(Location::References { name: "total, tax".into() })
        );
    }

    #[test]
    fn bad_locations_say_what_to_write() {
        for (text, says) in [
            ("", "write `path:line`"),
            ("src/a.rs:0", "count from 1"),
            ("src/a.rs:9-3", "backwards"),
            ("lines(src/a.rs)", "takes 2 or 3 arguments"),
            ("search(src, \"(\")", "does not compile"),
            ("findDefinition(\"x\"", "is not closed"),
            ("goTo(x)", "not a location function"),
            ("findDefinition(`x)", "not closed"),
        ] {
            let error = parse_location(text).expect_err(text);
            assert!(error.contains(says), "{text}: {error}");
        }
    }
}
