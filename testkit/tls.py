"""Test certificates made in the test run with `cryptography`: a CA, a broker certificate for
127.0.0.1/localhost and client certificates. Nothing here is ever written to the repository."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "trafka tests"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key, password: bytes | None = None) -> bytes:
    encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def _pem_cert(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass
class Pki:
    dir: Path
    ca_pem: Path
    ca: x509.Certificate
    ca_key: object

    def issue(self, cn: str, *, server: bool = False, password: bytes | None = None) -> dict[str, Path]:
        """Files for one identity: cert.pem, key.pem, bundle.pem (key + cert), keystore.p12."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(self.ca.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1)))
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        cert = builder.sign(self.ca_key, hashes.SHA256())
        out = {name: self.dir / f"{cn}.{name}" for name in ("cert.pem", "key.pem", "bundle.pem", "keystore.p12")}
        out["cert.pem"].write_bytes(_pem_cert(cert))
        out["key.pem"].write_bytes(_pem_key(key, password))
        out["bundle.pem"].write_bytes(_pem_key(key, password) + _pem_cert(cert))
        out["keystore.p12"].write_bytes(pkcs12.serialize_key_and_certificates(
            cn.encode(), key, cert, [self.ca],
            serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()))
        return out


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    ca = (x509.CertificateBuilder().subject_name(_name("trafka test CA")).issuer_name(_name("trafka test CA"))
          .public_key(key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(key, hashes.SHA256()))
    ca_pem = directory / "ca.pem"
    ca_pem.write_bytes(_pem_cert(ca))
    return Pki(directory, ca_pem, ca, key)
