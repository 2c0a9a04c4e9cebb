"""Loopback HTTP servers that speak the Anthropic Messages API (with Message Batches) and OpenAI
chat completions, with scripted replies and a request log.

The real ``anthropic`` and ``openai`` SDKs talk to these over 127.0.0.1; nothing is patched.

By default every judge request gets a valid answer: the score ``fake.score(item, dimension)``
for each dimension the request's schema asks for, the item being read from the prompt's reply
text (test items answer ``reply to <item id>``). A pairwise request (a ``prefer_…`` schema, or
"## Compare on this dimension" in a plain prompt) gets ``fake.pick(first, second, dimension)``
("A", "B" or "tie"; by default always "A", the reply shown first) for the two replies in the
order the prompt shows them. Generation requests (no schema) get a text
reply naming the model and whether the Secure Attachment Persona was in the system prompt.
``fake.script(...)`` queues replies (an HTTP error, a delay, a malformed answer) for the next
matching requests. ``fake.log`` records every request with its parsed key and whether an answer
was written back (``answered``).
"""

from __future__ import annotations

import json
import re
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from data.rubric import load_default_rubric

__all__ = ["Scripted", "Logged", "FakeServer", "SAP_MARK"]

SAP_MARK = "Secure Attachment Persona"
_ITEM = re.compile(r"^reply to ([\w\-.]+)$", re.M)


@dataclass
class Scripted:
    """A reply for one request: an answer object, raw text, an HTTP error, a delay or a hang."""

    status: int = 200
    answer: Any = None            # the tool input / JSON answer to send instead of the default
    text: str | None = None       # a plain-text reply (no tool call)
    error_type: str = "api_error"
    message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False


@dataclass
class Logged:
    method: str
    path: str
    body: Any
    headers: dict[str, str]
    item: str | None = None
    dims: tuple[str, ...] = ()
    custom_id: str | None = None
    system: str = ""
    items: tuple[str, ...] = ()   # every reply's item in the prompt, in order (pairwise: 2)
    pairwise: bool = False
    status: int | None = None
    answered: bool = False
    at: float = 0.0

    @property
    def kind(self) -> str:
        if self.path.endswith("/messages") or self.path.endswith("/chat/completions"):
            return "generate" if not self.dims else "judge"
        if "/batches" in self.path:
            return "batch"
        return "other"


def _system_text(body: dict) -> str:
    system = body.get("system", "")
    if isinstance(system, list):
        return "".join(b.get("text", "") for b in system)
    if not system:  # OpenAI: the system prompt is the first message
        msgs = body.get("messages") or []
        if msgs and msgs[0].get("role") == "system":
            return msgs[0].get("content") or ""
    return system


def _user_text(body: dict) -> str:
    return "\n".join(m["content"] if isinstance(m.get("content"), str) else json.dumps(m)
                     for m in body.get("messages") or [] if m.get("role") == "user")


def _schema_of(body: dict) -> tuple[str | None, dict | None]:
    tools = body.get("tools")
    if tools:
        fn = tools[0].get("function")
        if fn is not None:  # OpenAI function calling
            return fn["name"], fn["parameters"]
        return tools[0]["name"], tools[0]["input_schema"]
    rf = body.get("response_format")
    if rf and rf.get("type") == "json_schema":
        return rf["json_schema"]["name"], rf["json_schema"]["schema"]
    if rf and rf.get("type") == "json_object" and rf.get("schema"):
        schema = rf["schema"]  # llama-cpp-python's form: no name, so tell the shape by its keys
        props = schema["properties"]
        if "score" in props or "winner" in props:
            return None, schema
        pairwise = any("winner" in v.get("properties", {}) for v in props.values())
        return ("prefer_all" if pairwise else "score_all"), schema
    return None, None


def openai_form(body: dict) -> str:
    """Which structured-output form an OpenAI chat request asks for."""
    if body.get("tools"):
        return "tools"
    rf = body.get("response_format") or {}
    return rf.get("type", "text")


# How real servers refuse a form they do not support (status, error message):
# llama-cpp-python's server validates response_format.type with pydantic and answers 500;
# Ollama answers 400 "<model> does not support tools"; others name response_format.
LLAMA_CPP_REFUSAL = (500, "[{'type': 'literal_error', 'loc': ('body', 'response_format', "
                          "'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
                          "'input': 'json_schema', 'ctx': {'expected': \"'text' or "
                          "'json_object'\"}}]")
RF_REFUSAL = (400, "response_format is not supported by this server")
TOOLS_REFUSAL = (400, "registry.ollama.ai/library/tiny:latest does not support tools")


@lru_cache(maxsize=1)
def _labels() -> dict[str, str]:
    """Dimension label -> key, in every language the bundled rubric is written in (a prompt
    may show the rubric in the item's language)."""
    rub = load_default_rubric()
    return {d.label: d.key for lang in rub.languages
            for d in rub.in_language(lang).dimensions}


