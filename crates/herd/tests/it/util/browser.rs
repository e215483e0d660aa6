//! A page opened the way a reader opens it: in Debian's Chromium, headless, from disk. What
//! the tests need to know of a page: its DOM after loading, what it wrote to the console,
//! which requests it made, and a screenshot to keep.
//!
//! Chromium makes requests of its own (updates, accounts); they are told apart from the
//! page's by the page's network isolation key (`file://`), and none leaves the machine: every
//! host name resolves to nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What loading a page in Chromium showed.
pub struct Loaded {
    /// The DOM after loading, serialised.
    pub dom: String,
    /// Console messages (errors, CSP violations, logs): a page without script has none.
    pub console: Vec<String>,
    /// URLs the page itself asked for, other than file: and data: ones.
    pub requests: Vec<String>,
}

const CHROMIUM: &str = "/usr/bin/chromium";

fn chromium(profile: &Path) -> Command {
    assert!(
        Path::new(CHROMIUM).exists(),
        "Chromium is missing: apt-get install chromium (scripts/test.sh installs it)"
    );
    let mut c = Command::new(CHROMIUM);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--no-pings",
        "--disable-domain-reliability",
        "--disable-features=Translate,OptimizationHints,MediaRouter,SpellcheckService",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

fn url(page: &Path) -> String {
    let abs = std::fs::canonicalize(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    format!("file://{}", abs.display())
}

/// Loads `page` (a file) and returns its DOM, console and requests; `work` holds the
/// browser's profile and network log.
pub fn load(page: &Path, work: &Path) -> Loaded {
    let profile = work.join("chromium-profile");
    let _ = std::fs::remove_dir_all(&profile);
    let net_log = work.join("net-log.json");
    // A log left by an earlier load must not stand in for this one's.
    let _ = std::fs::remove_file(&net_log);
    let out = chromium(&profile)
        .arg(format!("--log-net-log={}", net_log.display()))
        .arg("--dump-dom")
        .arg(url(page))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {CHROMIUM}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed on {}: {stderr}", page.display());
    let console = stderr.lines().filter(|l| l.contains(":CONSOLE")).map(str::to_owned).collect();
    Loaded {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console,
        requests: page_requests(&net_log),
    }
}

/// The URLs the page itself requested, from Chromium's network log: the requests whose
/// network isolation key is the page's (file://), other than file: and data: URLs.
fn page_requests(net_log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(net_log)
        .unwrap_or_else(|e| panic!("no network log {}: {e}", net_log.display()));
    // Chromium may end the log without closing it when it exits at once.
    let log: serde_json::Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(','))))
        .unwrap_or_else(|e| panic!("unreadable network log {}: {e}", net_log.display()));
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].as_u64();
    assert!(start_job.is_some(), "the network log names no URL_REQUEST_START_JOB event");
    let mut urls = Vec::new();
    for e in log["events"].as_array().into_iter().flatten() {
        if e["type"].as_u64() != start_job {
            continue;
        }
        let p = &e["params"];
        let (Some(url), Some(key)) = (p["url"].as_str(), p["network_isolation_key"].as_str())
        else {
            continue;
        };
        let from_page = key.contains("file://");
        if from_page && !url.starts_with("file:") && !url.starts_with("data:") {
            urls.push(url.to_owned());
        }
    }
    urls
}

