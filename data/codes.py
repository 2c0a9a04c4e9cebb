"""Access codes: shown once, stored only as a hash, compared in constant time.

Codes are random with about 80 bits of entropy, so a fast unsalted hash (SHA-256) is enough
and lets sign-in find the rater by an indexed lookup; a salted slow hash buys nothing against
guessing a random 80-bit code and would force comparing against every rater.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata

__all__ = ["new_code", "normalise", "hash_code", "codes_match"]

# No 0/O, 1/I/L: codes are read aloud and typed by hand.
_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"


def new_code() -> str:
    """A fresh code like ``H2H-7KQM-XR2D-9PWE-BN4T`` (16 random symbols, ~79 bits)."""
    sym = "".join(secrets.choice(_ALPHABET) for _ in range(16))
    return "H2H-" + "-".join(sym[i:i + 4] for i in range(0, 16, 4))


def normalise(code: str) -> str:
    """A code as typed, the one way every use reads it (the hash that signs in, the throttle's
    prefix bucket): compatibility forms folded (full-width ``Ｈ２Ｈ`` from a Chinese input
    method is ``H2H``), then only ASCII letters and digits kept, upper-cased. Letters outside
    ASCII are dropped *before* upper-casing (``ß`` would become ``SS``), so ``H2H-Xé7K…`` and
    ``H2H-X7K…`` are the same code in the same bucket."""
    folded = unicodedata.normalize("NFKC", code)
    return "".join(ch for ch in folded if ch.isascii() and ch.isalnum()).upper()


def hash_code(code: str) -> str:
    return "sha256:" + hashlib.sha256(normalise(code).encode("ascii")).hexdigest()


def codes_match(code: str, stored_hash: str | None) -> bool:
    if not stored_hash:
        return False
    return hmac.compare_digest(hash_code(code), stored_hash)
