# A fixture server: each answer's body is one byte longer than the last (ab counts Length failures).
import http.server, sys
n = [0]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        n[0] += 1
        body = b"x" * (10 + n[0] % 3)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
