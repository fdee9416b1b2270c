//! The fuzz targets without the fuzzer: every input checked in under `fuzz/corpus/`
//! (seeds generated from the real writers) and `fuzz/regressions/` (inputs that once
//! found a defect) is replayed through the same target code as `cargo fuzz run`, and the
//! seeds checked in are exactly what the writers produce today.
//!
//! Regenerate the seeds after a wire change with
//! `NETSER_WRITE_CORPUS=1 cargo test -p netser-tests --test fuzz_corpus`.

use std::path::{Path, PathBuf};

use netser_tests::adversarial::corpus::{run, seeds, TARGETS};

#[path = "delta/types.rs"]
#[allow(dead_code)]
mod types;

/// The `decode_delta` target, included by path by the fuzz crate too.
#[path = "delta/fuzz_target.rs"]
mod delta_target;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

fn inputs(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

/// The seed files of `target` are exactly `seeds` (written first with
/// `NETSER_WRITE_CORPUS`).
fn check_seeds(target: &str, seeds: &[(String, Vec<u8>)]) {
    let dir = fuzz_dir().join("corpus").join(target);
    if std::env::var_os("NETSER_WRITE_CORPUS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in seeds {
            std::fs::write(dir.join(format!("seed_{name}")), bytes).unwrap();
        }
    }
    for (name, bytes) in seeds {
        let path = dir.join(format!("seed_{name}"));
        let found = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (regenerate the corpus)", path.display()));
        assert_eq!(
            &found,
            bytes,
            "{} is stale: regenerate the corpus",
            path.display()
        );
    }
}

/// Runs every corpus and regression input of `target` through `run`; how many ran.
fn replay_target(target: &str, run: impl Fn(&[u8]) + std::panic::RefUnwindSafe) -> usize {
    let mut replayed = 0;
    for sub in ["corpus", "regressions"] {
        for (path, bytes) in inputs(&fuzz_dir().join(sub).join(target)) {
            let result = std::panic::catch_unwind(|| run(&bytes));
            assert!(result.is_ok(), "{target}: {} fails", path.display());
            replayed += 1;
        }
    }
    replayed
}

#[test]
fn checked_in_seeds_are_the_writers_output() {
    for target in TARGETS {
        check_seeds(target, &seeds(target));
    }
}

#[test]
fn corpus_and_regressions_replay_cleanly() {
    let replayed: usize = TARGETS
        .iter()
        .map(|&target| replay_target(target, |bytes| run(target, bytes)))
        .sum();
    assert!(replayed >= 24, "only {replayed} inputs replayed");
}

#[test]
fn checked_in_delta_seeds_are_the_writers_output() {
    check_seeds("decode_delta", &delta_target::seeds());
}

#[test]
fn delta_corpus_and_regressions_replay_cleanly() {
    let replayed = replay_target("decode_delta", |bytes| {
        delta_target::decode_delta(bytes);
    });
    assert!(replayed >= 12, "only {replayed} inputs replayed");
}
