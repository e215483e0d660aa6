//! Experiment files: what is accepted, and that every refusal names its line and the choices.

use super::*;
use crate::load::{Shape, Warmup};
use crate::matrix::cells;

const GOOD: &str = r#"
name = "demo"
title = "a demo"

[matrix]
server = ["herd", "nginx-fpm", "apache-prefork"]
workload = ["page", "9x9", "sizes"]
load = ["ab", "ramp"]
server_cpus = ["0", "0-1"]

[[exclude]]
server = "apache-prefork"
workload = "9x9"

[workloads.page]
kind = "static"
size = 6397

[workloads.sizes]
kind = "sweep"
from = 1
to = "1Ki"

[loads.ab]
requests = 1000
concurrency = 10
warmup_requests = 100

[loads.ramp]
steps = [1, 2, 4]
step = "500ms"
keep_alive = true
"#;

fn err(text: &str) -> String {
    parse(text, "x.toml").unwrap_err().to_string()
}

/// GOOD with `from` replaced by `to`.
fn edit(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

#[test]
fn the_example_in_the_docs_is_accepted() {
    let doc = include_str!("../../../../docs/experiment.md");
    let start = doc.find("```toml\n").expect("docs/experiment.md has a toml example") + 8;
    let len = doc[start..].find("```").expect("the example ends");
    if let Err(e) = parse(&doc[start..start + len], "docs/experiment.md") {
        panic!("docs/experiment.md's example is refused: {e}");
    }
}

#[test]
fn a_worker_count_for_mini_httpd_is_refused_at_its_line() {
    let text = "name = \"m\"\ntitle = \"m\"\n[matrix]\nserver = [\"mh\"]\nworkload = [\"page\"]\nload = [\"n\"]\n[servers.mh]\ndriver = \"mini_httpd\"\nworkers = 4\n[workloads.page]\nkind = \"static\"\nsize = 10\n[loads.n]\nrequests = 10\n";
    let e = err(text);
    assert!(
        e.contains("line 9") && e.contains("mini_httpd forks one process per connection"),
        "{e}"
    );
}

#[test]
fn a_good_file_expands_into_cells() {
    let e = parse(GOOD, "x.toml").unwrap();
    let workloads = &e.axes[1].values;
    assert_eq!(
        workloads,
        &["page", "9x9", "sizes:1", "sizes:4", "sizes:16", "sizes:64", "sizes:256", "sizes:1024"]
    );
    assert_eq!(e.loads["ab"].shape, Shape::Requests { n_requests: 1000, concurrency: 10 });
    assert_eq!(e.loads["ab"].warmup, Warmup::Requests(100));
    assert!(e.loads["ramp"].keep_alive);
    let cells = cells(&e);
    // 3 servers x 8 workloads x 2 loads x 2 cpu sets, minus apache-prefork x 9x9 (x 2 x 2).
    assert_eq!(cells.len(), 3 * 8 * 2 * 2 - 4);
    assert_eq!(cells[0].key, "server=herd workload=page load=ab server_cpus=0");
    assert!(cells.iter().all(|c| !(c.server.name == "apache-prefork" && c.workload.name == "9x9")));
    assert_eq!(
        e.repetitions,
        Repetitions {
            min: 3,
            max: 6,
            bounds: Bounds { max_spread_percent: Some(5.0), max_interval_percent: None },
            time_budget: None,
        }
    );
}

#[test]
fn unknown_keys_name_the_line_and_the_choices() {
    let e = err(&edit("server = [\"herd\"", "sever = [\"herd\""));
    assert!(
        e.starts_with("x.toml: line 6: unknown field `sever`, expected one of `server`"),
        "{e}"
    );
    let e = err(&edit("concurrency = 10", "concurency = 10"));
    assert!(e.starts_with("x.toml: line 26: unknown field `concurency`"), "{e}");
}

#[test]
fn bad_values_name_the_line() {
    let cases = [
        (edit("\"nginx-fpm\"", "\"ngnix\""), "line 6: unknown server `ngnix`: use `herd`, `nginx`"),
        (
            edit("size = 6397", "size = \"6.4k\""),
            "line 17: [workloads.page] size: `6.4k` is not a size",
        ),
        (
            edit("concurrency = 10", "concurrency = 0"),
            "line 26: [loads.ab] concurrency = 0 is out of range: use 1 to 100000",
        ),
        (
            edit("step = \"500ms\"", "step = \"soon\""),
            "line 31: [loads.ramp] step `soon`: use a number with s, ms",
        ),
        (edit("\"0-1\"", "\"0-x\""), "line 9: `0-x` is not a CPU list"),
        (
            edit("kind = \"sweep\"", "kind = \"swep\""),
            "line 20: [workloads.sizes] unknown kind `swep`: use `static`, `sweep`",
        ),
        (
            edit("requests = 1000", "requests = 1000\nduration = \"1s\""),
            "line 26: [loads.ab] `requests` and `duration` together",
        ),
        (
            format!("{GOOD}\n[repetitions]\nmin = 0\n"),
            "line 35: [repetitions] min = 0 is out of range: use 1 to 100",
        ),
        (
            format!("{GOOD}\n[repetitions]\ntime_budget = \"0s\"\n"),
            "line 35: [repetitions] time_budget `0s`: must be more than zero and at most a year",
        ),
        (
            format!("{GOOD}\n[repetitions]\nmax_interval_percent = 0\n"),
            "line 35: [repetitions] max_interval_percent must be more than 0 and at most 100",
        ),
        (
            edit("server = \"apache-prefork\"\nworkload = \"9x9\"", "server = \"h2o\""),
            "[[exclude]] server = \"h2o\" is not a value of that axis",
        ),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.contains(want), "want {want:?} in:\n{e}");
    }
}

