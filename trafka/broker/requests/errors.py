"""The one mapping from what a handler meets to the Kafka error a client is answered with.

- A storage error carries its own code (trafka/storage/errors.py: `error_code` on each class;
  LogClosed and StorageWriteFailed are KAFKA_STORAGE_ERROR).
- An OSError is the disk: KAFKA_STORAGE_ERROR.
- The coordinator runtime's NotCoordinator (a shard another broker of a simulated cluster
  leads) and CoordinatorWriteError carry their code in `error`.
- Anything else is a bug of ours: UNKNOWN_SERVER_ERROR.

A handler that raises is answered with that code in every error_code field of its response
(`answer_failed_request`, called by dispatch) and the connection stays open, as in Kafka.

Coordinators writing to their internal topic translate the append's error as Kafka's
GroupMetadataManager does (`coordinator_write_error`).
"""

from __future__ import annotations

import logging

from trafka.broker.requests.error_responses import error_response
from trafka.storage.errors import StorageError
from trafka.wire.errors import ErrorCode

log = logging.getLogger("trafka.broker")


def error_code(exc: BaseException) -> ErrorCode:
    """The Kafka error code for `exc`."""
    if isinstance(exc, StorageError):
        return exc.error_code
    if isinstance(exc, OSError):
        return ErrorCode.KAFKA_STORAGE_ERROR
    code = getattr(exc, "error", None)  # the coordinator runtime's errors name their own code
    if isinstance(code, ErrorCode):
        return code
    return ErrorCode.UNKNOWN_SERVER_ERROR


def error_message(exc: BaseException) -> str:
    """What the client is told: the storage error's text, the OS's words for an I/O error."""
    if isinstance(exc, OSError) and not isinstance(exc, StorageError):
        return f"I/O error: {exc.strerror or exc}"
    if isinstance(exc, StorageError) or error_code(exc) != ErrorCode.UNKNOWN_SERVER_ERROR:
        return str(exc)
    return f"unexpected server error ({type(exc).__name__}); see the broker log"


def coordinator_write_error(exc: BaseException, *, offsets: bool = False) -> ErrorCode:
    """What a member is answered when the coordinator's append to its internal topic fails, as
    Kafka's GroupMetadataManager maps it (storeGroup; storeOffsets with `offsets=True`): a
    missing internal topic is COORDINATOR_NOT_AVAILABLE, a disk error NOT_COORDINATOR (the
    client finds the coordinator again and retries), a batch too large INVALID_COMMIT_OFFSET_SIZE
    for offsets and UNKNOWN_SERVER_ERROR for group metadata."""
    code = error_code(exc)
    if code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code == ErrorCode.KAFKA_STORAGE_ERROR:
        return ErrorCode.NOT_COORDINATOR
    if offsets and code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE):
        return ErrorCode.INVALID_COMMIT_OFFSET_SIZE
    return ErrorCode.UNKNOWN_SERVER_ERROR


def answer_failed_request(api, header, request, exc: Exception, peer: str) -> dict | None:
    """A handler raised: log it for the operator and answer the request as Kafka does, every
    error_code of the response set (UNKNOWN_SERVER_ERROR; KAFKA_STORAGE_ERROR for an I/O or
    storage error), so the client retries or reports and its connection stays open. None when
    the request takes no answer (Produce with acks=0): then the connection is closed, Kafka's
    way of telling such a producer."""
    code = error_code(exc)
    if code == ErrorCode.NOT_COORDINATOR:  # a client that asked the wrong broker: it looks again
        log.info("%s v%d from %s (client %r) answered NOT_COORDINATOR: %s",
                 api.name, header.api_version, peer, header.client_id, exc)
    else:
        log.error(
            "%s v%d from %s (client %r) failed, answered %s: %s",
            api.name, header.api_version, peer, header.client_id, code.name, error_message(exc),
            exc_info=code == ErrorCode.UNKNOWN_SERVER_ERROR,
        )
    if api.key == 0 and request.get("acks") == 0:
        return None
    return error_response(api, header.api_version, request, code)
