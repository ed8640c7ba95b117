"""Webhooks: when a run that named one ends, its record is POSTed there, as langgraph-api does.

A run's `webhook` is checked when the run is created (a 422 names what is wrong) and again on every
request sent, connection by connection: the host's addresses are resolved, each must be allowed, and the
request goes to the address that was checked (a name that resolves elsewhere the second time cannot
steer it to another host). Link-local, cloud-metadata, reserved and multicast addresses are never
called; loopback and private-network ones only with `ORECAST_WEBHOOK_ALLOW_PRIVATE` (tests, a receiver
on the same host or LAN).

Delivery runs in a task of its own after the run has ended: it never delays the run, its stream or
the next run. Each attempt is bounded (5 s to connect, 30 s in all); a timeout, a network error, a 429
or a 5xx is tried again, at most 3 attempts with a growing pause. A failure is logged (with the URL
cut to its scheme, host, port and path: a query string often holds a token) and goes no further.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import random
import socket
from typing import Any
from urllib.parse import urlsplit

import httpx

from orecast.service.encode import dumps
from orecast.service.errors import Invalid

log = logging.getLogger("orecast.service.webhooks")

MAX_URL_LENGTH = 4096  # langgraph-api's default
ATTEMPTS = 3
CONNECT_SECONDS = 5.0
ATTEMPT_SECONDS = 30.0
RETRY_SECONDS = 1.0  # the pause before the 2nd attempt; doubled before the 3rd, plus up to half of it at random
MAX_REDIRECTS = 5
ALLOW_SETTING = "ORECAST_WEBHOOK_ALLOW_PRIVATE"

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _networks(*cidrs: str) -> tuple[IpNetwork, ...]:
    return tuple(ipaddress.ip_network(c) for c in cidrs)


# The ranges langgraph-api's SSRF policy knows (langgraph_api.lc_security.policy).
NEVER = _networks(
    "0.0.0.0/8", "169.254.0.0/16", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24",
    "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
    "::/128", "fe80::/10", "ff00::/8", "::ffff:0:0/96", "::0.0.0.0/96", "64:ff9b::/96", "64:ff9b:1::/48",
)
LOOPBACK = _networks("127.0.0.0/8", "::1/128")
PRIVATE = _networks("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
METADATA_ADDRESSES = frozenset({"169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"})
METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata.amazonaws.com", "metadata", "instance-data"})
LOCALHOST_NAMES = frozenset({"localhost", "localhost.localdomain", "host.docker.internal"})
K8S_SUFFIX = ".svc.cluster.local"


class Blocked(Exception):
    """A webhook URL this server will not call; the message says why."""


def redacted(url: str) -> str:
    """`url` without what may be a secret (user info, query string, fragment), for the logs."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<invalid URL>"
    return f"{parts.scheme}://{host}{port}{parts.path}"