#[test]
fn a_server_that_cannot_serve_a_workload_is_refused_with_the_alternative() {
    let e = err(&edit("[[exclude]]\nserver = \"apache-prefork\"\nworkload = \"9x9\"\n", ""));
    assert!(
        e.contains("server `apache-prefork` cannot serve workload `9x9` (a dynamic page): use php = \"fpm\" or php = \"cgi\" in [servers.apache-prefork], or a built-in server with PHP"),
        "{e}"
    );
}

#[test]
fn server_tables_choose_driver_mpm_php_and_workers() {
    let text = edit("[[exclude]]", "[servers.apache-prefork]\ndriver = \"apache\"\nmpm = \"prefork\"\nphp = \"cgi\"\nworkers = 4\n\n[[exclude]]");
    let e = parse(&text, "x.toml").unwrap();
    let s = &e.servers["apache-prefork"];
    assert_eq!(s.php, Some(herd_drivers::Php::Cgi));
    assert_eq!(s.workers.map(|w| w.get()), Some(4));
    let bad = edit("[[exclude]]", "[servers.x]\ndriver = \"nginx\"\nphp = \"cgi\"\n\n[[exclude]]");
    assert!(err(&bad).contains("php = \"cgi\" does not go with this driver"), "{}", err(&bad));
    let bad =
        edit("[[exclude]]", "[servers.x]\ndriver = \"nginx\"\nmpm = \"event\"\n\n[[exclude]]");
    assert!(err(&bad).contains("`mpm` is for the apache driver only"), "{}", err(&bad));
}

#[test]
fn a_file_that_is_not_toml_is_refused_with_its_line() {
    let e = err("name = \"x\"\n[matrix\n");
    assert!(e.starts_with("x.toml: line 2: "), "{e}");
    let e = err("");
    assert!(e.contains("missing field `name`"), "{e}");
}

/// GOOD with a `[published]` table of the given figures.
fn published(figures: &str) -> String {
    format!(
        "{GOOD}\n[published]\nsource = \"seed 000, 2010\"\nsetup = \"P4 2.4 GHz\"\npercent_of = {{ server_cpus = \"0\" }}\n{figures}"
    )
}

#[test]
fn published_figures_are_kept_in_axis_order_with_their_measures() {
    let text = published(
        "[[published.figures]]\nat = { load = \"ab\", server = \"herd\", workload = \"page\" }\nran = \"lighttpd 1.4.25\"\nrequests_per_second = 1018.85\nseconds = 0.098\npercent = 100\n\n[[published.figures]]\nat = { workload = \"sizes\", load = \"ab\", server = \"nginx-fpm\" }\nkb_per_second = 55000\nnote = \"read off the graph\"\n\n[[published.figures]]\nat = { server = \"apache-prefork\", load = \"ramp\", workload = \"page\" }\npeak_requests_per_second = 1000\nclients_at_peak = 160\n",
    );
    let e = parse(&text, "x.toml").unwrap();
    let p = e.published.unwrap();
    assert_eq!(p.source, "seed 000, 2010");
    assert_eq!(p.percent_of, Some(("server_cpus".into(), "0".into())));
    let f = &p.figures[0];
    let at: Vec<(&str, &str)> = f.at.iter().map(|(a, v)| (a.as_str(), v.as_str())).collect();
    assert_eq!(at, [("server", "herd"), ("workload", "page"), ("load", "ab")]);
    assert_eq!(
        f.values,
        [
            (herd_store::Measure::Seconds, 0.098),
            (herd_store::Measure::Percent, 100.0),
            (herd_store::Measure::RequestsPerSecond, 1018.85)
        ]
    );
    assert_eq!(p.figures[1].note.as_deref(), Some("read off the graph"));
    assert_eq!(p.figures[2].value(herd_store::Measure::ClientsAtPeak), Some(160.0));
    // Stored as JSON and read back whole.
    assert_eq!(herd_store::Published::from_json(&p.to_json().unwrap()), Ok(p));
    assert_eq!(parse(GOOD, "x.toml").unwrap().published, None);
}

/// Two systems an article measured may stand beside one cell (seed 004: NT's own SMB server
/// and Samba): one figure of a measure per cell and `ran`.
#[test]
fn two_systems_may_give_one_cell_the_same_measure() {
    let two = |ran2: &str| {
        published(&format!(
            "[[published.figures]]\nat = {{ server = \"herd\", load = \"ab\" }}\nran = \"NT 4.0\"\nseconds = 1\n\n[[published.figures]]\nat = {{ server = \"herd\", load = \"ab\" }}\n{ran2}seconds = 2\n"
        ))
    };
    let e = parse(&two("ran = \"Linux 2.2\"\n"), "x.toml").unwrap();
    assert_eq!(e.published.unwrap().figures.len(), 2);
    // The same system twice is still ambiguous.
    let err = parse(&two("ran = \"NT 4.0\"\n"), "x.toml").unwrap_err().to_string();
    assert!(err.contains("gets a second `seconds` figure"), "{err}");
}

