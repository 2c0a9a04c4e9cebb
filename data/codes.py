"""Access codes: shown once, stored only as a hash, compared in constant time.

Codes are random with about 80 bits of entropy, so a fast unsalted hash (SHA-256) is enough
and lets sign-in find the rater by an indexed lookup; a salted slow hash buys nothing against
guessing a random 80-bit code and would force comparing against every rater.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["new_code", "hash_code", "codes_match"]

# No 0/O, 1/I/L: codes are read aloud and typed by hand.
_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"


def new_code() -> str:
    """A fresh code like ``H2H-7KQM-XR2D-9PWE-BN4T`` (16 random symbols, ~79 bits)."""
    sym = "".join(secrets.choice(_ALPHABET) for _ in range(16))
    return "H2H-" + "-".join(sym[i:i + 4] for i in range(0, 16, 4))


def normalise(code: str) -> str:
    return "".join(ch for ch in code.upper() if ch.isalnum())


def hash_code(code: str) -> str:
    return "sha256:" + hashlib.sha256(normalise(code).encode("ascii", "ignore")).hexdigest()


def codes_match(code: str, stored_hash: str | None) -> bool:
    if not stored_hash:
        return False
    return hmac.compare_digest(hash_code(code), stored_hash)
