//! `/metrics` over HTTP/1.1 on the address the user named, served by one thread of its own:
//! one connection at a time, each request read within 2 s and 8 KiB and answered once, then
//! closed, so a scraper that stalls or sends garbage holds nothing for long and never
//! reaches a measuring thread. At the run's end the server keeps the final figures up until
//! a scrape has read them, for a bounded time ([`MetricsServer::finish`]): Prometheus then
//! has the run's totals, not its second-to-last second's.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::figures::SharedFigures;
use super::text;

/// The most of a request read, and how long it may take.
const MAX_REQUEST: usize = 8 * 1024;
const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// What the scrapes have read: the figures' newest version served and how many scrapes came,
/// and a wake-up when they change.
type Served = Arc<(Mutex<Scrapes>, Condvar)>;

#[derive(Debug, Default)]
struct Scrapes {
    version: u64,
    count: u64,
}

/// Whether a scrape read the final figures ([`MetricsServer::finish`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalScrape {
    Read,
    /// Scrapes came during the run, but none after its end within the wait.
    NotRead,
    /// Nothing scraped at all.
    NeverScraped,
}

/// The running endpoint; stopped by [`MetricsServer::finish`] or when dropped.
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    figures: SharedFigures,
    stop: Arc<AtomicBool>,
    served: Served,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `addr` and serves `figures` from a thread of its own.
    pub fn start(addr: SocketAddr, figures: SharedFigures) -> io::Result<MetricsServer> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let served: Served = Arc::new((Mutex::new(Scrapes::default()), Condvar::new()));
        let thread = {
            let (figures, stop, served) = (figures.clone(), stop.clone(), served.clone());
            std::thread::Builder::new()
                .name("herd-metrics".into())
                .spawn(move || serve(&listener, &figures, &stop, &served))?
        };
        Ok(MetricsServer { addr, figures, stop, served, thread: Some(thread) })
    }

    /// Where it listens (the port chosen, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The run is over: marks the figures final and, if anything scraped them during the run,
    /// waits until a scrape has served the final ones (at most `linger`); then stops, saying
    /// how it went. Nobody scraping: no wait.
    pub fn finish(mut self, linger: Duration) -> FinalScrape {
        let version = {
            let mut f = self.figures.lock().unwrap_or_else(PoisonError::into_inner);
            f.finish();
            f.version
        };
        let deadline = Instant::now() + linger;
        let (lock, changed) = &*self.served;
        let mut seen = lock.lock().unwrap_or_else(PoisonError::into_inner);
        while seen.count > 0 && seen.version < version {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            seen = changed.wait_timeout(seen, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        let end = if seen.version >= version {
            FinalScrape::Read
        } else if seen.count == 0 {
            FinalScrape::NeverScraped
        } else {
            FinalScrape::NotRead
        };
        drop(seen);
        self.stop_thread();
        end
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the blocking accept; whatever it makes of this connection, it then sees `stop`.
        let _ = TcpStream::connect_timeout(&self.addr, IO_TIMEOUT);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop_thread();
        }
    }
}

