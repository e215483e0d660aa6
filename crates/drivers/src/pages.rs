//! The computed pages every server offers in the same bytes: `/9x9` and `/include` from herd
//! serve, `9x9.php` and `include.php` from a PHP server, and the POST target `/echo` or
//! `echo.php`. [`page_path`] says where a page is on a server; [`php_pages`] holds the PHP
//! sources the lab writes into the docroot. Static-only servers have none of these pages.

use crate::spec::{check_php, Php, ServerKind};

/// A page computed on every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Page {
    /// The 9×9 multiplication table (1692 bytes).
    NineByNine,
    /// Four text files joined, read from `<docroot>/include/` on every request (about 28 KB).
    Include,
    /// The request body, echoed (the POST workload).
    Echo,
}

/// The URL path of `page` on `kind` with `php`: herd's own pages (`/9x9`, `/include`,
/// `/echo`) for herd without PHP, the PHP pages (`/9x9.php`, …) for a supported PHP setup,
/// `None` for a server without PHP (or an unsupported setup).
pub fn page_path(kind: ServerKind, php: Option<Php>, page: Page) -> Option<&'static str> {
    match (kind, php) {
        // An external server is asked herd serve's own paths (docs/hosts.md).
        (ServerKind::Herd | ServerKind::External, None) => Some(match page {
            Page::NineByNine => "/9x9",
            Page::Include => "/include",
            Page::Echo => "/echo",
        }),
        (_, Some(_)) if check_php(kind, php).is_ok() => Some(match page {
            Page::NineByNine => "/9x9.php",
            Page::Include => "/include.php",
            Page::Echo => "/echo.php",
        }),
        _ => None,
    }
}

/// The PHP sources of the pages, which the lab writes into the docroot under the names of
/// [`FILES`](php_pages::FILES) for every server with PHP. Each produces exactly the bytes of
/// herd serve's page (tests/php_pages.rs checks it with the real php-cgi).
pub mod php_pages {
    /// `9x9.php`: the multiplication table, two nested loops.
    pub const NINE_BY_NINE: &str = include_str!("php/9x9.php");
    /// `include.php`: PHP's `include` of `include/1.txt` … `4.txt` next to it.
    pub const INCLUDE: &str = include_str!("php/include.php");
    /// `echo.php`: the request body (`php://input`), unchanged.
    pub const ECHO: &str = include_str!("php/echo.php");

    /// File name in the docroot, and source.
    pub const FILES: [(&str, &str); 3] =
        [("9x9.php", NINE_BY_NINE), ("include.php", INCLUDE), ("echo.php", ECHO)];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Mpm;

    #[test]
    fn paths() {
        assert_eq!(page_path(ServerKind::Herd, None, Page::NineByNine), Some("/9x9"));
        assert_eq!(page_path(ServerKind::Herd, None, Page::Echo), Some("/echo"));
        assert_eq!(
            page_path(ServerKind::Nginx, Some(Php::Fpm), Page::Include),
            Some("/include.php")
        );
        assert_eq!(
            page_path(ServerKind::Apache(Mpm::Prefork), Some(Php::Cgi), Page::Echo),
            Some("/echo.php")
        );
        assert_eq!(page_path(ServerKind::Nginx, None, Page::NineByNine), None);
        assert_eq!(page_path(ServerKind::H2o, None, Page::Echo), None);
        assert_eq!(page_path(ServerKind::Herd, Some(Php::Fpm), Page::Echo), None);
        assert_eq!(page_path(ServerKind::Nginx, Some(Php::Cgi), Page::Echo), None);
    }

    #[test]
    fn every_page_path_is_a_php_file() {
        for (name, source) in php_pages::FILES {
            assert!(source.starts_with("<?php"), "{name}");
            let path = format!("/{name}");
            assert!(
                [Page::NineByNine, Page::Include, Page::Echo].iter().any(|&p| page_path(
                    ServerKind::Lighttpd,
                    Some(Php::Cgi),
                    p
                ) == Some(
                    path.as_str()
                )),
                "{name}"
            );
        }
    }
}