/// A screenshot of the top of `page`, `height` pixels tall, to `png`.
pub fn screenshot(page: &Path, png: &Path, height: u32, work: &Path) {
    let profile = work.join("chromium-profile-shot");
    let _ = std::fs::remove_dir_all(&profile);
    let out = chromium(&profile)
        .arg(format!("--window-size=1280,{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(url(page))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {CHROMIUM}: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bytes =
        std::fs::read(png).unwrap_or_else(|e| panic!("no screenshot {}: {e}", png.display()));
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000, "not a real screenshot");
}

/// The width Chromium lays a printed A4 page out at, in CSS pixels: the printable width (210
/// mm at 96 px an inch, less its default margins of 0.4 in on each side: 718 px) times Blink's
/// minimum shrink factor for print, 4/3. What is wider is shrunk further to fit, down to half
/// size; what a box clips is lost whatever the size.
pub const A4_PRINT_LAYOUT: u32 = 957;

/// What of `page`, laid out by its print rules at `width` pixels, ends past the right edge
/// or is clipped by a box that scrolls (the first 20: tag, class, where it ends): on paper,
/// that is cut off or shrunk past the normal print scale. Chromium's headless
/// command line prints only to PDF, so a copy of the page applies its print rules to the
/// screen (`@media print` as `@media all`) and measures itself with a script, which the
/// copy may run (the page itself has none, and a policy that forbids one).
pub fn past_the_edge_in_print(page: &Path, width: u32, work: &Path) -> Vec<String> {
    let html = std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    assert_eq!(html.matches("@media print{").count(), 1, "the page has no print rules to apply");
    let measure = "<script>\
        const edge = document.documentElement.clientWidth + 1, past = [];\
        for (const e of document.querySelectorAll('body *')) {\
          const r = e.getBoundingClientRect(), what = e.tagName.toLowerCase() + '.' + e.getAttribute('class');\
          if (r.width > 0 && r.right > edge) {\
            past.push(what + ' ends at ' + Math.round(r.right));\
          }\
          if (getComputedStyle(e).overflowX != 'visible' && e.scrollWidth > e.clientWidth + 1) {\
            past.push(what + ' clips ' + (e.scrollWidth - e.clientWidth) + ' px');\
          }\
        }\
        document.body.setAttribute('data-past-edge', JSON.stringify(past.slice(0, 20)));\
        </script></body>";
    let copy = html
        .replace(POLICY, "")
        .replace("@media print{", "@media all{")
        .replace("</body>", measure);
    let printed = work.join("printed.html");
    std::fs::write(&printed, copy).unwrap_or_else(|e| panic!("{}: {e}", printed.display()));
    let profile = work.join("chromium-profile-print");
    let _ = std::fs::remove_dir_all(&profile);
    let out = chromium(&profile)
        .arg(format!("--window-size={width},1200"))
        .arg("--dump-dom")
        .arg(url(&printed))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {CHROMIUM}: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dom = scraper::Html::parse_document(&String::from_utf8_lossy(&out.stdout));
    let body = scraper::Selector::parse("body").unwrap_or_else(|e| panic!("{e}"));
    let past = dom
        .select(&body)
        .next()
        .and_then(|b| b.value().attr("data-past-edge").map(str::to_owned))
        .unwrap_or_else(|| panic!("the page did not measure itself"));
    serde_json::from_str(&past).unwrap_or_else(|e| panic!("{past}: {e}"))
}

/// Where screenshots are kept after the tests: under target/, for CI to keep as artifacts.
pub fn artifact(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("artifacts");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir.join(name)
}

/// Pages that break the rules: the checks must see each breach, or they would pass whatever
/// the page did. Without a policy, a fetch reaches the network log and a script's error the
/// console; with herd's policy, the fetch is refused and the refusal is in the console.
pub fn assert_checks_catch_a_bad_page(work: &Path) {
    let bad = work.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><body><img src=\"http://127.0.0.1:9/x.png\"><script>console.error(\"boom\")</script></body></html>",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let loaded = load(&bad, work);
    assert!(loaded.console.iter().any(|l| l.contains("boom")), "{:?}", loaded.console);
    assert_eq!(loaded.requests, ["http://127.0.0.1:9/x.png"], "the page's request was not seen");

    let guarded = work.join("guarded.html");
    std::fs::write(
        &guarded,
        format!("<!DOCTYPE html><html><head>{POLICY}</head><body><img src=\"http://127.0.0.1:9/y.png\"></body></html>"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let loaded = load(&guarded, work);
    assert!(
        loaded.console.iter().any(|l| l.contains("Content Security Policy")),
        "a refused fetch must show in the console: {:?}",
        loaded.console
    );
}

/// herd's pages' Content-Security-Policy, as they write it.
pub const POLICY: &str = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">";

/// A page that can fetch nothing: herd's policy, and none of the ways HTML and SVG have to
/// load, embed, redirect or run something.
pub fn assert_self_contained(html: &str) {
    assert!(html.contains(POLICY), "no Content-Security-Policy");
    for banned in [
        "<script",
        " src=",
        "srcset=",
        "href=\"http",
        "href='http",
        "href=\"//",
        "xlink:href",
        "url(",
        "@import",
        "<link",
        "<iframe",
        "<object",
        "<embed",
        "http-equiv=\"refresh\"",
    ] {
        assert!(!html.contains(banned), "the page holds {banned}");
    }
}
