# SPDX-License-Identifier: MIT OR Apache-2.0
"""A scripted model on loopback, for real agent CLIs: the Anthropic Messages API (Claude Code)
and the OpenAI Responses API (Codex), both streaming (SSE). It runs outside every sandbox.

    fake_model.py --script FILE --log FILE --port-file FILE

The script is a JSON list of shell commands and a final text: {"commands": [...], "final": "..."},
read again for each request (a test may change it between runs).
Each request that offers a shell tool gets the next command as a call of that tool (the step
is the number of tool results the request carries), then the final text; a request without
such a tool (a title, a summary) gets a short text. Every request is appended to the log, one
JSON object a line ({"path": ..., "body": ...}): what the agent sent back is checked there.
The port (bound on 127.0.0.1, chosen by the kernel) is written to the port file once it listens.
"""
import argparse
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = {}
SCRIPT_FILE = None
LOG = None
LOCK = threading.Lock()


def sse(event, data):
    return ("event: %s\ndata: %s\n\n" % (event, json.dumps(data))).encode()


# ---- Anthropic Messages API ---------------------------------------------------------------

def anthropic_step(body):
    """The next command for a request that offers Claude Code's Bash tool, or None."""
    if not any(t.get("name") == "Bash" for t in body.get("tools") or []):
        return None
    done = sum(1 for m in body.get("messages", []) if isinstance(m.get("content"), list)
               for c in m["content"] if c.get("type") == "tool_result")
    cmds = SCRIPT["commands"]
    return cmds[done] if done < len(cmds) else None, done


def anthropic_events(body):
    step = anthropic_step(body)
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    msg = {"id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
           "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    out = [("message_start", {"type": "message_start", "message": msg})]
    if step is not None and step[0] is not None:
        cmd, n = step
        block = {"type": "tool_use", "id": "toolu_fake_%d" % n, "name": "Bash", "input": {}}
        arg = json.dumps({"command": cmd, "description": "step %d" % n})
        out += [("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "input_json_delta", "partial_json": arg[:10]}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "input_json_delta", "partial_json": arg[10:]}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0})]
        stop = "tool_use"
    else:
        text = SCRIPT["final"] if step is not None else "ok"
        out += [("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": text}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0})]
        stop = "end_turn"
    out += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"})]
    return out


def anthropic_message(body):
    """The same reply, not streamed."""
    msg, content = None, []
    for ev, data in anthropic_events(body):
        if ev == "message_start":
            msg = data["message"]
        elif ev == "content_block_start":
            content.append(dict(data["content_block"]))
        elif ev == "content_block_delta":
            d = data["delta"]
            if d["type"] == "text_delta":
                content[-1]["text"] += d["text"]
            else:
                content[-1]["_json"] = content[-1].get("_json", "") + d["partial_json"]
        elif ev == "message_delta":
            msg["stop_reason"] = data["delta"]["stop_reason"]
    for c in content:
        if "_json" in c:
            c["input"] = json.loads(c.pop("_json"))
    msg["content"] = content
    return msg


# ---- OpenAI Responses API -----------------------------------------------------------------

SHELL_TOOLS = ("shell_command", "shell", "exec_command", "local_shell")


def responses_events(body):
    tools = [t.get("name") or t.get("type") for t in body.get("tools") or []]
    tool = next((t for t in SHELL_TOOLS if t in tools), None)
    items = body.get("input") if isinstance(body.get("input"), list) else []
    done = sum(1 for i in items if i.get("type") in ("function_call_output", "local_shell_call_output",
                                                     "custom_tool_call_output"))
    cmds = SCRIPT["commands"]
    rid = "resp_fake_%d" % done
    out = [("response.created", {"type": "response.created", "response": {"id": rid, "status": "in_progress"}})]
    if tool and done < len(cmds):
        cmd = cmds[done]
        if tool == "shell":
            args = {"command": ["bash", "-lc", cmd]}
        elif tool == "exec_command":
            args = {"cmd": cmd}
        else:
            args = {"command": cmd}
        if tool == "local_shell":
            item = {"type": "local_shell_call", "id": "lsh_%d" % done, "call_id": "call_fake_%d" % done,
                    "status": "completed", "action": {"type": "exec", "command": ["bash", "-lc", cmd]}}
        else:
            item = {"type": "function_call", "id": "fc_fake_%d" % done, "call_id": "call_fake_%d" % done,
                    "name": tool, "arguments": json.dumps(args)}
    else:
        text = SCRIPT["final"] if tool else "ok"
        item = {"type": "message", "role": "assistant", "id": "msg_fake_%d" % done,
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
    out += [("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                            "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": {
                "id": rid, "status": "completed", "output": [item],
                "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                          "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}})]
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, body):
        with LOCK, open(LOG, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path, "body": body}) + "\n")

    def reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def stream(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for ev, data in events:
            self.wfile.write(sse(ev, data))
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        self.record(None)
        if self.path.split("?")[0].endswith("/models"):
            self.reply(200, {"object": "list", "data": [], "models": []})
        else:
            self.reply(404, {"error": {"type": "not_found_error", "message": "no such thing here"}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        with LOCK, open(SCRIPT_FILE) as f:
            SCRIPT.update(json.load(f))
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode(errors="replace")}
        self.record(body)
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self.reply(200, {"input_tokens": 10})
        elif path.endswith("/messages"):
            if body.get("stream"):
                self.stream(anthropic_events(body))
            else:
                self.reply(200, anthropic_message(body))
        elif path.endswith("/responses"):
            self.stream(responses_events(body))
        else:
            self.reply(404, {"error": {"type": "not_found_error", "message": "no such thing here"}})


def main():
    global LOG, SCRIPT_FILE
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()
    LOG, SCRIPT_FILE = args.log, args.script
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
