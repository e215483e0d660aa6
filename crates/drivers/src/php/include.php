<?php
/* herd's /include in PHP, written by the lab as include.php: seed 003's include test, PHP's
   include of four text files on every request. The texts are the docroot's include/1.txt to
   4.txt (herd_fileset::write_include_texts writes them), joined exactly as herd serve's
   /include joins them (crates/fileset/src/pages/include.rs), so both pages carry the same bytes;
   tests/php_pages.rs checks it. The texts contain no PHP open tag, so include copies them
   through unchanged. */
$texts = __DIR__ . '/include/';
echo "<html>\n<head>\n<title>herd include</title>\n</head>\n<body>\n";
include $texts . '1.txt';
echo "<p><hr><p>\n";
include $texts . '2.txt';
echo "<p><hr><p>\n";
include $texts . '3.txt';
echo "<p><hr><p>\n";
include $texts . '4.txt';
echo "</body>\n</html>\n";
