//! The transport against stand-ins for ssh: a script that runs the remote command here (so
//! the quoting goes through a real shell), and ones that fail as ssh does.

use super::*;
use std::os::unix::fs::PermissionsExt as _;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("herd-ssh-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An executable script `name` in `dir` with `body` after the shebang.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Skips ssh's options up to `--` and the host, then runs the one remote string in sh, as
/// the remote login shell would.
const LOCAL_SSH: &str = r#"while [ "$1" != "--" ]; do shift; done; shift; shift; exec sh -c "$1""#;

fn host(url: &str) -> HostUrl {
    url.parse().unwrap()
}

#[test]
fn argv_has_batch_mode_multiplexing_and_the_host_after_dashes() {
    let dir = scratch("argv");
    let cfg = dir.join("lab.ssh_config");
    let ssh = Ssh::new(Some(&cfg), Duration::from_secs(3), &dir).unwrap();
    let a: Vec<String> = ssh
        .argv(&host("ssh://bench@198.18.10.2:2222"), &["uname", "-sr"])
        .into_iter()
        .map(|w| w.into_string().unwrap())
        .collect();
    let control = format!("ControlPath={}/%C", ssh.dir.display());
    let want = [
        "ssh",
        "-F",
        cfg.to_str().unwrap(),
        "-T",
        "-o",
        "ClearAllForwardings=yes",
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=3",
        "-o",
        "ControlMaster=auto",
        "-o",
        &control,
        "-o",
        "ControlPersist=no",
        "-p",
        "2222",
        "-l",
        "bench",
        "--",
        "198.18.10.2",
        "uname -sr",
    ];
    assert_eq!(a, want);
    // The private directory is the user's alone, and goes with the transport.
    let mode = std::fs::metadata(&ssh.dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    let made = ssh.dir.clone();
    drop(ssh);
    assert!(!made.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn quoting_survives_a_real_shell() {
    let dir = scratch("quote");
    let fake = script(&dir, "ssh", LOCAL_SSH);
    let ssh = Ssh::with_program(fake.into(), None, Duration::from_secs(3), &dir).unwrap();
    let words = [
        "plain",
        "two words",
        "it's",
        "$HOME",
        "`id`",
        "a\nb",
        "",
        "*",
        "x; echo injected",
        "'",
        "\\",
        "-n",
        "~",
    ];
    let mut remote = vec!["printf", "%s|"];
    remote.extend(words);
    let out = ssh.run(&host("ssh://h"), &remote, None, Duration::from_secs(10)).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, words.iter().map(|w| format!("{w}|")).collect::<String>());
    assert_eq!(quote("safe-word_1.2:3"), "safe-word_1.2:3");
    assert_eq!(quote("it's"), r"'it'\''s'");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn input_comes_from_a_file_and_the_remote_exit_code_is_passed_on() {
    let dir = scratch("stdin");
    let fake = script(&dir, "ssh", LOCAL_SSH);
    let input = dir.join("input");
    std::fs::write(&input, b"binary\0bytes").unwrap();
    let ssh = Ssh::with_program(fake.into(), None, Duration::from_secs(3), &dir).unwrap();
    let out = ssh
        .run(
            &host("ssh://h"),
            &["sh", "-c", "wc -c; exit 3"],
            Some(&input),
            Duration::from_secs(10),
        )
        .unwrap();
    assert_eq!((out.code, out.stdout.trim()), (3, "12"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ssh_failures_name_the_host_and_what_to_do() {
    let dir = scratch("fail");
    let cases = [
        (
            "bench@198.18.0.9: Permission denied (publickey).",
            "key refused (bench@198.18.0.9: Permission denied (publickey))",
        ),
        (
            "No ED25519 host key is known for 198.18.0.9 and you have requested strict \
             checking.\nHost key verification failed.",
            "the host's key is not known here",
        ),
        (
            "@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n\
             Host key verification failed.",
            "CHANGED since known_hosts",
        ),
        (
            "ssh: connect to host 198.18.0.9 port 22: Connection refused",
            "unreachable: connect to host 198.18.0.9 port 22: Connection refused",
        ),
        ("ssh: connect to host 198.18.0.9 port 22: Connection timed out", "unreachable: connect"),
        (
            "kex_exchange_identification: something odd",
            "ssh failed: kex_exchange_identification: something odd",
        ),
    ];
    for (i, (said, want)) in cases.iter().enumerate() {
        let fake =
            script(&dir, &format!("ssh{i}"), &format!("cat >&2 <<'EOF'\n{said}\nEOF\nexit 255"));
        let ssh = Ssh::with_program(fake.into(), None, Duration::from_secs(3), &dir).unwrap();
        let e = ssh
            .run(&host("ssh://bench@198.18.0.9"), &["true"], None, Duration::from_secs(10))
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("ssh://bench@198.18.0.9: "), "{msg}");
        assert!(msg.contains(want), "{said:?} gave {msg}");
    }
    // A remote command of its own that exits 255, printing nothing: its code, not a failure.
    let fake = script(&dir, "ssh-quiet", "exit 255");
    let ssh = Ssh::with_program(fake.into(), None, Duration::from_secs(3), &dir).unwrap();
    assert_eq!(ssh.run(&host("ssh://h"), &["x"], None, Duration::from_secs(10)).unwrap().code, 255);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_ssh_and_a_hung_one_are_said_so() {
    let dir = scratch("missing");
    let ssh =
        Ssh::with_program("herd-no-such-ssh".into(), None, Duration::from_secs(3), &dir).unwrap();
    let e = ssh.run(&host("ssh://h"), &["true"], None, Duration::from_secs(10)).unwrap_err();
    assert!(matches!(e, SshError::Missing { .. }), "{e}");
    assert!(e.to_string().contains("no ssh client on this machine"), "{e}");
    let fake = script(&dir, "ssh-hung", "exec sleep 30");
    let ssh = Ssh::with_program(fake.into(), None, Duration::from_secs(3), &dir).unwrap();
    let e = ssh.run(&host("ssh://h"), &["true"], None, Duration::from_millis(200)).unwrap_err();
    assert!(matches!(e, SshError::TimedOut { .. }), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_session_carries_lines_both_ways() {
    use std::io::{BufRead as _, Write as _};
    let dir = scratch("session");
    let fake = script(&dir, "ssh", LOCAL_SSH);
    let ssh = Ssh::with_program(fake.into(), None, Duration::from_secs(3), &dir).unwrap();
    let mut s = ssh.spawn_session(&host("ssh://h"), &["sed", "-u", "s/^/echo: /"]).unwrap();
    let mut input = s.process.take_stdin().unwrap();
    let mut output = std::io::BufReader::new(s.process.take_stdout().unwrap());
    writeln!(input, "{{\"hello\":1}}").unwrap();
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    assert_eq!(line, "echo: {\"hello\":1}\n");
    drop(input);
    assert!(s.process.wait(Duration::from_secs(5)).unwrap().unwrap().success());
    assert!(s.failure().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_forward_goes_through_the_same_master_without_clearing_itself() {
    let dir = scratch("forward");
    let cfg = dir.join("lab.ssh_config");
    let ssh = Ssh::new(Some(&cfg), Duration::from_secs(3), &dir).unwrap();
    let words = |op| -> Vec<String> {
        ssh.forward_argv(
            &host("ssh://bench@198.18.10.2:2222"),
            op,
            Path::new("/tmp/herd-host-7-0/coordinator.sock"),
            Path::new("/tmp/herd-cluster-9/coordinator.sock"),
        )
        .into_iter()
        .map(|w| w.into_string().unwrap())
        .collect()
    };
    let control = format!("ControlPath={}/%C", ssh.dir.display());
    let spec = "/tmp/herd-host-7-0/coordinator.sock:/tmp/herd-cluster-9/coordinator.sock";
    for (op, word) in [(ForwardOp::Forward, "forward"), (ForwardOp::Cancel, "cancel")] {
        let want = [
            "ssh",
            "-F",
            cfg.to_str().unwrap(),
            "-O",
            word,
            "-R",
            spec,
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=3",
            "-o",
            "ControlMaster=auto",
            "-o",
            &control,
            "-o",
            "ControlPersist=no",
            "-p",
            "2222",
            "-l",
            "bench",
            "--",
            "198.18.10.2",
        ];
        assert_eq!(words(op), want);
    }
    // A session's own command line finds the same master.
    let session = ssh.argv(&host("ssh://bench@198.18.10.2:2222"), &["true"]);
    assert!(session.contains(&OsString::from(&control)), "{session:?}");
    drop(ssh);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_forward_that_ssh_refuses_names_the_host_and_a_colon_is_refused_first() {
    let dir = scratch("forward-fails");
    let fails =
        script(&dir, "ssh", "echo 'mux_client_forward: forwarding request failed' >&2; exit 255");
    let ssh = Ssh::with_program(fails.into(), None, Duration::from_secs(3), &dir).unwrap();
    let h = host("ssh://198.18.10.2");
    let (remote, local) = (Path::new("/r/c.sock"), Path::new("/l/c.sock"));
    let e = ssh.forward_unix(&h, remote, local).unwrap_err().to_string();
    assert!(e.starts_with("ssh://198.18.10.2: "), "{e}");
    assert!(e.contains("forwarding request failed"), "{e}");
    let e = ssh.cancel_forward(&h, Path::new("/r/a:b.sock"), local).unwrap_err().to_string();
    assert!(e.contains("a path with ':'"), "{e}");
    let ok = script(&dir, "ssh-ok", "exit 0");
    let ssh = Ssh::with_program(ok.into(), None, Duration::from_secs(3), &dir).unwrap();
    ssh.forward_unix(&h, remote, local).unwrap();
    ssh.cancel_forward(&h, remote, local).unwrap();
    drop(ssh);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_parents_control_directory_is_used_and_left_in_place() {
    let dir = scratch("shared");
    let parents = dir.join("masters");
    std::fs::create_dir_all(&parents).unwrap();
    let ssh = Ssh::sharing("ssh".into(), None, Duration::from_secs(3), parents.clone());
    assert_eq!(ssh.control_dir(), parents);
    let a = ssh.argv(&host("ssh://198.18.10.2"), &["true"]);
    let control = format!("ControlPath={}/%C", parents.display());
    assert!(a.contains(&OsString::from(&control)), "{a:?}");
    drop(ssh);
    assert!(parents.is_dir(), "the parent's directory is the parent's to remove");
    let _ = std::fs::remove_dir_all(&dir);
}
