//! Network paths in Linux network namespaces (issue 6): the path vocabulary ([`path`]), link shaping ([`shaping`]), a
//! path as a plan of commands ([`plan`]), named namespaces ([`netns`]), and a plan applied
//! under a guard that removes every namespace it made ([`topology`]).

pub mod machine;
pub mod netns;
pub mod path;
pub mod plan;
pub mod shaping;
pub mod topology;

pub use path::{Need, Path};
pub use plan::{shell_word, Host, Plan, PATH_PORT};
pub use shaping::Shaping;
pub use topology::{apply, Topology, TopologyError};
