"""fake_anthropic.py PORT PORTFILE - a stand-in for Anthropic's Messages API
on 127.0.0.1, for testsuite/agents/agents.sh: Claude Code's real client
makes a real turn against it. When FAKE_CMD is set, the first answer to a
request that offers tools is a call of the Bash tool with that command;
the answer to the tool's result is a text holding the result. PORT 0 picks
a free port, written to PORTFILE. Serves until killed (the test bounds it
with timeout)."""
import json
import os

import fake_server


class Handler(fake_server.Handler):
    def do_HEAD(self):
        self.send_response(200)
        self.end_headers()

    def do_GET(self):
        self.reply_json({})

    def do_POST(self):
        _, req = self.read_body()
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            self.reply_json({"input_tokens": 1})
            return
        msgs = req.get("messages") or []
        last = msgs[-1] if msgs else {}
        content = last.get("content")
        results = [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        cmd = os.environ.get("FAKE_CMD")
        if cmd and not results and req.get("tools"):
            block = {"type": "tool_use", "id": "toolu_cage_1", "name": "Bash", "input": {}}
            delta = {"type": "input_json_delta",
                     "partial_json": json.dumps({"command": cmd, "description": "test"})}
            stop = "tool_use"
        else:
            text = "FAKE-MODEL-DONE " + json.dumps(results)[:2000] if results else "FAKE-MODEL-REPLY"
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": text}
            stop = "end_turn"
        msg = {"id": "msg_cage", "type": "message", "role": "assistant",
               "model": req.get("model", "claude"), "content": [], "stop_reason": None,
               "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        if not req.get("stream"):
            block = dict(block)
            if block["type"] == "text":
                block["text"] = delta["text"]
            else:
                block["input"] = json.loads(delta["partial_json"])
            msg.update(content=[block], stop_reason=stop)
            self.reply_json(msg)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()

        def event(kind, data):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (kind, json.dumps(data))).encode())

        event("message_start", {"type": "message_start", "message": msg})
        event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block})
        event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        event("content_block_stop", {"type": "content_block_stop", "index": 0})
        event("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": 1}})
        event("message_stop", {"type": "message_stop"})


fake_server.serve(Handler)
