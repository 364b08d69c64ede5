"""SCRAM-SHA-256/512 (RFC 5802, RFC 7677): the credential store and the server side.

Clients send AlterUserScramCredentials with a salted password they computed themselves; the
store keeps what Kafka keeps — salt, stored key, server key, iterations — as Kafka does: one
UserScramCredentialRecord (or RemoveUserScramCredentialRecord) per change in the metadata log
(trafka/broker/metadata/image.py), a request's changes in one batch, fsynced before the answer
and applied only then. Passwords are never stored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from trafka.broker.metadata.image import ClusterMetadata
from trafka.broker.metadata.records import MetadataRecord
from trafka.broker.security.mechanism import AuthenticationFailed

MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
MECHANISM_IDS = {name: number for number, name in MECHANISMS.items()}
_HASHES = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}
MIN_ITERATIONS = 4096  # Kafka's bounds for AlterUserScramCredentials
MAX_ITERATIONS = 16384


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(cls, mechanism: str, salt: bytes, salted: bytes, iterations: int) -> "ScramCredential":
        digest = _HASHES[mechanism]
        client_key = hmac.new(salted, b"Client Key", digest).digest()
        return cls(salt, digest(client_key).digest(), hmac.new(salted, b"Server Key", digest).digest(), iterations)

    def matches(self, mechanism: str, password: str) -> bool:
        """Whether `password` is the one this credential was made from (HTTP Basic checks)."""
        digest = _HASHES[mechanism]
        salted = hashlib.pbkdf2_hmac(digest().name, password.encode(), self.salt, self.iterations)
        return hmac.compare_digest(ScramCredential.from_salted_password(mechanism, self.salt, salted,
                                                                        self.iterations).stored_key, self.stored_key)

    def to_json(self) -> dict:
        b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
        return {"salt": b64(self.salt), "stored_key": b64(self.stored_key), "server_key": b64(self.server_key),
                "iterations": self.iterations}

    @classmethod
    def from_json(cls, data: dict) -> "ScramCredential":
        d = base64.b64decode
        return cls(d(data["salt"]), d(data["stored_key"]), d(data["server_key"]), int(data["iterations"]))


class ScramCredentialStore:
    """user -> mechanism -> credential, kept in the metadata log. `upsert` and `delete` gather a
    request's changes; `save` writes them as one batch and applies them once it is durable."""

    def __init__(self, metadata=None):
        """`metadata`: the broker's ClusterMetadata (ClusterMetadata.of for the other forms)."""
        self.users: dict[str, dict[str, ScramCredential]] = {}
        self._pending: list[MetadataRecord] = []
        self.metadata = ClusterMetadata.of(metadata)
        self.metadata.register(["UserScramCredentialRecord", "RemoveUserScramCredentialRecord"], self._replay)

    def _replay(self, record: MetadataRecord) -> None:
        user, mechanism = record.fields["name"], record.fields["mechanism"]
        if record.removal:
            mechs = self.users.get(user, {})
            mechs.pop(mechanism, None)
            if not mechs:
                self.users.pop(user, None)
        else:
            self.users.setdefault(user, {})[mechanism] = ScramCredential.from_json(record.fields)

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        return self.users.get(user, {}).get(mechanism)

    def upsert(self, user: str, mechanism: str, credential: ScramCredential) -> None:
        self._pending.append(MetadataRecord("UserScramCredentialRecord",
                                            {"name": user, "mechanism": mechanism, **credential.to_json()}))

    def delete(self, user: str, mechanism: str) -> bool:
        if self.get(user, mechanism) is None:
            return False
        self._pending.append(MetadataRecord("RemoveUserScramCredentialRecord", {"name": user, "mechanism": mechanism}))
        return True

    def save(self) -> None:
        pending, self._pending = self._pending, []
        self.metadata.write(pending)


def _saslname(text: str) -> str:
    return text.replace("=2C", ",").replace("=3D", "=")


def _attributes(message: str) -> dict[str, str]:
    out = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise AuthenticationFailed(f"malformed SCRAM message {message!r}")
        out.setdefault(key, value)
    return out


class ScramServer:
    """One SCRAM exchange: client-first -> server-first, client-final -> server-final."""

    def __init__(self, mechanism: str, store: ScramCredentialStore):
        self.mechanism = mechanism
        self.digest = _HASHES[mechanism]
        self.store = store
        self.username: str | None = None
        self.complete = False
        self._state = "first"

    def evaluate(self, token: bytes) -> bytes:
        try:
            message = token.decode("utf-8")
        except UnicodeDecodeError:
            raise AuthenticationFailed("SCRAM message is not UTF-8") from None
        if self._state == "first":
            return self._first(message)
        if self._state == "final":
            return self._final(message)
        raise AuthenticationFailed("unexpected SCRAM message after the exchange completed")

    def _first(self, message: str) -> bytes:
        parts = message.split(",", 2)
        if len(parts) != 3 or parts[0] not in ("n", "y"):
            raise AuthenticationFailed("malformed SCRAM client-first message (channel binding is not supported)")
        self._gs2_header = f"{parts[0]},{parts[1]},"
        self._client_first_bare = parts[2]
        attrs = _attributes(parts[2])
        if "n" not in attrs or "r" not in attrs:
            raise AuthenticationFailed("SCRAM client-first message lacks n= or r=")
        self.username = _saslname(attrs["n"])
        authzid = parts[1][2:] if parts[1].startswith("a=") else ""
        if authzid and _saslname(authzid) != self.username:
            raise AuthenticationFailed("authorization id differs from the user name")
        credential = self.store.get(self.username, self.mechanism)
        if credential is None:
            raise AuthenticationFailed(f"Authentication failed during authentication due to invalid credentials "
                                       f"with SASL mechanism {self.mechanism}")
        self._credential = credential
        self._nonce = attrs["r"] + secrets.token_hex(16)
        self._server_first = (f"r={self._nonce},s={base64.b64encode(credential.salt).decode()},"
                              f"i={credential.iterations}")
        self._state = "final"
        return self._server_first.encode()

    def _final(self, message: str) -> bytes:
        without_proof, sep, proof_part = message.rpartition(",p=")
        if not sep:
            raise AuthenticationFailed("SCRAM client-final message lacks p=")
        attrs = _attributes(without_proof)
        # Kafka checks that the nonce ends with the server's, as librdkafka before 2.1 (kcat)
        # sends its own nonce again in front of it.
        if not attrs.get("r", "").endswith(self._nonce):
            raise AuthenticationFailed("Invalid client nonce in the final client message")
        if attrs.get("c") != base64.b64encode(self._gs2_header.encode()).decode():
            raise AuthenticationFailed("SCRAM channel binding mismatch")
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        credential = self._credential
        try:
            proof = base64.b64decode(proof_part, validate=True)
        except ValueError:
            raise AuthenticationFailed("SCRAM proof is not base64") from None
        signature = hmac.new(credential.stored_key, auth_message, self.digest).digest()
        if len(proof) != len(signature):
            raise AuthenticationFailed(f"Authentication failed: Invalid credentials with SASL mechanism {self.mechanism}")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(self.digest(client_key).digest(), credential.stored_key):
            raise AuthenticationFailed(f"Authentication failed during authentication due to invalid credentials "
                                       f"with SASL mechanism {self.mechanism}")
        server_signature = hmac.new(credential.server_key, auth_message, self.digest).digest()
        self.complete = True
        self._state = "done"
        return b"v=" + base64.b64encode(server_signature)
