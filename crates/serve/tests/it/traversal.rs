//! Nothing outside the root is ever served: every spelling of `..`, encoded separators, NUL,
//! backslashes, absolute paths, and symlinks pointing out of the root. Malformed paths get 400,
//! paths that resolve outside the root 404 (like a missing file).

use std::os::unix::fs::symlink;

use crate::harness::{Client, TempDir, TestServer};

const SECRET: &[u8] = b"TOP SECRET outside the root";

/// `outside/secret.txt` next to `outside/root/`, which holds a public file and symlinks: two
/// out of the root (to a file and to a directory), one relative and one absolute inside it.
struct Fixture {
    _dir: TempDir,
    server: TestServer,
}

fn fixture() -> Fixture {
    let dir = TempDir::new();
    let secret = dir.write("secret.txt", SECRET);
    dir.write("root/public.txt", b"public");
    let root = dir.path().join("root");
    symlink(&secret, root.join("escape")).unwrap();
    symlink("../secret.txt", root.join("escape-relative")).unwrap();
    symlink(dir.path(), root.join("escape-dir")).unwrap();
    symlink("public.txt", root.join("inside-relative")).unwrap();
    symlink(root.join("public.txt"), root.join("inside-absolute")).unwrap();
    let server = TestServer::start(Some(&root));
    Fixture { _dir: dir, server }
}

/// Sends `target` raw (no client-side normalisation) and returns the status and body.
fn fetch(server: &TestServer, target: &str) -> (u16, Vec<u8>) {
    let mut c = Client::connect(server.addr());
    c.send(format!("GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes());
    let r = c.response(false);
    (r.status, r.body)
}

fn refused(f: &Fixture, target: &str, status: u16) {
    let (got, body) = fetch(&f.server, target);
    assert_eq!(got, status, "{target}");
    assert!(!body.windows(SECRET.len()).any(|w| w == SECRET), "{target} leaked the secret");
}

#[test]
fn dot_dot_segments() {
    let f = fixture();
    for target in ["/../secret.txt", "/public.txt/../../secret.txt", "/./../secret.txt", "/.."] {
        refused(&f, target, 400);
    }
}

#[test]
fn encoded_and_double_encoded_dots() {
    let f = fixture();
    for target in [
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/.%2e/secret.txt",
        "/%2e./secret.txt",
        "/%252e%252e/secret.txt",
        "/%25252e%25252e/secret.txt",
    ] {
        refused(&f, target, 400);
    }
}

#[test]
fn separators_nul_and_backslashes() {
    let f = fixture();
    for target in [
        "/..%2fsecret.txt",
        "/..%2Fsecret.txt",
        "/..\\secret.txt",
        "/..%5csecret.txt",
        "/public.txt%00.html",
        "/%00",
    ] {
        refused(&f, target, 400);
    }
}

#[test]
fn targets_that_are_not_root_relative_paths() {
    let f = fixture();
    for target in ["secret.txt", "C:\\secret.txt", "*", "http://t/../secret.txt"] {
        refused(&f, target, 400);
    }
    // Absolute-looking paths stay under the root, where these do not exist.
    let secret = f._dir.path().join("secret.txt");
    for target in
        [secret.display().to_string(), format!("/{}", secret.display()), "//etc/passwd".into()]
    {
        refused(&f, &target, 404);
    }
}

#[test]
fn symlinks_out_of_the_root_are_404() {
    let f = fixture();
    for target in ["/escape", "/escape-relative", "/escape-dir/secret.txt", "/escape-dir/"] {
        refused(&f, target, 404);
    }
}

#[test]
fn symlinks_inside_the_root_are_followed() {
    let f = fixture();
    assert_eq!(fetch(&f.server, "/inside-relative"), (200, b"public".to_vec()));
    assert_eq!(fetch(&f.server, "/inside-absolute"), (200, b"public".to_vec()));
}

#[test]
fn a_cached_path_swapped_to_a_symlink_out_is_refused() {
    // The worker's open-file cache must not keep serving a path that now leads outside.
    let dir = TempDir::new();
    let secret = dir.write("secret.txt", SECRET);
    let public = dir.write("root/swap.txt", b"public before");
    let server = TestServer::start_with(herd_serve::ServeConfig {
        threads: 1,
        ..crate::harness::config(Some(&dir.path().join("root")))
    });
    for _ in 0..2 {
        assert_eq!(fetch(&server, "/swap.txt"), (200, b"public before".to_vec()));
    }
    std::fs::remove_file(&public).unwrap();
    symlink(&secret, &public).unwrap();
    for _ in 0..2 {
        let (status, body) = fetch(&server, "/swap.txt");
        assert_eq!(status, 404);
        assert!(!body.windows(SECRET.len()).any(|w| w == SECRET), "leaked the secret");
    }
}
