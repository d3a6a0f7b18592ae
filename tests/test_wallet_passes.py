"""PKPASS_URL: Apple Wallet passes, only once a pass type certificate is configured. The tests
make a self-signed certificate, and check the pass's manifest hashes and its detached PKCS#7
signature with the `openssl` command."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import zipfile
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from pydantic import SecretStr

from berth.app import create_app
from berth.container import Services, build_services
from berth.settings import Settings
from berth.tickets.pkpass import PassSettingsError, PassSigner
from tests.builders import load
from tests.conftest import ADMIN, Clock
from tests.test_tickets import booked, options, path_of
from tests.tickets_helpers import cruise_booking, wallet_catalog, wallet_catalog_text


def certificate_files(folder: Path, common_name: str = "Pass Type ID: pass.test.berth") -> tuple[Path, Path]:
    """A self-signed certificate and its key, as PEM files in `folder`."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / f"{common_name[-5:]}.pem", folder / f"{common_name[-5:]}.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"pass-word"),
        )
    )
    return cert_path, key_path


@pytest.fixture
def wallet_settings(settings: Settings, tmp_path: Path) -> Settings:
    cert, key = certificate_files(tmp_path)
    wwdr, _ = certificate_files(tmp_path, "Apple WWDR stand-in")
    return settings.model_copy(
        update={
            "pkpass_certificate": str(cert),
            "pkpass_key": str(key),
            "pkpass_key_password": SecretStr("pass-word"),
            "pkpass_wwdr_certificate": str(wwdr),
            "pkpass_team_id": "TEAM123456",
            "pkpass_pass_type_id": "pass.test.berth",
        }
    )


@pytest.fixture
async def wallet(wallet_settings: Settings, clock: Clock) -> AsyncIterator[Services]:
    built = build_services(wallet_settings, clock)
    yield await load(built, wallet_catalog())
    await built.close()


@pytest.fixture
async def wallet_client(wallet: Services) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(services=wallet), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as http:
        yield http


def openssl_verifies(signature: bytes, content: bytes, folder: Path) -> subprocess.CompletedProcess[str]:
    (folder / "signature").write_bytes(signature)
    (folder / "manifest.json").write_bytes(content)
    return subprocess.run(
        ["openssl", "smime", "-verify", "-noverify", "-binary", "-inform", "DER",
         "-in", str(folder / "signature"), "-content", str(folder / "manifest.json"), "-out", str(folder / "out")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def signers_certificates(signature: Path) -> str:
    return subprocess.run(
        ["openssl", "pkcs7", "-inform", "DER", "-in", str(signature), "-print_certs", "-noout"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


async def test_a_pass_is_signed_and_its_manifest_covers_every_file(
    wallet_client: httpx.AsyncClient, wallet: Services, tmp_path: Path
) -> None:
    booking = await booked(
        wallet_client, cruise_booking({"unitId": "adult", "contact": {"fullName": "Ada Lovelace"}})
    )
    voucher = options(booking["voucher"])
    assert voucher["PKPASS_URL"].endswith(".pkpass") and voucher["PDF_URL"].endswith(".pdf")
    assert voucher["PKPASS_URL"][: -len(".pkpass")] == voucher["PDF_URL"][: -len(".pdf")]  # one token
    item = booking["unitItems"][0]
    response = await wallet_client.get(path_of(options(item["ticket"])["PKPASS_URL"]))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/vnd.apple.pkpass"
    assert response.headers["cache-control"] == "private"
    # The pass downloads under its unit's name, and HEAD answers as GET does, without the body.
    name = f'inline; filename="{booking["supplierReference"]}-adult.pkpass"'
    assert response.headers["content-disposition"] == name
    head = await wallet_client.head(path_of(options(item["ticket"])["PKPASS_URL"]))
    assert head.status_code == 200 and head.content == b"" and head.headers["content-disposition"] == name
    assert head.headers["content-type"] == "application/vnd.apple.pkpass"
    # The pass's own labels are in the booking's language (German here).
    labels = [f["label"] for f in json.loads(zipfile.ZipFile(io.BytesIO(response.content)).read("pass.json"))[
        "eventTicket"]["backFields"]]  # fmt: skip
    assert "Treffpunkt" in labels and "So lösen Sie das Ticket ein" in labels
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    files = {name: archive.read(name) for name in archive.namelist()}
    assert {"pass.json", "manifest.json", "signature", "icon.png", "icon@2x.png"} <= set(files)
    manifest = json.loads(files["manifest.json"])
    assert set(manifest) == set(files) - {"manifest.json", "signature"}
    for name, digest in manifest.items():
        assert hashlib.sha1(files[name]).hexdigest() == digest
    card = json.loads(files["pass.json"])
    assert card["passTypeIdentifier"] == "pass.test.berth" and card["teamIdentifier"] == "TEAM123456"
    assert card["barcodes"] == [
        {"format": "PKBarcodeFormatQR", "message": item["supplierReference"], "messageEncoding": "iso-8859-1",
         "altText": item["supplierReference"]}
    ]  # fmt: skip
    assert card["eventTicket"]["primaryFields"][0]["value"] == "Hafenrundfahrt"
    assert card["relevantDate"] == "2026-06-02T10:00:00+01:00"
    assert any(f["value"] == "Ada Lovelace" for f in card["eventTicket"]["backFields"])
    verified = openssl_verifies(files["signature"], files["manifest.json"], tmp_path)
    assert verified.returncode == 0, verified.stderr
    assert "Verification successful" in verified.stderr
    # The signature is of this manifest: a changed one fails.
    tampered = openssl_verifies(files["signature"], files["manifest.json"].replace(b"{", b"{ ", 1), tmp_path)
    assert tampered.returncode != 0
    # The WWDR certificate travels in the signature beside the pass certificate.
    certificates = signers_certificates(tmp_path / "signature")
    assert "Pass Type ID: pass.test.berth" in certificates and "Apple WWDR stand-in" in certificates


async def test_pkpass_url_is_refused_at_import_without_a_certificate(
    client: httpx.AsyncClient, services: Services
) -> None:
    text = wallet_catalog_text()
    response = await client.put("/admin/api/catalog", content=text.encode(), headers=ADMIN)
    assert response.status_code == 400
    assert [p["message"] for p in response.json()["problems"]] == [
        "PKPASS_URL needs an Apple Wallet pass certificate: set BERTH_PKPASS_CERTIFICATE, BERTH_PKPASS_KEY, "
        "BERTH_PKPASS_TEAM_ID and BERTH_PKPASS_PASS_TYPE_ID (docs/operations.md), or leave it out"
    ]


async def test_pkpass_url_is_accepted_at_import_with_a_certificate(
    wallet_client: httpx.AsyncClient, wallet: Services
) -> None:
    text = wallet_catalog_text()
    response = await wallet_client.put("/admin/api/catalog", content=text.encode(), headers=ADMIN)
    assert response.status_code == 200, response.text


def test_unusable_pass_settings_are_named(wallet_settings: Settings, tmp_path: Path) -> None:
    missing = wallet_settings.model_copy(update={"pkpass_key": str(tmp_path / "nowhere.key")})
    with pytest.raises(PassSettingsError, match=r"cannot read the key \(BERTH_PKPASS_KEY\)"):
        PassSigner.from_settings(missing)
    wrong = wallet_settings.model_copy(update={"pkpass_key_password": None})
    with pytest.raises(PassSettingsError, match="Apple Wallet pass settings"):
        PassSigner.from_settings(wrong)
    assert PassSigner.from_settings(wallet_settings.model_copy(update={"pkpass_team_id": None})) is None
