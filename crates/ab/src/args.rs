//! ab's command line: every flag of ApacheBench 2.3 with ab's meaning (implemented by the
//! args work; see docs/ab-compat.md).
