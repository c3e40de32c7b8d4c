"""Helpers for the model server tests: a server on 127.0.0.1 over a scripts folder, and a plain HTTP
client that also keeps what a cut stream sent before the connection went."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from turngate.engines.modelserver.endpoint import ModelServer


def write_scripts(folder: Path, documents: Iterable[Mapping[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for document in documents:
        (folder / f"{document['case']}.yaml").write_text(yaml.safe_dump(dict(document)), encoding="utf-8")
    return folder


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Mapping[str, str]
    body: bytes
    complete: bool  # False: the connection closed before the body ended

    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[Any]:
        """The data of each SSE event ([DONE] kept as the string)."""
        found = []
        for block in self.body.decode().split("\n\n"):
            for line in block.splitlines():
                if line.startswith("data: "):
                    payload = line[len("data: ") :]
                    found.append(payload if payload == "[DONE]" else json.loads(payload))
        return found

    def event_names(self) -> list[str]:
        return [
            line[len("event: ") :] for line in self.body.decode().splitlines() if line.startswith("event: ")
        ]


def post(server: ModelServer, path: str, body: Any) -> Reply:
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    connection.request("POST", path, body=data, headers={"Content-Type": "application/json"})
    answer = connection.getresponse()
    headers = {name.lower(): value for name, value in answer.getheaders()}
    try:
        raw, complete = answer.read(), True
    except http.client.IncompleteRead as cut:
        raw, complete = cut.partial, False
    connection.close()
    return Reply(answer.status, headers, raw, complete)


def log(server: ModelServer) -> list[dict[str, Any]]:
    return [json.loads(line) for line in server.log.read_text(encoding="utf-8").splitlines()]
