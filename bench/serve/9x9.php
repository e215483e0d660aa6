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
