"""Apple Wallet passes (PKPASS_URL): a ticket page as an event ticket pass, a zip of pass.json,
its icons, manifest.json (the SHA-1 of every other file) and `signature`, a detached PKCS#7
signature of the manifest by the supplier's pass type certificate, with Apple's WWDR
intermediate certificate beside it. Signed with `cryptography`."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from berth.domain.catalog import DeliveryFormat
from berth.settings import Settings
from berth.tickets.sheet import TicketPage

if TYPE_CHECKING:  # cryptography's certificates and PIL load with the first pass, not with the server
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

BARCODE_FORMATS = {
    DeliveryFormat.QRCODE: "PKBarcodeFormatQR",
    DeliveryFormat.AZTECCODE: "PKBarcodeFormatAztec",
    DeliveryFormat.CODE128: "PKBarcodeFormatCode128",
}
MAX_FIELD = 200  # Wallet shows little of a long value; the pass stays small


class PassSettingsError(ValueError):
    """The pass certificate, key or WWDR certificate named by the settings cannot be used."""


def _icon(size: int) -> bytes:
    from PIL import Image  # imported by the first pass built: a server that builds none never loads it

    out = io.BytesIO()
    Image.new("RGB", (size, size), (27, 79, 114)).save(out, format="PNG")
    return out.getvalue()


@cache
def icons() -> dict[str, bytes]:
    """Wallet requires an icon; the pass shows the supplier's name beside it."""
    return {"icon.png": _icon(29), "icon@2x.png": _icon(58), "icon@3x.png": _icon(87)}


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_FIELD else flat[: MAX_FIELD - 1] + "…"


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise PassSettingsError(
            f"Apple Wallet pass settings: cannot read the {what} {path!r}: {exc.strerror}"
        ) from None


@dataclass(frozen=True)
class PassSigner:
    certificate: x509.Certificate
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
    chain: tuple[x509.Certificate, ...]
    team_id: str
    pass_type_id: str

    @classmethod
    def from_settings(cls, settings: Settings) -> PassSigner | None:
        """The signer the BERTH_PKPASS_* settings describe; None when they are not all set."""
        if not settings.issues_passes:
            return None
        assert settings.pkpass_certificate and settings.pkpass_key
        assert settings.pkpass_team_id and settings.pkpass_pass_type_id
        password = (
            settings.pkpass_key_password.get_secret_value().encode() if settings.pkpass_key_password else None
        )
        certificate_pem = _read(settings.pkpass_certificate, "pass certificate (BERTH_PKPASS_CERTIFICATE)")
        key_pem = _read(settings.pkpass_key, "key (BERTH_PKPASS_KEY)")
        wwdr_pem = (
            _read(settings.pkpass_wwdr_certificate, "WWDR certificate (BERTH_PKPASS_WWDR_CERTIFICATE)")
            if settings.pkpass_wwdr_certificate
            else None
        )
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        try:
            certificate = x509.load_pem_x509_certificate(certificate_pem)
            key = serialization.load_pem_private_key(key_pem, password)
            chain = (x509.load_pem_x509_certificate(wwdr_pem),) if wwdr_pem else ()
        except (ValueError, TypeError) as exc:
            raise PassSettingsError(f"Apple Wallet pass settings: {exc}") from None
        if not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
            raise PassSettingsError("Apple Wallet pass settings: the key must be an RSA or EC private key")
        return cls(certificate, key, chain, settings.pkpass_team_id, settings.pkpass_pass_type_id)

    def signature(self, manifest: bytes) -> bytes:
        """A detached PKCS#7 (DER) signature of `manifest`."""
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.serialization import pkcs7

        builder = (
            pkcs7.PKCS7SignatureBuilder()
            .set_data(manifest)
            .add_signer(self.certificate, self.key, hashes.SHA256())
        )
        for certificate in self.chain:
            builder = builder.add_certificate(certificate)
        options = [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Binary]
        return builder.sign(serialization.Encoding.DER, options)

    def pass_json(self, page: TicketPage, serial: str) -> dict[str, object]:
        back = [
            {"key": f"line{index}", "label": _short(line.label), "value": _short(line.text)}
            for index, line in enumerate(page.lines)
        ]
        back.extend(
            {"key": f"instruction{index}", "label": page.words("How to redeem"), "value": _short(text)}
            for index, text in enumerate(page.instructions)
        )
        if page.supplier_contact:
            back.append(
                {"key": "contact", "label": page.words("Contact"), "value": _short(page.supplier_contact)}
            )
        barcodes = [
            {
                "format": BARCODE_FORMATS[f],
                "message": page.code,
                "messageEncoding": "iso-8859-1",
                "altText": page.code,
            }
            for f in page.formats
        ]
        found: dict[str, object] = {
            "formatVersion": 1,
            "passTypeIdentifier": self.pass_type_id,
            "teamIdentifier": self.team_id,
            "serialNumber": serial,
            "organizationName": _short(page.supplier),
            "description": _short(f"{page.heading}: {page.product}"),
            "backgroundColor": "rgb(27, 79, 114)",
            "foregroundColor": "rgb(255, 255, 255)",
            "labelColor": "rgb(200, 220, 235)",
            "barcodes": barcodes,
            "barcode": barcodes[0],  # what Wallet before iOS 9 reads
            "eventTicket": {
                "headerFields": [{"key": "heading", "label": "", "value": page.heading}],
                "primaryFields": [
                    {"key": "product", "label": _short(page.option or ""), "value": _short(page.product)}
                ],
                "secondaryFields": [
                    {"key": "when", "label": page.words("When"), "value": _short(page.when or "")}
                ],
                "backFields": back,
            },
        }
        if page.start is not None:
            found["relevantDate"] = page.start.isoformat()
        return found

    def build(self, page: TicketPage, serial: str) -> bytes:
        """The .pkpass of `page`; `serial` names the pass (its ticket's token)."""
        files = {
            "pass.json": json.dumps(self.pass_json(page, serial), ensure_ascii=False).encode(),
            **icons(),
        }
        manifest = json.dumps(
            {name: hashlib.sha1(content).hexdigest() for name, content in files.items()}
        ).encode()
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, content in files.items():
                archive.writestr(name, content)
            archive.writestr("manifest.json", manifest)
            archive.writestr("signature", self.signature(manifest))
        return out.getvalue()
