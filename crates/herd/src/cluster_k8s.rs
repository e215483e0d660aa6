//! `herd cluster run --agents N --image IMAGE -- <run args>`: the run's agents as pods of the
//! Kubernetes cluster the user's own `kubectl` reaches (their kubeconfig, their auth plugins;
//! herd talks to no API server itself). herd applies the objects `herd cluster manifest`
//! prints, waits for the Job to end, reads agent 0's result from its log, and prints, judges
//! and writes it as `herd run` does a single run's. What it created is deleted after
//! success, after failure and after Ctrl-C alike.
//!
//! `herd cluster manifest` prints the same objects for the user to apply.
//!
//! `HERD_KUBECTL` names another kubectl (a wrapper, a test's).

use std::ffi::OsString;
use std::io::{self, Write as _};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use herd_run::spread::{self, SpreadReport};
use herd_run::RunPlan;
use herd_stats::units::TimeSpan;
use herd_topo::Supervisor;

use crate::cluster_args::{run_args, run_plan, ClusterRunArgs, KubeArgs, ManifestArgs};
use crate::cluster_report::report;
use crate::run_args::RunArgs;
use crate::run_cmd::Outcome;
use crate::run_outputs::JsonFile;

/// How long one kubectl command may take.
const KUBECTL_LIMIT: Duration = Duration::from_secs(60);

/// How often the Job's state is asked.
const POLL: Duration = Duration::from_secs(2);

/// The user's kubectl, run to its end each time.
struct Kubectl {
    program: OsString,
    namespace: Option<String>,
    sup: Supervisor,
    dir: PathBuf,
}

impl Kubectl {
    /// `kubectl ARGS` (with `-n NS` when given): its output, or why it failed.
    fn run(&mut self, args: &[&str]) -> Result<String, String> {
        let mut argv = vec![self.program.clone()];
        if let Some(ns) = &self.namespace {
            argv.extend(["-n".into(), ns.into()]);
        }
        argv.extend(args.iter().map(OsString::from));
        let log = self.dir.join("kubectl.out");
        let c = self.sup.capture("kubectl", &argv, &log, KUBECTL_LIMIT);
        match c.failure {
            None => Ok(c.text),
            Some(how) => {
                Err(format!("`kubectl {}` failed ({how}): {}", args.join(" "), c.text.trim()))
            }
        }
    }
}

/// The objects of one run, deleted when this goes: on every way out.
struct Created<'k> {
    kubectl: &'k mut Kubectl,
    name: String,
    deleted: bool,
}

impl Created<'_> {
    fn delete(&mut self) -> Result<(), String> {
        self.deleted = true;
        let selector = format!("{}={}", herd_cluster::manifest::RUN_LABEL, self.name);
        self.kubectl
            .run(&["delete", "job,service", "-l", &selector, "--ignore-not-found", "--wait=false"])
            .map(drop)
    }
}

impl Drop for Created<'_> {
    fn drop(&mut self) {
        if !self.deleted {
            if let Err(e) = self.delete() {
                eprintln!("herd cluster run: could not delete the run's objects: {e}");
            }
        }
    }
}

