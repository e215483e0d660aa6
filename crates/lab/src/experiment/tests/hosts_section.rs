//! `[hosts]`: the roles' machines read, and every refusal at its line.

use super::{err, GOOD};
use crate::experiment::parse;

fn with_hosts(section: &str) -> String {
    format!("{GOOD}\n[hosts]\n{section}")
}

/// The line `needle` is on in `text`, 1-based.
fn line_of(text: &str, needle: &str) -> usize {
    text[..text.find(needle).unwrap()].matches('\n').count() + 1
}

#[test]
fn hosts_name_each_role_and_nothing_else_changes() {
    let text = with_hosts(
        "server = \"ssh://bench@198.18.10.2\"\nclients = [\"ssh://bench@198.18.10.3\", \
         \"ssh://198.18.10.4:2222\"]\nrouter = \"ssh://bench@198.18.10.1\"\n",
    );
    let e = parse(&text, "x.toml").unwrap();
    let h = e.hosts.as_ref().unwrap();
    assert_eq!(h.server.as_ref().unwrap().to_string(), "ssh://bench@198.18.10.2");
    let clients: Vec<String> = h.clients.iter().map(ToString::to_string).collect();
    assert_eq!(clients, ["ssh://bench@198.18.10.3", "ssh://198.18.10.4:2222"]);
    assert_eq!(h.router.as_ref().unwrap().host, "198.18.10.1");
    assert_eq!(h.ssh_config, None);
    assert!(parse(GOOD, "x.toml").unwrap().hosts.is_none(), "no [hosts]: this machine");
}

#[test]
fn bad_hosts_are_refused_at_their_line() {
    let cases = [
        (
            "server = \"bench@198.18.10.2\"",
            "[hosts] server: `bench@198.18.10.2`: not an ssh:// URL",
        ),
        (
            "clients = [\"ssh://a\", \"ssh://b:70000\"]",
            "[hosts] client 2: `ssh://b:70000`: port 70000 is out of range 1-65535",
        ),
        ("router = \"ssh://-oProxyCommand=x\"", "must be a name"),
        ("clients = []", "[hosts] clients is empty"),
        ("sever = \"ssh://a\"", "unknown field `sever`"),
    ];
    for (section, want) in cases {
        let text = with_hosts(&format!("{section}\n"));
        let msg = err(&text);
        let line = line_of(&text, section);
        assert!(msg.contains(&format!("line {line}:")), "{section}: {msg}");
        assert!(msg.contains(want), "{section}: {msg}");
    }
    let text = format!("{GOOD}\n[hosts]\n");
    let msg = err(&text);
    assert!(msg.contains("[hosts] names no host"), "{msg}");
}

#[test]
fn one_machine_in_two_roles_is_refused() {
    let text = with_hosts(
        "server = \"ssh://bench@198.18.10.2\"\nclients = [\"ssh://root@198.18.10.2:22\"]\n",
    );
    let msg = err(&text);
    let line = line_of(&text, "clients =");
    let want = format!(
        "line {line}: [hosts] client 1: `ssh://root@198.18.10.2:22` is the server's machine \
         already (line {})",
        line - 1
    );
    assert!(msg.contains(&want), "{msg}");
    let text = with_hosts("clients = [\"ssh://a\", \"ssh://A\"]\n");
    assert!(
        err(&text).contains("[hosts] client 2: `ssh://A` is the client 1's machine"),
        "{}",
        err(&text)
    );
    // Another port is another sshd, maybe another machine behind a NAT: accepted.
    let text = with_hosts("server = \"ssh://gw:2201\"\nclients = [\"ssh://gw:2202\"]\n");
    assert!(parse(&text, "x.toml").is_ok());
}

#[test]
fn the_ssh_config_is_read_beside_the_experiment_file() {
    let dir = std::env::temp_dir().join(format!("herd-hosts-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lab.ssh_config"), "Host *\n").unwrap();
    let text = with_hosts("server = \"ssh://s\"\nssh_config = \"lab.ssh_config\"\n");
    let source = dir.join("x.toml");
    let e = parse(&text, source.to_str().unwrap()).unwrap();
    assert_eq!(e.hosts.unwrap().ssh_config, Some(dir.join("lab.ssh_config")));
    let text = with_hosts("server = \"ssh://s\"\nssh_config = \"missing.ssh_config\"\n");
    let msg = parse(&text, source.to_str().unwrap()).unwrap_err().to_string();
    assert!(
        msg.contains("[hosts] ssh_config: no file") && msg.contains("missing.ssh_config"),
        "{msg}"
    );
    assert!(msg.contains(&format!("line {}:", line_of(&text, "ssh_config ="))), "{msg}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// GOOD with its own nginx build `mine` (`binary` as given) in the matrix, and `[hosts]`.
fn with_binary(binary: &str, hosts: &str) -> String {
    let text = super::edit("\"apache-prefork\"]", "\"apache-prefork\", \"mine\"]");
    let text = format!(
        "{text}\n[servers.mine]\ndriver = \"nginx\"\nphp = \"fpm\"\nbinary = \"{binary}\"\n"
    );
    if hosts.is_empty() {
        text
    } else {
        format!("{text}\n[hosts]\n{hosts}")
    }
}

#[test]
fn a_binary_on_the_server_host_is_not_looked_for_here() {
    // With a server host: a path there, taken as written (located there when the run
    // reaches the host).
    let gone = "/nonexistent/herd-test/sbin/nginx";
    let text = with_binary(gone, "server = \"ssh://bench@198.18.10.2\"\n");
    let e = parse(&text, "x.toml").unwrap();
    let mine = e.servers.get("mine").unwrap();
    assert_eq!(mine.binary.as_deref(), Some(std::path::Path::new(gone)));
    // Relative: nothing says where it would start there; refused at its line.
    let text = with_binary("build/sbin/nginx", "server = \"ssh://bench@198.18.10.2\"\n");
    let msg = err(&text);
    let line = line_of(&text, "binary =");
    assert!(
        msg.contains(&format!(
            "line {line}: [servers.mine] binary: with a [hosts] server, the binary is a path \
             on that host: write it absolute (not build/sbin/nginx)"
        )),
        "{msg}"
    );
    // Without a server host (none, or client hosts only), the servers run here: checked here.
    for hosts in ["", "clients = [\"ssh://bench@198.18.10.3\"]\n"] {
        let text = with_binary(gone, hosts);
        let msg = err(&text);
        assert!(
            msg.contains(&format!(
                "line {}: [servers.mine] binary: {gone} is not an executable file",
                line_of(&text, "binary =")
            )),
            "{hosts}: {msg}"
        );
    }
}
