//! Network paths in Linux network namespaces (issue 6): the path vocabulary ([`path`]) and
//! a path as a plan of commands ([`plan`]). Applying a plan under a guard that removes every
//! namespace it made comes next.

pub mod path;
pub mod plan;

pub use path::{Need, Path, Shaping};
pub use plan::{shell_word, Host, Plan};
