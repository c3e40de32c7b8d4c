"""The HTTP connector's wire: one client per connector, retries, credentials, and the evidence of answers
the job API does not foresee.

Built on httpx (a maintained client with timeouts, pooled connections and auth headers) and
httpx-sse (the events stream). Transient failures (a connection refused or reset, 429, 502, 503) are
retried with backoff; POSTs only where a retry cannot do the work twice. A server that stops speaking
the job API raises :class:`TargetError`, one line naming the call and what came back; one where
nothing answers raises :class:`~turngate.protocol.connector.TargetUnreachable`.
"""

from __future__ import annotations

import functools
import json
import ssl
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Final, TypeGuard

import httpx
import httpx_sse

from turngate.judge.connectors.http_options import HttpOptions
from turngate.protocol.connector import TargetUnreachable

TRANSIENT_STATUS: Final = frozenset({429, 502, 503})
MAX_ANOMALIES: Final = 20  # a misbehaving server must not grow a case's record without bound


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's own default context, made once per process: loading the trusted roots costs 20 ms of
    CPU, and with a client per case that was 7 s over the catalog (a fifth of an HTTP run's CPU)."""
    return httpx.create_ssl_context()


class TargetError(RuntimeError):
    """The server answered something that is not the job API, or not what the step needs."""


class Transport:
    """Requests to one server, and the anomalies its answers showed since the last observation."""

    def __init__(self, options: HttpOptions) -> None:
        self.options = options
        self._client = httpx.Client(
            base_url=options.base_url,
            timeout=options.request_timeout_sec,
            headers={"Accept": "application/json", **options.headers},
            verify=_tls(),
        )
        self._anomalies: list[Mapping[str, Any]] = []
        self.writes = 0  # requests other than GET sent so far: what may have changed on the server

    def call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        files: Mapping[str, Any] | None = None,
        retry_reset: bool | None = None,
    ) -> tuple[int, Any]:
        """One request, retried on transient failures; (status, decoded JSON answer or None).

        A connection refused is retried (nothing was sent); a reset mid-call is retried for GETs
        and where ``retry_reset`` says the call is idempotent; 429/502/503 are retried after the
        server's Retry-After or a growing pause.
        """
        retry_reset = method == "GET" if retry_reset is None else retry_reset
        self.writes += method != "GET"
        attempt = 0
        while True:
            try:
                response = self._client.request(method, path, json=json, files=files)
            except httpx.ConnectError as error:
                if attempt < min(self.options.retries, 2):
                    attempt += 1
                    time.sleep(backoff(attempt))
                    continue
                raise TargetUnreachable(
                    f"{self.options.base_url}: nothing answers ({error}); is the server running?"
                ) from None
            except httpx.TimeoutException:
                raise TargetError(
                    f"{method} {path}: no answer within {self.options.request_timeout_sec:g} s"
                ) from None
            except httpx.TransportError as error:  # reset, closed mid-answer
                if retry_reset and attempt < self.options.retries:
                    attempt += 1
                    time.sleep(backoff(attempt))
                    continue
                raise TargetError(f"{method} {path}: {type(error).__name__}: {error}") from None
            if response.status_code in TRANSIENT_STATUS and attempt < self.options.retries:
                attempt += 1
                time.sleep(retry_after(response) or backoff(attempt))
                continue
            break
        if response.status_code in (401, 403):
            raise TargetError(
                f"{method} {path}: HTTP {response.status_code}: the server wants credentials"
                " (auth: or headers: in the target file)"
            )
        raw = response.content
        try:
            return response.status_code, response.json() if raw else None
        except ValueError:
            raise TargetError(
                f"{method} {path}: HTTP {response.status_code}, the answer is not JSON: {raw[:120]!r}"
            ) from None

    def call_ok(self, method: str, path: str, payload: Any = None) -> Any:
        """The answer to a call the step cannot do without: anything but 200 is a TargetError."""
        if payload is None and method == "POST":
            payload = {}
        status, answer = self.call(method, path, json=payload)
        if status != 200:
            raise TargetError(f"{method} {path}: HTTP {status}: {short(answer)}")
        return answer

    def sse(self, path: str, timeout: float | None = None) -> AbstractContextManager[httpx_sse.EventSource]:
        """GET ``path`` as a server-sent events stream; ``timeout`` (seconds) instead of the client's."""
        # None would mean "no timeout" to httpx: left out, the client's request timeout holds.
        limits = {} if timeout is None else {"timeout": timeout}
        return httpx_sse.connect_sse(self._client, "GET", path, **limits)

    def anomaly(self, method: str, path: str, status: int | None, answer: Any, what: str) -> None:
        """An answer the job API does not foresee: kept as evidence in the observation, bounded."""
        if len(self._anomalies) < MAX_ANOMALIES:
            self._anomalies.append(
                {"request": f"{method} {path}", "status": status, "answer": short(answer), "note": what}
            )

    def take_anomalies(self) -> list[Mapping[str, Any]]:
        """The anomalies kept since the last call, each reported once."""
        taken, self._anomalies = self._anomalies, []
        return taken

    def close(self) -> None:
        self._client.close()


def check_job_api(options: HttpOptions) -> None:
    """Refuse a server that is down or does not speak the job API, before any case runs."""
    transport = Transport(options)
    try:
        status, answer = transport.call("GET", "/v1/jobs/turngate-probe-no-such-job")
    finally:
        transport.close()
    if status != 404:
        raise TargetError(
            f"{options.base_url}: GET /v1/jobs/<unknown id> answered HTTP {status}, not 404:"
            f" is this the job API? ({short(answer)})"
        )


def backoff(attempt: int) -> float:
    return float(min(0.1 * 2**attempt, 5.0))


def retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    try:
        return min(max(float(value), 0.0), 10.0)
    except ValueError:
        return None


# Reading answers -------------------------------------------------------------------------------


def is_int(value: object) -> TypeGuard[int]:
    """An integer in a JSON answer (JSON's true is no number)."""
    return isinstance(value, int) and not isinstance(value, bool)


def error_code(answer: Any) -> str | None:
    """``error.code``, ``code`` or FastAPI's ``detail.code``."""
    if isinstance(answer, Mapping):
        for holder in (answer.get("error"), answer, answer.get("detail")):
            if isinstance(holder, Mapping) and isinstance(holder.get("code"), str):
                return str(holder["code"])
    return None


def error_message(answer: Any) -> str:
    if isinstance(answer, Mapping):
        for holder in (answer.get("error"), answer.get("detail"), answer):
            if isinstance(holder, Mapping) and isinstance(holder.get("message"), str):
                return one_line(holder["message"])
            if isinstance(holder, str):
                return one_line(holder)
    return short(answer)


def one_line(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return short(" ".join(text.split()))


def short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 200 else text[:200] + "…"
