"""TLS for SSL and SASL_SSL listeners: Kafka's ssl.* settings turned into an ssl.SSLContext.

PEM keystores load directly; PKCS12 ones and inline PEM are opened with `cryptography` and
handed to OpenSSL through a private file (Python's ssl loads keys only from files): an in-memory
file (memfd) where /proc is there, else a temporary file in TMPDIR or, on a read-only root file
system without a writable /tmp, in the data directory, removed at once.
The principal of an mTLS client is `User:` plus its certificate's subject (RFC 2253), as
Kafka's default principal builder makes it.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from pathlib import Path

from trafka.broker.config import ConfigError
from trafka.storage.files import write_all

_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


def setting(config, listener: str, name: str, mechanism: str | None = None):
    """A setting as one listener sees it: listener.name.<l>.[<mech>.]<name>, else <name>."""
    prefix = f"listener.name.{listener.lower()}."
    candidates = ([prefix + mechanism.lower() + "." + name] if mechanism else []) + [prefix + name]
    for candidate in candidates:
        if candidate in config.values:
            return config.values[candidate]
    return config[name]


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from None


def _pkcs12(path: str, password: str, what: str):
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        return pkcs12.load_key_and_certificates(_read(path, what), password.encode() or None)
    except ValueError as exc:
        raise ConfigError(f"cannot open {what} {path} (wrong password or not PKCS12?): {exc}") from None


def _pem(obj) -> bytes:
    from cryptography.hazmat.primitives import serialization

    if hasattr(obj, "private_bytes"):
        return obj.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
    return obj.public_bytes(serialization.Encoding.PEM)


def _private_file(pem: bytes, scratch_dir: Path | None) -> tuple[str, object]:
    """A path OpenSSL can open holding `pem`, and how to get rid of it."""
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        fd = os.memfd_create("trafka-tls")  # never on a disk
        write_all(fd, pem)
        return f"/proc/self/fd/{fd}", lambda: os.close(fd)
    for directory in (None, scratch_dir):
        try:
            fd, path = tempfile.mkstemp(prefix="trafka-tls-", suffix=".pem", dir=directory)  # mode 0600
        except OSError:  # no writable TMPDIR (a read-only container), or no such directory
            continue
        try:
            write_all(fd, pem)
        finally:
            os.close(fd)
        return path, lambda: os.unlink(path)
    raise ConfigError("cannot hand the TLS key to OpenSSL: no /proc, no writable temporary directory (TMPDIR) "
                      "and no writable data directory")


def _load_chain(context: ssl.SSLContext, pem: bytes, password: str | None, what: str,
                scratch_dir: Path | None = None) -> None:
    path, remove = _private_file(pem, scratch_dir)
    try:
        context.load_cert_chain(path, password=password or None)
    except ssl.SSLError as exc:
        raise ConfigError(f"cannot use {what}: {exc.reason or exc}") from None
    finally:
        remove()


def _keystore(context: ssl.SSLContext, config, listener: str, scratch_dir: Path | None) -> None:
    get = lambda name: setting(config, listener, name) or ""  # noqa: E731
    location, chain, key = get("ssl.keystore.location"), get("ssl.keystore.certificate.chain"), get("ssl.keystore.key")
    key_password = get("ssl.key.password") or get("ssl.keystore.password")
    if chain or key:
        if not (chain and key):
            raise ConfigError("ssl.keystore.certificate.chain and ssl.keystore.key go together")
        _load_chain(context, key.encode() + b"\n" + chain.encode(), get("ssl.key.password"), "ssl.keystore.key",
                    scratch_dir)
    elif not location:
        raise ConfigError(f"listener {listener} uses TLS: set ssl.keystore.location (or the inline PEM settings)")
    elif get("ssl.keystore.type") == "PKCS12" and not location.lower().endswith((".pem", ".crt")):
        private_key, cert, extra = _pkcs12(location, get("ssl.keystore.password"), "ssl.keystore.location")
        if private_key is None or cert is None:
            raise ConfigError(f"keystore {location} holds no private key and certificate")
        _load_chain(context, _pem(private_key) + _pem(cert) + b"".join(_pem(c) for c in extra or []), None,
                    f"keystore {location}", scratch_dir)
    else:
        _load_chain(context, _read(location, "ssl.keystore.location"), key_password, f"keystore {location}",
                    scratch_dir)


def _truststore(context: ssl.SSLContext, config, listener: str) -> bool:
    get = lambda name: setting(config, listener, name) or ""  # noqa: E731
    inline, location = get("ssl.truststore.certificates"), get("ssl.truststore.location")
    try:
        if inline:
            context.load_verify_locations(cadata=inline)
        elif location and get("ssl.truststore.type") == "PKCS12" and not location.lower().endswith((".pem", ".crt")):
            from cryptography.hazmat.primitives.serialization import pkcs12

            try:
                store = pkcs12.load_pkcs12(_read(location, "ssl.truststore.location"),
                                           get("ssl.truststore.password").encode() or None)
            except ValueError as exc:
                raise ConfigError(f"cannot open truststore {location}: {exc}") from None
            certs = [c.certificate for c in store.additional_certs] + ([store.cert.certificate] if store.cert else [])
            context.load_verify_locations(cadata=b"".join(_pem(c) for c in certs).decode())
        elif location:
            context.load_verify_locations(cafile=location)
        else:
            return False
    except ssl.SSLError as exc:
        raise ConfigError(f"cannot use the truststore: {exc.reason or exc}") from None
    return True


def server_context(config, listener: str, scratch_dir: Path | None = None) -> ssl.SSLContext:
    """`scratch_dir` (the data directory): where a key may be written for a moment when there
    is neither /proc nor a writable temporary directory."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    enabled = [v.strip() for v in setting(config, listener, "ssl.enabled.protocols").split(",") if v.strip()]
    unknown = [v for v in enabled if v not in _VERSIONS]
    if unknown or not enabled:
        raise ConfigError(f"invalid value for ssl.enabled.protocols: {', '.join(unknown) or 'empty'} (TLSv1.2, TLSv1.3)")
    context.minimum_version = min(_VERSIONS[v] for v in enabled)
    context.maximum_version = max(_VERSIONS[v] for v in enabled)
    ciphers = setting(config, listener, "ssl.cipher.suites")
    if ciphers:
        try:
            context.set_ciphers(ciphers.replace(",", ":"))
        except ssl.SSLError:
            raise ConfigError(f"invalid value for ssl.cipher.suites: no cipher matches {ciphers!r}") from None
    _keystore(context, config, listener, scratch_dir)
    has_trust = _truststore(context, config, listener)
    client_auth = setting(config, listener, "ssl.client.auth")
    if client_auth != "none" and not has_trust:
        raise ConfigError(f"ssl.client.auth={client_auth} needs a truststore (ssl.truststore.location or .certificates)")
    context.verify_mode = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}[client_auth]
    return context


def certificate_principal(der: bytes | None) -> str:
    """`User:<subject>` of the client's certificate, `User:ANONYMOUS` without one."""
    if not der:
        return "User:ANONYMOUS"
    from cryptography import x509

    return "User:" + x509.load_der_x509_certificate(der).subject.rfc4514_string()


def looks_like_tls(first_bytes: bytes) -> bool:
    """A TLS ClientHello starts with a handshake record: 0x16, then version 3.x."""
    return len(first_bytes) >= 3 and first_bytes[0] == 0x16 and first_bytes[1] == 0x03 and first_bytes[2] <= 0x04
