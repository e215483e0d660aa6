<?php
/* herd's /echo in PHP, written by the lab as echo.php: answers with the request body byte for
   byte, with the request's Content-Type (application/octet-stream when it has none), as herd
   serve's /echo does. php://input is the raw body for every type but multipart/form-data,
   which PHP consumes itself; PHP warns about bodies over post_max_size (8M in Debian's
   php.ini). No closing tag: nothing may follow the body. */
$type = $_SERVER['CONTENT_TYPE'] ?? '';
header('Content-Type: ' . ($type !== '' ? $type : 'application/octet-stream'));
readfile('php://input');
