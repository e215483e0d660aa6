# one-connection HTTP/1.1 server: logs how many requests each recv() brings, answers each (6397 B)
import socket, sys
body = b"x" * 6397
resp = b"HTTP/1.1 200 OK\r\nContent-Length: 6397\r\n\r\n" + body
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
c, _ = s.accept()
buf = b""; recvs = []; total = 0
c.settimeout(3)
try:
    while True:
        d = c.recv(65536)
        if not d: break
        buf += d
        n = buf.count(b"\r\n\r\n")
        recvs.append(n)
        last = buf.rfind(b"\r\n\r\n")
        buf = buf[last + 4:] if n else buf
        total += n
        c.sendall(resp * n)
except Exception as e:
    pass
print("recvs:", len(recvs), "requests:", total, "first 20 per-recv counts:", recvs[:20], file=sys.stderr)
