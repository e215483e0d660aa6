//! The built-in reference server (in progress).