#[test]
fn published_figures_that_compare_unlike_things_are_refused() {
    let fig = |body: &str| published(&format!("[[published.figures]]\n{body}\n"));
    let cases = [
        (fig("at = { host = \"x\" }\nseconds = 1"), "line 38: [[published.figures]] `host` is not an axis of [matrix]: use `server`, `workload`"),
        (fig("at = { server = \"nginx\" }\nseconds = 1"), "server = \"nginx\" is not a value of that axis: use `herd`"),
        (fig("at = {}\nseconds = 1"), "`at` is empty"),
        (fig("at = { server = \"herd\" }"), "gives no figure: add one of `seconds`, `percent`"),
        (fig("at = { server = \"herd\", load = \"ab\" }\nseconds = -1"), "seconds = -1: a published figure is a number ≥ 0"),
        (
            fig("at = { server = \"herd\", load = \"ramp\" }\nseconds = 1"),
            "seconds compares with one measurement; cell server=herd workload=page load=ramp server_cpus=0's load `ramp` is stepped",
        ),
        (
            fig("at = { server = \"herd\", load = \"ab\" }\npeak_requests_per_second = 1"),
            "peak_requests_per_second compares with the best step of a stepped load",
        ),
        (
            fig("at = { server = \"herd\", load = \"ramp\" }\nseconds = 1")
                .replace("steps = [1, 2, 4]", "rate_steps = [100, 200]"),
            "seconds has nothing to compare with in cell server=herd workload=page load=ramp \
             server_cpus=0: its load `ramp` is offered rates in steps (`rate_steps`)",
        ),
        (
            fig("at = { server = \"apache-prefork\", workload = \"9x9\", load = \"ab\" }\nseconds = 1"),
            "matches no cell of the matrix that runs (left out by [[exclude]], or refused?)",
        ),
        (
            fig("at = { server = \"herd\", load = \"ab\" }\nseconds = 1\n\n[[published.figures]]\nat = { server = \"herd\", workload = \"page\", load = \"ab\" }\nseconds = 2"),
            "line 42: [[published.figures]] cell server=herd workload=page load=ab server_cpus=0 gets a second `seconds` figure (the first is on line 38)",
        ),
        (
            format!("{GOOD}\n[published]\nsource = \"x\"\n[[published.figures]]\nat = {{ server = \"herd\", load = \"ab\" }}\npercent = 50\n"),
            "percent needs [published] percent_of",
        ),
        (format!("{GOOD}\n[published]\nsource = \" \"\n"), "[published] source is empty"),
        (
            format!("{GOOD}\n[published]\nsource = \"x\"\npercent_of = {{ workload = \"sizes\" }}\n[[published.figures]]\nat = {{ server = \"herd\" }}\nseconds = 1\n"),
            "[published] percent_of: workload = \"sizes\" names several values; name one of them",
        ),
        (format!("{GOOD}\n[published]\nsource = \"x\"\n"), "[published] has no figures"),
        (
            format!("{GOOD}\n[published]\nsource = \"x\"\npercent_of = {{ path = \"direct\" }}\n[[published.figures]]\nat = {{ server = \"herd\" }}\nseconds = 1\n"),
            "[published] percent_of: `path` is not an axis of [matrix]",
        ),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.contains(want), "want {want:?} in:\n{e}");
    }
    let keep_alive = edit("requests = 1000\n", "requests = 1000\nkeep_alive = true\n");
    let text = format!("{keep_alive}\n[published]\nsource = \"x\"\n[[published.figures]]\nat = {{ load = \"ab\" }}\nconnections_per_second = 9500\n");
    assert!(
        err(&text).contains("keeps connections alive: use requests_per_second"),
        "{}",
        err(&text)
    );
}

#[test]
fn report_defaults_name_one_value_and_a_tabulated_measure() {
    let e = parse(
        &format!(
            "{GOOD}\n[report]\nbaseline = {{ server = \"nginx-fpm\" }}\nmeasure = \"kb_per_second\"\n"
        ),
        "x.toml",
    )
    .unwrap();
    assert_eq!(e.report.baseline, Some(("server".into(), "nginx-fpm".into())));
    assert_eq!(e.report.measure, Some(herd_store::Measure::KbPerSecond));
    assert_eq!(parse(GOOD, "x.toml").unwrap().report, herd_store::ReportDefaults::default());
    // The declared order of every axis, sweeps expanded, is what the store keeps.
    let sizes = &e.axes.iter().find(|a| a.name == AxisName::Workload).unwrap().values;
    assert_eq!(sizes[..3], ["page", "9x9", "sizes:1"]);

    let report = |body: &str| format!("{GOOD}\n[report]\n{body}\n");
    let cases = [
        (report("measure = \"percent\""), "[report] measure = `percent` is not a figure the tables show: use `requests_per_second`, `seconds`, `kb_per_second`, `mbit_per_second`, `connections_per_second`"),
        (report("measure = \"fast\""), "[report] measure = `fast` is not a figure"),
        (report("baseline = { workload = \"sizes\" }"), "[report] baseline: workload = \"sizes\" names several values; name one of them"),
        (report("baseline = { server = \"herd\", load = \"ab\" }"), "[report] baseline names one axis value, e.g. baseline = { path = \"direct\" }"),
        (report("baseline = { path = \"direct\" }"), "[report] baseline: `path` is not an axis of [matrix]"),
        (report("baseline = { server = \"lighttpd\" }"), "server = \"lighttpd\" is not a value of that axis"),
        (report("colour = \"red\""), "unknown field `colour`"),
        (report("measure = \"connections_per_second\""), "[report] measure: connections_per_second needs a load that opens a connection per request; cell server=herd workload=page load=ab server_cpus=0's load `ab` keeps connections alive"),
        (report("measure = \"seconds\""), "[report] measure: seconds needs a load of a fixed number of requests (its length is the result); cell server=herd workload=page load=ramp server_cpus=0's load `ramp` runs for a set time"),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.contains(want), "want {want:?} in:\n{e}");
    }
}

