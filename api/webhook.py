"""`POST /v1/webhooks/cms`: signed CMS events that publish, update or remove a page.

Signature header `X-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]`, where each `v1` is
HMAC-SHA256(secret, "<t>.<raw body>"). Several `v1` values are allowed so the CMS can sign
with the old and the new secret during a rotation. The timestamp must be within
`webhook_tolerance_seconds` of now (either way). Replays are refused twice over: the
delivery id comes only from what is signed (the body's `id`; an `X-Delivery-Id` header is
ignored) and is recorded with the version in one transaction, so a retried delivery changes
nothing; and each accepted signature is remembered for the time it could be valid
(`api.replay`), so the same signed request is never applied twice.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from api.problems import ApiProblem
from api.schemas import CmsEvent, WebhookResult
from api.uploads import check_front_matter
from shared import documents, ingest
from shared.adapters.fetch import check_url
from shared.errors import PermanentError
from shared.text_checks import FieldError, load_json

MAX_BODY_BYTES = 5 * 1024 * 1024

router = APIRouter(tags=["webhooks"])


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The hex `v1` signature of `body` at `timestamp` (the CMS side of the contract)."""
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def parse_signature(header: str) -> tuple[int, list[str]]:
    """`"t=1700000000,v1=ab..,v1=cd.."` -> (1700000000, ["ab..", "cd.."]); ValueError if bad."""
    timestamp: int | None = None
    signatures: list[str] = []
    for part in header.split(","):
        name, sep, value = part.strip().partition("=")
        if not sep:
            raise ValueError("malformed signature header")
        if name == "t":
            timestamp = int(value)
        elif name == "v1":
            signatures.append(value.strip().lower())
    if timestamp is None or not signatures:
        raise ValueError("signature header needs t= and at least one v1=")
    return timestamp, signatures


def verify(secret: str, header: str | None, body: bytes, tolerance: int, now: float) -> str:
    """The signature that matched, or a 401 problem unless `header` signs `body` with `secret`
    at a fresh timestamp."""
    if not header:
        raise _unauthorized("The X-Signature header is missing.")
    try:
        timestamp, signatures = parse_signature(header)
    except ValueError:
        raise _unauthorized("The X-Signature header is malformed.") from None
    if abs(now - timestamp) > tolerance:
        raise _unauthorized("The signature timestamp is outside the allowed window.")
    expected = sign(secret, timestamp, body).encode()
    matched = False
    for candidate in signatures:  # all compared, constant time each
        matched |= hmac.compare_digest(expected, candidate.encode())
    if not matched:
        raise _unauthorized("The signature does not match the body.")
    return expected.decode()


def _unauthorized(detail: str) -> ApiProblem:
    return ApiProblem(401, detail, title="Invalid signature")


def _parse_event(body: bytes) -> CmsEvent:
    try:
        payload: Any = load_json(body.decode("utf-8"), "A value in the event")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiProblem(422, f"The body is not valid JSON: {exc}") from None
    except FieldError as exc:  # NUL, a lone surrogate, NaN, a number too large to store
        raise ApiProblem(422, str(exc), code="invalid_field") from None
    except RecursionError:
        raise ApiProblem(422, "The body nests JSON too deeply to be an event.") from None
    try:
        return CmsEvent.model_validate(payload)
    except ValidationError as exc:
        errors = [{"loc": [str(p) for p in e["loc"]], "msg": e["msg"]} for e in exc.errors()]
        raise ApiProblem(422, "The event is not valid; see `errors`.", errors=errors) from None


EVENT_BODY = {
    "required": True,
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CmsEvent"}}},
}


