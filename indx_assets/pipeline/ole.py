"""OLE compound files: what one holds, for media detection and the Office readers alike.

A password-protected Office Open XML file is not a zip but an OLE container holding an
`EncryptedPackage` stream; any other OLE file is a legacy binary Office format (`.ppt`, `.doc`,
`.xls`). Here, outside `readers`, so media detection can ask without depending on the readers
(which depend on it).
"""

import io

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def ole_status(content: bytes) -> tuple[str, str] | None:
    """For an OLE compound file, the document status and reason; `None` for anything else.

    Office writes a password-protected OOXML file as an OLE container with `EncryptionInfo`
    and `EncryptedPackage` streams; any other OLE file is a legacy binary format (e.g. a
    PowerPoint 97-2003 `.ppt`) that the OOXML readers do not read.
    """
    if not content.startswith(OLE_MAGIC):
        return None
    import olefile

    try:
        with olefile.OleFileIO(io.BytesIO(content)) as ole:
            encrypted = ole.exists("EncryptedPackage")
    except Exception as exc:  # olefile raises assorted errors for damaged containers
        return "failed", f"damaged OLE compound file: {exc}"
    if encrypted:
        return "encrypted", "password-protected Office file (OLE container with an EncryptedPackage stream)"
    return "unsupported", "legacy binary Office file (OLE compound document), not Office Open XML"


def is_encrypted_ooxml(content: bytes) -> bool:
    """True for a password-protected OOXML file (for media detection, which sees only OLE bytes)."""
    status = ole_status(content)
    return status is not None and status[0] == "encrypted"