def request_key(body: dict) -> tuple[str | None, tuple[str, ...]]:
    """(item id, dimensions asked) of a judge request; dims are () for a generation request."""
    name, schema = _schema_of(body)
    text = _user_text(body)
    found = _ITEM.search(text)
    item = found.group(1) if found else None
    if name is None:  # free text (or llama-cpp-python's unnamed schema): read the label
        m = re.search(r"## (?:Rate|Compare on) this dimension: (.+)", text)
        if not m:
            return item, ()
        return item, (_labels()[m.group(1).strip()],)
    if name in ("score_all", "prefer_all"):
        return item, tuple(schema["properties"])
    return item, (name.removeprefix("score_").removeprefix("prefer_"),)


def is_pairwise(body: dict) -> bool:
    name, schema = _schema_of(body)
    if name is not None:
        return name.startswith("prefer_")
    return "## Compare on this dimension" in _user_text(body) or "## Reply B" in \
        _user_text(body)


class FakeServer:
    """One fake provider on 127.0.0.1. ``kind`` is "anthropic" or "openai"; with
    ``api_key=None`` any key (or none) is accepted, like a local Ollama or vLLM server."""

    def __init__(self, kind: str = "anthropic", *, api_key: str | None = "test-key",
                 delay: float = 0.0, usage: dict[str, int] | None = None,
                 batch_polls: int = 1,
                 refuse: dict[str, tuple[int, str]] | None = None, serial: bool = False):
        """``refuse`` maps an OpenAI structured-output form (json_schema, json_object, tools)
        to the (status, message) the server answers it with; ``serial`` answers one message
        request at a time, like llama-cpp-python's server."""
        self.kind = kind
        self.refuse = refuse or {}
        self._serial = threading.Lock() if serial else None
        self.in_flight = 0
        self.max_in_flight = 0  # the most message requests the server held at once
        self.api_key = api_key
        self.delay = delay
        self.usage = usage or {"input_tokens": 1000, "output_tokens": 100,
                               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        self.batch_polls = batch_polls
        self.score: Callable[[str, str], Any] = \
            lambda item, dim: zlib.crc32(f"{item}/{dim}".encode()) % 5 + 1
        # when set, a judge answer's score comes from the whole prompt instead:
        # reader(user_text, item, dimension) (a judge that reads the prompt's examples)
        self.reader: Callable[[str, str, str], Any] | None = None
        self.pick: Callable[[str, str, str], Any] = lambda first, second, dim: "A"
        self.log: list[Logged] = []
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_errors: set[str] = set()   # custom_ids answered "errored"
        self.batch_expired: set[str] = set()  # custom_ids answered "expired"
        self._script: list[tuple[Callable[[Logged], bool], Scripted]] = []
        self._lock = threading.Lock()
        self._hang_after: int | None = None
        self._answering = 0
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    # --- test-facing API ------------------------------------------------------------------

    @property
    def url(self) -> str:
        base = f"http://127.0.0.1:{self._server.server_port}"
        return base if self.kind == "anthropic" else base + "/v1"

    def script(self, *replies: Scripted, when: Callable[[Logged], bool] | None = None) -> None:
        """Queue replies for the next message requests that match ``when`` (default: any)."""
        with self._lock:
            for r in replies:
                self._script.append((when or (lambda _req: True), r))

    def hang_after(self, n: int) -> None:
        """Answer ``n`` message requests in total, then leave every further one unanswered."""
        self._hang_after = n

    def release(self) -> None:
        self._release.set()

    def calls(self, kind: str | None = None) -> list[Logged]:
        with self._lock:
            return [r for r in self.log if kind is None or r.kind == kind]

    def answered_keys(self) -> list[tuple[str | None, str]]:
        """(item, dimension) of every judge request that got an answer, one per dimension."""
        return [(r.item, d) for r in self.calls("judge") if r.answered for d in r.dims]

    def close(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    # --- answers --------------------------------------------------------------------------

    def _answer(self, item: str | None, dims: tuple[str, ...], schema: dict | None,
                items: tuple[str, ...] = (), prompt: str = "") -> dict:
        props = schema["properties"] if schema is not None else {}
        per_dim = "score" in props or "winner" in props
        inner = props if per_dim else props.get(dims[0], {}).get("properties", {})
        reason_first = "reasoning" in inner
        pairwise = "winner" in inner
        first, second = (items + ("", ""))[:2]

        def one(dim: str) -> dict:
            d = ({"winner": self.pick(first, second, dim)} if pairwise
                 else {"score": self.reader(prompt, item or "", dim) if self.reader
                       else self.score(item or "", dim)})
            return {"reasoning": f"about {dim}", **d} if reason_first else d
        if per_dim:
            return one(dims[0])
        return {dim: one(dim) for dim in dims}

    def _message(self, body: dict, req: Logged, scripted: Scripted | None) -> dict:
        name, schema = _schema_of(body)
        if scripted is not None and scripted.text is not None:
            content = [{"type": "text", "text": scripted.text}]
            stop = "end_turn"
        elif name is None:
            cond = "sap" if SAP_MARK in req.system else "baseline"
            reply = f"[{body['model']}|{cond}] I hear you."
            if req.dims and req.pairwise:
                first, second = (req.items + ("", ""))[:2]
                reply = f"Winner: {self.pick(first, second, req.dims[0])}"
            elif req.dims:
                reply = f"Score: {self.score(req.item or '', req.dims[0])}"
            content = [{"type": "text", "text": reply}]
            stop = "end_turn"
        else:
            answer = scripted.answer if scripted is not None and scripted.answer is not None \
                else self._answer(req.item, req.dims, schema, req.items, _user_text(body))
            content = [{"type": "tool_use", "id": "toolu_1", "name": name, "input": answer}]
            stop = "tool_use"
        return {"id": f"msg_{len(self.log)}", "type": "message", "role": "assistant",
                "model": body["model"], "content": content, "stop_reason": stop,
                "stop_sequence": None, "usage": dict(self.usage)}

    def _chat(self, body: dict, req: Logged, scripted: Scripted | None) -> dict:
        msg = self._message(body, req, scripted)
        block = msg["content"][0]
        if scripted is not None and scripted.text is not None:
            text = scripted.text
        elif req.dims and openai_form(body) == "json_object" \
                and _schema_of(body)[0] is None:  # llama-cpp-python's form, one dimension
            text = json.dumps(scripted.answer if scripted is not None and scripted.answer
                              is not None else self._answer(req.item, req.dims,
                                                            _schema_of(body)[1], req.items,
                                                            _user_text(body)))
        elif block["type"] == "text":
            text = block["text"]
        else:
            text = json.dumps(block["input"])
        message: dict[str, Any] = {"role": "assistant", "content": text}
        finish = "stop"
        if block["type"] == "tool_use" and openai_form(body) == "tools":
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": block["name"], "arguments": text}}]}
            finish = "tool_calls"
        u = self.usage
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                "usage": {"prompt_tokens": u["input_tokens"],
                          "completion_tokens": u["output_tokens"],
                          "total_tokens": u["input_tokens"] + u["output_tokens"]}}

    def _error_body(self, s: Scripted) -> dict:
        if self.kind == "anthropic":
            return {"type": "error", "error": {"type": s.error_type, "message": s.message}}
        return {"error": {"message": s.message, "type": s.error_type, "code": None}}

    # --- batches --------------------------------------------------------------------------

    def _batch_json(self, bid: str) -> dict:
        b = self.batches[bid]
        ended = b["status"] == "ended"
        n = len(b["requests"])
        counts = {"processing": 0 if ended else n, "succeeded": 0, "errored": 0,
                  "canceled": 0, "expired": 0}
        if ended:
            for line in b["results"]:
                counts[line["result"]["type"]] += 1
        base = f"http://127.0.0.1:{self._server.server_port}"
        return {"id": bid, "type": "message_batch", "processing_status": b["status"],
                "request_counts": counts, "created_at": "2026-01-01T00:00:00Z",
                "expires_at": "2026-01-02T00:00:00Z", "archived_at": None,
                "cancel_initiated_at": None, "ended_at": "2026-01-01T01:00:00Z" if ended else None,
                "results_url": f"{base}/v1/messages/batches/{bid}/results" if ended else None}

    def _end_batch(self, bid: str, canceled: bool = False) -> None:
        b = self.batches[bid]
        results = []
        for r in b["requests"]:
            cid, params = r["custom_id"], r["params"]
            if canceled:
                results.append({"custom_id": cid, "result": {"type": "canceled"}})
            elif cid in self.batch_expired:
                results.append({"custom_id": cid, "result": {"type": "expired"}})
            elif cid in self.batch_errors:
                results.append({"custom_id": cid, "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "invalid_request_error",
                                               "message": "scripted batch error"}}}})
            else:
                item, dims = request_key(params)
                fake = Logged("POST", "/v1/messages", params, {}, item, dims,
                              system=_system_text(params),
                              items=tuple(_ITEM.findall(_user_text(params))),
                              pairwise=is_pairwise(params))
                results.append({"custom_id": cid, "result": {
                    "type": "succeeded", "message": self._message(params, fake, None)}})
        b["results"] = list(reversed(results))  # results come in no particular order
        b["status"] = "ended"

    def _batches(self, method: str, path: str, body: Any) -> tuple[int, Any, str]:
        parts = path.split("?")[0].rstrip("/").split("/")  # ['', 'v1', 'messages', 'batches', ...]
        if method == "POST" and len(parts) == 4:
            bid = f"msgbatch_{len(self.batches) + 1:04d}"
            self.batches[bid] = {"requests": body["requests"], "status": "in_progress",
                                 "polls": 0, "results": []}
            return 200, self._batch_json(bid), "application/json"
        bid = parts[4]
        if bid not in self.batches:
            return 404, {"type": "error", "error": {"type": "not_found_error",
                                                    "message": "no such batch"}}, \
                "application/json"
        b = self.batches[bid]
        if method == "POST" and parts[-1] == "cancel":
            if b["status"] != "ended":
                self._end_batch(bid, canceled=True)
            return 200, self._batch_json(bid), "application/json"
        if parts[-1] == "results":
            lines = "".join(json.dumps(r) + "\n" for r in b["results"])
            return 200, lines, "application/binary"
        b["polls"] += 1
        if b["status"] != "ended" and b["polls"] >= self.batch_polls:
            self._end_batch(bid)
        return 200, self._batch_json(bid), "application/json"

    # --- HTTP -----------------------------------------------------------------------------

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out as two writes; without TCP_NODELAY the second waits for
            # the client's delayed ACK (~40 ms per keep-alive request), which no real API adds.
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:  # quiet
                pass

            def _send(self, status: int, payload: Any, ctype: str = "application/json",
                      headers: dict[str, str] | None = None) -> bool:
                data = payload.encode() if isinstance(payload, str) else \
                    json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", ctype)
                    self.send_header("content-length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                    return True
                except OSError:
                    return False

            def _auth_ok(self) -> bool:
                if fake.api_key is None:  # a local server that ignores keys
                    return True
                got = self.headers.get("authorization") or ""
                key = self.headers.get("x-api-key") or got.removeprefix("Bearer ").strip()
                return key == fake.api_key

            def _handle(self, method: str) -> None:
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                req = Logged(method, self.path, body, dict(self.headers), at=time.time())
                if isinstance(body, dict) and "messages" in body:
                    req.item, req.dims = request_key(body)
                    req.system = _system_text(body)
                    req.items = tuple(_ITEM.findall(_user_text(body)))
                    req.pairwise = is_pairwise(body)
                with fake._lock:
                    fake.log.append(req)
                if not self._auth_ok():
                    req.status = 401
                    s = Scripted(401, error_type="authentication_error",
                                 message="invalid x-api-key")
                    req.answered = self._send(401, fake._error_body(s))
                    return
                path = self.path.split("?")[0]
                if path.endswith("/models"):
                    req.status = 200
                    req.answered = self._send(200, {"data": [{
                        "id": "fake-model", "type": "model", "object": "model",
                        "display_name": "Fake", "created_at": "2026-01-01T00:00:00Z",
                        "created": 0, "owned_by": "h2h"}], "has_more": False,
                        "first_id": "fake-model", "last_id": "fake-model", "object": "list"})
                    return
                if "/messages/batches" in path:
                    with fake._lock:
                        status, payload, ctype = fake._batches(method, self.path, body)
                    req.status = status
                    req.answered = self._send(status, payload, ctype)
                    return
                self._message_request(req, body)

            def _message_request(self, req: Logged, body: dict) -> None:
                refusal = fake.refuse.get(openai_form(body)) if fake.kind == "openai" else None
                if refusal is not None:
                    req.status = refusal[0]
                    req.answered = self._send(refusal[0], fake._error_body(
                        Scripted(refusal[0], message=refusal[1])))
                    return
                with fake._lock:
                    scripted = None
                    for i, (pred, s) in enumerate(fake._script):
                        if pred(req):
                            scripted = s
                            del fake._script[i]
                            break
                    hang = scripted.hang if scripted else False
                    if fake._hang_after is not None and fake._answering >= fake._hang_after:
                        hang = True
                    if not hang:
                        fake._answering += 1
                if hang:
                    fake._release.wait(60)
                    self.close_connection = True
                    return
                with fake._lock:
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    if fake._serial is not None:
                        with fake._serial:
                            time.sleep(fake.delay + (scripted.delay if scripted else 0.0))
                    else:
                        time.sleep(fake.delay + (scripted.delay if scripted else 0.0))
                finally:
                    with fake._lock:
                        fake.in_flight -= 1
                if scripted is not None and scripted.status != 200:
                    req.status = scripted.status
                    req.answered = self._send(scripted.status, fake._error_body(scripted),
                                              headers=scripted.headers)
                    return
                payload = fake._message(body, req, scripted) if fake.kind == "anthropic" \
                    else fake._chat(body, req, scripted)
                req.status = 200
                req.answered = self._send(200, payload)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

        return Handler