#[test]
fn path_experiments_get_herd_serve_as_a_calibration_server() {
    let with_path = edit(
        "server_cpus = [\"0\", \"0-1\"]",
        "server_cpus = [\"0\"]\npath = [\"direct\", \"routed\"]",
    );
    let e = parse(&with_path, "x.toml").unwrap();
    let servers = &e.axes.iter().find(|a| a.name == AxisName::Server).unwrap().values;
    // The file's servers first, in its order; calibration last, so "the first value of the
    // first axis" (the report's default baseline) is one the file named.
    assert_eq!(servers[..3], ["herd", "nginx-fpm", "apache-prefork"]);
    assert_eq!(servers.last().map(String::as_str), Some(herd_store::CALIBRATION_SERVER));
    assert_eq!(e.servers[herd_store::CALIBRATION_SERVER].kind, herd_drivers::ServerKind::Herd);
    let calibration: Vec<_> =
        cells(&e).into_iter().filter(|c| c.server.name == herd_store::CALIBRATION_SERVER).collect();
    // Every workload (a sweep's 6 sizes, page, 9x9) × load × path.
    assert_eq!(calibration.len(), 8 * 2 * 2);
    assert!(calibration.iter().all(|c| c.path.is_some()));

    let off = format!("{with_path}\n[runner]\ncalibrate = false\n");
    let e = parse(&off, "x.toml").unwrap();
    assert!(!e.servers.contains_key(herd_store::CALIBRATION_SERVER));
    assert!(!parse(GOOD, "x.toml").unwrap().servers.contains_key(herd_store::CALIBRATION_SERVER));

    let cases = [
        (format!("{GOOD}\n[runner]\ncalibrate = true\n"), "[runner] calibrate runs herd serve through every network path: add [matrix] path"),
        (
            with_path.replace("\"herd\", \"nginx-fpm\"", "\"calibration\", \"nginx-fpm\""),
            "line 6: `calibration` is the server herd adds itself to experiments with network paths",
        ),
        (
            format!("{with_path}\n[servers.calibration]\ndriver = \"nginx\"\n"),
            "the server name `calibration` is herd's",
        ),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.contains(want), "want {want:?} in:\n{e}");
    }
}

#[test]
fn units_are_read_as_every_flag_reads_them() {
    // A link rate as `herd run --bandwidth` reads it, a size as `--generate --sizes` does,
    // a rate as `--rate`: one parser each (herd_stats::units).
    let text = edit(
        "server_cpus = [\"0\", \"0-1\"]",
        "server_cpus = [\"0\"]\npath = [\"direct\"]\nlink = [\"1.5mbit\", \"100mbit,delay=0.5ms\"]",
    )
    .replace("size = 6397", "size = \"6Ki\"");
    let e = parse(&text, "x.toml").unwrap();
    let links: Vec<String> =
        cells(&e).iter().filter_map(|c| c.link.as_ref().and_then(|l| l.rate_text())).collect();
    assert!(links.iter().any(|l| l == "1500kbit"), "{links:?}");
    let bandwidth: herd_stats::units::BitRate = "1.5mbit".parse().unwrap();
    assert!(cells(&e).iter().any(|c| c.link.as_ref().and_then(|l| l.rate) == Some(bandwidth)));
    assert!(err(&edit("size = 6397", "size = \"1.5Mi\"")).contains("`1.5Mi` is not a size"));
    let rate = edit("requests = 1000", "rate = 0.0\nduration = \"1s\"");
    assert!(err(&rate).contains("rate must be more than 0"), "{}", err(&rate));
}

