//! The Kubernetes objects of one spread run (docs/cluster.md), built from the API's types
//! (objects.rs): an Indexed Job of N agents (completion index
//! = agent index, `JOB_COMPLETION_INDEX` set by the Job controller) and a headless Service
//! that gives the coordinator, agent 0's pod, a stable name (`<run>-0.<run>`).
//!
//! One failed agent fails the run: `restartPolicy: Never`, no retry of an index
//! (`backoffLimitPerIndex: 0`, `maxFailedIndexes: 0`), and a pod failure policy that fails
//! the Job on any non-zero exit (a disruption — node drain, preemption — is not counted, and
//! herd's own barrier or silence bound fails the run then). Agent 0 also coordinates; when
//! it exits 0 the run is over (`successPolicy`). `activeDeadlineSeconds` is the hard stop.
//! Placement: a node label (`herd.dev/role=client`), one agent per node (required
//! anti-affinity on the hostname), optionally the host's network, and whole CPUs with
//! requests equal to limits (the Guaranteed class the static CPU manager pins).

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use crate::objects::{
    Affinity, Container, ContainerPort, EnvVar, Job, JobSpec, LabelSelector, ObjectMeta,
    OnExitCodes, OnPodCondition, PodAffinityTerm, PodAntiAffinity, PodFailurePolicy,
    PodFailurePolicyRule, PodSpec, PodTemplateSpec, ResourceRequirements, Service, ServicePort,
    ServiceSpec, SuccessPolicy, SuccessPolicyRule,
};

/// Where agent 0 listens for the others.
pub const COORDINATOR_PORT: u16 = 7070;

/// The label that ties a run's pods to its Service and to each other (anti-affinity).
pub const RUN_LABEL: &str = "herd.dev/run";

/// The container's name (the pod failure policy names it).
const CONTAINER: &str = "agent";

/// Longest run name: its pods are `<name>-<index>` and the Job controller's labels carry it,
/// both limited to 63 characters.
const MAX_NAME: usize = 50;

/// Most agents in one run.
pub const MAX_AGENTS: u32 = 1000;

/// One spread run on Kubernetes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunManifest {
    /// Every object's name: lowercase letters, digits and `-` (a DNS label).
    pub name: String,
    /// The namespace; None: the one `kubectl` uses.
    pub namespace: Option<String>,
    pub agents: NonZeroU32,
    /// The agent image: herd at `/herd` with the C libraries it links, on an empty base
    /// (deploy/agent.Containerfile), best pinned by digest (`…@sha256:…`).
    pub image: String,
    /// `herd run`'s arguments, the same for every agent (the coordinator checks).
    pub run_args: Vec<String>,
    pub placement: Placement,
    /// How long the Job may run in all before Kubernetes stops it.
    pub deadline_seconds: u32,
    /// Agent 0's barrier (`--arm-timeout`), when not herd's default: how long it waits for
    /// every agent to be armed.
    pub arm_timeout_seconds: Option<u32>,
    /// The target outside herd's safe ranges the user allowed the agents to load (the URL's
    /// host), given to every agent as `HERD_ALLOW_TARGET`.
    pub allow_target: Option<String>,
    /// The port each agent serves its own figures on for Prometheus (`--metrics-listen` in
    /// `run_args`): named `metrics` on the container, and the pods annotated for
    /// annotation-based scraping (`prometheus.io/scrape`, `…/port`, `…/path`).
    pub metrics_port: Option<u16>,
}

/// Where agents run and with what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Only on nodes with all these labels.
    pub node_selector: BTreeMap<String, String>,
    /// One agent per node (required anti-affinity on `kubernetes.io/hostname`).
    pub one_per_node: bool,
    /// The node's own network (no pod network in the measured path).
    pub host_network: bool,
    /// Whole CPUs per agent, and its memory, requests equal to limits (Guaranteed).
    pub resources: Option<(u32, String)>,
}

impl Default for Placement {
    fn default() -> Placement {
        Placement {
            node_selector: BTreeMap::from([("herd.dev/role".to_owned(), "client".to_owned())]),
            one_per_node: true,
            host_network: false,
            resources: None,
        }
    }
}

/// Why a run cannot be rendered: the setting and what to give instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error(
        "run name `{0}`: use 1 to {MAX_NAME} lowercase letters, digits and `-`, starting and \
         ending with a letter or digit"
    )]
    Name(String),
    #[error("namespace `{0}`: use 1 to 63 lowercase letters, digits and `-`")]
    Namespace(String),
    #[error("{0} agents: a run has 1 to {MAX_AGENTS}")]
    Agents(u32),
    #[error("image `{0}`: give an image reference without spaces (best pinned by digest)")]
    Image(String),
    #[error("memory `{0}`: give a Kubernetes quantity such as 512Mi or 2Gi")]
    Memory(String),
    #[error("--cpus 0: give at least one whole CPU per agent, or leave it out")]
    Cpus,
    #[error("node label `{0}`: give KEY=VALUE")]
    Label(String),
    #[error("cannot write the objects as YAML: {0}")]
    Yaml(String),
}

