"""Zip archives from clients (skill packages, job uploads), unpacked within limits.

A zip's headers say how big its entries are, but nothing makes them true, so
every entry is inflated in chunks and counted as it comes: past
``ArchiveLimits.unpacked_bytes`` in all, or past ``ArchiveLimits.files``
entries, the archive is refused before much is inflated (a 2 MB zip holding
one 2 GiB entry costs at most the limit, never the 2 GiB). Entries that could
not all be written as plain files are refused before anything is written: a
path leaving the folder, a symbolic link, an empty or ``.`` path, the same path
twice, or a path that is a file in one entry and a folder in another.
"""

from __future__ import annotations

import io
import stat
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from turngate.base.pathnames import path_problem
from turngate.implementations.serve.errors import ApiError

MAX_UNPACKED_BYTES: Final = 64 * 1024 * 1024
MAX_FILES: Final = 1000
_CHUNK: Final = 1024 * 1024

PACKAGE_INVALID: Final = "PACKAGE_INVALID"
PACKAGE_UNPACKED_TOO_LARGE: Final = "PACKAGE_UNPACKED_TOO_LARGE"
PACKAGE_TOO_MANY_FILES: Final = "PACKAGE_TOO_MANY_FILES"


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    unpacked_bytes: int = MAX_UNPACKED_BYTES
    files: int = MAX_FILES


def unpack(archive: bytes, limits: ArchiveLimits, *, field: str = "file") -> dict[str, bytes]:
    """The archive's files by relative POSIX path; ``ApiError`` (400) naming the entry otherwise."""
    counted = _entries_declared(archive)
    if counted is not None and counted > limits.files:
        raise ApiError(400, PACKAGE_TOO_MANY_FILES, f"{field}: {counted} entries > {limits.files} allowed")
    try:
        bundle = zipfile.ZipFile(io.BytesIO(archive))
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        raise ApiError(400, PACKAGE_INVALID, f"{field}: not a zip archive ({error})") from None
    with bundle:
        infos = bundle.infolist()
        if len(infos) > limits.files:
            raise ApiError(
                400, PACKAGE_TOO_MANY_FILES, f"{field}: {len(infos)} entries > {limits.files} allowed"
            )
        wanted = _plan(infos, field)
        declared = sum(info.file_size for info in wanted)
        if declared > limits.unpacked_bytes:
            raise ApiError(400, PACKAGE_UNPACKED_TOO_LARGE, _too_large(field, declared, limits))
        files: dict[str, bytes] = {}
        total = 0
        for info in wanted:
            parts: list[bytes] = []
            try:
                with bundle.open(info) as entry:
                    while chunk := entry.read(_CHUNK):
                        total += len(chunk)
                        if total > limits.unpacked_bytes:  # headers lied: stop inflating now
                            raise ApiError(400, PACKAGE_UNPACKED_TOO_LARGE, _too_large(field, total, limits))
                        parts.append(chunk)
            except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError) as error:
                raise ApiError(
                    400, PACKAGE_INVALID, f"{field}: entry {info.filename!r} does not inflate ({error})"
                ) from None
            files[_path(info.filename)] = b"".join(parts)
        return files


def _entries_declared(archive: bytes) -> int | None:
    """The entry count of the end-of-central-directory record, read before the directory is parsed.

    A 16 MB zip can declare hundreds of thousands of entries; refusing on this count
    keeps them from being parsed at all. None when there is no record or it defers
    to a zip64 one (then the parsed list is counted).
    """
    at = archive.rfind(b"PK\x05\x06", max(0, len(archive) - 65557))
    if at == -1 or at + 12 > len(archive):
        return None
    count = int.from_bytes(archive[at + 10 : at + 12], "little")
    return None if count == 0xFFFF else count


def _too_large(field: str, size: int, limits: ArchiveLimits) -> str:
    return f"{field}: unpacks to more than {limits.unpacked_bytes} bytes (at least {size})"


def _path(name: str) -> str:
    return PurePosixPath(name).as_posix()


def _plan(infos: list[zipfile.ZipInfo], field: str) -> list[zipfile.ZipInfo]:
    """The file entries to inflate, after refusing every entry that cannot be written as a plain file."""
    files: dict[str, zipfile.ZipInfo] = {}
    folders: set[str] = set()
    for info in infos:
        name = info.filename
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts or "\\" in name or "\x00" in name:
            raise ApiError(400, PACKAGE_INVALID, f"{field}: entry {name!r} leaves the package folder")
        if not path.parts or path.as_posix() == ".":
            raise ApiError(400, PACKAGE_INVALID, f"{field}: entry {name!r} names no file")
        unholdable = path_problem(name)
        if unholdable is not None:
            raise ApiError(400, PACKAGE_INVALID, f"{field}: entry {name!r:.120}: {unholdable}")
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise ApiError(400, PACKAGE_INVALID, f"{field}: entry {name!r} is a symbolic link")
        # Every enclosing folder of an entry is a folder, whatever other entries say.
        for depth in range(1, len(path.parts)):
            folders.add(PurePosixPath(*path.parts[:depth]).as_posix())
        key = path.as_posix()
        if info.is_dir():
            folders.add(key)
            continue
        if key in files:
            raise ApiError(400, PACKAGE_INVALID, f"{field}: entry {name!r} appears twice")
        files[key] = info
    clash = sorted(set(files) & folders)
    if clash:
        raise ApiError(
            400, PACKAGE_INVALID, f"{field}: entry {clash[0]!r} is both a file and a folder in the archive"
        )
    return list(files.values())


def write_into(root: Path, files: Mapping[str, bytes], *, field: str = "file") -> None:
    """Write ``files`` under ``root``, refusing first any path that clashes with what is already there."""
    for relative in files:
        target = root / relative
        for parent in PurePosixPath(relative).parents:
            existing = root / parent
            if str(parent) != "." and (
                existing.is_symlink() or (existing.exists() and not existing.is_dir())
            ):
                raise ApiError(
                    400,
                    PACKAGE_INVALID,
                    f"{field}: entry {relative!r}: {parent.as_posix()!r} is already a file",
                )
        if target.is_symlink() or target.is_dir():
            raise ApiError(400, PACKAGE_INVALID, f"{field}: entry {relative!r} is already a folder")
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
