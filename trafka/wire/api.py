"""An API is a key, a name, and a request/response pair of declared messages."""

from __future__ import annotations

from dataclasses import dataclass

from trafka.wire.schema import Message


@dataclass(frozen=True)
class Api:
    key: int
    name: str
    request: Message
    response: Message
    # ApiVersions answers with response header v0 in every version, so a client that does not
    # yet know our versions can read the answer. Other APIs follow the flexible rule.
    response_header_always_v0: bool = False

    def response_header_version(self, version: int) -> int:
        if self.response_header_always_v0:
            return 0
        return 1 if self.response.is_flexible(version) else 0

    def request_header_version(self, version: int) -> int:
        return 2 if self.request.is_flexible(version) else 1
