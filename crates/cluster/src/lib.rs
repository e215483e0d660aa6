//! herd on Kubernetes, the one engine herd places agents with (docs/cluster.md): the objects
//! of one spread run, rendered from the API's types ([`objects`], [`manifest`]). The agents and the
//! coordinator themselves are herd-run's (`herd_run::spread`): Kubernetes only places them.

pub mod manifest;
pub mod objects;

pub use manifest::{ManifestError, Placement, RunManifest};