fn serve(listener: &TcpListener, figures: &SharedFigures, stop: &AtomicBool, served: &Served) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        // A failed accept (a peer gone before it, or no file descriptor left) loses only
        // that scrape; a pause, so that one that keeps failing does not spin beside the run.
        match conn {
            Ok(conn) => {
                let _ = answer(conn, figures, served);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Reads one request and answers it.
fn answer(mut conn: TcpStream, figures: &SharedFigures, served: &Served) -> io::Result<()> {
    conn.set_read_timeout(Some(IO_TIMEOUT))?;
    conn.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = read_head(&mut conn)?;
    let (status, body) = match route(&head) {
        Route::Metrics => {
            let (page, version) = {
                let f = figures.lock().unwrap_or_else(PoisonError::into_inner);
                let cpu = super::process_cpu_seconds();
                (text::render(&f, cpu), f.version)
            };
            let (lock, changed) = &**served;
            let mut seen = lock.lock().unwrap_or_else(PoisonError::into_inner);
            seen.version = seen.version.max(version);
            seen.count += 1;
            changed.notify_all();
            drop(seen);
            ("200 OK", page)
        }
        Route::NotFound => ("404 Not Found", "herd serves its run's metrics at /metrics\n".into()),
        Route::BadMethod => ("405 Method Not Allowed", "GET /metrics\n".into()),
        Route::Bad => ("400 Bad Request", "not an HTTP request: GET /metrics\n".into()),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(reply.as_bytes())?;
    let _ = conn.shutdown(Shutdown::Write);
    Ok(())
}

/// The request's head, up to its blank line, within [`MAX_REQUEST`] bytes and [`IO_TIMEOUT`]
/// in all (a peer that trickles a byte at a time holds the endpoint no longer); past either,
/// what came.
fn read_head(conn: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let deadline = Instant::now() + IO_TIMEOUT;
    while head.len() < MAX_REQUEST && !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        conn.set_read_timeout(Some(left))?;
        let n = conn.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(head)
}

#[derive(Debug, PartialEq, Eq)]
enum Route {
    Metrics,
    NotFound,
    BadMethod,
    Bad,
}

fn route(head: &[u8]) -> Route {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = std::str::from_utf8(line).unwrap_or_default().trim_end_matches('\r');
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Route::Bad;
    };
    if !version.starts_with("HTTP/1.") {
        return Route::Bad;
    }
    if method != "GET" && method != "HEAD" {
        return Route::BadMethod;
    }
    let path = target.split('?').next().unwrap_or_default();
    if path == "/metrics" {
        Route::Metrics
    } else {
        Route::NotFound
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Labels, LiveFigures};

    fn get(addr: SocketAddr, request: &[u8]) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(request).unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn routes() {
        assert_eq!(route(b"GET /metrics HTTP/1.1\r\n\r\n"), Route::Metrics);
        assert_eq!(route(b"GET /metrics?x=1 HTTP/1.0\r\n\r\n"), Route::Metrics);
        assert_eq!(route(b"GET / HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b"POST /metrics HTTP/1.1\r\n\r\n"), Route::BadMethod);
        assert_eq!(route(b"\x16\x03\x01garbage"), Route::Bad);
        assert_eq!(route(b""), Route::Bad);
    }

    /// Served, refused with a status, a stalled peer does not stop the next scrape, and the
    /// end waits for a scrape of the final figures.
    #[test]
    fn serves_the_figures_and_their_final_scrape() {
        let figures =
            Arc::new(Mutex::new(LiveFigures::new(Labels { run: "t".into(), ..Labels::default() })));
        let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), figures).unwrap();
        let addr = server.local_addr();
        let page = get(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
        assert!(page.contains("herd_requests_completed_total{run=\"t\"} 0"), "{page}");
        assert!(get(addr, b"GET /x HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(addr, b"\x00\x01\x02\r\n\r\n").starts_with("HTTP/1.1 400"));
        // A peer that connects and says nothing: dropped after its timeout, not forever.
        let _stalled = TcpStream::connect(addr).unwrap();
        let scraper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            get(addr, b"GET /metrics HTTP/1.1\r\n\r\n")
        });
        let t = Instant::now();
        assert_eq!(server.finish(Duration::from_secs(10)), FinalScrape::Read);
        assert!(t.elapsed() < Duration::from_secs(9), "{:?}", t.elapsed());
        assert!(scraper.join().unwrap().contains("herd_run_finished{run=\"t\"} 1"));
    }

    /// A peer that sends a byte every 300 ms never ends its head: it is cut off after the
    /// 2 s a request has in all, and the next scrape is answered.
    #[test]
    fn a_trickling_peer_holds_the_endpoint_no_longer_than_its_timeout() {
        let figures = Arc::new(Mutex::new(LiveFigures::new(Labels::default())));
        let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), figures).unwrap();
        let addr = server.local_addr();
        let trickle = std::thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            for _ in 0..30 {
                if c.write_all(b"G").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        });
        std::thread::sleep(Duration::from_millis(100));
        let t = Instant::now();
        assert!(get(addr, b"GET /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200"));
        assert!(t.elapsed() < Duration::from_secs(5), "answered after {:?}", t.elapsed());
        drop(server);
        let _ = trickle.join();
    }

    /// Scraped during the run but not after: the end waits no longer than asked; never
    /// scraped: it does not wait.
    #[test]
    fn the_end_waits_for_a_scraper_no_longer_than_asked() {
        let figures = Arc::new(Mutex::new(LiveFigures::new(Labels::default())));
        let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), figures).unwrap();
        get(server.local_addr(), b"GET /metrics HTTP/1.1\r\n\r\n");
        let t = Instant::now();
        assert_eq!(server.finish(Duration::from_millis(300)), FinalScrape::NotRead);
        assert!(t.elapsed() >= Duration::from_millis(300));
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());

        let figures = Arc::new(Mutex::new(LiveFigures::new(Labels::default())));
        let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), figures).unwrap();
        let t = Instant::now();
        assert_eq!(server.finish(Duration::from_secs(30)), FinalScrape::NeverScraped);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }
}
