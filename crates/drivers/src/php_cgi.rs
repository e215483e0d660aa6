//! php-cgi, PHP as CGI ([`Php::Cgi`](crate::Php::Cgi)): Apache and lighttpd start a php-cgi
//! process per request themselves, so this driver part starts nothing and writes no file. It
//! only names the program's version probe (`php-cgi -v`). php-cgi reads Debian's php.ini for
//! CGI, and its `cgi.force_redirect` makes it refuse requests that were not handed over by the
//! server (apache.rs and lighttpd.rs satisfy it).

use crate::error::DriverError;
use crate::php_fpm::parse_php_version;
use crate::programs::PHP_CGI;
use crate::spec::ServerSpec;
use crate::version::VersionProbe;

/// `php-cgi -v`, read as `PHP 8.2.36 (cgi-fcgi)`.
pub(crate) fn version_probe(spec: &ServerSpec) -> Result<VersionProbe, DriverError> {
    let exe = spec.programs.path(&PHP_CGI, spec.kind)?;
    Ok(VersionProbe::new(PHP_CGI.name, exe, "-v", parse_php_version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::spec;
    use crate::{Php, ServerKind};

    #[test]
    fn probe() {
        let p = version_probe(&spec(ServerKind::Lighttpd, Some(Php::Cgi))).unwrap();
        assert_eq!(p.argv, ["/usr/bin/php-cgi", "-v"]);
        assert_eq!(
            (p.parse)("PHP 8.2.36 (cgi-fcgi) (built: x)").as_deref(),
            Some("PHP 8.2.36 (cgi-fcgi)")
        );
    }
}
