# SPDX-License-Identifier: MIT OR Apache-2.0
"""A git remote over HTTP on loopback, for the tests of git's remote commands: `git
http-backend` behind Basic authentication, serving the repositories below ROOT.

  git_http_server.py --root ROOT --listen ADDR:PORT [--listen ...] --user U --password P
                     --ready FILE --timeout SECONDS

Writes FILE once it listens; ends after SECONDS."""
import argparse
import base64
import http.server
import os
import subprocess
import sys
import threading

args = None


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        self.git()

    def do_POST(self):
        self.git()

    def git(self):
        want = base64.b64encode(("%s:%s" % (args.user, args.password)).encode()).decode()
        if self.headers.get("Authorization", "") != "Basic " + want:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="tests"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_PROJECT_ROOT": args.root,
               "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query,
               "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": args.user, "REMOTE_ADDR": "127.0.0.1",
               "GIT_PROTOCOL": self.headers.get("Git-Protocol", "")}
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        p = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
        head, _, rest = p.stdout.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode(errors="replace").split("\r\n"):
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)


def main():
    global args
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--listen", action="append", required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--password", required=True)
    ap.add_argument("--ready", required=True)
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    for spec in args.listen:
        addr, _, port = spec.rpartition(":")
        srv = http.server.ThreadingHTTPServer((addr, int(port)), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    with open(args.ready, "w") as f:
        f.write("ready\n")
    threading.Event().wait(args.timeout)
    sys.exit(0)


if __name__ == "__main__":
    main()