/// The run on Kubernetes.
pub(crate) fn run(args: &ClusterRunArgs) -> anyhow::Result<Outcome> {
    let plan = run_plan(&args.run)?;
    // The Job gives back agent 0's merged result, not the seconds the files are made of:
    // refused before anything is created, rather than a run whose files never appear.
    let o = &plan.outputs;
    let unwritten: Vec<&str> = [
        (o.series.is_some(), "--series"),
        (o.hlog.is_some(), "--hlog"),
        (o.html.is_some(), "--html"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if !unwritten.is_empty() {
        bail!(
            "{} cannot be written from a Kubernetes run (--agents N): its Job returns agent 0's \
             merged result, not the per-second figures those files are made of; leave {} out \
             and keep --json, or run the agents here with --local N, which writes them",
            unwritten.join(" and "),
            if unwritten.len() == 1 { "it" } else { "them" }
        );
    }
    // The plan as the agents run it: its outputs are written here, from agent 0's result
    // (manifest_of refuses a plan that would write them in a pod).
    let manifest =
        manifest_of(&args.kube, args.arm_timeout, &plan.for_agents(), &run_args(&args.run)?)?;
    let setup = spread::setup_for(&plan)?;
    let json = JsonFile::create(&plan.outputs.json)?;
    let dir = std::env::temp_dir().join(format!("herd-cluster-k8s-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let yaml_path = dir.join("objects.yaml");
    std::fs::write(&yaml_path, manifest.to_yaml()?)
        .with_context(|| format!("cannot write {}", yaml_path.display()))?;
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = cancel.clone();
        let _ = ctrlc::set_handler(move || cancel.store(true, Ordering::Relaxed));
    }
    let mut kubectl = Kubectl {
        program: std::env::var_os("HERD_KUBECTL").unwrap_or_else(|| "kubectl".into()),
        namespace: manifest.namespace.clone(),
        sup: Supervisor::new(None),
        dir: dir.clone(),
    };
    let result = apply_and_wait(&mut kubectl, &manifest, &yaml_path, &cancel);
    let _ = std::fs::remove_dir_all(&dir);
    let text = result?;
    let result = SpreadReport::from_json(&text, setup)?;
    let mut out = io::stdout().lock();
    let outcome = report(&mut out, &plan, &result, json)?;
    out.flush().ok();
    Ok(outcome)
}

/// `herd cluster manifest`: the objects as YAML.
pub(crate) fn manifest(args: &ManifestArgs) -> anyhow::Result<String> {
    let plan = run_plan(&args.run)?;
    Ok(manifest_of(&args.kube, args.arm_timeout, &plan, &run_args(&args.run)?)?.to_yaml()?)
}

/// The objects of `plan` placed as `kube` says; refused where a pod cannot do what the plan
/// asks (write files here) or the safety rule refuses the target.
fn manifest_of(
    kube: &KubeArgs,
    arm_timeout: Option<TimeSpan>,
    plan: &RunPlan,
    run: &RunArgs,
) -> anyhow::Result<herd_cluster::RunManifest> {
    let agents = kube.agents.context("give --agents N: how many pods run the load")?;
    let image = kube.image.clone().context(
        "give --image IMAGE: the agent image (scripts/build-images.sh builds one: docs/install.md)",
    )?;
    let o = &plan.outputs;
    if o.json.is_some() || o.html.is_some() || o.series.is_some() || o.hlog.is_some() {
        bail!(
            "--json, --html, --series and --hlog would be written inside agent 0's pod: leave \
             them out; agent 0 prints the merged result (herd.run.v1) on its log"
        );
    }
    // The safety rule holds on a cluster too: the target must be one herd may load, or the
    // one the user named.
    let opt_in = kube.allow_target.as_deref().map(herd_engine::OptIn::new).transpose()?;
    herd_engine::Target::resolve_opted_in(&plan.url.host, plan.url.port, None, opt_in.as_ref())?;
    let mut placement = herd_cluster::Placement {
        one_per_node: !kube.share_nodes,
        host_network: kube.host_network,
        resources: kube.cpus.zip(kube.memory.clone()),
        ..herd_cluster::Placement::default()
    };
    if !kube.node_labels.is_empty() {
        placement.node_selector = kube
            .node_labels
            .iter()
            .map(|l| herd_cluster::manifest::node_label(l))
            .collect::<Result<_, _>>()?;
    }
    let name = kube.name.clone().unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        format!("herd-{t:x}")
    });
    // `--metrics-listen`: each agent serves its own part of the run in its pod, where
    // Prometheus reaches it on the pod's address.
    let mut run_args: Vec<String> =
        plan.for_agents().to_args().iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut linger = Duration::ZERO;
    if let Some(addr) = run.metrics_listen {
        if !addr.ip().is_unspecified() {
            bail!(
                "--metrics-listen {addr}: in a pod, Prometheus reaches an agent on the pod's \
                 address: listen on every address, e.g. --metrics-listen 0.0.0.0:{}",
                addr.port()
            );
        }
        if addr.port() == herd_cluster::manifest::COORDINATOR_PORT {
            bail!(
                "--metrics-listen {addr}: port {} is the coordinator's in every pod: give \
                 another, e.g. 0.0.0.0:9464",
                addr.port()
            );
        }
        linger = run.metrics_linger.get();
        run_args.push(format!("--metrics-listen={addr}"));
        run_args.push(format!("--metrics-linger={}", run.metrics_linger));
        for (k, v) in &run.metrics_label {
            run_args.push(format!("--metrics-label={k}={v}"));
        }
    }
    Ok(herd_cluster::RunManifest {
        name,
        namespace: kube.namespace.clone(),
        agents: NonZeroU32::new(agents).context("--agents 0: give at least one")?,
        image,
        run_args,
        placement,
        // Each agent keeps its final figures up for a scrape before its pod ends.
        deadline_seconds: deadline_seconds(plan, arm_timeout)
            .saturating_add(u32::try_from(linger.as_secs()).unwrap_or(u32::MAX)),
        arm_timeout_seconds: arm_timeout
            .map(|t| u32::try_from(t.get().as_secs().max(1)).unwrap_or(u32::MAX)),
        allow_target: opt_in.map(|o| o.host().to_owned()),
        metrics_port: run.metrics_listen.map(|a| a.port()),
    })
}

/// How long Kubernetes lets the Job run: the run's own length (warm-up and every step, or an
/// hour for a request count), plus the agents' barrier and a margin.
fn deadline_seconds(plan: &RunPlan, arm_timeout: Option<TimeSpan>) -> u32 {
    use herd_run::plan::{Load, Stop};
    let warmup = plan.warmup.map_or(Duration::ZERO, |w| w.get());
    let length = match &plan.load {
        Load::Single { stop: Stop::After(d) | Stop::Either(d, _), .. } => d.get(),
        Load::Single { stop: Stop::Requests(_), .. } => Duration::from_secs(3600),
        Load::Steps { step, .. } | Load::RateSteps { step, .. } => {
            step.get().saturating_mul(u32::try_from(plan.steps().len()).unwrap_or(u32::MAX))
        }
    };
    let barrier = arm_timeout.map_or(spread::coordinator::DEFAULT_ARM_TIMEOUT, |t| t.get());
    let total = warmup + length + barrier + Duration::from_secs(60);
    u32::try_from(total.as_secs()).unwrap_or(u32::MAX)
}

/// Failed agents whose last words are read (a Job of many failed agents: the first few say
/// enough).
const MAX_FAILED_LOGS: usize = 4;

/// The pod of agent `index` of the run `name`.
fn pod_of(kubectl: &mut Kubectl, name: &str, index: u32) -> Result<String, String> {
    let selector = format!(
        "{}={name},batch.kubernetes.io/job-completion-index={index}",
        herd_cluster::manifest::RUN_LABEL
    );
    let pod = kubectl.run(&[
        "get",
        "pods",
        "-l",
        &selector,
        "-o",
        "jsonpath={.items[0].metadata.name}",
    ])?;
    Ok(pod.trim().to_owned())
}

/// The last line agent `index` printed (its error, when it failed), if its log can be read.
fn last_words(kubectl: &mut Kubectl, name: &str, index: u32) -> Option<String> {
    let pod = pod_of(kubectl, name, index).ok().filter(|p| !p.is_empty())?;
    let log = kubectl.run(&["logs", &pod, "-c", "agent", "--tail=20"]).ok()?;
    log.lines().map(str::trim).rfind(|l| !l.is_empty()).map(str::to_owned)
}

/// The first [`MAX_FAILED_LOGS`] of a Job's `failedIndexes`: `1,3-5` → 1, 3, 4, 5 (nothing
/// readable: none).
fn failed_indexes(text: &str) -> Vec<u32> {
    text.trim()
        .split(',')
        .map(str::trim)
        .filter_map(|part| {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            Some(a.trim().parse::<u32>().ok()?..=b.trim().parse::<u32>().ok()?)
        })
        .flatten()
        .take(MAX_FAILED_LOGS)
        .collect()
}

/// Applies the objects, waits for the Job, returns agent 0's result; deletes the objects
/// whatever happens.
fn apply_and_wait(
    kubectl: &mut Kubectl,
    manifest: &herd_cluster::RunManifest,
    yaml: &std::path::Path,
    cancel: &AtomicBool,
) -> anyhow::Result<String> {
    let yaml = yaml.to_string_lossy().into_owned();
    kubectl
        .run(&["apply", "-f", &yaml])
        .map_err(anyhow::Error::msg)
        .context("cannot create the run's objects")?;
    let mut created = Created { kubectl, name: manifest.name.clone(), deleted: false };
    let name = manifest.name.clone();
    let job = format!("job/{name}");
    let deadline = Instant::now()
        + Duration::from_secs(u64::from(manifest.deadline_seconds))
        + Duration::from_secs(60);
    let state = loop {
        if cancel.load(Ordering::Relaxed) {
            created.delete().map_err(anyhow::Error::msg)?;
            bail!("interrupted: the run's objects ({name}) are deleted, their pods stopped");
        }
        let conditions = created
            .kubectl
            .run(&[
                "get",
                &job,
                "-o",
                "jsonpath={range .status.conditions[?(@.status==\"True\")]}{.type}{\"\\n\"}{end}",
            ])
            .map_err(anyhow::Error::msg)?;
        let types: Vec<&str> = conditions.lines().map(str::trim).collect();
        if types.contains(&"Complete") {
            break "Complete";
        }
        if types.contains(&"Failed") {
            break "Failed";
        }
        if Instant::now() > deadline {
            bail!("the Job {name} is still running past its deadline; its objects are deleted");
        }
        std::thread::sleep(POLL);
    };
    if state == "Failed" {
        let why = created
            .kubectl
            .run(&[
                "get",
                &job,
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Failed\")].message}",
            ])
            .unwrap_or_default();
        let failed = created
            .kubectl
            .run(&["get", &job, "-o", "jsonpath={.status.failedIndexes}"])
            .unwrap_or_default();
        let agents = if failed.trim().is_empty() {
            String::new()
        } else {
            format!(" (agents {})", failed.trim())
        };
        // What each failed agent said last, read before its pod is deleted: the Job says only
        // that a container exited, the agent's own words say why.
        let said: String = failed_indexes(&failed)
            .into_iter()
            .filter_map(|i| last_words(created.kubectl, &name, i).map(|w| (i, w)))
            .map(|(i, w)| format!("; agent {i} said: {w}"))
            .collect();
        bail!("the run failed{agents}: {}{said}", why.trim());
    }
    let pod = pod_of(created.kubectl, &name, 0).map_err(anyhow::Error::msg)?;
    let log = created
        .kubectl
        .run(&["logs", pod.trim(), "-c", "agent"])
        .map_err(anyhow::Error::msg)
        .context("cannot read agent 0's result")?;
    created.delete().map_err(anyhow::Error::msg)?;
    // The result is the JSON object agent 0 printed last; anything before it is not ours.
    let start = log.find("\n{").map_or_else(|| log.find('{'), |i| Some(i + 1));
    match start {
        Some(i) => Ok(log[i..].to_owned()),
        None => bail!("agent 0's log holds no result: {}", log.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::failed_indexes;

    #[test]
    fn failed_indexes_are_read_as_kubernetes_writes_them() {
        assert_eq!(failed_indexes("1"), [1]);
        assert_eq!(failed_indexes("0,2-4\n"), [0, 2, 3, 4]);
        assert_eq!(failed_indexes(""), Vec::<u32>::new());
        assert_eq!(failed_indexes("x,7"), [7]);
        assert_eq!(failed_indexes("0-4000000000").len(), 4, "a bounded read");
        assert_eq!(failed_indexes("1,2,3,5-9"), [1, 2, 3, 5], "the first four in all");
    }
}
