"""The cluster's CA, serving certificate and bearer token, created on first start in the data dir.

Why our own CA: kubectl only sends the token over https and verifies the server; a CA kept in the
data dir lets the kubeconfig pin it (``certificate-authority-data``) and survives restarts, so
kubeconfigs written earlier keep working.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pyhpa.cluster.apiserver.private_files import private_dir, restrict, write_private


@dataclass(frozen=True)
class Credentials:
    ca_path: Path
    cert_path: Path
    key_path: Path
    token: str


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _make_ca(tls_dir: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(_name("pyhpa-cluster-ca")).issuer_name(_name("pyhpa-cluster-ca"))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    write_private(tls_dir / "ca.key", _pem_key(key))
    write_private(tls_dir / "ca.crt", cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


def _make_server_cert(tls_dir: Path, ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey,
                      hosts: list[str]) -> None:
    key = _key()
    now = dt.datetime.now(dt.timezone.utc)
    sans: list[x509.GeneralName] = []
    for h in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            sans.append(x509.DNSName(h))
    cert = (x509.CertificateBuilder()
            .subject_name(_name("pyhpa-apiserver")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=825))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    write_private(tls_dir / "server.key", _pem_key(key))
    write_private(tls_dir / "server.crt", cert.public_bytes(serialization.Encoding.PEM))
    write_private(tls_dir / "server.hosts", ",".join(hosts).encode())


def ensure_credentials(data_dir: Path, host: str = "127.0.0.1") -> Credentials:
    """Load or create the CA, a server certificate valid for ``host`` and the token."""
    tls_dir = private_dir(Path(data_dir) / "tls")
    for name in ("ca.crt", "ca.key", "server.crt", "server.key", "server.hosts"):
        restrict(tls_dir / name)  # written by an older version with the umask's mode
    ca_crt, ca_key_path = tls_dir / "ca.crt", tls_dir / "ca.key"
    if ca_crt.exists() and ca_key_path.exists():
        ca = x509.load_pem_x509_certificate(ca_crt.read_bytes())
        ca_key = serialization.load_pem_private_key(ca_key_path.read_bytes(), None)
        assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    else:
        ca, ca_key = _make_ca(tls_dir)
    hosts = sorted({"127.0.0.1", "::1", "localhost", host} - {"0.0.0.0", "::", ""})
    hosts_file = tls_dir / "server.hosts"
    have = hosts_file.read_text().split(",") if hosts_file.exists() else []
    if not (tls_dir / "server.crt").exists() or not set(hosts) <= set(have):
        _make_server_cert(tls_dir, ca, ca_key, hosts)
    token_path = Path(data_dir) / "token"
    if not token_path.exists():
        write_private(token_path, secrets.token_urlsafe(32).encode())
    restrict(token_path)
    return Credentials(ca_crt, tls_dir / "server.crt", tls_dir / "server.key",
                       token_path.read_text().strip())