#[test]
fn offered_rates_in_steps_are_a_load() {
    let ramp = "steps = [1, 2, 4]\nstep = \"500ms\"";
    let e = parse(&edit(ramp, "rate_steps = [1000, 2500.5]\nstep = \"300ms\""), "x.toml").unwrap();
    let Some(l) = e.loads.get("ramp") else { panic!("{:?}", e.loads) };
    assert_eq!(
        l.shape,
        Shape::RateSteps {
            rates: vec![1000.0, 2500.5],
            step: std::time::Duration::from_millis(300),
            connections: 64
        }
    );
    let with = edit(ramp, "rate_steps = [200]\nstep = \"1s\"\nconnections = 8");
    let e = parse(&with, "x.toml").unwrap();
    assert_eq!(e.loads["ramp"].shape.max_connections(), 8);
    for (to, want) in [
        ("rate_steps = []\nstep = \"1s\"", "rate_steps is empty: list the offered rates"),
        ("rate_steps = [1000, 0]\nstep = \"1s\"", "rate_steps: 0 is not a rate"),
        ("rate_steps = [-5]\nstep = \"1s\"", "rate_steps: -5 is not a rate"),
        ("rate_steps = [1000]", "`rate_steps` needs `step`"),
        ("rate_steps = [1000]\nduration = \"2s\"", "runs each rate for `step`, not `duration`"),
        (
            "rate_steps = [1000]\nstep = \"1s\"\nconcurrency = 4",
            "`rate_steps` is an open loop: give its `connections`",
        ),
        (
            "rate_steps = [1000]\nsteps = [1, 2]\nstep = \"1s\"",
            "give one of `requests`, `rate`, `steps` or `rate_steps`, not several",
        ),
        ("rate_steps = [1000]\nrate = 5.0\nstep = \"1s\"", "not several"),
        ("rate_steps = [\"fast\"]\nstep = \"1s\"", "invalid type: string \"fast\", expected f64"),
    ] {
        let e = err(&edit(ramp, to));
        assert!(e.contains(want), "{to}: want {want:?} in:\n{e}");
        assert!(e.contains("line "), "{to}: the line is named:\n{e}");
    }
}

#[test]
fn placement_apart_cannot_stand_beside_cpus_chosen_by_hand() {
    let apart = "\n[runner]\nplacement = \"apart\"\n";
    let no_axis = GOOD.replace("server_cpus = [\"0\", \"0-1\"]\n", "");
    assert_eq!(
        parse(&format!("{no_axis}{apart}"), "x.toml").unwrap().runner.placement,
        Placement::Apart
    );
    assert_eq!(parse(&no_axis, "x.toml").unwrap().runner.placement, Placement::AsWritten);
    for (text, want) in [
        (format!("{GOOD}{apart}"), "[matrix] server_cpus places the servers, and [runner] placement = \"apart\" places them too"),
        (format!("{no_axis}\n[client]\ncpus = \"1\"\n{apart}"), "[client] cpus places the client"),
        (format!("{no_axis}\n[runner]\nplacement = \"spread\"\n"), "[runner] placement `spread`: expected \"apart\""),
    ] {
        let e = err(&text);
        assert!(e.contains(want), "want {want:?} in:\n{e}");
    }
}

/// GOOD with a `protocol` axis of `values` (TOML list items) after `server`.
fn with_protocols(values: &str) -> String {
    edit("workload = [\"page\"", &format!("protocol = [{values}]\nworkload = [\"page\""))
}

#[test]
fn without_a_protocol_axis_every_cell_speaks_h1_and_keeps_its_key() {
    let e = parse(GOOD, "x.toml").unwrap();
    assert!(e.axes.iter().all(|a| a.name != AxisName::Protocol));
    let all = cells(&e);
    assert!(all.iter().all(|c| c.protocol == herd_stats::Protocol::H1 && c.refused.is_none()));
    assert!(all.iter().all(|c| !c.key.contains("protocol")));
    assert!(all.iter().all(|c| c.load.streams.is_none()));
}

#[test]
fn the_protocol_axis_comes_after_the_server_and_names_its_cells() {
    let e = parse(&with_protocols("\"h1\", \"h2c\""), "x.toml").unwrap();
    let names: Vec<&str> = e.axes.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names[..3], ["server", "protocol", "workload"]);
    let all = cells(&e);
    assert_eq!(all[0].key, "server=herd protocol=h1 workload=page load=ab server_cpus=0");
    assert_eq!(all[0].protocol, herd_stats::Protocol::H1);
    let h2c: Vec<_> = all.iter().filter(|c| c.protocol == herd_stats::Protocol::H2c).collect();
    assert_eq!(h2c.len(), all.len() / 2);
    assert!(h2c.iter().all(|c| c.key.contains(" protocol=h2c ")));
}

#[test]
fn a_protocol_herd_cannot_name_is_refused_at_its_line_with_the_choices() {
    let e = err(&with_protocols("\"h1\", \"http2\""));
    assert!(
        e.contains("line 7: `http2` is not a protocol: use one of h1, h1-tls, h2, h2c, h3"),
        "{e}"
    );
    let e = err(&with_protocols("\"h2\", \"h2\""));
    assert!(e.contains("[matrix] protocol lists `h2` twice"), "{e}");
    let e = err(&with_protocols(""));
    assert!(e.contains("[matrix] protocol is empty"), "{e}");
}

#[test]
fn a_cell_whose_protocol_cannot_be_spoken_is_refused_alone_with_the_reason() {
    let text = with_protocols("\"h1\", \"h3\"").replace(
        "load = [\"ab\", \"ramp\"]",
        "load = [\"ab\", \"ramp\"]\nclient = [\"herd\", \"ab\"]",
    );
    let text =
        text.replace("[[exclude]]", "[[exclude]]\nload = \"ramp\"\nclient = \"ab\"\n\n[[exclude]]");
    let e = parse(&text, "x.toml").unwrap();
    let all = cells(&e);
    let h3: Vec<_> = all.iter().filter(|c| c.protocol == herd_stats::Protocol::H3).collect();
    assert!(!h3.is_empty());
    for c in &h3 {
        let why = c.refused.as_deref().unwrap_or_else(|| panic!("{} runs", c.key));
        // The server's reason comes first; none of these servers serves h3.
        assert!(why.starts_with("server: "), "{}: {why}", c.key);
    }
    assert!(all
        .iter()
        .filter(|c| c.protocol == herd_stats::Protocol::H1)
        .all(|c| c.refused.is_none()));
    assert_eq!(crate::matrix::runnable(&e).len(), all.len() - h3.len());
}

