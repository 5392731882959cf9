"""fake_gemini.py PORT PORTFILE - a stand-in for the Gemini API (the
generativelanguage v1beta REST shape) on 127.0.0.1, for
testsuite/agents/agents.sh: Gemini CLI's real client (GOOGLE_GEMINI_BASE_URL
pointed here) makes a real turn against it.

When FAKE_CMD is set, the first answer to a request that offers the shell
tool (run_shell_command) is a call of that tool with the command; the answer
to the tool's result is a text holding the result. Requests without the
shell tool are the CLI's own helpers (next-speaker check, routing, titles):
they get a reply that fits the JSON schema they ask for, or a short text.
Both generateContent and streamGenerateContent (alt=sse) are answered.
PORT 0 picks a free port, written to PORTFILE. Serves until killed (the
test bounds it with timeout)."""
import json
import os

import fake_server

SHELL_TOOL = "run_shell_command"


def offers_shell(req):
    for tool in req.get("tools") or []:
        for decl in tool.get("functionDeclarations") or []:
            if decl.get("name") == SHELL_TOOL:
                return True
    return False


def tool_results(req):
    contents = req.get("contents") or []
    last = contents[-1] if contents else {}
    return [p["functionResponse"] for p in last.get("parts") or []
            if isinstance(p, dict) and "functionResponse" in p]


def fit(schema, depth=0):
    """The smallest value of the JSON schema's type (enums: the first)."""
    if not isinstance(schema, dict) or depth > 8:
        return ""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: fit(v, depth + 1) for k, v in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return "user" if depth else "done"


def answer(req):
    """The model's parts for one request."""
    cmd = os.environ.get("FAKE_CMD")
    if offers_shell(req):
        results = tool_results(req)
        if cmd and not results:
            call = {"name": SHELL_TOOL, "args": {"command": cmd, "description": "test"}}
            return [{"functionCall": call}]
        if results:
            return [{"text": "FAKE-MODEL-DONE " + json.dumps(results)[:4000]}]
        return [{"text": "FAKE-MODEL-REPLY"}]
    gen = req.get("generationConfig") or {}
    schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
    if schema:
        return [{"text": json.dumps(fit(schema))}]
    return [{"text": "FAKE-MODEL-REPLY"}]


def response(req):
    return {"candidates": [{"content": {"role": "model", "parts": answer(req)},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                              "totalTokenCount": 2},
            "modelVersion": "fake"}


class Handler(fake_server.Handler):
    def do_GET(self):
        # Model lists and the like: nothing the turn needs.
        self.reply_json({"models": []})

    def do_POST(self):
        _, req = self.read_body()
        if ":countTokens" in self.path:
            self.reply_json({"totalTokens": 1})
            return
        if ":embedContent" in self.path or ":batchEmbedContents" in self.path:
            self.reply_json({"embeddings": [{"values": [0.0]}]})
            return
        if ":streamGenerateContent" not in self.path:
            self.reply_json(response(req))
            return
        body = ("data: %s\r\n\r\n" % json.dumps(response(req))).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


fake_server.serve(Handler)
