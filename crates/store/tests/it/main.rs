//! herd-store's integration tests, one binary: round trips of every field, file stores
//! closed, crashed and reopened, upgrades from older schemas, files the store must refuse
//! without touching them, all-or-nothing repetitions, a reader beside a writer, and an
//! unfinished experiment reopened.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

mod atomic;
mod concurrent;
mod file;
mod refusals;
mod reopen;
mod round_trip;
mod upgrade;
