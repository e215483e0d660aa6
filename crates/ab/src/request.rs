//! The request bytes ab sends, byte for byte.
