//! The Kubernetes objects of a spread run: goldens from the typed structs (reviewed once,
//! then byte for byte; `UPDATE_GOLDEN=1` rewrites them), each validated offline against the
//! API's published schemas of every supported version (kubernetes-validate, strict: unknown
//! fields refused), and a broken one refused by the same check, so the check is no
//! formality. No cluster is contacted.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // runs the validator

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::process::Command;

use herd_cluster::{Placement, RunManifest};
use herd_testutil::golden::Goldens;

/// The Kubernetes versions herd's objects are checked against (1.33 is the first with every
/// Job field herd sets, `successPolicy`; kubernetes-validate 1.37.0 ships schemas up to 1.37).
const VERSIONS: [&str; 5] = ["1.33.0", "1.34.0", "1.35.0", "1.36.0", "1.37.0"];

fn three_agents() -> RunManifest {
    RunManifest {
        name: "herd-run-abc123".into(),
        namespace: None,
        agents: NonZeroU32::new(3).unwrap(),
        image: "registry.example/herd@sha256:1d2e3f".into(),
        run_args: ["http://198.18.1.1/index.html", "--connections=600", "--duration=30s"]
            .map(String::from)
            .into(),
        placement: Placement::default(),
        deadline_seconds: 330,
        arm_timeout_seconds: None,
        allow_target: None,
        metrics_port: None,
    }
}

fn host_network() -> RunManifest {
    RunManifest {
        namespace: Some("bench".into()),
        placement: Placement {
            node_selector: BTreeMap::from([("herd.dev/role".into(), "client".into())]),
            one_per_node: true,
            host_network: true,
            resources: Some((2, "1Gi".into())),
        },
        // Each agent serves its own figures for Prometheus.
        run_args: [
            "http://198.18.1.1/index.html",
            "--connections=600",
            "--duration=30s",
            "--metrics-listen=0.0.0.0:9464",
            "--metrics-linger=15s",
        ]
        .map(String::from)
        .into(),
        metrics_port: Some(9464),
        ..three_agents()
    }
}

/// The validator: `HERD_KUBERNETES_VALIDATE` (scripts/test.sh installs it in a venv under
/// target/), or `kubernetes-validate` on PATH. Missing, the test fails: it never skips.
fn validator() -> PathBuf {
    if let Some(p) = std::env::var_os("HERD_KUBERNETES_VALIDATE") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/k8s-validate/bin/kubernetes-validate");
    if venv.exists() {
        return venv;
    }
    PathBuf::from("kubernetes-validate")
}

/// kubernetes-validate's verdict on every file of `docs` (name, YAML) for `version`, in one
/// call (a call loads the version's schemas: one per version keeps the test short): Ok, or
/// its output, which names the file.
fn validate(docs: &[(&str, &str)], version: &str) -> Result<(), String> {
    // A directory per call: the tests run at once, and two may check the same version.
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("herd-manifest-{}-{call}-{version}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<PathBuf> = docs
        .iter()
        .map(|(name, yaml)| {
            let file = dir.join(name);
            std::fs::write(&file, yaml).unwrap();
            file
        })
        .collect();
    let out = Command::new(validator())
        .args(["--strict", "-k", version])
        .args(&files)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "kubernetes-validate cannot run ({e}): ./scripts/test.sh installs it \
                 (python3 -m venv target/k8s-validate && target/k8s-validate/bin/pip install \
                 kubernetes-validate==1.37.0)"
            )
        });
    let _ = std::fs::remove_dir_all(&dir);
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() && !text.contains("ERROR") {
        Ok(())
    } else {
        Err(text)
    }
}

#[test]
fn the_objects_match_their_goldens_and_every_supported_api() {
    let goldens = Goldens::of(env!("CARGO_MANIFEST_DIR"));
    let mut docs = Vec::new();
    for (name, m) in [("three-agents.yaml", three_agents()), ("host-network.yaml", host_network())]
    {
        let yaml = m.to_yaml().unwrap();
        goldens.check(name, &yaml);
        docs.push((name, yaml));
    }
    let docs: Vec<(&str, &str)> = docs.iter().map(|(n, y)| (*n, y.as_str())).collect();
    for v in VERSIONS {
        validate(&docs, v).unwrap_or_else(|e| panic!("on Kubernetes {v}: {e}"));
    }
}

