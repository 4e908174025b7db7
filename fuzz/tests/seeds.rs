//! Replays every seed in `fuzz/seeds/<target>/` through its target, so that
//! each fuzz target builds and runs on every `cargo test` (the fuzzer itself
//! is run by hand: the README's development section says how). A seed that
//! once crashed a target stays here as its regression.

use std::path::Path;

#[test]
fn every_target_runs_its_seeds() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    for (name, target) in parley_fuzz::TARGETS {
        let dir = seeds.join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        files.sort();
        assert!(files.len() >= 3, "{} has {} seeds: give the fuzzer a start", dir.display(), files.len());
        for file in files {
            let data = std::fs::read(&file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
            // A panic names the seed, for `cargo fuzz run <target> <seed>`.
            eprintln!("{name}: {}", file.display());
            target(&data);
        }
    }
}

#[test]
fn every_target_has_its_seeds_and_its_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for (name, _) in parley_fuzz::TARGETS {
        assert!(root.join("seeds").join(name).is_dir(), "no seeds/{name}");
        assert!(root.join("fuzz_targets").join(format!("{name}.rs")).is_file(), "no fuzz_targets/{name}.rs");
        assert!(manifest.contains(&format!("name = \"{name}\"")), "fuzz/Cargo.toml has no [[bin]] {name}");
    }
}
