//! herd-store's integration tests, one binary: round trips of every field, file stores
//! closed, crashed and reopened, upgrades from older schemas, files the store must refuse
//! without touching them, all-or-nothing repetitions, and a reader beside a writer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

mod atomic;
mod concurrent;
mod file;
mod refusals;
mod round_trip;
mod upgrade;
