"""fake_openai.py PORT PORTFILE - a stand-in for OpenAI's Responses API on
127.0.0.1, for testsuite/agents/agents.sh: Codex's real client makes a real
turn against it. When FAKE_CMD is set, the first answer to a request that
offers a shell tool is a call of that tool with the command; the answer to
the tool's output is a message holding the output. PORT 0 picks a free
port, written to PORTFILE. Serves until killed (the test bounds it with
timeout); each request is logged on stderr with the tools it offered."""
import json
import os
import sys

import fake_server

# Codex offers its shell tool in one of these forms, depending on the model
# and its features: inside the code-mode tool `exec` (JavaScript that calls
# `tools.exec_command({cmd})`, the default of the current models), or as a
# function of its own: unified exec (a command line in `cmd`), the shell
# command tool (a command line in `command`), or the older shell tool (argv
# in `command`).
SHELL_TOOLS = ("exec_command", "shell_command", "shell")


def tool_names(req):
    """The tools a request offers, at top level or in the namespaces of an
    additional_tools input item, by name."""
    names = []

    def walk(tools):
        for t in tools if isinstance(tools, list) else []:
            if not isinstance(t, dict):
                continue
            if t.get("type") == "namespace":
                walk(t.get("tools"))
            else:
                names.append(t.get("name") or (t.get("function") or {}).get("name") or t.get("type"))

    walk(req.get("tools"))
    for it in req.get("input") if isinstance(req.get("input"), list) else []:
        if isinstance(it, dict) and it.get("type") == "additional_tools":
            walk(it.get("tools"))
    return names


def shell_call(names, cmd):
    """The call of the shell tool running cmd, or None when none is offered."""
    if "exec" in names:
        src = ('// @exec: {"yield_time_ms": 30000}\n'
               "const r = await tools.exec_command({cmd: %s, yield_time_ms: 30000});\n"
               "text(r.output);\n" % json.dumps(cmd))
        return {"type": "custom_tool_call", "id": "ctc_cage_1", "call_id": "call_cage_1",
                "name": "exec", "input": src, "status": "completed"}
    name = next((t for t in SHELL_TOOLS if t in names), None)
    if name == "exec_command":
        args = {"cmd": cmd, "yield_time_ms": 30000}
    elif name == "shell_command":
        args = {"command": cmd, "timeout_ms": 60000}
    elif name == "shell":
        args = {"command": ["sh", "-c", cmd], "timeout_ms": 60000}
    else:
        return None
    return {"type": "function_call", "id": "fc_cage_1", "call_id": "call_cage_1", "name": name,
            "arguments": json.dumps(args)}


def outputs(req):
    """The tool outputs the request sends back, as text."""
    found = []
    items = req.get("input")
    for it in items if isinstance(items, list) else []:
        if isinstance(it, dict) and it.get("type") in ("function_call_output",
                                                       "custom_tool_call_output"):
            out = it.get("output")
            found.append(out if isinstance(out, str) else json.dumps(out))
    return found


class Handler(fake_server.Handler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        sys.stderr.write("fake: GET %s\n" % self.path)
        # The model list Codex refreshes: none beyond its built-in ones.
        self.reply_json({"models": []} if self.path.split("?")[0].endswith("/models") else {})

    def do_POST(self):
        raw, req = self.read_body()
        names = tool_names(req)
        if os.environ.get("FAKE_DUMP"):
            with open(os.environ["FAKE_DUMP"], "ab") as f:
                f.write(raw + b"\n")
        sys.stderr.write("fake: POST %s tools=%s\n" % (self.path, ",".join(map(str, names))))
        if not self.path.split("?")[0].endswith("/responses"):
            self.reply_json({"error": {"message": "not here"}}, 404)
            return
        done = outputs(req)
        cmd = os.environ.get("FAKE_CMD")
        item = shell_call(names, cmd) if cmd and not done else None
        if item is None:
            text = "FAKE-MODEL-DONE " + json.dumps(done)[:4000] if done else "FAKE-MODEL-REPLY"
            item = {"type": "message", "id": "msg_cage_1", "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        resp = {"id": "resp_cage", "object": "response", "status": "in_progress",
                "model": req.get("model", "gpt"), "output": []}

        def event(kind, data):
            data = dict(data, type=kind)
            self.wfile.write(("event: %s\ndata: %s\n\n" % (kind, json.dumps(data))).encode())

        event("response.created", {"response": resp})
        event("response.output_item.added", {"output_index": 0, "item": item})
        event("response.output_item.done", {"output_index": 0, "item": item})
        usage = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 2}
        event("response.completed", {"response": dict(resp, status="completed", output=[item],
                                                      usage=usage)})
        self.wfile.flush()


fake_server.serve(Handler)
