//! File sets end to end: `herd_fileset::generate` writes a size sweep and a 2-directory
//! SPECweb99-like set into a temporary directory, every file is checked on disk (size and the
//! `/bytes/N` pattern), then a real server on 127.0.0.1 serves the directory and a few files
//! are fetched over a socket and compared byte for byte. A test binary of its own, apart from
//! `tests/it`; it needs nothing installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::error::Error;
use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

use herd_fileset::{
    self as fileset, FileSet, SizeList, SpecwebFile, SpecwebManifest, BYTES_PER_DIR, DEFAULT_SIZES,
    FILES_PER_CLASS, GENERATED_PATTERN, N_CLASSES,
};
use herd_serve::{ServeConfig, ServeError, ServeStats, Server, StopHandle};

type TestResult = Result<(), Box<dyn Error>>;

#[test]
fn generated_sets_are_right_on_disk_and_over_http() -> TestResult {
    let tmp = TempDir::new("served");
    let root = tmp.path().join("sets");
    let sets = [
        FileSet::Sizes(SizeList::sweep()),
        FileSet::Specweb { n_dirs: NonZeroU32::new(2).ok_or("zero")? },
    ];
    let summaries = fileset::generate(&root, &sets, &mut |_| {})?;
    assert_eq!(summaries.len(), 2);
    assert_eq!(summaries[0].n_files, DEFAULT_SIZES.len() as u64);
    assert_eq!(summaries[0].total_bytes, DEFAULT_SIZES.iter().sum::<u64>());
    assert_eq!(summaries[1].n_files, 72);
    assert_eq!(summaries[1].total_bytes, 2 * BYTES_PER_DIR);

    // Every file on disk: its size and the pattern of /bytes/N.
    for &bytes in &DEFAULT_SIZES {
        check_file(&root.join(format!("sizes/{bytes}.html")), bytes);
    }
    for dir in 0..2 {
        for class in 0..N_CLASSES as u8 {
            for file in 0..FILES_PER_CLASS as u8 {
                let f = SpecwebFile { dir, class, file };
                check_file(&root.join("specweb").join(f.to_string()), f.bytes());
            }
        }
    }
    let manifest = fs::read_to_string(root.join("specweb/manifest.toml"))?;
    let manifest = SpecwebManifest::parse(&manifest)?;
    assert_eq!(manifest.n_dirs, 2);
    let mix = manifest.mix()?;

    // Served by herd serve --root: bodies equal the files and /bytes/N.
    let server = TestServer::start(&root);
    for target in ["/sizes/1.html", "/sizes/1024.html", "/sizes/1048576.html"] {
        let body = server.get(target);
        assert_eq!(body, fs::read(root.join(&target[1..]))?, "{target}");
        assert_eq!(body, server.get(&format!("/bytes/{}", body.len())), "{target} vs /bytes/N");
    }
    // Paths drawn from the manifest's mix, the way a load generator would.
    for u in [0.0, 0.3, 0.75, 0.999, 0.999_999] {
        let f = mix.sample(u);
        let body = server.get(&format!("/specweb/{f}"));
        assert_eq!(body.len() as u64, f.bytes(), "{f}");
        assert!(is_pattern(&body), "{f}");
    }
    let biggest = server.get("/specweb/dir00001/class3_8");
    assert_eq!(biggest, fs::read(root.join("specweb/dir00001/class3_8"))?);
    let stats = server.stop();
    assert_eq!(stats.n_bad_requests, 0);
    Ok(())
}

#[test]
fn a_second_run_keeps_everything() -> TestResult {
    let tmp = TempDir::new("again");
    let sets = [
        FileSet::Sizes("1,64Ki".parse()?),
        FileSet::Specweb { n_dirs: NonZeroU32::new(2).ok_or("zero")? },
    ];
    fileset::generate(tmp.path(), &sets, &mut |_| {})?;
    let mut bytes_written = 0;
    let again = fileset::generate(tmp.path(), &sets, &mut |p| bytes_written = p.bytes_written)?;
    assert_eq!(bytes_written, 0);
    for s in &again {
        assert_eq!((s.n_written, s.n_kept), (0, s.n_files), "{}", s.name);
    }
    Ok(())
}

fn check_file(path: &Path, bytes: u64) {
    let body = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(body.len() as u64, bytes, "{}", path.display());
    assert!(is_pattern(&body), "{} is not the /bytes/N pattern", path.display());
}

fn is_pattern(body: &[u8]) -> bool {
    body.iter().enumerate().all(|(i, &b)| b == GENERATED_PATTERN[i % GENERATED_PATTERN.len()])
}

/// A server on 127.0.0.1:0 serving `root`, stopped when dropped.
struct TestServer {
    addr: SocketAddr,
    stop: StopHandle,
    thread: Option<JoinHandle<Result<ServeStats, ServeError>>>,
}

impl TestServer {
    fn start(root: &Path) -> TestServer {
        let config = ServeConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            root: Some(root.to_owned()),
            threads: 2,
            ..ServeConfig::default()
        };
        let server = Server::bind(config).expect("bind");
        let addr = server.local_addr();
        let stop = StopHandle::new();
        let run_stop = stop.clone();
        let thread = std::thread::spawn(move || server.run(run_stop));
        TestServer { addr, stop, thread: Some(thread) }
    }

    /// GET `target` on a fresh connection; panics unless the answer is 200 with a body of
    /// Content-Length bytes.
    fn get(&self, target: &str) -> Vec<u8> {
        let mut s = TcpStream::connect(self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").unwrap();
        let mut response = Vec::new();
        s.read_to_end(&mut response).expect("read response");
        let end = response.windows(4).position(|w| w == b"\r\n\r\n").expect("head") + 4;
        let head = String::from_utf8_lossy(&response[..end]).into_owned();
        assert!(head.starts_with("HTTP/1.1 200 "), "{target}: {head}");
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .expect("Content-Length")
            .parse()
            .unwrap();
        let body = response.split_off(end);
        assert_eq!(body.len(), length, "{target}");
        body
    }

    fn stop(mut self) -> ServeStats {
        self.stop.stop();
        self.thread.take().unwrap().join().unwrap().unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let path =
            std::env::temp_dir().join(format!("herd-fileset-it-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