async def _addresses(host: str, port: int) -> list[IpAddress]:
    """`host`'s addresses: itself if it is one, else what the resolver says (off the event loop)."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise Blocked(f"host {host} does not resolve ({exc.strerror or exc})") from None
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


class WebhookPolicy:
    """Which hosts and addresses a webhook may reach."""

    def __init__(self, *, allow_private: bool = False) -> None:
        self.allow_private = allow_private

    def _private(self, what: str) -> Blocked:
        return Blocked(f"{what}: loopback and private-network webhooks are off (set {ALLOW_SETTING}=true to allow them)")

    def check_host(self, host: str) -> None:
        name = host.lower().rstrip(".")
        if name in METADATA_HOSTS or name.endswith(K8S_SUFFIX):
            raise Blocked(f"host {host} is a cloud-metadata or cluster-internal name")
        if name in LOCALHOST_NAMES and not self.allow_private:
            raise self._private(f"host {host} is the local machine")

    def check_address(self, address: IpAddress, host: str) -> None:
        # loopback first: ::1 is also in the IPv4-compatible ::/96, which is never called
        for networks, kind in ((LOOPBACK, "a loopback"), (PRIVATE, "a private-network")):
            if any(address in n for n in networks) and str(address) not in METADATA_ADDRESSES:
                if not self.allow_private:
                    raise self._private(f"host {host} is at {address}, {kind} address")
                return
        if str(address) in METADATA_ADDRESSES or any(address in n for n in NEVER):
            raise Blocked(f"host {host} is at {address}, a link-local, reserved or metadata address")

    async def resolve(self, host: str, port: int) -> str:
        """The address to connect to for `host`: every address it resolves to must be allowed (one
        bad one and a later lookup could pick it)."""
        self.check_host(host)
        addresses = await _addresses(host, port)
        if not addresses:
            raise Blocked(f"host {host} does not resolve")
        for address in addresses:
            self.check_address(address, host)
        return str(addresses[0])

    async def check(self, url: str) -> None:
        """Blocked unless `url` is an http(s) URL this server may call."""
        if len(url) > MAX_URL_LENGTH:
            raise Blocked(f"longer than {MAX_URL_LENGTH} characters")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise Blocked(f"not a URL ({exc})") from None
        if parts.scheme.lower() not in ("http", "https"):
            raise Blocked("must be an http:// or https:// URL")
        if not parts.hostname:
            raise Blocked("the URL has no host")
        await self.resolve(parts.hostname, port or (443 if parts.scheme.lower() == "https" else 80))


class _CheckedTransport(httpx.AsyncBaseTransport):
    """Connects each request (each redirect too) to an address the policy allowed just now, keeping the
    host's name in the `Host` header and for TLS."""

    def __init__(self, policy: WebhookPolicy) -> None:
        self.policy = policy
        self.inner = httpx.AsyncHTTPTransport(retries=1)  # a refused connect: once more at once

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise Blocked("must be an http:// or https:// URL")
        address = await self.policy.resolve(url.host, url.port or (443 if url.scheme == "https" else 80))
        extensions = dict(request.extensions)
        if url.scheme == "https":
            extensions["sni_hostname"] = url.host
        pinned = httpx.Request(
            request.method, url.copy_with(host=address), headers=request.headers, stream=request.stream,
            extensions=extensions,
        )
        return await self.inner.handle_async_request(pinned)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Webhooks:
    """Checks webhook URLs and delivers the ends of runs to them, in the background."""

    def __init__(self, policy: WebhookPolicy, *, retry_seconds: float = RETRY_SECONDS) -> None:
        self.policy = policy
        self.retry_seconds = retry_seconds
        self.client = httpx.AsyncClient(
            transport=_CheckedTransport(policy),
            timeout=httpx.Timeout(ATTEMPT_SECONDS, connect=CONNECT_SECONDS),
            follow_redirects=True,
            max_redirects=MAX_REDIRECTS,
        )
        self._sending: set[asyncio.Task[None]] = set()

    async def check(self, url: str | None, field: str = "webhook") -> None:
        """Invalid (a 422) unless `url` is None or may be called."""
        if url is None:
            return
        try:
            await self.policy.check(url)
        except Blocked as exc:
            raise Invalid(f"{field}: {exc}", [{"field": field, "reason": str(exc)}]) from None

    def send(self, url: str, payload: dict[str, Any], run_id: str) -> None:
        """POST `payload` to `url` in a task of its own; returns at once."""
        task = asyncio.get_running_loop().create_task(self._deliver(url, payload, run_id))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _deliver(self, url: str, payload: dict[str, Any], run_id: str) -> None:
        try:
            await self._attempts(url, payload, run_id)
        except asyncio.CancelledError:
            log.warning("webhook of run %s to %s not delivered: the server stopped", run_id, redacted(url))
            raise

    async def _attempts(self, url: str, payload: dict[str, Any], run_id: str) -> None:
        body = dumps(payload)
        headers = {"Content-Type": "application/json"}
        for attempt in range(1, ATTEMPTS + 1):
            try:
                async with asyncio.timeout(ATTEMPT_SECONDS):
                    response = await self.client.post(url, content=body, headers=headers)
                if response.status_code < 400:
                    log.info("webhook of run %s delivered to %s", run_id, redacted(url))
                    return
                problem, again = f"HTTP {response.status_code}", response.status_code >= 500 or response.status_code == 429
            except Blocked as exc:
                problem, again = str(exc), False
            except (TimeoutError, httpx.TimeoutException):
                problem, again = "timed out", True
            except httpx.HTTPError as exc:  # its text may quote the URL: only its kind is logged
                problem, again = type(exc).__name__, isinstance(exc, httpx.TransportError)
            if not again or attempt == ATTEMPTS:
                log.warning("webhook of run %s to %s failed after %d attempt(s): %s", run_id, redacted(url), attempt, problem)
                return
            pause = self.retry_seconds * 2 ** (attempt - 1)
            await asyncio.sleep(pause + random.uniform(0, pause / 2))

    async def close(self) -> None:
        """Stop the deliveries still going (the server is stopping) and close the connections."""
        for task in list(self._sending):
            task.cancel()
        await asyncio.gather(*self._sending, return_exceptions=True)
        await self.client.aclose()
