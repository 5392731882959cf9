"""fake_server.py - what the fake model servers of testsuite/agents
(fake_anthropic.py, fake_openai.py, fake_gemini.py) share: a handler base
that logs each request to stderr as "fake: METHOD PATH", answers JSON and
reads a JSON request body, and the serving loop on 127.0.0.1, whose port
(PORT 0: a free one) is written to PORTFILE atomically for the test to
read. Serves until killed (the test bounds it with timeout)."""
import http.server
import json
import os
import socketserver
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("fake: %s %s\n" % (self.command, self.path))

    def reply_json(self, obj, code=200):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        """The request's bytes and their JSON ({} when they are not JSON)."""
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            return raw, json.loads(raw)
        except ValueError:
            return raw, {}


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve(handler):
    """argv: PORT PORTFILE."""
    srv = Server(("127.0.0.1", int(sys.argv[1])), handler)
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    srv.serve_forever()
