"""The generated decoders (trafka.wire.codegen) agree with the construct objects built from the
same declarations, for every declared (API, version), on whole and on truncated input."""

from __future__ import annotations

import construct as c
import pytest

from trafka.wire.messages import APIS
from testkit.wire_samples import sample

CASES = [
    pytest.param(message, version, nulls, id=f"{message.name}-v{version}-{'nulls' if nulls else 'values'}")
    for api in sorted(APIS.values(), key=lambda a: a.key)
    for message in (api.request, api.response)
    for version in range(message.version_range.lo, message.version_range.hi + 1)
    for nulls in (False, True)
]


@pytest.mark.parametrize("message,version,nulls", CASES)
def test_generated_decoder_matches_the_declaration(message, version, nulls):
    struct, decode = message.struct(version), message.decoder(version)
    data = struct.build(sample(message, version, nulls))
    body, end = decode(data, 0)
    assert body == struct.parse(data)
    assert end == len(data)
    assert decode(b"\x00\x07" + data, 2) == (body, len(data) + 2)  # from an offset, as in a frame
    for cut in range(len(data)):
        with pytest.raises(c.ConstructError):
            decode(data[:cut], 0)


def test_null_in_a_non_nullable_string_is_refused():
    metadata = APIS[3].request
    with pytest.raises(c.ConstructError):
        metadata.decoder(1)(b"\x00\x00\x00\x01\xff\xff", 0)  # one topic whose name is null
