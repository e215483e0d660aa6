//! The load engine (in progress).
