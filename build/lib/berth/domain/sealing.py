"""Secrets at rest: sealed with AES-256-GCM under a key derived (HKDF-SHA256) from
`BERTH_SECRET_KEY`. Pure: no I/O.

A sealed value is `v1:` + URL-safe base64 of nonce (12 bytes) + ciphertext + tag. It is bound
to a context (the connection id of a signing secret), so a sealed value copied to another
connection's row does not open. Earlier keys can be kept to open what they sealed while
everything new is sealed with the current key.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

VERSION = "v1:"
_INFO = b"berth/sealed-secrets/v1"
_NONCE = 12


class SealError(ValueError):
    """A sealed value that no key opens: a wrong or missing key, or a value changed in storage."""


def _derive(key_material: str) -> AESGCM:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(key_material.encode())
    return AESGCM(key)


class SecretBox:
    def __init__(self, key: str, previous: Sequence[str] = ()) -> None:
        if not key:
            raise ValueError("the secret key must not be empty")
        self._current = _derive(key)
        self._all = [self._current, *(_derive(k) for k in previous if k)]

    def seal(self, plaintext: str, context: str) -> str:
        nonce = os.urandom(_NONCE)
        sealed = self._current.encrypt(nonce, plaintext.encode(), context.encode())
        return VERSION + base64.urlsafe_b64encode(nonce + sealed).decode()

    def open(self, sealed: str, context: str) -> str:
        if not sealed.startswith(VERSION):
            raise SealError("not a sealed value")
        try:
            raw = base64.urlsafe_b64decode(sealed[len(VERSION) :].encode())
        except ValueError:
            raise SealError("not a sealed value") from None
        nonce, body = raw[:_NONCE], raw[_NONCE:]
        for aead in self._all:
            try:
                return aead.decrypt(nonce, body, context.encode()).decode()
            except InvalidTag:
                continue
        raise SealError("no configured key opens this value (wrong BERTH_SECRET_KEY?)")

    def __repr__(self) -> str:  # never show key material, even by accident
        return f"SecretBox(keys={len(self._all)})"
