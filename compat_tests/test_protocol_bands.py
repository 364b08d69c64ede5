"""The advertised ApiVersions table is PROTOCOL.md's band set, one coherent whole: every client
in the matrix picks its versions from it (kafka-python reads it as Kafka 3.0)."""

from __future__ import annotations

import struct

from trafka.testing.rawwire import RawClient

# PROTOCOL.md, "Version ranges the broker must serve" (Produce advertised from 0 as Kafka 4.x),
# plus OffsetDelete (47) v0, which admin tools use, and the transaction APIs at transaction
# version 1 (docs/transactions.md): AddPartitionsToTxn's client versions, the others below KIP-890's v5.
BANDS = {
    0: (0, 9), 1: (4, 12), 2: (1, 7), 3: (0, 12), 8: (2, 9), 9: (1, 9), 10: (0, 4), 11: (0, 7),
    12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 18: (0, 3), 19: (2, 7), 20: (1, 6),
    21: (0, 2), 22: (0, 4), 24: (0, 3), 25: (0, 4), 26: (0, 4), 27: (1, 1), 28: (0, 4),
    32: (1, 4), 33: (0, 2), 37: (0, 3), 42: (0, 2), 44: (0, 1), 47: (0, 0), 61: (0, 0), 65: (0, 0), 66: (0, 2),
    # security (docs/security.md): SASL, the ACL APIs (SECURITY_DISABLED for now), SCRAM credentials
    17: (0, 1), 36: (0, 2), 29: (1, 3), 30: (1, 3), 31: (1, 3), 50: (0, 0), 51: (0, 0),
    # Kafka 4 admin and metadata APIs (issue 13), Kafka 4.1's bands
    34: (1, 2), 35: (1, 4), 43: (0, 2), 45: (0, 1), 46: (0, 0), 55: (0, 2), 60: (0, 2), 75: (0, 0), 68: (0, 1), 69: (0, 1),
}


def test_advertised_bands(bootstrap):
    with RawClient(bootstrap) as raw:
        body = raw.request(18, 3, {"client_software_name": "compat", "client_software_version": "1"})
    assert body.error_code == 0
    assert {k.api_key: (k.min_version, k.max_version) for k in body.api_keys} == BANDS


def test_newer_api_versions_request_gets_35_and_a_v0_body(bootstrap):
    """Clients send ApiVersions v4 first and retry lower on UNSUPPORTED_VERSION (35)."""
    with RawClient(bootstrap) as raw:
        header = struct.pack(">hhih", 18, 4, 99, 6) + b"compat" + b"\x00"
        body = b"\x07compat\x021\x00"  # compact strings, no tagged fields
        raw.send(struct.pack(">i", len(header + body)) + header + body)
        data = raw.read_frame()
    correlation_id, error_code, count = struct.unpack(">ihi", data[:10])
    assert (correlation_id, error_code) == (99, 35)
    keys = {struct.unpack(">hhh", data[10 + 6 * i:16 + 6 * i])[0] for i in range(count)}
    assert keys == set(BANDS)