#[test]
fn exclusions_may_name_a_protocol() {
    let text = with_protocols("\"h1\", \"h2c\"").replace(
        "[[exclude]]",
        "[[exclude]]\nprotocol = \"h2c\"\nserver = \"nginx-fpm\"\n\n[[exclude]]",
    );
    let e = parse(&text, "x.toml").unwrap();
    let all = cells(&e);
    assert!(!all
        .iter()
        .any(|c| c.server.name == "nginx-fpm" && c.protocol == herd_stats::Protocol::H2c));
    assert!(all.iter().any(|c| c.server.name == "herd" && c.protocol == herd_stats::Protocol::H2c));
    let bad = GOOD.replace("[[exclude]]", "[[exclude]]\nprotocol = \"h2\"\n\n[[exclude]]");
    let e = err(&bad);
    assert!(e.contains("[[exclude]] `protocol` is not an axis of [matrix]"), "{e}");
}

#[test]
fn streams_go_with_multiplexed_protocols_only() {
    // Without a protocol axis every cell speaks h1: `streams` is refused at its line.
    let e = err(&edit("warmup_requests = 100", "warmup_requests = 100\nstreams = 10"));
    assert!(
        e.contains(
            "line 28: [loads.ab] streams: cell server=herd workload=page load=ab server_cpus=0 \
             speaks h1 (HTTP/1.1), one request at a time on a connection; `streams` is for h2, \
             h2c and h3: leave the pair out with [[exclude]] protocol = \"h1\", load = \"ab\""
        ),
        "{e}"
    );
    let e = err(&edit("warmup_requests = 100", "warmup_requests = 100\nstreams = 0"));
    assert!(e.contains("[loads.ab] streams = 0 is out of range: use 1 to 65536"), "{e}");
    // With h2c only, the load carries its streams to every cell.
    let text = with_protocols("\"h2c\"")
        .replace("warmup_requests = 100", "warmup_requests = 100\nstreams = 10");
    let e = parse(&text, "x.toml").unwrap();
    assert_eq!(e.loads["ab"].streams.map(|s| s.get()), Some(10));
    assert_eq!(e.loads["ramp"].streams, None);
}

#[test]
fn agents_spread_herds_client_and_refuse_what_they_cannot_carry() {
    let with = |extra: &str| format!("{GOOD}\n[client]\nagents = 3\n{extra}");
    let e = parse(&with(""), "x.toml").unwrap();
    assert_eq!(e.client_agents, Some(3));
    // One agent is no spreading: the client runs as one process.
    let one = format!("{GOOD}\n[client]\nagents = 1\n");
    assert_eq!(parse(&one, "x.toml").unwrap().client_agents, None);
    let with_path = |path: &str, link: &str| {
        with("").replace(
            "server_cpus = [\"0\", \"0-1\"]",
            &format!("server_cpus = [\"0\"]\npath = [\"{path}\"]{link}"),
        )
    };
    assert_eq!(parse(&with_path("routed", ""), "x.toml").unwrap().client_agents, Some(3));
    let cases = [
        (
            format!("{GOOD}\n[client]\nagents = 5\n"),
            "[client] agents = 5 is out of range: use 1 to 4",
        ),
        (
            with("").replace("load = [\"ab\", \"ramp\"]", "load = [\"ab\"]\nclient = [\"ab\"]"),
            "only herd's own client spreads over agents; ab runs as one process",
        ),
        (with_path("direct", "\nlink = [\"100mbit\"]"), "3 agents on a shaped link"),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.contains(want), "want {want:?} in:\n{e}");
        assert!(e.contains("line "), "names its line: {e}");
    }
}

/// `[client] io` is herd's client's `--io`: auto when unsaid, each backend by its name, and a
/// name it does not have refused with the file, its line, the key and the names it has.
#[test]
fn client_io_is_herds_io_and_a_bad_one_is_refused_with_the_choices() {
    use herd_engine::IoChoice;
    assert_eq!(parse(GOOD, "x.toml").unwrap().client_io, IoChoice::Auto);
    for (text, want) in [("auto", IoChoice::Auto), ("epoll", IoChoice::Epoll)] {
        let e = parse(&format!("{GOOD}\n[client]\nio = \"{text}\"\n"), "x.toml").unwrap();
        assert_eq!(e.client_io, want);
    }
    let lines = GOOD.lines().count();
    let e = err(&format!("{GOOD}\n[client]\nthreads = 2\nio = \"io_uring\"\n"));
    assert_eq!(
        e,
        format!(
            "x.toml: line {}: [client] io = \"io_uring\" is not an I/O backend: give \"auto\" \
             (io_uring where it runs and was measured faster, else epoll), \"epoll\" or \"uring\"",
            lines + 4
        )
    );
    assert!(err(&format!("{GOOD}\n[client]\nio = 1\n")).contains("line "));
    // HTTP/1 and HTTP/2 have herd's io_uring worker: `uring` is taken for their cells (an
    // HTTP/3 cell would be refused at its line; io_choice's tests hold that rule).
    let e = parse(&format!("{GOOD}\n[client]\nio = \"uring\"\n"), "x.toml").unwrap();
    assert_eq!(e.client_io, IoChoice::Uring);
    let ab_only = GOOD.replace("load = [\"ab\", \"ramp\"]", "load = [\"ab\"]\nclient = [\"ab\"]");
    let e = parse(&format!("{ab_only}\n[client]\nio = \"uring\"\n"), "x.toml").unwrap();
    assert_eq!(e.client_io, IoChoice::Uring);
}