@router.post(
    "/v1/webhooks/cms",
    summary="CMS webhook: publish, update, unpublish or delete a page",
    status_code=202,
    response_model=WebhookResult,
    responses={
        200: {"model": WebhookResult, "description": "A delivery already handled (duplicate)."},
        401: {"description": "Missing, malformed, stale or wrong signature."},
        413: {"description": "Body too large."},
        422: {"description": "Not a valid event."},
        503: {"description": "The webhook secret is not configured."},
    },
    openapi_extra={"requestBody": EVENT_BODY},
)
async def cms_webhook(
    request: Request,
    x_signature: Annotated[str | None, Header()] = None,
) -> Any:
    """Verify the signature on the raw body first; only then parse and act on the event."""
    settings = request.app.state.settings
    if settings.cms_webhook_secret is None:
        raise ApiProblem(
            503,
            "The CMS webhook is not configured (CMS_WEBHOOK_SECRET).",
            title="Webhook not configured",
        )
    body = await _read_limited(request, MAX_BODY_BYTES)
    signature = verify(
        settings.cms_webhook_secret.get_secret_value(),
        x_signature,
        body,
        settings.webhook_tolerance_seconds,
        time.time(),
    )
    event = _parse_event(body)
    delivery_id = (event.id or "").strip()
    if not delivery_id:
        raise ApiProblem(422, "A delivery id is required: the event's `id` (it is signed).")
    memory = request.app.state.signature_memory
    if not await run_in_threadpool(memory.claim, signature):  # this very request, replayed
        result = WebhookResult(delivery_id=delivery_id, event=event.event, duplicate=True)
        return JSONResponse(result.model_dump(mode="json"), status_code=200)
    try:
        result = await run_in_threadpool(_handle, event, delivery_id, request.app.state)
    except BaseException:
        await run_in_threadpool(memory.forget, signature)
        raise
    status_code = 200 if result.duplicate else 202
    return JSONResponse(result.model_dump(mode="json"), status_code=status_code)


async def _read_limited(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ApiProblem(413, f"The webhook body is larger than {limit} bytes.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiProblem(413, f"The webhook body is larger than {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)


def _handle(event: CmsEvent, delivery_id: str, state: Any) -> WebhookResult:
    page = event.page
    if event.event in ("unpublish", "delete"):
        done = ingest.remove_delivery(
            documents.CMS_SOURCE,
            page.id,
            delivery_id,
            event.event,
            state.enqueue_delete,
            actor="cms",
        )
        document_id = done.removed_document_id
        return WebhookResult(
            delivery_id=delivery_id,
            event=event.event,
            duplicate=done.duplicate,
            document_id=document_id,
            status="deleted" if document_id else None,
            location=f"/v1/documents/{document_id}" if document_id else None,
        )
    if page.body is None and not page.content_url:
        raise ApiProblem(
            422, "publish and update events need the page's Markdown in page.body or a content_url."
        )
    if page.body is None:
        try:  # the worker checks again, with a DNS lookup, before it downloads
            allowed = state.settings.content_fetch_allowed_hosts
            check_url(str(page.content_url), allowed, resolve=False)
        except PermanentError as exc:
            raise ApiProblem(422, exc.message) from exc
    # Inline Markdown is stored now; a content_url is fetched by the worker (size and time
    # limits: CONTENT_FETCH_MAX_BYTES, CONTENT_FETCH_TIMEOUT_SECONDS).
    new = documents.cms_page(
        page.id,
        page.body,
        page.content_url,
        page.content_type,
        title=page.title,
        source_url=page.url,
        language=page.language,
        tags=page.tags,
        allow_empty=page.allow_empty,
    )
    if len(new.content) > state.settings.max_upload_bytes:
        raise ApiProblem(413, "The page body is larger than the upload limit.")
    if page.body is not None and page.content_type == "text/markdown":
        check_front_matter(page.body)
    done = ingest.submit_delivery(
        new, delivery_id, event.event, state.enqueue, state.enqueue_relabel
    )
    registered = done.registered
    return WebhookResult(
        delivery_id=delivery_id,
        event=event.event,
        duplicate=done.duplicate,
        document_id=registered.document_id if registered else None,
        version_id=registered.version_id if registered else None,
        status=str(registered.status) if registered else None,
        location=f"/v1/documents/{registered.document_id}" if registered else None,
    )
