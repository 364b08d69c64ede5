"""Requests real clients send that are not quite what the schema says."""

from trafka.wire.framing import decode_request, peek_header
from trafka.wire.messages import APIS


def test_librdkafka_all_topics_metadata_v12_with_stray_bytes():
    # confluent-kafka 2.16.1 (librdkafka 2.16.0), AdminClient.list_topics(): a null topic array,
    # then three zero bytes it reserved for the array length and never erased. Kafka reads the
    # zeros as the remaining fields and ignores the trailing bytes; so do we.
    frame = bytes.fromhex("0003000c00000003000772646b61666b610000000000010000")
    header = peek_header(frame)
    body = decode_request(frame, header, APIS[3])
    assert body.topics is None
    assert body.allow_auto_topic_creation is False