/// Loads keep connections alive unless the file says `keep_alive = false` in so many words, as
/// every browser and modern client does: a load that says nothing opened a connection per
/// request before, so every HTTP/2 and HTTP/3 cell of it did too.
/// One repetition is a smoke run of the file, allowed (the lab says what it is worth).
#[test]
fn a_single_repetition_is_a_smoke_run() {
    let e = parse(&format!("{GOOD}\n[repetitions]\nmin = 1\nmax = 1\n"), "x.toml").unwrap();
    assert_eq!((e.repetitions.min, e.repetitions.max), (1, 1));
    assert_eq!(e.repetitions.smoke(), Some(crate::experiment::SMOKE_RUN.to_owned()));
    assert_eq!(parse(GOOD, "x.toml").unwrap().repetitions.smoke(), None);
}

#[test]
fn loads_keep_connections_alive_unless_told_otherwise() {
    let e = parse(GOOD, "demo.toml").unwrap();
    assert!(e.loads["ab"].keep_alive, "no keep_alive key: kept alive");
    let told = parse(
        &edit("warmup_requests = 100\n", "warmup_requests = 100\nkeep_alive = false\n"),
        "demo.toml",
    )
    .unwrap();
    assert!(!told.loads["ab"].keep_alive);
    // The bundled seeds that re-run ab without -k say so, load by load.
    for name in [
        "seed000-lighttpd",
        "seed000-100mbit",
        "seed001-router-overhead",
        "seed002-size-sweep",
        "seed003-dynamic",
    ] {
        let b = crate::bundled::find(name).unwrap();
        let e = parse(b.text, name).unwrap();
        assert!(
            e.loads.values().all(|l| !l.keep_alive),
            "{name}: every load a connection per request"
        );
    }
    for name in ["quickstart", "protocols", "seed004-webbench-ramp"] {
        let b = crate::bundled::find(name).unwrap();
        let e = parse(b.text, name).unwrap();
        assert!(e.loads.values().all(|l| l.keep_alive), "{name}: kept alive");
    }
}

#[test]
fn profile_perf_is_the_one_profiler_and_follows_no_netbench_server() {
    let perf = format!("{GOOD}\n[runner]\nprofile = \"perf\"\n");
    assert_eq!(parse(&perf, "x.toml").unwrap().runner.profile, Some(Profiler::Perf));
    assert_eq!(parse(GOOD, "x.toml").unwrap().runner.profile, None);
    let e = err(&format!("{GOOD}\n[runner]\nprofile = \"ebpf\"\n"));
    assert!(e.contains("[runner] profile `ebpf`: expected \"perf\""), "{e}");
    let netbench = GOOD.replace("kind = \"static\"\nsize = 6397", "kind = \"netbench\"");
    let e = err(&format!("{netbench}\n[runner]\nprofile = \"perf\"\n"));
    assert!(e.contains("cannot follow NetBench's servers (workload `page`)"), "{e}");
    // `herd lab run --profile` says the same of the same file.
    let mut plain = parse(GOOD, "x.toml").unwrap();
    plain.profile_with(Profiler::Perf).unwrap();
    assert_eq!(plain.runner.profile, Some(Profiler::Perf));
}

