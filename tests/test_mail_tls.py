"""The SMTP connection as BERTH_SMTP_URL names it, against a real aiosmtpd server on loopback
with a self-signed certificate: STARTTLS with a login (`smtp://user:password@host:port`),
TLS from the first byte (`smtps://`), and a login never sent in clear."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pydantic import SecretStr

from berth.container import Services, build_services
from berth.domain.smtp import parse_smtp_url
from berth.settings import Settings
from berth.store import mail_repo
from tests.bookings_helpers import booking_catalog
from tests.builders import load
from tests.conftest import Clock
from tests.mail_helpers import smtp_sink
from tests.test_mail import confirm_with_receipt


def self_signed(folder: Path) -> tuple[ssl.SSLContext, Path]:
    """A server context with a fresh self-signed certificate for 127.0.0.1, and the
    certificate's file (what BERTH_SMTP_URL's `cafile` trusts)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "smtp.pem", folder / "smtp.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return context, cert_file


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[ssl.SSLContext, Path]:
    return self_signed(tmp_path)


async def mailer_for(settings: Settings, clock: Clock, url: str) -> AsyncIterator[Services]:
    services = build_services(settings.model_copy(update={"smtp_url": SecretStr(url)}), clock)
    try:
        yield await load(services, booking_catalog())
    finally:
        await services.close()


async def one_receipt(services: Services) -> mail_repo.Message:
    from berth.app import create_app

    transport = httpx.ASGITransport(app=create_app(services=services))
    async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as client:
        await confirm_with_receipt(client)
    await services.mailer.send_due()
    async with services.database.transaction(write=False) as conn:
        [message], _ = await mail_repo.list_messages(conn)
    return message


def test_the_url_says_how_to_connect() -> None:
    starttls = parse_smtp_url("smtp://user%40x:p%3Ass@mail.example.com:587")
    assert (starttls.host, starttls.port, starttls.username, starttls.password) == (
        "mail.example.com", 587, "user@x", "p:ss",
    )  # fmt: skip
    assert starttls.require_starttls and not starttls.implicit_tls
    implicit = parse_smtp_url("smtps://u:p@mail.example.com")
    assert implicit.implicit_tls and implicit.port == 465
    relay = parse_smtp_url("smtp://relay.internal:25")
    assert not relay.require_starttls and relay.username is None
    with pytest.raises(ValueError, match="BERTH_SMTP_URL must look like"):
        parse_smtp_url("http://mail.example.com")
    with pytest.raises(ValueError):
        Settings(smtp_url=SecretStr("mailto:x@example.com"))


async def test_starttls_with_a_login(
    settings: Settings, clock: Clock, certificate: tuple[ssl.SSLContext, Path]
) -> None:
    context, cert_file = certificate
    async with smtp_sink(context, auth=("berth", "s3cret")) as sink:
        url = f"smtp://berth:s3cret@127.0.0.1:{sink.port}?cafile={cert_file}"
        async for services in mailer_for(settings, clock, url):
            message = await one_receipt(services)
        assert message.status == mail_repo.SENT, message.error
        assert len(sink.received) == 1


async def test_implicit_tls(
    settings: Settings, clock: Clock, certificate: tuple[ssl.SSLContext, Path]
) -> None:
    context, cert_file = certificate
    async with smtp_sink(context, implicit=True, auth=("berth", "s3cret")) as sink:
        url = f"smtps://berth:s3cret@127.0.0.1:{sink.port}?cafile={cert_file}"
        async for services in mailer_for(settings, clock, url):
            message = await one_receipt(services)
        assert message.status == mail_repo.SENT, message.error
        assert len(sink.received) == 1


async def test_an_untrusted_certificate_is_not_sent_to(
    settings: Settings, clock: Clock, certificate: tuple[ssl.SSLContext, Path]
) -> None:
    context, _ = certificate
    async with smtp_sink(context, auth=("berth", "s3cret")) as sink:
        async for services in mailer_for(settings, clock, f"smtp://berth:s3cret@127.0.0.1:{sink.port}"):
            message = await one_receipt(services)
        assert message.status == mail_repo.PENDING and message.error is not None
        assert "certificate" in message.error.lower()
        assert sink.received == []


async def test_a_login_is_never_sent_in_clear(settings: Settings, clock: Clock) -> None:
    """A server that offers no STARTTLS gets no password: the email waits for a retry."""
    async with smtp_sink() as sink:
        async for services in mailer_for(settings, clock, f"smtp://berth:s3cret@127.0.0.1:{sink.port}"):
            message = await one_receipt(services)
        assert message.status == mail_repo.PENDING and message.error is not None
        assert "STARTTLS" in message.error or "TLS" in message.error
        assert sink.received == []
