//! The `herd` binary (in progress).
fn main() {}