impl RunManifest {
    /// The headless Service and the Indexed Job, checked.
    pub fn objects(&self) -> Result<(Service, Job), ManifestError> {
        self.check()?;
        Ok((self.service(), self.job()))
    }

    /// Both objects as YAML, one document each, Service first (`kubectl apply -f -`).
    pub fn to_yaml(&self) -> Result<String, ManifestError> {
        let (service, job) = self.objects()?;
        Ok(format!("---\n{}---\n{}", yaml(&service)?, yaml(&job)?))
    }

    fn check(&self) -> Result<(), ManifestError> {
        if !dns_label(&self.name, MAX_NAME) {
            return Err(ManifestError::Name(self.name.clone()));
        }
        if let Some(ns) = &self.namespace {
            if !dns_label(ns, 63) {
                return Err(ManifestError::Namespace(ns.clone()));
            }
        }
        if self.agents.get() > MAX_AGENTS {
            return Err(ManifestError::Agents(self.agents.get()));
        }
        if self.image.is_empty() || self.image.chars().any(char::is_whitespace) {
            return Err(ManifestError::Image(self.image.clone()));
        }
        if let Some((cpus, memory)) = &self.placement.resources {
            if *cpus == 0 {
                return Err(ManifestError::Cpus);
            }
            if !quantity(memory) {
                return Err(ManifestError::Memory(memory.clone()));
            }
        }
        Ok(())
    }

    fn meta(&self) -> ObjectMeta {
        ObjectMeta {
            labels: self.labels(),
            annotations: BTreeMap::new(),
            name: Some(self.name.clone()),
            namespace: self.namespace.clone(),
        }
    }

