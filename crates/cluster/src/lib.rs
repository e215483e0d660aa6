//! herd on Kubernetes, the one engine herd places agents with (docs/cluster.md): the objects
//! of one spread run, rendered from typed structs ([`manifest`]). The agents and the
//! coordinator themselves are herd-run's (`herd_run::spread`): Kubernetes only places them.

pub mod manifest;

pub use manifest::{ManifestError, Placement, RunManifest};
