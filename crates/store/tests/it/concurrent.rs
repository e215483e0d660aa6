//! A reader beside a writer: in WAL mode a report can read while the lab records, and each
//! read sees a consistent snapshot of whole repetitions.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use herd_store::{ExperimentStatus, Store, StoreError};

use crate::util::*;

const REPETITIONS: u32 = 40;

#[test]
fn a_reader_sees_whole_repetitions_while_a_writer_writes() {
    reads_while_a_writer_writes("concurrent", Store::open_existing);
}

/// A report's reader never writes, and reads beside the lab all the same.
#[test]
fn a_read_only_reader_sees_whole_repetitions_while_a_writer_writes() {
    reads_while_a_writer_writes("concurrent-read-only", Store::open_read_only);
}

/// `tag` names the test's own directory: the tests of one binary run side by side.
fn reads_while_a_writer_writes(tag: &str, open: fn(&std::path::Path) -> Result<Store, StoreError>) {
    let dir = TempDir::new(tag);
    let path = dir.join("results.db");
    let mut writer = Store::open(&path).unwrap();
    let id = writer.begin_experiment(&new_experiment("concurrent")).unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (path, done) = (path.clone(), Arc::clone(&done));
        std::thread::spawn(move || {
            let store = open(&path).unwrap();
            let (mut reads, mut last) = (0u32, 0usize);
            loop {
                let finished = done.load(Ordering::Acquire);
                let got = store.load_experiment(id).unwrap();
                let n: usize = got.cells.iter().map(|c| c.repetitions.len()).sum();
                assert!(n >= last, "a read went back in time: {n} after {last}");
                last = n;
                for cell in &got.cells {
                    for r in &cell.repetitions {
                        let want =
                            repetition(cell.axis("server").unwrap(), "c100", r.record.repetition);
                        assert_eq!(r.record, want, "a repetition read whole");
                    }
                }
                let summary = &store.experiments().unwrap()[0];
                assert!(summary.n_repetitions_ok as usize >= n);
                reads += 1;
                if finished {
                    return (reads, n);
                }
            }
        })
    };

    for rep in 0..REPETITIONS {
        let server = if rep % 2 == 0 { "nginx" } else { "apache" };
        writer.record_repetition(id, &repetition(server, "c100", rep / 2)).unwrap();
    }
    writer.finish_experiment(id, ExperimentStatus::Done, "2026-03-01T11:00:00Z", None).unwrap();
    done.store(true, Ordering::Release);
    let (reads, n) = reader.join().unwrap();
    assert_eq!(n, REPETITIONS as usize, "the last read saw every repetition");
    assert!(reads >= 1);
}
