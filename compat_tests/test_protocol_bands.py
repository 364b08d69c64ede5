"""The advertised ApiVersions table against a single-node Kafka 4.3 broker's, key by key: every
API trafka serves goes up to exactly Kafka 4.3's newest version, and starts at Kafka 4.3's oldest
unless an older client needs less (the lower bounds below say which). kafka-python 3.0.12, which
knows tables up to 4.2, reads the whole as Kafka 4.2."""

from __future__ import annotations

import struct
from pathlib import Path

from trafka.testing.rawwire import RawClient

# ApiVersions of a single-node Kafka 4.1 broker (PROTOCOL.md, "What a real Kafka 4.1 broker
# advertises"), key: (min, max), with KIP-714's client telemetry (served since 3.7).
KAFKA_41 = {
    0: (0, 13), 1: (4, 18), 2: (1, 10), 3: (0, 13), 8: (2, 9), 9: (1, 9), 10: (0, 6), 11: (0, 9),
    12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (2, 7),
    20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 1),
    28: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 4),
    36: (0, 2), 37: (0, 3), 38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3), 42: (0, 2), 43: (0, 2),
    44: (0, 1), 45: (0, 1), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0),
    55: (0, 2), 57: (0, 2), 60: (0, 2), 61: (0, 0), 65: (0, 0), 66: (0, 2), 68: (0, 1), 69: (0, 1),
    74: (0, 1), 75: (0, 0), 76: (1, 1), 77: (1, 1), 78: (1, 1), 79: (1, 1), 90: (0, 0), 91: (0, 0),
    92: (0, 0), 71: (0, 0), 72: (0, 0),
}

# Kafka 4.3 (kafka-clients 4.3.0's message definitions: each client-facing request's
# validVersions, less a latestVersionUnstable newest, so InitProducerId v6 stays out; Produce
# still advertised from 0 as Kafka does). What changed since 4.1, and why:
KAFKA_43_CHANGES = {
    2: ((1, 11), "ListOffsets v11: -6 earliest pending upload (KIP-1023)"),
    8: ((2, 10), "OffsetCommit v10: topics by id (KIP-848)"),
    9: ((1, 10), "OffsetFetch v10: topics by id (KIP-848)"),
    27: ((1, 2), "WriteTxnMarkers v2: the marker's transaction version (KIP-1228)"),
    35: ((1, 5), "DescribeLogDirs v5: is_cordoned"),
    78: ((1, 2), "ShareFetch v2: acquire mode, RENEW (KIP-1206, KIP-1222)"),
    79: ((1, 2), "ShareAcknowledge v2: RENEW (KIP-1222)"),
    90: ((0, 1), "DescribeShareGroupOffsets v1: lag (KIP-1226)"),
}
KAFKA_43 = KAFKA_41 | {key: band for key, (band, _) in KAFKA_43_CHANGES.items()}

# Lower bounds below Kafka 4.1's, and who needs them. None today: Kafka 4.x itself keeps the
# old group API versions for librdkafka 2.0.2 and aiokafka (PROTOCOL.md), and Produce from 0.
OLDER_THAN_KAFKA_41: dict[int, tuple[int, str]] = {}

# Keys of the 4.3 table trafka does not serve, each with its reason (docs/compatibility.md).
NOT_SERVED: dict[int, str] = {}

def advertised(bootstrap, version: int = 4) -> dict[int, tuple[int, int]]:
    with RawClient(bootstrap) as raw:
        body = raw.request(18, version, {"client_software_name": "compat", "client_software_version": "1"})
    assert body.error_code == 0
    return {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}


def test_every_served_api_is_in_kafka_43s_table(bootstrap):
    served = advertised(bootstrap)
    assert set(served) - set(KAFKA_43) == set(), "an API Kafka 4.3 does not serve"


def test_upper_bounds_are_kafka_43s(bootstrap):
    served = advertised(bootstrap)
    for key, (_, hi) in sorted(served.items()):
        assert hi == KAFKA_43[key][1], f"API key {key}: max {hi}, Kafka 4.3 {KAFKA_43[key][1]}"


def test_lower_bounds_are_kafka_43s_unless_an_older_client_needs_less(bootstrap):
    served = advertised(bootstrap)
    for key, (lo, _) in sorted(served.items()):
        expected = OLDER_THAN_KAFKA_41.get(key, (KAFKA_43[key][0], ""))[0]
        assert lo == expected, f"API key {key}: min {lo}, expected {expected}"


def test_kafka_43_apis_not_served_are_the_listed_ones(bootstrap):
    served = advertised(bootstrap)
    missing = set(KAFKA_43) - set(served)
    assert missing <= set(NOT_SERVED), f"not served and not listed: {sorted(missing - set(NOT_SERVED))}"


def test_finalized_features_as_a_single_node_kafka_41_reports_them(bootstrap):
    with RawClient(bootstrap) as raw:
        v4 = raw.request(18, 4, {"client_software_name": "compat", "client_software_version": "1"})
        v3 = raw.request(18, 3, {"client_software_name": "compat", "client_software_version": "1"})
    supported = {f.name: (f.min_version, f.max_version) for f in v4.supported_features}
    group_max = 1 if 68 in advertised(bootstrap) else 0
    assert supported == {"metadata.version": (7, 27), "group.version": (0, group_max), "transaction.version": (0, 2)}
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in v4.finalized_features}
    expected = {"metadata.version": (27, 27), "transaction.version": (2, 2)} | ({"group.version": (1, 1)} if group_max else {})
    assert finalized == expected
    assert v4.finalized_features_epoch >= 1
    # v3 leaves out ranges starting at 0, which clients before KAFKA-17011 cannot read.
    assert {f.name for f in v3.supported_features} == {"metadata.version"}
    assert {f.name for f in v3.finalized_features} == set(expected)


def test_newer_api_versions_request_gets_35_and_a_v0_body(bootstrap):
    """Clients send their newest ApiVersions first and retry lower on UNSUPPORTED_VERSION (35)."""
    with RawClient(bootstrap) as raw:
        header = struct.pack(">hhih", 18, 5, 99, 6) + b"compat" + b"\x00"
        body = b"\x07compat\x021\x00"  # compact strings, no tagged fields
        raw.send(struct.pack(">i", len(header + body)) + header + body)
        data = raw.read_frame()
    correlation_id, error_code, count = struct.unpack(">ihi", data[:10])
    assert (correlation_id, error_code) == (99, 35)
    entries = [struct.unpack(">hhh", data[10 + 6 * i:16 + 6 * i]) for i in range(count)]
    assert {key: (lo, hi) for key, lo, hi in entries} == advertised(bootstrap)
    assert dict((key, (lo, hi)) for key, lo, hi in entries)[18] == (0, 4)


def test_the_documented_table_is_what_is_advertised(bootstrap):
    """docs/compatibility.md's API versions table, trafka, Kafka 4.3 and Kafka 4.1 columns."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "compatibility.md").read_text()
    table = doc.split("<!-- bands:begin -->", 1)[1].split("<!-- bands:end -->", 1)[0]
    rows = [line.split("|")[1:6] for line in table.strip().splitlines()[2:]]
    documented = {int(key): (served.strip(), k43.strip(), k41.strip()) for key, _, served, k43, k41 in rows}
    served = advertised(bootstrap)
    assert documented == {
        key: (f"{served[key][0]}-{served[key][1]}" if key in served else "not served", f"{lo}-{hi}",
              f"{KAFKA_41[key][0]}-{KAFKA_41[key][1]}")
        for key, (lo, hi) in KAFKA_43.items()
    }