    fn labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("app.kubernetes.io/name".to_owned(), "herd".to_owned()),
            ("app.kubernetes.io/component".to_owned(), "agent".to_owned()),
            (RUN_LABEL.to_owned(), self.name.clone()),
        ])
    }

    fn selector(&self) -> BTreeMap<String, String> {
        BTreeMap::from([(RUN_LABEL.to_owned(), self.name.clone())])
    }

    /// Headless, and publishing pods before they are ready: agents resolve agent 0 by name
    /// while all are starting.
    fn service(&self) -> Service {
        Service::new(
            self.meta(),
            ServiceSpec {
                cluster_ip: "None".to_owned(),
                selector: self.selector(),
                publish_not_ready_addresses: true,
                ports: vec![ServicePort {
                    name: "coordinator".to_owned(),
                    port: i32::from(COORDINATOR_PORT),
                    target_port: i32::from(COORDINATOR_PORT),
                    protocol: "TCP".to_owned(),
                }],
            },
        )
    }

    fn job(&self) -> Job {
        let n = i32::try_from(self.agents.get()).unwrap_or(i32::MAX);
        let spec = JobSpec {
            completion_mode: "Indexed".to_owned(),
            completions: n,
            parallelism: n,
            backoff_limit_per_index: 0,
            max_failed_indexes: 0,
            pod_failure_policy: PodFailurePolicy {
                rules: vec![
                    // A pod evicted or preempted is no agent's failure; herd's own bounds
                    // (barrier, silence) fail the run if it matters.
                    PodFailurePolicyRule {
                        action: "Ignore".to_owned(),
                        on_pod_conditions: Some(vec![OnPodCondition {
                            type_: "DisruptionTarget".to_owned(),
                            // The API server defaults it, but the published schema requires
                            // it: offline validators refuse it left out.
                            status: "True".to_owned(),
                        }]),
                        on_exit_codes: None,
                    },
                    PodFailurePolicyRule {
                        action: "FailJob".to_owned(),
                        on_exit_codes: Some(OnExitCodes {
                            container_name: CONTAINER.to_owned(),
                            operator: "NotIn".to_owned(),
                            values: vec![0],
                        }),
                        on_pod_conditions: None,
                    },
                ],
            },
            success_policy: SuccessPolicy {
                rules: vec![SuccessPolicyRule {
                    succeeded_indexes: "0".to_owned(),
                    succeeded_count: 1,
                }],
            },
            active_deadline_seconds: i64::from(self.deadline_seconds),
            ttl_seconds_after_finished: 600,
            template: PodTemplateSpec {
                metadata: ObjectMeta {
                    labels: self.labels(),
                    annotations: self.scrape_annotations(),
                    name: None,
                    namespace: None,
                },
                spec: self.pod(),
            },
        };
        Job::new(self.meta(), spec)
    }

    /// Prometheus's annotation-based pod discovery: scrape each agent's own figures.
    fn scrape_annotations(&self) -> BTreeMap<String, String> {
        let Some(port) = self.metrics_port else { return BTreeMap::new() };
        BTreeMap::from([
            ("prometheus.io/scrape".to_owned(), "true".to_owned()),
            ("prometheus.io/port".to_owned(), port.to_string()),
            ("prometheus.io/path".to_owned(), "/metrics".to_owned()),
        ])
    }

    fn pod(&self) -> PodSpec {
        let p = &self.placement;
        PodSpec {
            restart_policy: "Never".to_owned(),
            // `<name>-<index>.<name>`: agent 0's name through the headless Service.
            subdomain: self.name.clone(),
            node_selector: (!p.node_selector.is_empty()).then(|| p.node_selector.clone()),
            affinity: p.one_per_node.then(|| Affinity {
                pod_anti_affinity: PodAntiAffinity {
                    required_during_scheduling_ignored_during_execution: vec![PodAffinityTerm {
                        label_selector: LabelSelector { match_labels: self.selector() },
                        topology_key: "kubernetes.io/hostname".to_owned(),
                    }],
                },
            }),
            host_network: p.host_network.then_some(true),
            // On the host's network a pod still needs the cluster's DNS for agent 0's name.
            dns_policy: p.host_network.then(|| "ClusterFirstWithHostNet".to_owned()),
            containers: vec![self.container()],
        }
    }

    fn container(&self) -> Container {
        // `herd agent`'s own flag, then herd run's URL and flags (no `--`: after it, flags
        // would be read as positional arguments).
        let mut args = vec!["agent".to_owned(), format!("--coordinate=0.0.0.0:{COORDINATOR_PORT}")];
        if let Some(s) = self.arm_timeout_seconds {
            args.push(format!("--arm-timeout={s}s"));
        }
        args.extend(self.run_args.iter().cloned());
        let env = |name: &str, value: String| EnvVar { name: name.to_owned(), value };
        Container {
            name: CONTAINER.to_owned(),
            image: self.image.clone(),
            command: vec!["/herd".to_owned()],
            args,
            // JOB_COMPLETION_INDEX comes from the Job controller.
            env: [
                Some(env("HERD_AGENTS", self.agents.to_string())),
                Some(env("HERD_COORDINATOR", format!("{0}-0.{0}:{COORDINATOR_PORT}", self.name))),
                Some(env("HERD_RUN", self.name.clone())),
                self.allow_target.clone().map(|h| env("HERD_ALLOW_TARGET", h)),
            ]
            .into_iter()
            .flatten()
            .collect(),
            ports: std::iter::once(ContainerPort {
                container_port: i32::from(COORDINATOR_PORT),
                name: "coordinator".to_owned(),
                protocol: "TCP".to_owned(),
            })
            .chain(self.metrics_port.map(|port| ContainerPort {
                container_port: i32::from(port),
                name: "metrics".to_owned(),
                protocol: "TCP".to_owned(),
            }))
            .collect(),
            resources: self.placement.resources.as_ref().map(|(cpus, memory)| {
                let both = BTreeMap::from([
                    ("cpu".to_owned(), cpus.to_string()),
                    ("memory".to_owned(), memory.clone()),
                ]);
                ResourceRequirements { requests: both.clone(), limits: both }
            }),
        }
    }
}

/// A DNS label of at most `max` characters: lowercase alphanumerics and `-`, alphanumeric at
/// both ends.
fn dns_label(s: &str, max: usize) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= max
        && s.chars().all(|c| ok(c) || c == '-')
        && s.starts_with(ok)
        && s.ends_with(ok)
}

/// A memory quantity herd writes: digits and a binary or decimal suffix.
fn quantity(s: &str) -> bool {
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &s[digits.len()..];
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && ["", "Ki", "Mi", "Gi", "Ti", "k", "M", "G", "T"].contains(&suffix)
}

fn yaml<T: serde::Serialize>(v: &T) -> Result<String, ManifestError> {
    yaml_serde::to_string(v).map_err(|e| ManifestError::Yaml(e.to_string()))
}

/// A node label `KEY=VALUE`, as `--node-label` takes it.
pub fn node_label(text: &str) -> Result<(String, String), ManifestError> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() && !k.contains(char::is_whitespace) => {
            Ok((k.to_owned(), v.to_owned()))
        }
        _ => Err(ManifestError::Label(text.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_quantities_are_checked() {
        assert!(dns_label("herd-run-1", MAX_NAME));
        for bad in ["", "Herd", "-x", "x-", "a_b", &"x".repeat(51)] {
            assert!(!dns_label(bad, MAX_NAME), "{bad}");
        }
        for good in ["512Mi", "2Gi", "1000", "1G"] {
            assert!(quantity(good), "{good}");
        }
        for bad in ["", "Mi", "1.5Gi", "2GB", "-1Gi"] {
            assert!(!quantity(bad), "{bad}");
        }
        assert_eq!(node_label("herd.dev/role=client").unwrap().1, "client");
        assert!(node_label("role").is_err());
    }
}