#[test]
fn server_count_is_off_unless_asked_and_refuses_what_it_cannot_check() {
    let on = |text: &str| format!("{text}\n[runner]\nserver_count = true\n");
    assert!(!parse(GOOD, "x.toml").unwrap().runner.server_count);
    assert!(parse(&on(GOOD), "x.toml").unwrap().runner.server_count);
    let off = format!("{GOOD}\n[runner]\nserver_count = false\n");
    assert!(!parse(&off, "x.toml").unwrap().runner.server_count);
    // Refused at the key's line, with the reason.
    let refused = |text: &str, why: &str| {
        let text = on(text);
        let e = err(&text);
        let line = text[..text.find("server_count = true").unwrap()].matches('\n').count() + 1;
        assert!(e.contains(&format!("line {line}")), "{e}");
        assert!(e.contains(&format!("[runner] server_count: {why}")), "{e}");
    };
    let with_x = |table: &str| {
        GOOD.replacen("\"apache-prefork\"]", "\"apache-prefork\", \"x\"]", 1)
            + "\n[[exclude]]\nserver = \"x\"\nworkload = \"9x9\"\n[servers.x]\n"
            + table
    };
    let external = with_x("driver = \"external\"\nurl = \"http://127.0.0.1:8080\"\n");
    refused(&external, "server `x` is external (driver = \"external\")");
    let dir = std::env::temp_dir().join(format!("herd-lab-server-count-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("my-nginx.conf");
    std::fs::write(&conf, "events {}\nhttp { server { listen {{listen}}; } }\n").unwrap();
    let own = with_x(&format!("driver = \"nginx\"\nconfig = \"{}\"\n", conf.display()));
    refused(&own, "server `x` reads your own config file, which decides its own access log");
    std::fs::remove_dir_all(&dir).unwrap();
    let specweb = GOOD.replace("kind = \"static\"\nsize = 6397", "kind = \"specweb\"\ndirs = 2");
    refused(&specweb, "workload `page` is a SPECweb mix");
    let netbench = GOOD.replace("kind = \"static\"\nsize = 6397", "kind = \"netbench\"");
    refused(&netbench, "workload `page` is NetBench's (SMB)");
}

#[test]
fn a_latency_measure_its_client_cannot_give_is_refused_with_the_reason() {
    let text = |client: &str, measure: &str| {
        format!(
            "name = \"l\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"page\"]\nload = [\"d\"]\n\
             client = [\"{client}\"]\n[workloads.page]\nkind = \"static\"\nsize = 100\n\
             [loads.d]\nduration = \"1s\"\nconcurrency = 2\nkeep_alive = true\n\
             [report]\nmeasure = \"{measure}\"\n"
        )
    };
    // wrk gives p50 and p99 of its own, herd and ab every percentile.
    for (client, measure) in [("wrk", "p99"), ("wrk", "p50"), ("herd", "p99.9")] {
        let e = parse(&text(client, measure), "x.toml");
        assert!(e.is_ok(), "{client} {measure}: {:?}", e.err().map(|e| e.to_string()));
    }
    let e = err(&text("wrk", "p99.9"));
    assert!(
        e.contains(
            "[report] measure: p99.9 is a latency percentile, and wrk prints its own p50 \
                    and p99 but no histogram to read p99.9 from: cell"
        ) && e.contains("use p50 or p99 where the client gives them, or herd as the client"),
        "{e}"
    );
    let e = err(&text("h2load", "p50"));
    assert!(e.contains("h2load prints no latency percentile"), "{e}");
    // The server's cost needs no latency from the client.
    assert!(parse(&text("h2load", "cpu_per_request"), "x.toml").is_ok());
}

/// GOOD with a `[runner]` section of `lines`.
fn with_runner(lines: &str) -> String {
    format!("{GOOD}\n[runner]\n{lines}\n")
}

#[test]
fn the_control_is_the_cell_named_else_the_baselines_else_the_first() {
    let e = parse(&with_runner("controls = 3"), "x.toml").unwrap();
    let first = cells(&e).into_iter().find(|c| c.refused.is_none()).unwrap();
    assert_eq!(e.runner.controls, Some(Controls { runs: 3, of: first.key }));

    let named = r#"controls = 2
control = { server = "nginx-fpm", workload = "page", load = "ab", server_cpus = "0-1" }"#;
    let e = parse(&with_runner(named), "x.toml").unwrap();
    let c = e.runner.controls.unwrap();
    assert_eq!(c.runs, 2);
    assert_eq!(c.of, "server=nginx-fpm workload=page load=ab server_cpus=0-1");

    // A baseline that names one cell is the control's cell; one that names several is not.
    let small = |baseline: &str| {
        format!(
            r#"name = "b"
[matrix]
server = ["herd", "nginx-fpm"]
workload = ["page"]
load = ["ab"]
[workloads.page]
kind = "static"
size = 100
[loads.ab]
requests = 100
concurrency = 2
[report]
baseline = {baseline}
[runner]
controls = 4
"#
        )
    };
    let e = parse(&small(r#"{ server = "nginx-fpm" }"#), "x.toml").unwrap();
    assert_eq!(e.runner.controls.unwrap().of, "server=nginx-fpm workload=page load=ab");
    let e = parse(&small(r#"{ load = "ab" }"#), "x.toml").unwrap();
    assert_eq!(e.runner.controls.unwrap().of, "server=herd workload=page load=ab");
    assert_eq!(parse(GOOD, "x.toml").unwrap().runner.controls, None);
}

#[test]
fn a_bad_control_is_refused_with_what_to_write() {
    for n in ["1", "0", "21", "-3"] {
        let e = err(&with_runner(&format!("controls = {n}")));
        assert!(e.contains(&format!("[runner] controls = {n}")), "{e}");
        assert!(e.contains("2 to 20") && e.contains("controls = 3"), "{e}");
    }
    let e = err(&with_runner(r#"control = { server = "herd" }"#));
    assert!(e.contains("add [runner] controls = N"), "{e}");
    let e = err(&with_runner("controls = 3\ncontrol = { server = \"herd\" }"));
    assert!(e.contains("[runner] control names 32 cells"), "{e}");
    assert!(e.contains("e.g. control = { server = \"herd\", workload = "), "{e}");
    let e = err(&with_runner("controls = 3\ncontrol = { tenant = \"a\" }"));
    assert!(e.contains("`tenant` is not an axis of [matrix]"), "{e}");
    let e = err(&with_runner("controls = 3\ncontrol = { server = \"caddy\" }"));
    assert!(e.contains("server = \"caddy\" is not a value of that axis"), "{e}");
    // apache-prefork with 9x9 is excluded from the matrix.
    let gone = "controls = 3\ncontrol = { server = \"apache-prefork\", workload = \"9x9\" }";
    let e = err(&with_runner(gone));
    assert!(e.contains("names no cell that runs"), "{e}");
    let e = err(&with_runner("controls = 3\ncontrol = {}"));
    assert!(e.contains("[runner] control is empty"), "{e}");
    assert!(e.contains("x.toml: line "), "names its line: {e}");
}

mod hosts_section;
mod server_settings;
