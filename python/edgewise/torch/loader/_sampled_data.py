"""The batch object when PyG is absent: attribute access like torch_geometric.data.Data."""

from typing import Any, Dict, Iterator, Tuple

import torch


class SampledData:
    """A sampled subgraph's tensors by name (x, y, edge_index, n_id, e_id, ...).

    What ``NeighborLoader`` yields where torch_geometric is not installed: the same
    fields a PyG ``Data`` batch has, read as attributes or by key.
    """

    def __init__(self, **fields: Any) -> None:
        self.__dict__["_fields"] = dict(fields)

    def __getattr__(self, key: str) -> Any:
        try:
            return self.__dict__["_fields"][key]
        except KeyError:
            raise AttributeError(f"'SampledData' has no attribute '{key}'") from None

    def __setattr__(self, key: str, value: Any) -> None:
        self._fields[key] = value

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._fields[key] = value

    def __contains__(self, key: str) -> bool:
        return key in self._fields

    def keys(self) -> Iterator[str]:
        return iter(self._fields.keys())

    def items(self) -> Iterator[Tuple[str, Any]]:
        return iter(self._fields.items())

    @property
    def num_nodes(self) -> int:
        return int(self._fields["n_id"].numel())

    @property
    def num_edges(self) -> int:
        return int(self._fields["edge_index"].size(1))

    def to(self, device: Any, non_blocking: bool = False) -> "SampledData":
        moved: Dict[str, Any] = {
            key: value.to(device, non_blocking=non_blocking) if isinstance(value, torch.Tensor) else value
            for key, value in self._fields.items()
        }
        return SampledData(**moved)

    def pin_memory(self) -> "SampledData":
        """Every tensor in page-locked memory (tensors already there are kept)."""
        return SampledData(**{key: value.pin_memory() if isinstance(value, torch.Tensor) else value
                              for key, value in self._fields.items()})

    def __repr__(self) -> str:
        parts = []
        for key, value in self._fields.items():
            parts.append(f"{key}={list(value.shape)}" if isinstance(value, torch.Tensor) else f"{key}={value!r}")
        return f"SampledData({', '.join(parts)})"
