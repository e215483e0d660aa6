//! A real `herd serve` child for tests that send load: on a free loopback port, one worker,
//! killed (by its own PID) on drop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use super::herd;

pub struct Serve {
    child: Child,
    pub addr: String,
}

impl Serve {
    pub fn start() -> Serve {
        let mut child = herd()
            .args(["serve", "--listen", "127.0.0.1:0", "--threads", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start herd serve");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("herd serve's stdout");
        BufReader::new(stdout).read_line(&mut line).expect("herd serve's address line");
        let addr = match line.trim().strip_prefix("listening on http://") {
            Some(a) => a.to_owned(),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("herd serve did not say where it listens: {line:?}");
            }
        };
        Serve { child, addr }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The server's own counters (`/herd/stats`).
    pub fn stats(&self) -> serde_json::Value {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.write_all(b"GET /herd/stats HTTP/1.0\r\n\r\n").unwrap();
        let mut all = String::new();
        s.read_to_string(&mut all).unwrap();
        serde_json::from_str(all.split_once("\r\n\r\n").unwrap().1).unwrap()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
