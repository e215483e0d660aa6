//! php-fpm, the FastCGI pool behind nginx and Apache for [`Php::Fpm`](crate::Php::Fpm): its
//! config (src/templates/php-fpm.conf, Debian's pool), its process (`php-fpm8.2 -F -y conf`,
//! started before the front server and ready when its Unix socket in run/ accepts), its config
//! check and its version probe. Not a server on its own: nginx.rs and apache.rs add it to their
//! [`Launch`].

use crate::error::DriverError;
use crate::launch::{Launch, Probe, RenderedFile};
use crate::programs::PHP_FPM;
use crate::run_dir::Places;
use crate::spec::ServerSpec;
use crate::template::fill;
use crate::version::{word_after, VersionProbe};

const TEMPLATE: &str = include_str!("templates/php-fpm.conf");

/// The socket the front server passes PHP requests to, relative to the run_dir.
pub(crate) const SOCKET: &str = "run/php-fpm.sock";

/// Adds php-fpm to `launch`: its config file, directories, process (first, so it is ready
/// before the front server starts), config check and version probe.
pub(crate) fn add_pool(
    spec: &ServerSpec,
    places: &Places,
    launch: &mut Launch,
) -> Result<(), DriverError> {
    let exe = spec.programs.path(&PHP_FPM, spec.kind)?;
    let conf = places.path("conf/php-fpm.conf");
    let user = match &places.user {
        // The socket belongs to the user so that the front server's workers, which run as
        // that user, may connect (Debian's listen.owner and listen.group).
        Some(user) => format!(
            "user = {user}\nlisten.owner = {user}\nlisten.group = {user}\nlisten.mode = 0660\n"
        ),
        None => String::new(),
    };
    launch.files.push(RenderedFile {
        contents: fill(
            "templates/php-fpm.conf",
            TEMPLATE,
            &[("RUN", places.run()), ("USER", &user)],
        )?,
        path: conf.clone(),
    });
    for dir in places.dirs(&["conf", "logs", "run"]) {
        if !launch.dirs.contains(&dir) {
            launch.dirs.push(dir);
        }
    }
    let process = places
        .process("php-fpm", vec![exe.into(), "-F".into(), "-y".into(), conf.clone().into()])
        .ready_when(Probe::UnixSocket(places.path(SOCKET)));
    launch.processes.insert(0, process);
    launch.validate.push(vec![exe.into(), "-t".into(), "-y".into(), conf.into()]);
    launch.versions.push(VersionProbe::new(PHP_FPM.name, exe, "-v", parse_php_version));
    Ok(())
}

/// `PHP 8.2.36 (fpm-fcgi)` from `php-fpm8.2 -v` (or `php-cgi -v`), which prints
/// `PHP 8.2.36 (fpm-fcgi) (built: …)` and the Zend lines.
pub(crate) fn parse_php_version(output: &str) -> Option<String> {
    let version = word_after(output, "PHP ")?;
    let rest = output.split_once(&format!("PHP {version}"))?.1;
    match rest.split_whitespace().next() {
        Some(sapi) if sapi.starts_with('(') && sapi.ends_with(')') => {
            Some(format!("PHP {version} {sapi}"))
        }
        _ => Some(format!("PHP {version}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn php_versions() {
        let fpm =
            "PHP 8.2.36 (fpm-fcgi) (built: Nov 18 2026 20:02:04)\nCopyright (c) The PHP Group\n\
                   Zend Engine v4.2.36, Copyright (c) Zend Technologies\n";
        assert_eq!(parse_php_version(fpm).as_deref(), Some("PHP 8.2.36 (fpm-fcgi)"));
        let cgi = "PHP 8.2.36 (cgi-fcgi) (built: Nov 18 2026 20:02:04)\n";
        assert_eq!(parse_php_version(cgi).as_deref(), Some("PHP 8.2.36 (cgi-fcgi)"));
        assert_eq!(parse_php_version("PHP 8.3.0\n").as_deref(), Some("PHP 8.3.0"));
        assert_eq!(parse_php_version("php-fpm: command not found"), None);
    }
}
