"""Devices: names, resolution against what the machine offers, and encoders that cannot move."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedding_ttc.cli import main
from embedding_ttc.encoders.device import (
    Accelerators,
    check_device,
    place_encoder,
    resolve_device,
)
from embedding_ttc.errors import EncoderUnavailableError, UnknownNameError

from fakes import HashingEncoder

NO_GPU = Accelerators(cuda_devices=0, mps=False, torch_version="2.0+cpu")
TWO_GPUS = Accelerators(cuda_devices=2, mps=False, torch_version="2.0+cu121")
APPLE = Accelerators(cuda_devices=0, mps=True, torch_version="2.0")


@pytest.mark.parametrize("name", ["auto", "cpu", "cuda", "cuda:0", "cuda:12", "mps"])
def test_device_names(name: str) -> None:
    assert check_device(name) == name


@pytest.mark.parametrize("name", ["gpu", "cuda0", "cuda:", "CPU", "cuda:-1", ""])
def test_a_bad_device_name_is_refused_with_the_choices(name: str) -> None:
    with pytest.raises(UnknownNameError, match="auto, cpu, cuda, cuda:N, mps"):
        check_device(name)


def test_a_misspelt_device_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'cuda'"):
        check_device("cdua")


@pytest.mark.parametrize(("machine", "want"), [(NO_GPU, "cpu"), (TWO_GPUS, "cuda"), (APPLE, "mps")])
def test_auto_prefers_cuda_then_mps_then_cpu(machine: Accelerators, want: str) -> None:
    assert resolve_device("auto", machine) == want
    assert resolve_device("cpu", machine) == "cpu"


def test_a_present_device_is_kept_and_an_absent_one_refused() -> None:
    assert resolve_device("cuda:1", TWO_GPUS) == "cuda:1"
    assert resolve_device("mps", APPLE) == "mps"
    with pytest.raises(EncoderUnavailableError, match=r"'cuda:2'.*2 CUDA device\(s\)"):
        resolve_device("cuda:2", TWO_GPUS)
    with pytest.raises(EncoderUnavailableError, match=r"'mps'.*no MPS"):
        resolve_device("mps", TWO_GPUS)


def test_this_cpu_machine() -> None:
    here = Accelerators.probe()
    if here.cuda_devices or here.mps:
        pytest.skip("this machine has an accelerator; the test is about a CPU-only one")
    assert resolve_device("auto") == "cpu"
    with pytest.raises(EncoderUnavailableError) as info:
        resolve_device("cuda")
    message = str(info.value)
    assert "device 'cuda' was asked for" in message
    assert "sees no CUDA device" in message
    assert here.torch_version in message


def test_an_encoder_that_cannot_move_stays_on_the_cpu_or_refuses() -> None:
    encoder = HashingEncoder()
    assert place_encoder(encoder, "auto", TWO_GPUS) is encoder
    assert place_encoder(encoder, "cpu", TWO_GPUS) is encoder
    with pytest.raises(EncoderUnavailableError, match="'fake-hashing' runs on the CPU only"):
        place_encoder(encoder, "cuda", TWO_GPUS)


class _Movable(HashingEncoder):
    """The fake encoder with a device it records (as the sentence-transformers backend has)."""

    device = "cpu"

    def place(self, device: str) -> None:
        self.device = device


def test_a_placeable_encoder_is_moved_to_the_resolved_device() -> None:
    encoder = _Movable()
    place_encoder(encoder, "auto", TWO_GPUS)
    assert encoder.device == "cuda"
    place_encoder(encoder, "cuda:1", TWO_GPUS)
    assert encoder.device == "cuda:1"
    with pytest.raises(EncoderUnavailableError):
        place_encoder(encoder, "cuda", NO_GPU)


def test_the_packaged_static_encoders_refuse_cuda() -> None:
    from embedding_ttc.encoders.catalog import ENCODERS, load_encoder

    spec = ENCODERS.get("tokenlearn-static-64")
    if not spec.available():
        pytest.skip("tokenlearn-static-model is not installed (the encoders extra)")
    assert load_encoder("tokenlearn-static-64", device="cpu").info.name == "tokenlearn-static-64"
    with pytest.raises(EncoderUnavailableError, match="runs on the CPU only"):
        load_encoder("tokenlearn-static-64", device="cuda")


def test_device_cpu_reaches_the_model() -> None:
    from embedding_ttc.cli.common import build_encoder

    encoder = build_encoder("all-MiniLM-L6-v2", None, True, device="cpu")
    model = encoder.load()
    assert encoder.device == "cpu"
    assert str(model.device) == "cpu"


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate", "--task", "scifact"],
        ["transfer", "--encoders", "all-MiniLM-L6-v2", "--programs", "P0", "--out", "x"],
        ["search", "--run-dir", "x"],
        ["index", "build", "--task", "scifact", "--out", "x"],
        ["index", "add", "x", "--corpus", "c.jsonl"],
        ["serve", "x"],
        ["bench", "--suite", "smoke"],
    ],
    ids=["evaluate", "transfer", "search", "index-build", "index-add", "serve", "bench"],
)
def test_every_encoding_command_takes_device(command: list[str]) -> None:
    from embedding_ttc.cli import build_parser

    args = build_parser().parse_args([*command, "--device", "cuda:1"])
    assert args.device == "cuda:1"
    assert build_parser().parse_args(command).device == "auto"


def test_a_bad_device_on_the_command_line_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "--task", "scifact", "--device", "gpu"])
    assert info.value.code == 2
    assert "argument --device: unknown device 'gpu'" in capsys.readouterr().err


def test_cuda_on_this_machine_is_one_clear_error(
    packaged_datasets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if Accelerators.probe().cuda_devices:
        pytest.skip("this machine has CUDA")
    argv = ["evaluate", "--task", "aila_statutes", "--data-dir", str(packaged_datasets)]
    assert main([*argv, "--device", "cuda", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("embedding-ttc: error: device 'cuda' was asked for")
    assert len(err.strip().splitlines()) == 1
