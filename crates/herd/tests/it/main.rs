//! The herd binary's integration tests, in one test binary (one link instead of thirty): each
//! module is one area, run against the built `herd` and, where named, real servers and tools
//! (nginx, ab, h2load, curl, caddy, Samba, Chromium…). Modules run side by side, two at a
//! time on two cores, as their files did; `run_health.rs`, whose verdicts measure the machine,
//! is a binary of its own so that nothing else runs beside it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod ab_interrupt;
mod ab_json;
mod ab_tls;
mod ab_vs_ab;
mod causes_once;
mod cluster_kubectl;
mod cluster_local;
mod cluster_netns;
mod cluster_ssh;
mod host_helper;
mod hostile;
mod io_backend;
mod lab_cgroup;
mod lab_cli;
mod lab_control;
mod lab_external;
mod lab_failures;
mod lab_hosts;
mod lab_hosts_needs;
mod lab_netbench;
mod lab_on_hosts;
mod lab_on_hosts_cpus;
mod lab_on_hosts_faults;
mod lab_on_hosts_preflight;
mod lab_paths;
mod lab_profile;
mod lab_protocols;
mod lab_rate_replaced;
mod lab_rate_steps;
mod lab_resume;
mod lab_server_count;
mod lab_servers;
mod lab_time_budget;
mod lab_tools_on_hosts;
mod lab_up;
mod package;
mod report_history;
mod report_html;
mod report_read_only;
mod run_cli;
mod run_h2;
mod run_h3;
mod run_html;
mod run_json_schema;
mod run_metrics;
mod run_outputs;
mod run_servers;
mod run_trace;
mod run_tui;
mod run_workloads;
mod serve_cli;
mod serve_generate;
mod serve_h2spec;
mod tidy;
mod util;
