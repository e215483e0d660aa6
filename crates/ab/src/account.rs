//! ab's accounting: engine outcomes into ab's counters.