#[test]
fn the_validator_refuses_a_broken_job() {
    let yaml = three_agents().to_yaml().unwrap();
    assert!(yaml.contains("backoffLimitPerIndex: 0"), "{yaml}");
    let broken = yaml.replace("backoffLimitPerIndex:", "backoffLimitPerIndx:");
    let e = validate(&[("broken.yaml", &broken)], VERSIONS[0]).unwrap_err();
    assert!(e.contains("backoffLimitPerIndx"), "{e}");
}

#[test]
fn what_the_job_promises() {
    let (service, job) = three_agents().objects().unwrap();
    let spec = job.spec;
    assert_eq!(spec.completion_mode, "Indexed");
    assert_eq!((spec.completions, spec.parallelism), (3, 3));
    assert_eq!((spec.backoff_limit_per_index, spec.max_failed_indexes), (0, 0));
    let pod = spec.template.spec;
    assert_eq!(pod.restart_policy, "Never");
    assert_eq!(pod.subdomain, "herd-run-abc123");
    let c = &pod.containers[0];
    let env: BTreeMap<_, _> = c.env.iter().map(|e| (e.name.as_str(), e.value.as_str())).collect();
    assert_eq!(env["HERD_COORDINATOR"], "herd-run-abc123-0.herd-run-abc123:7070");
    assert_eq!(env["HERD_AGENTS"], "3");
    let svc = service.spec;
    assert_eq!(svc.cluster_ip, "None");
    assert_eq!(svc.selector, pod_labels_subset(&job.metadata.labels));
}

#[test]
fn every_agent_is_scraped_for_its_own_part_when_it_serves_metrics() {
    let (_, job) = host_network().objects().unwrap();
    let template = job.spec.template;
    let a = &template.metadata.annotations;
    assert_eq!(a["prometheus.io/scrape"], "true");
    assert_eq!(a["prometheus.io/port"], "9464");
    assert_eq!(a["prometheus.io/path"], "/metrics");
    let c = &template.spec.containers[0];
    let ports: Vec<(&str, i32)> =
        c.ports.iter().map(|p| (p.name.as_str(), p.container_port)).collect();
    assert_eq!(ports, [("coordinator", 7070), ("metrics", 9464)]);
    // The same run label on every agent's series: the Job's name.
    assert!(c.env.iter().any(|e| e.name == "HERD_RUN" && e.value == "herd-run-abc123"));
    let (_, plain) = three_agents().objects().unwrap();
    assert!(plain.spec.template.metadata.annotations.is_empty());
    assert_eq!(plain.spec.template.spec.containers[0].ports.len(), 1);
}

#[test]
fn agent_zero_is_given_the_barrier_asked_for() {
    let args = |m: RunManifest| {
        let (_, job) = m.objects().unwrap();
        job.spec.template.spec.containers[0].args.clone()
    };
    let default = args(three_agents());
    assert_eq!(&default[..2], ["agent", "--coordinate=0.0.0.0:7070"]);
    assert!(!default.iter().any(|a| a.starts_with("--arm-timeout")), "{default:?}");
    let asked = args(RunManifest { arm_timeout_seconds: Some(300), ..three_agents() });
    // herd agent's own flags first: after the URL they would be herd run's.
    assert_eq!(&asked[..3], ["agent", "--coordinate=0.0.0.0:7070", "--arm-timeout=300s"]);
}

fn pod_labels_subset(labels: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    labels
        .iter()
        .filter(|(k, _)| *k == "herd.dev/run")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
fn bad_settings_are_refused_with_what_to_give() {
    let e = RunManifest { name: "Herd_Run".into(), ..three_agents() }.to_yaml().unwrap_err();
    assert!(e.to_string().starts_with("run name `Herd_Run`: use 1 to 50"), "{e}");
    let e = RunManifest { image: "a b".into(), ..three_agents() }.to_yaml().unwrap_err();
    assert!(e.to_string().contains("image `a b`"), "{e}");
    let mut m = host_network();
    m.placement.resources = Some((2, "1.5 Gi".into()));
    assert!(m.to_yaml().unwrap_err().to_string().contains("memory `1.5 Gi`"));
    m.placement.resources = Some((0, "1Gi".into()));
    assert!(m.to_yaml().unwrap_err().to_string().contains("--cpus 0"));
}
