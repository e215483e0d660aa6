<?php /* herd's /9x9 in PHP, written by the lab as 9x9.php: seed 003's multiplication table, two nested loops on every request. Its output is herd serve's /9x9 byte for byte (crates/serve/tests/golden/9x9.html, 1692 bytes); tests/php_pages.rs checks it. This tag and the newline after it print nothing. */ ?>
<html>
<head>
<title>herd 9x9</title>
</head>
<body>
<table border=1>
<?php
for($x=1;$x<=9;$x++){ echo "<tr>"; for($y=1;$y<=9;$y++) echo "<td>$x x $y = ".$x*$y."</td>"; echo "</tr>"; }
?>
</table>
</body>
</html>
