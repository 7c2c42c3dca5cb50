"""What a run's file is, decided from its bytes: a picture only if it decodes as one.

A snippet names its files, so ``figure.png`` may hold an SVG, an HTML page or anything else,
and a chat that embeds by name would show it as the run's figure. The manager therefore
decodes every file that starts like a picture with Pillow, within a pixel limit checked
before any pixel is decoded (a 1 kB PNG can claim 100,000 x 100,000 pixels), and only what
decodes whole is a picture. Anything else goes back as a plain file; if its name claims a
picture, ``.txt`` or ``.bin`` is added so that no client takes it for one. This runs in the
manager, which holds no secrets, not in the bot.
"""

from __future__ import annotations

import io
import warnings

__all__ = ["MAX_PIXELS", "file_type", "honest_name"]

#: The most pixels a returned picture may have (4096 x 4096); more is a plain file.
MAX_PIXELS = 4096 * 4096
_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
_PICTURE_SUFFIXES = (
    ".png", ".apng", ".jpg", ".jpeg", ".jfif", ".gif", ".webp", ".bmp", ".ico",
    ".tif", ".tiff", ".avif", ".heic",
)  # fmt: skip


def _picture(data: bytes) -> str | None:
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - matplotlib, a dependency, brings Pillow
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=tuple(_FORMATS)) as image:
                width, height = image.size
                if width < 1 or height < 1 or width * height > MAX_PIXELS:
                    return None
                image.load()  # every pixel of the first frame: a truncated file fails here
                return _FORMATS.get(image.format or "")
    except Exception:  # whatever Pillow refuses is not a picture
        return None


def file_type(data: bytes) -> str:
    """``image/png`` (``jpeg``, ``gif``, ``webp``) if ``data`` decodes as that picture within
    :data:`MAX_PIXELS`; else ``text/plain`` for UTF-8 text, ``application/octet-stream``."""
    picture = _picture(data)
    if picture is not None:
        return picture
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "application/octet-stream"
    return "text/plain"


def honest_name(name: str, mime: str) -> str:
    """``name``, with ``.txt`` or ``.bin`` added when it claims a picture that ``mime`` denies."""
    if mime.startswith("image/") or not name.lower().endswith(_PICTURE_SUFFIXES):
        return name
    return name + (".txt" if mime == "text/plain" else ".bin")
