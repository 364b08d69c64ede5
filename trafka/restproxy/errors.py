"""The REST proxy's errors, as Confluent's REST Proxy answers them: a JSON body
`{"error_code": <int>, "message": <str>}` whose error_code is the HTTP status times 100 plus a
subcode in v2 (40401 topic not found, 40403 consumer instance not found, 42201 ..., 50002 ...)
and, for most v3 answers, the HTTP status itself."""

from __future__ import annotations

from trafka.wire.errors import ErrorCode


class RestError(Exception):
    """One request refused: the HTTP status, the body's error_code and its message."""

    def __init__(self, status: int, error_code: int, message: str):
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message

    def body(self) -> dict:
        return {"error_code": self.error_code, "message": self.message}


# Confluent's v2 codes (io.confluent.kafkarest.Errors), each with its status and message.
def topic_not_found() -> RestError:
    return RestError(404, 40401, "Topic not found.")


def partition_not_found() -> RestError:
    return RestError(404, 40402, "Partition not found.")


def consumer_instance_not_found() -> RestError:
    return RestError(404, 40403, "Consumer instance not found.")


def leader_not_available() -> RestError:
    return RestError(404, 40404, "Leader not available.")


def consumer_format_mismatch() -> RestError:
    return RestError(406, 40601, "The requested embedded data format does not match the deserializer for this "
                                 "consumer instance")


def consumer_already_subscribed() -> RestError:
    return RestError(409, 40901, "Consumer cannot subscribe the the specified target because it has already "
                                 "subscribed to other topics.")


def consumer_already_exists() -> RestError:
    return RestError(409, 40902, "Consumer with specified consumer ID already exists in the specified consumer group.")


def illegal_state(message: str) -> RestError:
    return RestError(409, 40903, f"Illegal state: {message}")


def key_schema_missing() -> RestError:
    return RestError(422, 42201, "Request includes keys but does not include key schema")


def value_schema_missing() -> RestError:
    return RestError(422, 42202, "Request includes values but does not include value schema")


def json_avro_conversion(message: str) -> RestError:
    return RestError(422, 42203, f"Conversion of JSON to Avro failed: {message}")


def invalid_consumer_config(message: str) -> RestError:
    return RestError(422, 42204, f"Invalid consumer configuration: {message}")


def invalid_schema(message: str) -> RestError:
    return RestError(422, 42205, f"Invalid schema: {message}")


def unprocessable(message: str, code: int = 422) -> RestError:
    return RestError(422, code, message)


def bad_request(message: str) -> RestError:
    return RestError(400, 400, message)


def kafka_error(message: str) -> RestError:
    return RestError(500, 50002, f"Kafka error: {message}")


def kafka_retriable_error(message: str) -> RestError:
    return RestError(500, 50003, f"Retriable Kafka error: {message}")


# Kafka errors as Confluent's KafkaExceptionMapper answers them: authorization 403/40301,
# authentication 401/40101, unknown topic or partition 404/40403, the request's own mistakes
# 400/40002, throttling 429/42901, a broker not available 503/50302, other retriable errors
# 500/50003, anything else 500/50002. The message is the broker's, else Kafka's own text.
_KAFKA_MESSAGES = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: "This server does not host this topic-partition.",
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Not authorized to access topics",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Not authorized to access group",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.TOPIC_ALREADY_EXISTS: "Topic already exists.",
    ErrorCode.MESSAGE_TOO_LARGE: "The request included a message larger than the max message size the server will accept.",
    ErrorCode.NOT_ENOUGH_REPLICAS: "Messages are rejected since there are fewer in-sync replicas than required.",
}
_BAD_REQUEST = frozenset({
    ErrorCode.INVALID_REPLICATION_FACTOR, ErrorCode.INVALID_PARTITIONS, ErrorCode.INVALID_REQUEST,
    ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.POLICY_VIOLATION, ErrorCode.TOPIC_ALREADY_EXISTS, ErrorCode.INVALID_CONFIG,
    ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.INVALID_REPLICA_ASSIGNMENT, ErrorCode.SECURITY_DISABLED,
    ErrorCode.UNSUPPORTED_VERSION, ErrorCode.TOPIC_DELETION_DISABLED, ErrorCode.INVALID_RECORD,
    ErrorCode.INVALID_TIMESTAMP, ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE,
})
_AUTHORIZATION = frozenset({
    ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
})
_RETRIABLE = frozenset({
    ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.REQUEST_TIMED_OUT,
    ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.NOT_COORDINATOR,
    ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.CORRUPT_MESSAGE,
    ErrorCode.NETWORK_EXCEPTION, ErrorCode.REBALANCE_IN_PROGRESS,
})


def from_kafka(code: int, message: str | None = None) -> RestError:
    """The REST answer to a Kafka error code (and the broker's error message, if any)."""
    error = ErrorCode(code)
    text = message or _KAFKA_MESSAGES.get(error) or error.name
    if error in _AUTHORIZATION:
        return RestError(403, 40301, text)
    if error in (ErrorCode.SASL_AUTHENTICATION_FAILED, ErrorCode.ILLEGAL_SASL_STATE):
        return RestError(401, 40101, text)
    if error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        return RestError(404, 40403, text)
    if error == ErrorCode.THROTTLING_QUOTA_EXCEEDED:
        return RestError(429, 42901, text)
    if error in _BAD_REQUEST:
        return RestError(400, 40002, text)
    if error in _RETRIABLE:
        return kafka_retriable_error(text)
    return kafka_error(text)


def check(code: int, message: str | None = None) -> None:
    """Raise the REST answer to a Kafka error code; nothing when it is NONE."""
    if code != ErrorCode.NONE:
        raise from_kafka(code, message)


def unavailable(message: str) -> RestError:
    return RestError(503, 50302, f"Broker not available: {message}")
