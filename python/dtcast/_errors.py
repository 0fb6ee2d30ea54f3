"""dtcast.Error: the library's status codes as a Python exception."""

import enum

__all__ = ["Error", "Status", "Warning"]


class Status(enum.IntEnum):
    """dtcast_status, as the C header numbers it."""

    OK = 0
    INVALID_ARGUMENT = 1
    UNKNOWN_TYPE = 2
    UNSUPPORTED = 3
    COMPLEX_TO_REAL = 4
    SIZE_OVERFLOW = 5
    BAD_STRING = 6
    OUT_OF_MEMORY = 7
    BAD_SHAPE = 8
    PROMOTION = 9
    IO = 10
    BAD_FILE = 11


class Error(ValueError):
    """A conversion, promotion or file the library refused.

    ``str(e)`` is the library's message (it names the type, the element or the byte);
    ``e.status`` is a :class:`Status`; ``e.index`` is the element the error is about, or None.
    ``e.result``: for :func:`dtcast.inspect`, the document of what could be read (else None).
    The file jobs (:func:`dtcast.convert_file`, ``convert_checkpoint``, ``quantize_checkpoint``,
    ``dequantize_checkpoint``) also set ``e.file``, ``e.tensor`` (the tensor's name) and
    ``e.offset`` (the byte offset in the file) to what the error is about, each None when not
    known, and ``e.usage`` (True: the request itself is wrong, not a file).
    """

    result = None
    file = None
    tensor = None
    offset = None
    usage = False

    def __init__(self, message, status=Status.INVALID_ARGUMENT, index=None):
        super().__init__(message)
        try:
            self.status = Status(status)
        except ValueError:
            self.status = status
        self.index = index


class Warning(UserWarning):  # noqa: A001 (dtcast.Warning)
    """A warning of a file job (a line the CLI prints as "dtcast: warning: ..."), given to
    :func:`warnings.warn`."""


Error.__module__ = "dtcast"
Warning.__module__ = "dtcast"
Status.__module__ = "dtcast"
