//! The Kubernetes API objects herd writes, with only the fields it sets: a Service and an
//! Indexed Job (manifest.rs fills them in). Named and shaped as in the API (`batch/v1` Job,
//! `v1` Service), fields in the API's alphabetical order, each left out when unset, so the YAML
//! reads as `kubectl get -o yaml` writes it.
//!
//! Why not k8s-openapi's types: they cover the whole API, and building them took 14 s of
//! every first build (the quick start's) for two objects. What they gave (a misspelled field
//! does not reach a cluster) the tests give instead: the objects are checked against the
//! API's published schemas of every supported version, strictly (unknown fields refused),
//! and held to goldens byte for byte (tests/manifests.rs).

use std::collections::BTreeMap;

use serde::Serialize;

type Labels = BTreeMap<String, String>;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    pub labels: Labels,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: Labels,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `v1` Service.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    api_version: &'static str,
    kind: &'static str,
    pub metadata: ObjectMeta,
    pub spec: ServiceSpec,
}

impl Service {
    pub fn new(metadata: ObjectMeta, spec: ServiceSpec) -> Service {
        Service { api_version: "v1", kind: "Service", metadata, spec }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    #[serde(rename = "clusterIP")]
    pub cluster_ip: String,
    pub ports: Vec<ServicePort>,
    pub publish_not_ready_addresses: bool,
    pub selector: Labels,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    pub name: String,
    pub port: i32,
    pub protocol: String,
    /// The API's IntOrString: herd gives the port's number.
    pub target_port: i32,
}

/// `batch/v1` Job.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    api_version: &'static str,
    kind: &'static str,
    pub metadata: ObjectMeta,
    pub spec: JobSpec,
}

impl Job {
    pub fn new(metadata: ObjectMeta, spec: JobSpec) -> Job {
        Job { api_version: "batch/v1", kind: "Job", metadata, spec }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    pub active_deadline_seconds: i64,
    pub backoff_limit_per_index: i32,
    pub completion_mode: String,
    pub completions: i32,
    pub max_failed_indexes: i32,
    pub parallelism: i32,
    pub pod_failure_policy: PodFailurePolicy,
    pub success_policy: SuccessPolicy,
    pub template: PodTemplateSpec,
    pub ttl_seconds_after_finished: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PodFailurePolicy {
    pub rules: Vec<PodFailurePolicyRule>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodFailurePolicyRule {
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_exit_codes: Option<OnExitCodes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_pod_conditions: Option<Vec<OnPodCondition>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OnExitCodes {
    pub container_name: String,
    pub operator: String,
    pub values: Vec<i32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OnPodCondition {
    pub status: String,
    #[serde(rename = "type")]
    pub type_: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuccessPolicy {
    pub rules: Vec<SuccessPolicyRule>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SuccessPolicyRule {
    pub succeeded_count: i32,
    pub succeeded_indexes: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PodTemplateSpec {
    pub metadata: ObjectMeta,
    pub spec: PodSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    pub containers: Vec<Container>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dns_policy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_network: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<Labels>,
    pub restart_policy: String,
    pub subdomain: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    pub pod_anti_affinity: PodAntiAffinity,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodAntiAffinity {
    pub required_during_scheduling_ignored_during_execution: Vec<PodAffinityTerm>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodAffinityTerm {
    pub label_selector: LabelSelector,
    pub topology_key: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    pub match_labels: Labels,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    pub args: Vec<String>,
    pub command: Vec<String>,
    pub env: Vec<EnvVar>,
    pub image: String,
    pub name: String,
    pub ports: Vec<ContainerPort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    pub container_port: i32,
    pub name: String,
    pub protocol: String,
}

/// Requests and limits by resource name (`cpu`, `memory`), each an API quantity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceRequirements {
    pub limits: Labels,
    pub requests: Labels,
}
