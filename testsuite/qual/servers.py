# servers.py - disposable listeners the qualification suite starts outside
# the sandbox, on loopback or unix sockets only. Each writes its address
# (port or path) to READY once it listens, logs every connection or datagram
# it receives to LOG (one line each), and serves until killed.
#
#   python3 servers.py http|tcp|udp READY LOG
#   python3 servers.py unix PATH READY LOG
#   python3 servers.py abstract NAME READY LOG
#
# http answers GET /auth/... with 401 and a Basic challenge (so git asks
# for credentials) and anything else with 200 "qual-ok".
import http.server
import os
import socket
import sys


def log(path, line):
    with open(path, "a") as f:
        f.write(line + "\n")


def ready(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def serve_stream(sock, logf):
    sock.listen(16)
    while True:
        c, _ = sock.accept()
        log(logf, "conn")
        try:
            c.sendall(b"qual-hello\n")
        except OSError:
            pass
        c.close()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        log(self.server.logf, "GET " + self.path)
        if self.path.startswith("/auth/"):
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="qual"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"qual-ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    kind = sys.argv[1]
    if kind == "http":
        srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        srv.logf = sys.argv[3]
        ready(sys.argv[2], str(srv.server_address[1]))
        srv.serve_forever()
    elif kind == "tcp":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        ready(sys.argv[2], str(s.getsockname()[1]))
        serve_stream(s, sys.argv[3])
    elif kind == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        ready(sys.argv[2], str(s.getsockname()[1]))
        while True:
            data, _ = s.recvfrom(2048)
            log(sys.argv[3], data.decode("ascii", "replace").strip())
    elif kind in ("unix", "abstract"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(sys.argv[2] if kind == "unix" else "\0" + sys.argv[2])
        if kind == "unix":
            os.chmod(sys.argv[2], 0o666)
        ready(sys.argv[3], sys.argv[2])
        serve_stream(s, sys.argv[4])
    else:
        sys.exit("servers.py: unknown kind " + kind)


main()
