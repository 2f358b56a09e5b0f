"""TorchScript for the layers: ``torch.jit.script`` compiles PyG's own layer in their place.

The layers run the kernels through Python calls TorchScript cannot compile. Their
arguments, parameter names and results are PyG's, so ``__prepare_scriptable__`` (which
``torch.jit.script`` calls on a module and each of its submodules) returns PyG's layer of
the same class, built with the same constructor arguments and holding this layer's
parameters and buffers (the same tensors, not copies): the scripted model computes what
the eager one does, with PyG's code.
"""

import copy
import importlib

import torch

# Where PyG defines each class: its own module, not torch_geometric.nn, whose names a
# user (or a test) may have pointed at these classes.
_PYG_MODULES = {
    "GCNConv": "torch_geometric.nn.conv.gcn_conv",
    "SAGEConv": "torch_geometric.nn.conv.sage_conv",
    "GINConv": "torch_geometric.nn.conv.gin_conv",
    "GINEConv": "torch_geometric.nn.conv.gin_conv",
    "GATConv": "torch_geometric.nn.conv.gat_conv",
    "GATv2Conv": "torch_geometric.nn.conv.gatv2_conv",
}


def _pyg_class(name: str):
    try:
        return getattr(importlib.import_module(_PYG_MODULES[name]), name)
    except ImportError as error:
        raise RuntimeError(f"torch.jit.script of edgewise.torch.nn.{name} compiles PyG's {name} in its place, "
                           f"and torch_geometric is not installed (pip install torch_geometric)") from error


def _is_lazy(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_is_lazy(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool) and value <= 0


def _place(module: torch.nn.Module, name: str, tensor, kind: str):
    """Sets parameter / buffer `name` (dotted) of module to `tensor` itself."""
    owner_name, _, leaf = name.rpartition(".")
    owner = module.get_submodule(owner_name) if owner_name else module
    table = owner._parameters if kind == "parameter" else owner._buffers
    if leaf not in table:
        raise RuntimeError(f"torch.jit.script: PyG's {type(module).__name__} has no {kind} '{name}'")
    table[leaf] = tensor


def pyg_twin(layer: torch.nn.Module) -> torch.nn.Module:
    """PyG's layer computing what `layer` computes, sharing its parameters and buffers."""
    name = type(layer).__name__
    args, kwargs = layer._constructor_arguments
    in_channels = args[0] if args and name not in ("GINConv", "GINEConv") else kwargs.get("in_channels")
    if _is_lazy(in_channels):
        raise RuntimeError(f"torch.jit.script of edgewise.torch.nn.{name}: the layer was built with lazy "
                           f"in_channels={in_channels!r}; build it with the input width to script it")
    # PyG's constructor resets the modules it is given (GINConv's nn): it gets copies,
    # whose parameters are then replaced by this layer's.
    args = [copy.deepcopy(a) if isinstance(a, torch.nn.Module) else a for a in args]
    kwargs = {k: copy.deepcopy(v) if isinstance(v, torch.nn.Module) else v for k, v in kwargs.items()}
    twin = _pyg_class(name)(*args, **kwargs)
    for key, parameter in layer.named_parameters():
        _place(twin, key, parameter, "parameter")
    for key, buffer in layer.named_buffers():
        _place(twin, key, buffer, "buffer")
    twin.decomposed_layers = layer.decomposed_layers
    return twin.train(layer.training)
